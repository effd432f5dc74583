#!/usr/bin/python3
"""Reference methods and metrics for the inpainting benchmark (never a
dependency of the project: it needs Debian's python3-skimage).

  inpaint_reference.py biharmonic IMAGE MASK OUT
      inpaint IMAGE where MASK (PNG, white = observed) is black with
      scikit-image's inpaint_biharmonic; writes OUT (PNG) and prints JSON
      {"seconds": ..., "peak_rss_bytes": ...}.
  inpaint_reference.py score IMAGE MASK RESULT...
      prints JSON: per result, PSNR and SSIM against IMAGE over the whole
      image (skimage.metrics, data_range 1, SSIM with scikit-image's defaults,
      channel_axis for RGB) and PSNR over the missing pixels only.
"""
import json
import resource
import sys
import time

import numpy as np
from skimage import io, img_as_float
from skimage.metrics import peak_signal_noise_ratio, structural_similarity
from skimage.restoration import inpaint_biharmonic


def load(path):
    img = img_as_float(io.imread(path))
    if img.ndim == 3 and img.shape[2] == 4:
        img = img[:, :, :3]
    return img


def load_mask(path):
    m = load(path)
    if m.ndim == 3:
        m = m.mean(axis=2)
    return m > 0.5  # observed


def save(path, img):
    img = np.clip(img, 0, 1)
    io.imsave(path, np.round(img * 255).astype(np.uint8), check_contrast=False)


def biharmonic(image, mask, out):
    img = load(image)
    obs = load_mask(mask)
    t = time.perf_counter()
    kw = {"channel_axis": -1} if img.ndim == 3 else {}
    res = inpaint_biharmonic(img, ~obs, **kw)
    secs = time.perf_counter() - t
    save(out, res)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    print(json.dumps({"seconds": secs, "peak_rss_bytes": peak}))


def score(image, mask, results):
    img = load(image)
    obs = load_mask(mask)
    out = {}
    for r in results:
        res = load(r)
        if res.shape != img.shape:
            raise SystemExit(f"{r}: shape {res.shape} differs from {image} {img.shape}")
        kw = {"channel_axis": -1} if img.ndim == 3 else {}
        miss = ~obs
        mse = float(np.mean((res[miss] - img[miss]) ** 2))
        out[r] = {
            "psnr": float(peak_signal_noise_ratio(img, res, data_range=1)),
            "ssim": float(structural_similarity(img, res, data_range=1, **kw)),
            "psnr_missing": float(10 * np.log10(1 / mse)) if mse > 0 else None,
        }
    print(json.dumps(out))


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "biharmonic":
        biharmonic(*sys.argv[2:5])
    elif len(sys.argv) >= 5 and sys.argv[1] == "score":
        score(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        raise SystemExit(__doc__)

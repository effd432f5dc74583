#!/usr/bin/python3
"""Reference methods and metrics for the inpainting benchmark (never a
dependency of the project: it needs Debian's python3-skimage).

  inpaint_reference.py biharmonic IMAGE MASK OUT
      inpaint IMAGE where MASK (PNG, white = observed) is black with
      scikit-image's inpaint_biharmonic; writes OUT (PNG) and prints JSON
      {"seconds": ..., "peak_rss_bytes": ...}.
  inpaint_reference.py bench IMAGES WORK OUTDIR [REUSE_DIR]
      the reference column of `rfm bench inpaint`: for every mask
      WORK/NAME-TASK-mask.png that the bench wrote (NAME.png in IMAGES),
      biharmonic inpainting to WORK/NAME-TASK-biharmonic.png (with its
      .json), scored as below; writes OUTDIR/reference.csv, which the bench
      reads back. A result already in WORK (or in REUSE_DIR) made from a
      mask with the same bytes is reused, not recomputed.
  inpaint_reference.py score IMAGE MASK RESULT...
      prints JSON: per result, PSNR and SSIM against IMAGE over the whole
      image (skimage.metrics, data_range 1, SSIM with scikit-image's defaults,
      channel_axis for RGB) and PSNR over the missing pixels only.
"""
import csv
import glob
import hashlib
import json
import os
import resource
import subprocess
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
    print(json.dumps(biharmonic_run(image, mask, out)))


def biharmonic_run(image, mask, out):
    img = load(image)
    obs = load_mask(mask)
    t = time.perf_counter()
    kw = {"channel_axis": -1} if img.ndim == 3 else {}
    res = inpaint_biharmonic(img, ~obs, **kw)
    secs = time.perf_counter() - t
    save(out, res)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    return {"seconds": secs, "peak_rss_bytes": peak}


def sha256(path):
    return hashlib.sha256(open(path, "rb").read()).hexdigest()


def reusable(mask, work, reuse, base):
    """The biharmonic PNG and JSON made from a mask with mask's bytes."""
    want = sha256(mask)
    for d in [work] + ([reuse] if reuse else []):
        png, js, m = (os.path.join(d, base + s) for s in ("-biharmonic.png", "-biharmonic.json", "-mask.png"))
        if not (os.path.exists(png) and os.path.exists(js)):
            continue
        info = json.load(open(js))
        if info.get("mask_sha256") == want or (d != work and os.path.exists(m) and sha256(m) == want):
            info["mask_sha256"] = want
            return png, info
    return None, None


def bench(images, work, outdir, reuse=None):
    rows = []
    for mask in sorted(glob.glob(os.path.join(work, "*-mask.png"))):
        base = os.path.basename(mask)[: -len("-mask.png")]
        name, _, task = base.rpartition("-")
        image = os.path.join(images, name + ".png")
        if not os.path.exists(image) or task not in ("holes", "random50", "random80"):
            continue  # a method's own copy of the mask, or another image set
        out = os.path.join(work, base + "-biharmonic.png")
        png, info = reusable(mask, work, reuse, base)
        if png is None:
            # A process per run, so that its peak memory is its own.
            res = subprocess.run([sys.executable, __file__, "biharmonic", image, mask, out],
                                 check=True, capture_output=True, text=True)
            info = json.loads(res.stdout)
        elif png != out:
            save(out, load(png))
        info["mask_sha256"] = sha256(mask)
        json.dump(info, open(os.path.join(work, base + "-biharmonic.json"), "w"))
        s = scores(image, mask, [out])[out]
        db = lambda v: "inf" if v is None or np.isinf(v) else f"{v:.3f}"  # an exact result
        rows.append([name, task, "biharmonic", db(s['psnr']), db(s['psnr_missing']), f"{s['ssim']:.4f}",
                     f"{info['seconds']:.2f}", f"{info['peak_rss_bytes'] / 2**20:.1f}"])
        print(f"biharmonic {name} {task}: PSNR {s['psnr']:.2f}", file=sys.stderr)
    tmp = os.path.join(outdir, ".reference.csv.tmp")
    with open(tmp, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["image", "task", "method", "psnr", "psnr_missing", "ssim", "seconds", "peak_mb"])
        w.writerows(rows)
    os.replace(tmp, os.path.join(outdir, "reference.csv"))


def score(image, mask, results):
    print(json.dumps(scores(image, mask, results)))


def scores(image, mask, results):
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
    return out


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "biharmonic":
        biharmonic(*sys.argv[2:5])
    elif len(sys.argv) in (5, 6) and sys.argv[1] == "bench":
        bench(*sys.argv[2:])
    elif len(sys.argv) >= 5 and sys.argv[1] == "score":
        score(sys.argv[2], sys.argv[3], sys.argv[4:])
    else:
        raise SystemExit(__doc__)

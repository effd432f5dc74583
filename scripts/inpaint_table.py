#!/usr/bin/python3
"""Assemble the inpainting benchmark (scripts/bench_inpaint.sh):

  inpaint_table.py RUNS.jsonl IMAGES OUTDIR

writes OUTDIR/runs.csv (one row per image, task and method), summary.md
(means per task and method, and the per-image table) and grid_TASK.png
(original, masked, each method) for every task.
"""
import csv
import json
import os
import sys

import numpy as np
from skimage import io, img_as_float

METHODS = ["cntk", "laplace", "biharmonic"]
TASKS = {"holes": "large holes (12 × 16×16 px)", "random50": "50% random pixels missing",
         "random80": "80% random pixels missing"}


def main(runs_path, images, out):
    runs = [json.loads(l) for l in open(runs_path) if l.strip()]
    rows = []
    for r in runs:
        b = r["base"]
        score = json.load(open(b + "-score.json"))
        for m in METHODS:
            s = score[f"{b}-{m}.png"]
            info = json.load(open(f"{b}-{m}.json"))
            secs = info.get("total_seconds", info.get("seconds"))
            rows.append({"image": r["image"], "task": r["task"], "method": m,
                         "psnr": round(s["psnr"], 3), "ssim": round(s["ssim"], 4),
                         "psnr_missing": round(s["psnr_missing"], 3),
                         "seconds": round(secs, 2),
                         "peak_mb": round(info.get("peak_rss_bytes", 0) / 2**20, 1),
                         "cg_iterations": info.get("iterations", ""),
                         "converged": info.get("converged", "")})
    with open(os.path.join(out, "runs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = ["# Inpainting benchmark (issue 43)", "",
             "Made by `scripts/bench_inpaint.sh` (see its header for the command); "
             "PSNR and SSIM over the whole image (scikit-image's metrics, data range 1), "
             "PSNR also over the missing pixels only. Times and peak memory are per process "
             "(rfm inpaint: the whole command; biharmonic: the call), measured on a shared, "
             "loaded 2-core machine.", "",
             "## Means over the images", "",
             "| task | method | PSNR | PSNR missing | SSIM | seconds | peak MB |",
             "|---|---|---|---|---|---|---|"]
    for t, desc in TASKS.items():
        for m in METHODS:
            sel = [r for r in rows if r["task"] == t and r["method"] == m]
            if not sel:
                continue
            mean = lambda k: np.mean([r[k] for r in sel])
            lines.append(f"| {desc} | {m} | {mean('psnr'):.2f} | {mean('psnr_missing'):.2f} | "
                         f"{mean('ssim'):.4f} | {mean('seconds'):.1f} | {max(r['peak_mb'] for r in sel):.0f} |")
    lines += ["", "## Per image", "", "| image | task | method | PSNR | PSNR missing | SSIM | seconds | peak MB | CG iterations |",
              "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['image']} | {r['task']} | {r['method']} | {r['psnr']:.2f} | {r['psnr_missing']:.2f} | "
                     f"{r['ssim']:.4f} | {r['seconds']} | {r['peak_mb']} | {r['cg_iterations']} |")
    open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")
    grids(runs, images, out)


def load(path):
    img = img_as_float(io.imread(path))
    if img.ndim == 3:
        img = img[:, :, :3]
    else:
        img = np.stack([img] * 3, axis=2)
    return img


def grids(runs, images, out):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    for t in TASKS:
        sel = [r for r in runs if r["task"] == t][:3]
        if not sel:
            continue
        cols = ["original", "masked"] + METHODS
        fig, axes = plt.subplots(len(sel), len(cols), figsize=(2.2 * len(cols), 2.3 * len(sel)), squeeze=False)
        for i, r in enumerate(sel):
            b = r["base"]
            orig = load(os.path.join(images, r["image"] + ".png"))
            mask = load(b + "-mask.png")[:, :, 0] > 0.5
            masked = orig.copy()
            masked[~mask] = [1, 0, 1]
            pics = [orig, masked] + [load(f"{b}-{m}.png") for m in METHODS]
            for j, p in enumerate(pics):
                ax = axes[i][j]
                ax.imshow(np.clip(p, 0, 1), interpolation="nearest")
                ax.set_xticks([])
                ax.set_yticks([])
                if i == 0:
                    ax.set_title(cols[j], fontsize=9)
                if j == 0:
                    ax.set_ylabel(r["image"], fontsize=9)
        fig.suptitle(TASKS[t], fontsize=10)
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"grid_{t}.png"), dpi=70)
        plt.close(fig)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        raise SystemExit(__doc__)
    main(*sys.argv[1:])

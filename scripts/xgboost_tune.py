#!/usr/bin/python3
"""XGBoost with the budget of 'rfm tune --time T', for comparison only
(Debian's python3-xgboost; never a dependency of rfm).

Reads a training and a test CSV with a numeric class column, draws seeded
configurations from the space of scripts/xgboost_uci.py and scores each on
a stratified 20% holdout of the training rows (as 'rfm tune' does by
default) until the budget is spent (counted in the process's CPU time
divided by --threads, so that a run beside other jobs gets the trials an
idle machine would give it in that wall-clock time), refits the best on every training row
and scores it once on the test rows. Prints one JSON line.

Usage: scripts/xgboost_tune.py --train FILE --test FILE --target COL
       [--budget SECONDS] [--seed 1] [--threads 2]
"""
import argparse
import json
import os
import random
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from xgboost_common import search_args  # noqa: E402
from xgboost_uci import accuracy, draw, fit, holdout  # noqa: E402


def read(path, target):
    with open(path) as f:
        header = f.readline().strip().split(",")
    a = np.loadtxt(path, delimiter=",", skiprows=1)
    t = header.index(target)
    return np.delete(a, t, axis=1), a[:, t].astype(int)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", required=True)
    ap.add_argument("--test", required=True)
    ap.add_argument("--target", required=True)
    ap.add_argument("--budget", type=float, default=1200)
    search_args(ap, trials=False)
    o = ap.parse_args()
    x, y = read(o.train, o.target)
    xt, yt = read(o.test, o.target)
    classes = int(max(y.max(), yt.max())) + 1
    rng = random.Random(o.seed)
    (tr, va), = holdout(y, 0.2, rng)
    start, cpu0 = time.time(), time.process_time()
    best, best_acc, trials = None, -1.0, []
    while (time.process_time() - cpu0) / o.threads < o.budget:
        p = draw(rng)
        t0 = time.time()
        acc = accuracy(fit(p, x[tr], y[tr], classes, o.seed, o.threads)(x[va]), y[va])
        trials.append(dict(params=p, val_acc=acc, seconds=round(time.time() - t0, 1)))
        print(f"trial {len(trials)}: validation {100 * acc:.2f}% ({time.time() - t0:.0f}s)", file=sys.stderr)
        if acc > best_acc:
            best, best_acc = p, acc
    search, cpu = time.time() - start, time.process_time() - cpu0
    t0 = time.time()
    test = accuracy(fit(best, x, y, classes, o.seed, o.threads)(xt), yt)
    print(json.dumps(dict(trials=len(trials), search_seconds=round(search), search_cpu_seconds=round(cpu), refit_seconds=round(time.time() - t0),
                          best=best, val_acc_pct=100 * best_acc, test_acc_pct=100 * test, all=trials)))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""XGBoost on the UCI-121 sets with the splits and the budget of
'rfm bench uci --protocol tuned', for comparison only (Debian's
python3-xgboost; never a dependency of rfm).

For each data set and each of its 4 conxuntos_kfold.dat (train, test) pairs,
TRIALS random configurations (seeded) are scored on the training rows only,
exactly as the tuned protocol scores RFM configurations: 4-fold stratified
cross-validation when the training split has fewer than 1 000 rows, a
stratified 20% holdout otherwise, the fits of the holdout design on a stratified
sample of at most MAX_ROWS of its training rows (the protocol's search cap,
4 000; no set of Arora's 90 reaches it). The best is refitted on the training split
and scored once on the test split. Output: one TSV row per data set with the
mean test accuracy in percent.

Usage: scripts/xgboost_uci.py DATA_DIR OUT.tsv NAME... [--trials 30] [--seed 1] [--threads 2]
       [--max-rows 4000]
"""
import argparse
import math
import os
import random
import sys

import numpy as np
import xgboost as xgb

from xgboost_common import search_args


def read_meta(d, name):
    kv = {}
    with open(os.path.join(d, name, name + ".txt")) as f:
        for line in f:
            if "=" in line:
                k, v = line.split("=", 1)
                kv[k.strip()] = v.strip()
    return kv


def load(d, name):
    kv = read_meta(d, name)
    path = os.path.join(d, name, kv["fich1"])
    rows = []
    with open(path) as f:
        f.readline()  # header
        for line in f:
            fs = line.split()
            if fs:
                rows.append([float(v) for v in fs[1:]])  # the first column is the row number
    a = np.array(rows)
    x, y = a[:, :-1], a[:, -1].astype(int)
    with open(os.path.join(d, name, "conxuntos_kfold.dat")) as f:
        lines = [[int(v) for v in l.split()] for l in f if l.strip()]
    folds = [(lines[2 * i], lines[2 * i + 1]) for i in range(4)]
    return x, y, folds


def stratified_folds(y, k, rng):
    by = {}
    for i, c in enumerate(y):
        by.setdefault(c, []).append(i)
    fold = np.zeros(len(y), dtype=int)
    nxt = 0
    for c in sorted(by):
        g = by[c][:]
        rng.shuffle(g)
        for i in g:
            fold[i] = nxt % k
            nxt += 1
    return [(np.where(fold != j)[0], np.where(fold == j)[0]) for j in range(k)]


def holdout(y, frac, rng):
    by = {}
    for i, c in enumerate(y):
        by.setdefault(c, []).append(i)
    tr, va = [], []
    for c in sorted(by):
        g = by[c][:]
        rng.shuffle(g)
        nv = min(int(round(frac * len(g))), len(g) - 1)
        va += g[:nv]
        tr += g[nv:]
    return [(np.array(sorted(tr)), np.array(sorted(va)))]


def capped(y, rows, cap, rng):
    """A stratified sample of at most cap of rows (indices into y), sorted."""
    if len(rows) <= cap:
        return rows
    by = {}
    for i in rows:
        by.setdefault(y[i], []).append(i)
    out = []
    for c in sorted(by):
        g = by[c][:]
        rng.shuffle(g)
        out += g[:max(1, round(cap * len(g) / len(rows)))]
    return np.array(sorted(out[:cap]))


def draw(rng):
    return dict(
        max_depth=rng.choice([2, 3, 4, 5, 6, 8]),
        learning_rate=math.exp(rng.uniform(math.log(0.01), math.log(0.3))),
        n_estimators=rng.choice([50, 100, 200, 400]),
        subsample=rng.uniform(0.5, 1.0),
        colsample_bytree=rng.uniform(0.5, 1.0),
        min_child_weight=math.exp(rng.uniform(0, math.log(10))),
        reg_lambda=math.exp(rng.uniform(math.log(1e-3), math.log(10))),
    )


def fit(params, x, y, classes, seed, threads=2):
    # Labels seen in the training rows may skip a class: map them to 0..k−1.
    seen = np.unique(y)
    if len(seen) == 1:
        return lambda xt: np.full(len(xt), seen[0])
    idx = {c: i for i, c in enumerate(seen)}
    p = dict(params)
    rounds = p.pop("n_estimators")
    p.update(tree_method="hist", nthread=threads, seed=seed, eta=p.pop("learning_rate"),
             colsample_bytree=p["colsample_bytree"], verbosity=0)
    if len(seen) == 2:
        p["objective"] = "binary:logistic"
    else:
        p.update(objective="multi:softmax", num_class=len(seen))
    b = xgb.train(p, xgb.DMatrix(x, label=np.array([idx[c] for c in y])), num_boost_round=rounds)

    def predict(xt):
        out = b.predict(xgb.DMatrix(xt))
        if len(seen) == 2:
            out = (out > 0.5).astype(int)
        return seen[out.astype(int)]
    return predict


def accuracy(pred, y):
    return float(np.mean(pred == y))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("data")
    ap.add_argument("out")
    ap.add_argument("names", nargs="+")
    search_args(ap)
    ap.add_argument("--max-rows", type=int, default=4000)
    o = ap.parse_args()
    done = set()
    if os.path.exists(o.out):
        with open(o.out) as f:
            done = {l.split("\t")[0] for l in f if l.strip() and not l.startswith("name\t")}
    new = not os.path.exists(o.out)
    with open(o.out, "a") as out:
        if new:
            out.write("name\ttest_acc_pct\ttest_accs_pct\n")
        for name in o.names:
            if name in done:
                continue
            try:
                x, y, folds = load(o.data, name)
            except FileNotFoundError as e:
                print(f"{name}: skipped ({e})", file=sys.stderr)
                continue
            classes = int(y.max()) + 1
            accs = []
            for r, (tr, te) in enumerate(folds):
                tr, te = np.array(tr), np.array(te)
                rng = random.Random(o.seed * 1000 + r)
                if len(tr) < 1000:
                    inner = stratified_folds(y[tr], 4, rng)
                else:
                    inner = [(capped(y[tr], a, o.max_rows, rng), b) for a, b in holdout(y[tr], 0.2, rng)]
                best, best_acc = None, -1.0
                for _ in range(o.trials):
                    p = draw(rng)
                    acc = np.mean([accuracy(fit(p, x[tr][a], y[tr][a], classes, o.seed, o.threads)(x[tr][b]), y[tr][b]) for a, b in inner])
                    if acc > best_acc:
                        best, best_acc = p, acc
                accs.append(100 * accuracy(fit(best, x[tr], y[tr], classes, o.seed, o.threads)(x[te]), y[te]))
            out.write(f"{name}\t{np.mean(accs)}\t{','.join(str(a) for a in accs)}\n")
            out.flush()
            print(f"{name}: {np.mean(accs):.2f}%", file=sys.stderr)


if __name__ == "__main__":
    main()

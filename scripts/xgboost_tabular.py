#!/usr/bin/python3
"""XGBoost on the tabular benchmark (Grinsztajn et al.) with the exact splits of
'rfm bench tabular', as a same-machine column for its summaries; for comparison
only (Debian's python3-xgboost; never a dependency of rfm).

It reads the split indices 'rfm bench tabular' exported (OUT/splits/GROUP__NAME.json:
the task's file, its target and, per split, the 0-based train/val/test rows), so
both score the same rows. TRIALS random configurations (seeded) are drawn from the
benchmark's XGBoost space (Grinsztajn et al. 2022, appendix: max_depth 1-11,
n_estimators 100-6000 step 200, min_child_weight log-uniform 1-100, subsample and
colsample_bylevel/bytree uniform 0.5-1, learning_rate log-uniform 1e-5-0.7, gamma
log-uniform 1e-8-7, lambda log-uniform 1-4, alpha log-uniform 1e-8-100). Each is
fitted on every split's training rows, with early stopping on its validation rows
(20 rounds), and the configuration of the best mean validation score is kept; its
mean test score (accuracy % or R²) is reported, as the authors' code does.
Features are the file's columns as numbers (categories keep their integer codes:
trees split on them); classes are those of the training rows, a test row of
another class counts as an error.

Output: RESULTS.json ({"trials": N, "results": {"GROUP/NAME": {...}}}), rewritten
after each task; tasks already in it are skipped (rerun to resume).

Usage: scripts/xgboost_tabular.py SPLITS_DIR RESULTS.json [--tasks GROUP/NAME,...]
       [--trials 30] [--seed 1] [--threads 2] [--max-estimators 6000]
"""
import argparse
import glob
import json
import math
import os
import random
import sys
import time

import numpy as np
import pandas as pd
import xgboost as xgb

from xgboost_common import search_args


def draw(rng, max_estimators):
    """One configuration of the benchmark's XGBoost space."""
    def logu(lo, hi):
        return math.exp(rng.uniform(math.log(lo), math.log(hi)))
    return {
        "max_depth": rng.randint(1, 11),
        "n_estimators": min(rng.randrange(100, 6001, 200), max_estimators),
        "min_child_weight": int(round(logu(1, 100))),
        "subsample": rng.uniform(0.5, 1.0),
        "learning_rate": logu(1e-5, 0.7),
        "colsample_bylevel": rng.uniform(0.5, 1.0),
        "colsample_bytree": rng.uniform(0.5, 1.0),
        "gamma": logu(1e-8, 7),
        "lambda": logu(1, 4),
        "alpha": logu(1e-8, 100),
    }


def load(spec):
    df = pd.read_csv(spec["path"])
    target = df.columns[-1]
    if target != spec["target"]:
        raise ValueError("%s: last column %r, the splits file says %r" % (spec["path"], target, spec["target"]))
    if len(df) != spec["rows"]:
        raise ValueError("%s: %d rows, the splits file says %d" % (spec["path"], len(df), spec["rows"]))
    x = df.iloc[:, :-1].copy()
    for c in x.columns:
        if not pd.api.types.is_numeric_dtype(x[c]):
            x[c] = pd.factorize(x[c])[0]
    return x.to_numpy(dtype=np.float64), df[target].astype(str).to_numpy() if spec["classification"] else df[target].to_numpy(dtype=np.float64)


def score(classification, truth, pred):
    if classification:
        return 100.0 * float(np.mean(truth == pred))
    sst = float(np.sum((truth - truth.mean()) ** 2))
    return 1.0 - float(np.sum((truth - pred) ** 2)) / sst


def run_split(params, x, y, sp, classification, seed, threads):
    tr, va, te = (np.asarray(sp[k]) for k in ("train", "val", "test"))
    p = dict(params)
    rounds = p.pop("n_estimators")
    p.update(nthread=threads, seed=seed, tree_method="hist", verbosity=0)
    if classification:
        classes = sorted(set(y[tr]))
        at = {c: i for i, c in enumerate(classes)}
        enc = lambda rows: np.array([at.get(v, -1) for v in y[rows]])
        ytr, yva, yte = enc(tr), enc(va), enc(te)
        keep = yva >= 0
        if len(classes) > 2:
            p.update(objective="multi:softprob", num_class=len(classes), eval_metric="mlogloss")
        else:
            p.update(objective="binary:logistic", eval_metric="logloss")
        dtr = xgb.DMatrix(x[tr], label=ytr)
        dva = xgb.DMatrix(x[va][keep], label=yva[keep])
    else:
        ytr, yva, yte = y[tr], y[va], y[te]
        p.update(objective="reg:squarederror", eval_metric="rmse")
        dtr = xgb.DMatrix(x[tr], label=ytr)
        dva = xgb.DMatrix(x[va], label=yva)
    bst = xgb.train(p, dtr, num_boost_round=rounds, evals=[(dva, "val")], early_stopping_rounds=20, verbose_eval=False)
    rng = (0, bst.best_iteration + 1)

    def predict(rows):
        out = bst.predict(xgb.DMatrix(x[rows]), iteration_range=rng)
        if not classification:
            return out
        if out.ndim == 1:
            return (out > 0.5).astype(int)
        return out.argmax(axis=1)
    return score(classification, yva, predict(va)), score(classification, yte, predict(te)), bst.best_iteration + 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("splits_dir")
    ap.add_argument("results")
    ap.add_argument("--tasks", default="")
    search_args(ap)
    ap.add_argument("--max-estimators", type=int, default=6000)
    a = ap.parse_args()
    files = sorted(glob.glob(os.path.join(a.splits_dir, "*.json")))
    if not files:
        sys.exit("%s: no split files (run 'rfm bench tabular' first)" % a.splits_dir)
    out = {"trials": a.trials, "results": {}}
    if os.path.exists(a.results):
        with open(a.results) as f:
            out = json.load(f)
        if out.get("trials") != a.trials:
            sys.exit("%s was made with %s trials, this run has %d: use another file" % (a.results, out.get("trials"), a.trials))
    want = set(t for t in a.tasks.split(",") if t)
    specs = []
    for path in files:
        with open(path) as f:
            spec = json.load(f)
        if (want and spec["task"] not in want) or spec["task"] in out["results"]:
            continue
        specs.append(spec)
    specs.sort(key=lambda s: len(s["splits"]) * len(s["splits"][0]["train"]) ** 2)  # cheapest first
    for spec in specs:
        start = time.time()
        x, y = load(spec)
        rng = random.Random(a.seed)
        best = None
        for t in range(a.trials):
            params = draw(rng, a.max_estimators)
            vals, tests, iters = [], [], []
            for k, sp in enumerate(spec["splits"]):
                v, s, n = run_split(params, x, y, sp, spec["classification"], a.seed + k, a.threads)
                vals.append(v)
                tests.append(s)
                iters.append(n)
            if best is None or np.mean(vals) > best["val"]:
                best = {"val": float(np.mean(vals)), "score": float(np.mean(tests)), "val_scores": vals,
                        "test_scores": tests, "trees": iters, "params": params, "trial": t}
            print("%s trial %d/%d: val %.4g (best %.4g)" % (spec["task"], t + 1, a.trials, np.mean(vals), best["val"]), file=sys.stderr, flush=True)
        best["seconds"] = time.time() - start
        out["results"][spec["task"]] = best
        tmp = a.results + ".tmp"
        with open(tmp, "w") as f:
            json.dump(out, f, indent=1, sort_keys=True)
        os.replace(tmp, a.results)
        print("%s: test %.4g (%.0f s)" % (spec["task"], best["score"], best["seconds"]), file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()

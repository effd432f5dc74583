#!/usr/bin/env python3
"""XGBoost reference for `rfm bench scale --xgboost` (comparison only; the
project does not depend on it). Reads the train and test CSVs, one-hot
encodes text columns with the categories of the training rows, picks the
best of a small grid (max_depth x learning_rate, hist method, early stopping
on the validation rows given by --valid-rows (rfm's own holdout, as `rfm bench
scale` writes them) or a seeded 20% split of the training rows: never the test
rows),
refits nothing, predicts the test rows and writes "target,prediction" CSV.
With --budget S it then tries a wider grid, in a fixed order, until S seconds
of fitting have passed (the RFM's search budget in `rfm bench scale`), still
choosing on the same validation split.
Prints a JSON line: fit seconds, prediction rows/s, the chosen parameters."""
import argparse, json, sys, time

import numpy as np
import pandas as pd
import xgboost as xgb

ap = argparse.ArgumentParser()
ap.add_argument("--train", required=True)
ap.add_argument("--test", required=True)
ap.add_argument("--target", required=True)
ap.add_argument("--task", choices=["classification", "regression"], required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--threads", type=int, default=0)
ap.add_argument("--valid-rows", default="",
                help="file of 0-based training row indices, one a line, to choose on (rfm's holdout, written by "
                     "`rfm bench scale`); default: a seeded 20%% permutation split")
ap.add_argument("--curve", default="",
                help="write CSV seconds,validation,test: each configuration that became the best on validation, "
                     "the fit seconds so far and its test score (for a time-to-score curve; never used to choose)")
ap.add_argument("--budget", type=float, default=0,
                help="seconds: after the small grid, go on through a wider grid (depth, eta, min_child_weight, "
                     "subsampling) until this much fit time has passed (0: the small grid only)")
a = ap.parse_args()

tr = pd.read_csv(a.train)
te = pd.read_csv(a.test)
ytr, yte = tr.pop(a.target), te.pop(a.target)
text = [c for c in tr.columns if tr[c].dtype == object]
if text:
    cats = {c: sorted(tr[c].astype(str).unique()) for c in text}
    for df in (tr, te):
        for c in text:
            df[c] = pd.Categorical(df[c].astype(str), categories=cats[c]).codes
    tr = pd.get_dummies(tr, columns=text)
    te = pd.get_dummies(te, columns=text).reindex(columns=tr.columns, fill_value=0)

if a.valid_rows:
    va_i = np.loadtxt(a.valid_rows, dtype=np.int64, ndmin=1)
    if len(va_i) == 0 or va_i.min() < 0 or va_i.max() >= len(tr) or len(np.unique(va_i)) != len(va_i):
        sys.exit(f"{a.valid_rows}: want distinct row indices in 0..{len(tr) - 1}")
    mask = np.ones(len(tr), dtype=bool)
    mask[va_i] = False
    fi_i = np.flatnonzero(mask)
else:
    rng = np.random.default_rng(a.seed)
    idx = rng.permutation(len(tr))
    nv = len(tr) // 5
    va_i, fi_i = idx[:nv], idx[nv:]

if a.task == "classification":
    classes = sorted(ytr.astype(str).unique())
    code = {c: i for i, c in enumerate(classes)}
    y = ytr.astype(str).map(code).to_numpy()
    params = {"objective": "multi:softprob", "num_class": len(classes), "eval_metric": "mlogloss"} if len(classes) > 2 \
        else {"objective": "binary:logistic", "eval_metric": "logloss"}
else:
    y = ytr.to_numpy(dtype=float)
    params = {"objective": "reg:squarederror", "eval_metric": "rmse"}
params.update({"tree_method": "hist", "seed": a.seed, "nthread": a.threads})

X = tr.to_numpy(dtype=np.float32)
dfit = xgb.DMatrix(X[fi_i], label=y[fi_i])
dval = xgb.DMatrix(X[va_i], label=y[va_i])
dte = xgb.DMatrix(te.to_numpy(dtype=np.float32))
if a.task == "classification":
    yte_code = yte.astype(str).map(code).to_numpy()


def test_score(bst):
    """The test score of bst: accuracy, or RMSE for regression."""
    p = bst.predict(dte, iteration_range=(0, bst.best_iteration + 1))
    if a.task == "classification":
        lab = np.argmax(p, axis=1) if p.ndim == 2 else (p > 0.5).astype(int)
        return float(np.mean(lab == yte_code))
    return float(np.sqrt(np.mean((p - yte.to_numpy(dtype=float)) ** 2)))


curve = []
paused = 0.0  # seconds spent scoring the curve, not counted as fit time


def record(bst):
    global paused
    t0 = time.time()
    curve.append((t0 - start - paused, bst.best_score, test_score(bst)))
    paused += time.time() - t0


start = time.time()
best = None
for depth in (4, 6, 8):
    for eta in (0.1, 0.3):
        p = dict(params, max_depth=depth, eta=eta)
        bst = xgb.train(p, dfit, num_boost_round=500, evals=[(dval, "val")], early_stopping_rounds=20, verbose_eval=False)
        if best is None or bst.best_score < best[0]:
            best = (bst.best_score, bst, f"max_depth={depth} eta={eta} rounds={bst.best_iteration + 1}")
            if a.curve:
                record(bst)
tried = 6
if a.budget > 0:
    wide = [(d, e, mcw, sub) for e in (0.1, 0.05, 0.03) for d in (6, 8, 10, 12, 5, 3)
            for mcw in (1, 5) for sub in (1.0, 0.8)]
    for depth, eta, mcw, sub in wide:
        if time.time() - start - paused > a.budget:
            break
        p = dict(params, max_depth=depth, eta=eta, min_child_weight=mcw, subsample=sub, colsample_bytree=sub)
        bst = xgb.train(p, dfit, num_boost_round=2000, evals=[(dval, "val")], early_stopping_rounds=30, verbose_eval=False)
        tried += 1
        if bst.best_score < best[0]:
            best = (bst.best_score, bst, f"max_depth={depth} eta={eta} min_child_weight={mcw} subsample={sub} rounds={bst.best_iteration + 1}")
            if a.curve:
                record(bst)
fit_s = time.time() - start - paused
bst = best[1]
if a.curve:
    with open(a.curve, "w") as f:
        f.write("seconds,validation,test\n")
        for s_, v_, t_ in curve:
            f.write(f"{s_:.2f},{v_:.6g},{t_:.6g}\n")
start = time.time()
pred = bst.predict(dte, iteration_range=(0, bst.best_iteration + 1))
pred_s = time.time() - start
if a.task == "classification":
    lab = np.argmax(pred, axis=1) if pred.ndim == 2 else (pred > 0.5).astype(int)
    out = [classes[i] for i in lab]
else:
    out = pred
pd.DataFrame({a.target: yte.astype(str) if a.task == "classification" else yte, "prediction": out}).to_csv(a.out, index=False)
print(json.dumps({"fit_seconds": fit_s, "predict_rows_per_s": len(te) / max(pred_s, 1e-9), "params": best[2] + f" (best of {tried} on the validation split)"}))

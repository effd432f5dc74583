#!/usr/bin/env python3
"""Writes train/test CSVs of a UCI-121 set from its conxuntos_kfold.dat pair
(0-based; pair k = lines 2k+1, 2k+2) into OUTDIR (outside the repo).
usage: prep.py UCI_DIR SET PAIR OUTDIR"""
import os, sys

root, name, pair, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rows = []
with open(os.path.join(root, name, name + "_R.dat")) as f:
    head = f.readline().split()
    for line in f:
        p = line.split()
        if p:
            rows.append(p[1:])
with open(os.path.join(root, name, "conxuntos_kfold.dat")) as f:
    lines = [l.split() for l in f if l.strip()]
train, test = lines[2 * pair], lines[2 * pair + 1]
cols = head  # f1..fd, clase
os.makedirs(out, exist_ok=True)
for part, idx in (("train", train), ("test", test)):
    with open(os.path.join(out, f"{name}-{pair}-{part}.csv"), "w") as g:
        g.write(",".join(cols) + "\n")
        for i in idx:
            r = rows[int(i)]
            g.write(",".join(r[:-1]) + ",c" + r[-1] + "\n")

#!/usr/bin/env python3
"""The exploration split of results/scale-tuned/a9a-why.md: the standard training
file SET-train.csv (the first 32 561 a9a rows, as `rfm bench scale` writes it)
shuffled with Python's random.Random(7); the first fifth is SET-val.csv (never
fitted), the rest SET-fit.csv, and its first 4 000 rows SET-fit4k.csv.
Usage: explore-split.py SET (in the folder holding SET-train.csv)."""
import random, sys

n = sys.argv[1]
lines = open(f"{n}-train.csv").read().splitlines()
head, rows = lines[0], lines[1:]
idx = list(range(len(rows)))
random.Random(7).shuffle(idx)
nv = len(rows) // 5
write = lambda name, part: open(name, "w").write("\n".join([head] + [rows[i] for i in part]) + "\n")
write(f"{n}-val.csv", idx[:nv])
write(f"{n}-fit.csv", idx[nv:])
write(f"{n}-fit4k.csv", idx[nv:nv + 4000])

#!/bin/sh
# Peak RSS and time of complete fits (20 000 rows × 12 columns, --iters 1) with --memory-limit 64M.
for bin in before after; do
  printf "%s full fit 64M: " $bin
  /usr/bin/time -f "%M KB peak, %e s" nice -n 10 ./$bin-rfm fit --data p5.csv --target y --iters 1 --memory-limit 64M --out /tmp/ml/m5-$bin.rfm --quiet 2>&1 | tail -1
done

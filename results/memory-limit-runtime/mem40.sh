#!/bin/sh
# Peak RSS of rfm fit --iters 1 --memory-limit 100M on a 40 MB CSV, stopped after 25 s.
for bin in before after; do
  for mode in file pipe gz; do
    case $mode in
    file) c="timeout 25 ./$bin-rfm fit --data p40.csv --target y --iters 1 --memory-limit 100M --out /tmp/ml/m40.rfm --quiet" ;;
    pipe) c="cat p40.csv | timeout 25 ./$bin-rfm fit --data - --target y --iters 1 --memory-limit 100M --out /tmp/ml/m40.rfm --quiet" ;;
    gz) c="timeout 25 ./$bin-rfm fit --data p40.csv.gz --target y --iters 1 --memory-limit 100M --out /tmp/ml/m40.rfm --quiet" ;;
    esac
    printf "%s %s 100M: " $bin $mode
    /usr/bin/time -f "%M KB peak, %e s" nice -n 10 sh -c "$c" 2>&1 | grep "KB peak"
  done
done

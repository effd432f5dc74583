#!/bin/sh
# The commands that made this folder's results (build: go build -tags openblas -o rfm ./cmd/rfm).
# Taken on a shared, heavily loaded 2-core machine; re-run alone for timings.
set -e
RFM=${RFM:-rfm}
# Full size (the paper's n = d = width = 1024), fewer seeds than the paper's 10 × 30 for time.
nice -n 10 $RFM nfa --task alignment-reversing --x-scale 0.004 --balance 0.05,0.1,0.2,0.3,0.5,0.7,1 \
  --data-seeds 3 --net-seeds 3 --out n1024-scale0.004 > n1024-scale0.004.txt
nice -n 10 $RFM nfa --task alignment-reversing --x-scale 0.004 \
  --data-seeds 4 --net-seeds 8 --out n1024-scale0.004-more > n1024-scale0.004-more.txt
# Reduced size (n = d = width = 256) with the paper's 10 data seeds and 30 networks.
nice -n 10 $RFM nfa --task alignment-reversing --n 256 --d 256 --x-scale 0.01 \
  --data-seeds 10 --net-seeds 30 --out n256-scale0.01 > n256-scale0.01.txt
# The paper's literal reading (rows of unit scale), reduced size: no reversal.
nice -n 10 $RFM nfa --task alignment-reversing --n 256 --d 256 --x-scale 1 \
  --data-seeds 4 --net-seeds 5 --out n256-scale1 > n256-scale1.txt

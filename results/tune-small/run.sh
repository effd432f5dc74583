#!/bin/sh
# rfm fit defaults against rfm tune --time 30s (main's binary and this
# branch's) on the test rows of small UCI-121 sets: the set's
# conxuntos_kfold.dat pairs 0 and 1 (75/25 train/test). CSVs and models go
# to $WORK (outside the repo); one line per run to results.tsv.
#   go build -o /tmp/rfm-main ./cmd/rfm   (in a checkout of main)
#   go build -o /tmp/rfm-new ./cmd/rfm    (in this branch)
#   nice -n 10 sh results/tune-small/run.sh
# What results/tune-small holds was made by (the branch's final binary):
#   NEW=/tmp/rfm-new3 METHODS=tune-new OUT=results/tune-small/results-new01.tsv sh results/tune-small/run.sh
#   NEW=/tmp/rfm-new3 PAIRS="2 3" OUT=results/tune-small/results-pairs23.tsv sh results/tune-small/run.sh
# (results.tsv's tune-new rows are an earlier build of the branch, before the
# kept defaults were fitted as rfm fit fits them; summarize.py uses
# results-new01.tsv's instead.)
set -e
UCI=${UCI:-/work/shared/data/uci121/data}
WORK=${WORK:-/tmp/tune-small}
HERE=$(dirname "$0")
SETS=${SETS:-"breast-cancer-wisc-diag ionosphere statlog-heart heart-cleveland parkinsons"}
PAIRS=${PAIRS:-"0 1"}
METHODS=${METHODS:-"fit tune-main tune-new"}
NEW=${NEW:-/tmp/rfm-new}
OUT=${OUT:-$HERE/results.tsv}
mkdir -p "$WORK"
printf 'set\tpair\ttrain\ttest\tmethod\taccuracy\tlog_loss\tseconds\n' > "$OUT"
for s in $SETS; do
  for k in $PAIRS; do
    python3 "$HERE/prep.py" "$UCI" "$s" "$k" "$WORK"
    tr=$WORK/$s-$k-train.csv te=$WORK/$s-$k-test.csv
    ntr=$(($(wc -l < "$tr") - 1)) nte=$(($(wc -l < "$te") - 1))
    for m in $METHODS; do
      model=$WORK/$s-$k-$m.rfm
      t0=$(date +%s.%N)
      case $m in
        fit) "$NEW" fit --data "$tr" --target clase --out "$model" --quiet ;;
        tune-main) /tmp/rfm-main tune --data "$tr" --target clase --time 30s --out "$model" --quiet ;;
        tune-new) "$NEW" tune --data "$tr" --target clase --time 30s --out "$model" --json > "$WORK/$s-$k-$m.json" 2> "$WORK/$s-$k-$m.err" ;;
      esac
      t1=$(date +%s.%N)
      "$NEW" eval --model "$model" --data "$te" --json --quiet > "$WORK/$s-$k-$m.eval.json"
      python3 - "$WORK/$s-$k-$m.eval.json" "$s" "$k" "$ntr" "$nte" "$m" "$t0" "$t1" >> "$OUT" <<'PY'
import json, sys
e = json.load(open(sys.argv[1]))
acc = e["metrics"]["accuracy"]; ll = e["metrics"]["log_loss"]
print("\t".join([sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], f"{acc:.4f}", f"{ll:.4f}", f"{float(sys.argv[8]) - float(sys.argv[7]):.1f}"]))
PY
    done
  done
done

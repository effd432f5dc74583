#!/bin/bash
# explore.sh NAME SET FITFILE FLAGS...
# Used by a9a-why.md: fits NAME on FITFILE (its own 20% holdout picks the round) and scores SET-val.csv,
# rows never fitted. Prints seconds, validation accuracy and log-loss. RFM=path/to/rfm to choose the binary.
name=$1; set=$2; fit=$3; shift 3
s=$(date +%s.%N)
${RFM:-rfm} fit --data $fit --target target --out m-$name.rfm --quiet "$@" 2> err-$name.txt || { echo "$name FAIL $(tail -2 err-$name.txt)"; exit; }
e=$(date +%s.%N)
acc=$(${RFM:-rfm} eval --model m-$name.rfm --data $set-val.csv --json --quiet | python3 -c 'import json,sys;d=json.load(sys.stdin);print(d["metrics"].get("accuracy"), d["metrics"].get("log_loss"))')
echo "$name $set $(python3 -c "print(round($e-$s,1))")s val=$acc :: $*" | tee -a log.txt

#!/usr/bin/env bash
# The main job on a bundled real data set: UCI "thyroid" (3 772 training
# rows, 3 428 test rows, 21 features, 3 classes) from ../shared/data/uci121,
# read in place. Fits a plain Laplace kernel machine and an RFM on the
# training file, evaluates both on the separate test file, and shows what
# the RFM learned.
# Usage: scripts/demo.sh [DATA_DIR]   (default: ../shared/data/uci121/data)
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh

DATA=${1:-../shared/data/uci121/data}
SET=$DATA/thyroid
if [ ! -f "$SET/thyroid_train_R.dat" ]; then
  echo "demo: $SET/thyroid_train_R.dat not found; pass the uci121 data folder as the first argument" >&2
  exit 1
fi

mkdir -p bin out
echo "== building rfm (backend: ${RFM_TAGS:-pure Go})"
go build -tags "$RFM_TAGS" -o bin/rfm ./cmd/rfm
bin/rfm version

# The *_R.dat files are tab-separated with a header; the unnamed first
# column is a row number (read as "c0") and "clase" is the class.
common=(--target clase --ignore c0 --task classification)

echo
echo "== plain Laplace kernel machine (round 0 only)"
bin/rfm fit --data "$SET/thyroid_train_R.dat" "${common[@]}" --iters 0 --out out/thyroid-laplace.rfm --quiet
bin/rfm eval --model out/thyroid-laplace.rfm --data "$SET/thyroid_test_R.dat"

echo
echo "== Recursive Feature Machine (5 AGOP rounds, papers' defaults)"
bin/rfm fit --data "$SET/thyroid_train_R.dat" "${common[@]}" --out out/thyroid-rfm.rfm
bin/rfm eval --model out/thyroid-rfm.rfm --data "$SET/thyroid_test_R.dat"

echo
echo "== what the RFM learned"
bin/rfm inspect --model out/thyroid-rfm.rfm --top-features 8

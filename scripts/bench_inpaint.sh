#!/bin/sh
# Inpainting benchmark (issue 43), all three columns: `rfm bench inpaint`
# runs the CNTK and the Laplace kernel on every image of ../shared/data/images
# and writes the masks to $WORK; scripts/inpaint_reference.py then runs the
# reference, scikit-image's biharmonic inpainting (Debian python3-skimage,
# never a dependency of rfm), on the same masks and writes reference.csv;
# a second `rfm bench inpaint` (its runs are in $WORK: nothing recomputed)
# joins it to runs.csv, summary.md and the figure grids.
#
#   go build -tags openblas -o /tmp/rfm ./cmd/rfm
#   RFM=/tmp/rfm nice -n 10 scripts/bench_inpaint.sh [extra rfm bench inpaint flags]
#
# REUSE=DIR reuses biharmonic results of an earlier $WORK whose masks have
# the same bytes.
set -eu
RFM=${RFM:-rfm}
IMAGES=${IMAGES:-../shared/data/images}
OUT=${OUT:-results/inpainting}
WORK=${WORK:-/tmp/rfm-bench-inpaint}
"$RFM" bench inpaint --images "$IMAGES" --out "$OUT" --work "$WORK" "$@"
/usr/bin/python3 "$(dirname "$0")/inpaint_reference.py" bench "$IMAGES" "$WORK" "$OUT" ${REUSE:+"$REUSE"}
"$RFM" bench inpaint --images "$IMAGES" --out "$OUT" --work "$WORK" --quiet "$@"

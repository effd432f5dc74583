#!/bin/sh
# Inpainting benchmark (issue 43): every image of ../shared/data/images, three
# tasks (large holes: 12 holes of 16×16 px; 50% and 80% random missing
# pixels), three methods on the same mask: the CNTK (rfm inpaint, uniform
# prior, s = 4 for the holes, which need ⌊log2(16+1)⌋ = 4 downsamplings, and
# s = 3 for random pixels; at most MAX_ITER = 150 CG iterations, as the
# thesis stops EigenPro early), a Laplace kernel on pixel coordinates (rfm inpaint
# --kernel laplace, σ = 2 px) and scikit-image's biharmonic inpainting (the
# reference, scripts/inpaint_reference.py, Debian python3-skimage). PSNR and
# SSIM are computed for all three by the same Python code.
#
#   go build -tags openblas -o /tmp/rfm ./cmd/rfm
#   RFM=/tmp/rfm nice -n 10 scripts/bench_inpaint.sh
#
# Writes results/inpainting/runs.csv, summary.md and the figure grids; the
# per-run images go to $WORK (default /tmp/rfm-bench-inpaint), not the repo.
set -eu
RFM=${RFM:-rfm}
IMAGES=${IMAGES:-../shared/data/images}
OUT=${OUT:-results/inpainting}
WORK=${WORK:-/tmp/rfm-bench-inpaint}
S_HOLES=${S_HOLES:-4}
S_RANDOM=${S_RANDOM:-3}
MAX_ITER=${MAX_ITER:-150}
IMAGE_LIST=${IMAGE_LIST:-$(cd "$IMAGES" && ls ./*.png | sed 's|^\./||; s|\.png$||')}
PY=/usr/bin/python3
REF=$(dirname "$0")/inpaint_reference.py
mkdir -p "$OUT" "$WORK"
runs=$WORK/runs.jsonl
: >"$runs"
for name in $IMAGE_LIST; do
	img=$IMAGES/$name.png
	for task in random50 random80 holes; do
		case $task in
		holes) mask="--holes 12 --hole-size 16" s=$S_HOLES ;;
		random50) mask="--missing 0.5" s=$S_RANDOM ;;
		random80) mask="--missing 0.8" s=$S_RANDOM ;;
		esac
		b=$WORK/$name-$task
		# shellcheck disable=SC2086
		"$RFM" inpaint --image "$img" $mask --seed 1 --s "$s" --max-iter "$MAX_ITER" \
			--out "$b-cntk.png" --mask-out "$b-mask.png" --report "$b-cntk.json" --quiet
		"$RFM" inpaint --image "$img" --mask "$b-mask.png" --kernel laplace --bandwidth 2 \
			--max-iter "$MAX_ITER" --out "$b-laplace.png" --mask-out "$WORK/unused-mask.png" --report "$b-laplace.json" --quiet
		$PY "$REF" biharmonic "$img" "$b-mask.png" "$b-biharmonic.png" >"$b-biharmonic.json"
		$PY "$REF" score "$img" "$b-mask.png" "$b-cntk.png" "$b-laplace.png" "$b-biharmonic.png" >"$b-score.json"
		echo "{\"image\": \"$name\", \"task\": \"$task\", \"base\": \"$b\"}" >>"$runs"
		echo "done $name $task" >&2
	done
done
$PY "$(dirname "$0")/inpaint_table.py" "$runs" "$IMAGES" "$OUT"

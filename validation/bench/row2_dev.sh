#!/usr/bin/env bash
# The one-row plane swept densely (roofcalc/expected/choice.py row_shapes, a factor 2^(1/6) between
# neighbours; kernels/row1 had every other size) and the development plan row-rand3, one GPU, in
# validation/bench: development data for the one-row GEMV model.
#   bash row2_dev.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/row2" "$out/dev"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
python3 choice_sweep.py --rows --out "$out/row2/row-sweep.json" > "$out/row2/row-sweep-log.txt" 2>&1
gzip -9 "$out/row2/row-sweep.json"
python3 ops_bench.py --plan row-rand3 --out "$out/dev/ops-row-rand3.json" --budget-s 120 > "$out/dev/ops-row-rand3-log.txt" 2>&1
date -u >> "$out/date.txt"

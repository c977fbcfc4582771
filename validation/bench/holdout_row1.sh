#!/usr/bin/env bash
# One-row 4-byte GEMMs (x @ B) as cuBLAS's column-walking GEMV kernels, one GPU, in validation/bench:
# first the probe's one-row sweep (roofcalc/expected/choice.py row_shapes, each kernel's block too) and
# the development plan row-rand2, then the op model's fresh hold-out, drawn before the change
# (validation/HOLDOUT.md): the widened generator's seeds 116-119 and the plan row-rand1, committed
# unopened until the model settles.
#   bash holdout_row1.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/row1" "$out/dev" "$out/holdout"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
python3 choice_sweep.py --rows --out "$out/row1/row-sweep.json" > "$out/row1/row-sweep-log.txt" 2>&1
gzip -9 "$out/row1/row-sweep.json"
python3 ops_bench.py --plan row-rand2 --out "$out/dev/ops-row-rand2.json" --budget-s 120 > "$out/dev/ops-row-rand2-log.txt" 2>&1
date -u >> "$out/date.txt"
for s in 116 117 118 119; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/holdout/ops-wide$s.json" --budget-s 120 > "$out/holdout/ops-wide$s-log.txt" 2>&1
done
python3 ops_bench.py --plan row-rand1 --out "$out/holdout/ops-row-rand1.json" --budget-s 120 > "$out/holdout/ops-row-rand1-log.txt" 2>&1
date -u >> "$out/date.txt"

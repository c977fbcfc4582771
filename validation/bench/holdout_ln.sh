#!/usr/bin/env bash
# The op model's fresh hold-out for the two-kernel LayerNorm's loads in flight (ops/layernorm.yaml
# row_normalize), drawn before the change (validation/HOLDOUT.md), one GPU, in validation/bench: the
# widened generator's seeds 80-83 and the plan ln-rand1 (LayerNorm of 1-256 rows of 1-16384 elements).
#   bash holdout_ln.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/holdout"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
for s in 80 81 82 83; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/holdout/ops-wide$s.json" --budget-s 120 > "$out/holdout/ops-wide$s-log.txt" 2>&1
done
python3 ops_bench.py --plan ln-rand1 --out "$out/holdout/ops-ln-rand1.json" --budget-s 120 > "$out/holdout/ops-ln-rand1-log.txt" 2>&1
date -u >> "$out/date.txt"

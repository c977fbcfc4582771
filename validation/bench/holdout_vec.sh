#!/usr/bin/env bash
# The op model's fresh hold-out for the GEMM op's GEMV kernel (ops/gemm.yaml
# gemv), drawn before the change (validation/HOLDOUT.md), one GPU, in validation/bench: the
# widened generator's seeds 92-95 and the plan vec-rand1 (fp32/tf32 GEMMs with a side of 1).
#   bash holdout_vec.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/holdout"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
for s in 92 93 94 95; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/holdout/ops-wide$s.json" --budget-s 120 > "$out/holdout/ops-wide$s-log.txt" 2>&1
done
python3 ops_bench.py --plan vec-rand1 --out "$out/holdout/ops-vec-rand1.json" --budget-s 120 > "$out/holdout/ops-vec-rand1-log.txt" 2>&1
date -u >> "$out/date.txt"

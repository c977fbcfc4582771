#!/usr/bin/env bash
# The op model's fresh hold-out after the review's fixes to the choice map (validation/HOLDOUT.md),
# one GPU, in validation/bench: the widened generator's seeds 68-71 and the plan small16-rand3
# (ops_bench.py).
#   bash holdout_choice4.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
for s in 68 69 70 71; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/ops-wide$s.json" --budget-s 120 > "$out/ops-wide$s-log.txt" 2>&1
done
python3 ops_bench.py --plan small16-rand3 --out "$out/ops-small16-rand3.json" --budget-s 120 > "$out/ops-small16-rand3-log.txt" 2>&1

#!/usr/bin/env bash
# The op model's hold-out after the in-kernel split-K change (validation/HOLDOUT.md): the widened
# generator's seeds 96-99, one GPU, in validation/bench.
#   bash holdout_final.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/holdout"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
for s in 96 97 98 99; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/holdout/ops-wide$s.json" --budget-s 120 > "$out/holdout/ops-wide$s-log.txt" 2>&1
done
date -u >> "$out/date.txt"

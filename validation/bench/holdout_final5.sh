#!/usr/bin/env bash
# The op model's hold-out as the eighth session leaves it (validation/HOLDOUT.md): the widened
# generator's next seeds, 128-131, one GPU, in validation/bench, after the last model change.
#   bash holdout_final5.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/holdout"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
for s in 128 129 130 131; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/holdout/ops-wide$s.json" --budget-s 120 > "$out/holdout/ops-wide$s-log.txt" 2>&1
done
date -u >> "$out/date.txt"

#!/usr/bin/env bash
# The op model's hold-out as the ninth session leaves it (validation/HOLDOUT.md): the widened
# generator's seeds 140-143, one GPU, in validation/bench, after the session's last model change.
#   bash holdout_final8.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/holdout"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
for s in 140 141 142 143; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/holdout/ops-wide$s.json" --budget-s 120 > "$out/holdout/ops-wide$s-log.txt" 2>&1
done
date -u >> "$out/date.txt"

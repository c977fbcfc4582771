#!/usr/bin/env bash
# The op model's hold-out as the tenth session leaves it (validation/HOLDOUT.md): the widened
# generator's seeds 144-147 and the plan small16-rand7 (bf16/fp16 GEMMs with a small side, seed 7),
# one GPU, in validation/bench, after the session's last model change.
#   bash holdout_final9.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/holdout"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
for s in 144 145 146 147; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/holdout/ops-wide$s.json" --budget-s 120 > "$out/holdout/ops-wide$s-log.txt" 2>&1
done
python3 ops_bench.py --plan small16-rand7 --out "$out/holdout/ops-small16-rand7.json" --budget-s 120 > "$out/holdout/ops-small16-rand7-log.txt" 2>&1
date -u >> "$out/date.txt"

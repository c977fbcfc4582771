#!/usr/bin/env bash
# The hold-out of the choice map's shallow plane (validation/HOLDOUT.md, ninth session): the
# widened generator's next seeds, 132-135, and the plan flat-rand1 (GEMMs of large outputs and a
# depth of 1-32), one GPU, in validation/bench, after the change.
#   bash holdout_final6.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/holdout"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
for s in 132 133 134 135; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/holdout/ops-wide$s.json" --budget-s 120 > "$out/holdout/ops-wide$s-log.txt" 2>&1
done
python3 ops_bench.py --plan flat-rand1 --out "$out/holdout/ops-flat-rand1.json" --budget-s 90 > "$out/holdout/ops-flat-rand1-log.txt" 2>&1
date -u >> "$out/date.txt"

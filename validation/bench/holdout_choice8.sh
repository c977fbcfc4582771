#!/usr/bin/env bash
# The GEMM choice map reaching sides up to 64 (roofcalc/expected/choice.py MAP_MAX_SMALL, GRID_MID),
# one GPU, in validation/bench: first the probe's choice sweep over the widened grid (the map's new
# source), then the op model's fresh hold-out, drawn before the change (validation/HOLDOUT.md): the
# widened generator's seeds 104-107 and the plan mid-rand1.
#   bash holdout_choice8.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/choice8" "$out/holdout"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
python3 choice_sweep.py --out "$out/choice8/choice-sweep.json" > "$out/choice8/choice-sweep-log.txt" 2>&1
gzip -9 "$out/choice8/choice-sweep.json"
date -u >> "$out/date.txt"
for s in 104 105 106 107; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/holdout/ops-wide$s.json" --budget-s 120 > "$out/holdout/ops-wide$s-log.txt" 2>&1
done
python3 ops_bench.py --plan mid-rand1 --out "$out/holdout/ops-mid-rand1.json" --budget-s 120 > "$out/holdout/ops-mid-rand1-log.txt" 2>&1
date -u >> "$out/date.txt"

#!/usr/bin/env bash
# The GEMM choice map with depths between 4,096 and 8,192 (roofcalc/expected/choice.py GRID_K_MID), one
# GPU, in validation/bench: first the probe's choice sweep over the widened grid (the map's new
# source), then the op model's fresh hold-out, drawn before the change (validation/HOLDOUT.md): the
# widened generator's seeds 84-87 and the plans small16-rand6, small-rand5 and tall-rand4.
#   bash holdout_choice7.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/choice7" "$out/holdout"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
python3 choice_sweep.py --out "$out/choice7/choice-sweep.json" > "$out/choice7/choice-sweep-log.txt" 2>&1
gzip -9 "$out/choice7/choice-sweep.json"
for s in 84 85 86 87; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/holdout/ops-wide$s.json" --budget-s 120 > "$out/holdout/ops-wide$s-log.txt" 2>&1
done
for p in small16-rand6 small-rand5 tall-rand4; do
  python3 ops_bench.py --plan "$p" --out "$out/holdout/ops-$p.json" --budget-s 120 > "$out/holdout/ops-$p-log.txt" 2>&1
done
date -u >> "$out/date.txt"

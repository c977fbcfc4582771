#!/usr/bin/env bash
# The GEMM choice map with depth granules (roofcalc/expected/choice.py GRID_K_MIXED, granule), one
# GPU, in validation/bench: first the probe's choice sweep over the widened grid (the map's new
# source), then the op model's fresh hold-out, drawn before the change (validation/HOLDOUT.md): the
# widened generator's seeds 72-75 and the plans small16-rand4, small-rand3 and tall-rand3.
#   bash holdout_choice5.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/choice5" "$out/holdout"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
python3 choice_sweep.py --out "$out/choice5/choice-sweep.json" > "$out/choice5/choice-sweep-log.txt" 2>&1
gzip -9 "$out/choice5/choice-sweep.json"
for s in 72 73 74 75; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/holdout/ops-wide$s.json" --budget-s 120 > "$out/holdout/ops-wide$s-log.txt" 2>&1
done
for p in small16-rand4 small-rand3 tall-rand3; do
  python3 ops_bench.py --plan "$p" --out "$out/holdout/ops-$p.json" --budget-s 120 > "$out/holdout/ops-$p-log.txt" 2>&1
done
date -u >> "$out/date.txt"

#!/usr/bin/env bash
# The GEMM choice map reaching depths below 16 (roofcalc/expected/choice.py GRID_K_SMALL),
# one GPU, in validation/bench: first the probe's choice sweep over the widened grid (the map's new
# source), then the op model's fresh hold-out, drawn before the change (validation/HOLDOUT.md): the
# widened generator's seeds 108-111 and the plan tinyk-rand1.
#   bash holdout_choice9.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/choice9" "$out/holdout"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
python3 choice_sweep.py --out "$out/choice9/choice-sweep.json" > "$out/choice9/choice-sweep-log.txt" 2>&1
gzip -9 "$out/choice9/choice-sweep.json"
date -u >> "$out/date.txt"
for s in 108 109 110 111; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/holdout/ops-wide$s.json" --budget-s 120 > "$out/holdout/ops-wide$s-log.txt" 2>&1
done
python3 ops_bench.py --plan tinyk-rand1 --out "$out/holdout/ops-tinyk-rand1.json" --budget-s 120 > "$out/holdout/ops-tinyk-rand1-log.txt" 2>&1
date -u >> "$out/date.txt"

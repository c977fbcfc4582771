#!/usr/bin/env bash
# The GEMM choice map with depths of every alignment (roofcalc/expected/choice.py GRID_K_ALIGNED), one
# GPU, in validation/bench: first the probe's choice sweep over the widened grid (the map's new
# source), then the op model's fresh hold-out, drawn before the change (validation/HOLDOUT.md): the
# widened generator's seeds 76-79 and the plans small16-rand5 and small-rand4.
#   bash holdout_choice6.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/choice6" "$out/holdout"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
python3 choice_sweep.py --out "$out/choice6/choice-sweep.json" > "$out/choice6/choice-sweep-log.txt" 2>&1
gzip -9 "$out/choice6/choice-sweep.json"
for s in 76 77 78 79; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/holdout/ops-wide$s.json" --budget-s 120 > "$out/holdout/ops-wide$s-log.txt" 2>&1
done
for p in small16-rand5 small-rand4; do
  python3 ops_bench.py --plan "$p" --out "$out/holdout/ops-$p.json" --budget-s 120 > "$out/holdout/ops-$p-log.txt" 2>&1
done
date -u >> "$out/date.txt"

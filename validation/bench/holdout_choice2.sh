#!/usr/bin/env bash
# Hold-outs of the flash change (whole tiles, the combine's issue rate), the widened choice map and
# the benchmark's re-timing (validation/HOLDOUT.md), one GPU, in validation/bench: the widened
# generator's seeds 60-63 and the plan small-rand2 (ops_bench.py); then the full probe from the
# repository root, whose calibration holds the widened choice sweep. roofcalc's dependencies must be
# importable (wheels in /tmp/site).
#   bash holdout_choice2.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
for s in 60 61 62 63; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/ops-wide$s.json" --budget-s 120 > "$out/ops-wide$s-log.txt" 2>&1
done
python3 ops_bench.py --plan small-rand2 --out "$out/ops-small-rand2.json" --budget-s 120 > "$out/ops-small-rand2-log.txt" 2>&1
(cd ../.. && OUT="$out/probe" bash roofcalc/probe/device_run.sh)

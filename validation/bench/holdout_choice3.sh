#!/usr/bin/env bash
# Hold-outs of the choice map extended to bf16 and fp16 (validation/HOLDOUT.md), and before it the flash change, the widened map and
# the benchmark's re-timing (validation/HOLDOUT.md), one GPU, in validation/bench: the widened
# generator's seeds 64-67 and the plan small16-rand2 (ops_bench.py); then the full probe from the
# repository root, whose calibration holds the widened choice sweep. roofcalc's dependencies must be
# importable (wheels in /tmp/site).
#   bash holdout_choice3.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
for s in 64 65 66 67; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/ops-wide$s.json" --budget-s 120 > "$out/ops-wide$s-log.txt" 2>&1
done
python3 ops_bench.py --plan small16-rand2 --out "$out/ops-small16-rand2.json" --budget-s 120 > "$out/ops-small16-rand2-log.txt" 2>&1
(cd ../.. && OUT="$out/probe" bash roofcalc/probe/device_run.sh)

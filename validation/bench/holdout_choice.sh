#!/usr/bin/env bash
# Hold-outs of the GEMM choice map change (validation/HOLDOUT.md), one GPU, in validation/bench:
# the widened generator's seeds 56-59 and the plan tall-rand2 (ops_bench.py, repeated-flush pacing);
# then the full probe from the repository root (roofcalc/probe/device_run.sh), whose calibration
# now holds the GEMM choice sweep. roofcalc's dependencies must be importable (wheels in /tmp/site).
#   bash holdout_choice.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
for s in 56 57 58 59; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/ops-wide$s.json" --budget-s 120 > "$out/ops-wide$s-log.txt" 2>&1
done
python3 ops_bench.py --plan tall-rand2 --out "$out/ops-tall-rand2.json" --budget-s 120 > "$out/ops-tall-rand2-log.txt" 2>&1
(cd ../.. && OUT="$out/probe" bash roofcalc/probe/device_run.sh)

#!/usr/bin/env bash
# Development measurements (2026-11-27, fifth session), one GPU, in validation/bench: the widened
# GEMM choice sweep (fp32 with TF32 off and on, few rows or few columns: choice_sweep.py) and the
# kernels and times of the plan "small-rand1" (80 random fp32/tf32 GEMMs in that domain).
#   bash choice2_dev.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 choice_sweep.py --out "$out/choice-sweep.json" > "$out/choice-sweep-log.txt" 2>&1
python3 kernel_shapes.py --plan small-rand1 --out "$out/small-rand1-kernels.json" > "$out/small-rand1-kernels-log.txt" 2>&1
python3 ops_bench.py --plan small-rand1 --out "$out/ops-small-rand1.json" --budget-s 200 > "$out/ops-small-rand1-log.txt" 2>&1

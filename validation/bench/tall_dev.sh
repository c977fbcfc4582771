#!/usr/bin/env bash
# Development measurements (2026-11-27, fourth session), one GPU, in validation/bench: the kernels
# (kernel_shapes.py) and times (ops_bench.py) of the plan "tall": fp32 GEMMs with 2-9 columns,
# and unaligned 16-bit GEMMs with few rows and a deep k.
#   bash tall_dev.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 kernel_shapes.py --plan tall --out "$out/tall-kernels.json" > "$out/tall-kernels-log.txt" 2>&1
python3 ops_bench.py --plan tall --out "$out/tall-times.json" --budget-s 200 > "$out/tall-times-log.txt" 2>&1

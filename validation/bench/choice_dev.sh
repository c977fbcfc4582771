#!/usr/bin/env bash
# Development measurements (2026-11-27, fifth session), one GPU, in validation/bench: cuBLAS's
# kernel choices over the GEMM choice map's grid (choice_sweep.py, as the probe measures them), and
# the kernels (kernel_shapes.py) and times (ops_bench.py) of the plan "tall-rand1": 60 random fp32
# GEMMs in the map's domain.
#   bash choice_dev.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 choice_sweep.py --out "$out/choice-sweep.json" > "$out/choice-sweep-log.txt" 2>&1
python3 kernel_shapes.py --plan tall-rand1 --out "$out/tall-rand1-kernels.json" > "$out/tall-rand1-kernels-log.txt" 2>&1
python3 ops_bench.py --plan tall-rand1 --out "$out/ops-tall-rand1.json" --budget-s 200 > "$out/ops-tall-rand1-log.txt" 2>&1

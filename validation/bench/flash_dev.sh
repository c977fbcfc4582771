#!/usr/bin/env bash
# Development measurements (2026-11-27, fifth session), one GPU, in validation/bench: the kernels
# (kernel_shapes.py) and times (ops_bench.py) of the plan "flash-dev" (tiny and square prompts
# through SDPA's FlashAttention, causal or not); and ops-wide58 timed again with the benchmark's
# re-timing of repetitions that waited for the host (lead_retries).
#   bash flash_dev.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 kernel_shapes.py --plan flash-dev --out "$out/flash-dev-kernels.json" > "$out/flash-dev-kernels-log.txt" 2>&1
python3 ops_bench.py --plan flash-dev --out "$out/ops-flash-dev.json" --budget-s 200 > "$out/ops-flash-dev-log.txt" 2>&1
python3 ops_bench.py --random 150 --wide --seed 58 --out "$out/ops-wide58-rerun.json" --budget-s 120 > "$out/ops-wide58-rerun-log.txt" 2>&1

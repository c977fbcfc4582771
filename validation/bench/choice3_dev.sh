#!/usr/bin/env bash
# Development measurements (2026-11-27, fifth session), one GPU, in validation/bench: the GEMM
# choice sweep extended to bf16 and fp16 (choice_sweep.py: fp32 with TF32 off and on, bf16, fp16,
# few rows or few columns), and the kernels and times of the plan "small16-rand1" (80 random
# bf16/fp16 GEMMs in that domain).
#   bash choice3_dev.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 choice_sweep.py --out "$out/choice-sweep.json" > "$out/choice-sweep-log.txt" 2>&1
python3 kernel_shapes.py --plan small16-rand1 --out "$out/small16-rand1-kernels.json" > "$out/small16-rand1-kernels-log.txt" 2>&1
python3 ops_bench.py --plan small16-rand1 --out "$out/ops-small16-rand1.json" --budget-s 200 > "$out/ops-small16-rand1-log.txt" 2>&1
gzip -9 "$out/choice-sweep.json"

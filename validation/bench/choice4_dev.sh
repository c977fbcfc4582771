#!/usr/bin/env bash
# Development measurements (2026-11-27, fifth session), one GPU, in validation/bench: the GEMM
# choice sweep with odd sizes for TF32 as for bf16 and fp16 (choice_sweep.py: fp32 with TF32 off
# and on, bf16, fp16; few rows or few columns; 25,893 shapes).
#   bash choice4_dev.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 choice_sweep.py --out "$out/choice-sweep.json" > "$out/choice-sweep-log.txt" 2>&1
gzip -9 "$out/choice-sweep.json"

#!/usr/bin/env bash
# Tiny-depth GEMMs' kernels under the profiler (tinyk_kernels.py), one GPU, in validation/bench:
# development data for the next change (no model change rests on it yet).
#   bash tinyk_dev.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/tinyk1"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
python3 tinyk_kernels.py --out "$out/tinyk1/tinyk-kernels.json" > "$out/tinyk1/tinyk-kernels-log.txt" 2>&1
gzip -9 "$out/tinyk1/tinyk-kernels.json"
date -u >> "$out/date.txt"

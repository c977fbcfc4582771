#!/usr/bin/env bash
# Development data for issue 39: host_cpu.py for the two layouts whose host-paced prompts missed in
# impl-holdout8 (qwen3-3b-qk, phi3-2b-h40, 1 x 400), three fresh processes each, one GPU, in
# validation/bench.
#   bash host_cpu.sh OUTDIR
set -uo pipefail
out=$1/host-cpu1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
nproc > "$out/nproc.txt"; grep -m1 "model name" /proc/cpuinfo >> "$out/nproc.txt"; uptime >> "$out/nproc.txt"
for p in 1 2 3; do
  for m in qwen3-3b-qk phi3-2b-h40; do
    PYTHONUNBUFFERED=1 python3 host_cpu.py --model "$m" --seq 400 --out "$out/$m-p$p.json" > "$out/$m-p$p-log.txt" 2>&1 || true
  done
done
date -u >> "$out/date.txt"

#!/usr/bin/env bash
# The nineteenth session's development set h200/compiled-dev1, in validation/bench: what a compiled
# step's layers cost the host in decode and in prefill beside the probe's op loop and compiled chains
# timed in the same seconds (compiled_anatomy.py), one process per model, then a few steps at full
# depth (host2's cases among them).
#   bash compiled_dev1.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  python3 -c "import torch; print('torch', torch.__version__)"; date -u +%FT%TZ; } > "$out/env.txt"
for spec in mistral-7b:decode:9x14720,prefill:2x256 qwen2.5-14b:decode:9x14720,prefill:2x256 qwen2.5-7b:decode:4x4096,prefill:1x256; do
  model=${spec%%:*}
  PYTHONUNBUFFERED=1 python3 compiled_anatomy.py --out "$out" --model "$model" --rounds 30 --cases "${spec#*:}" >> "$out/log.txt" 2>&1
  date -u +%FT%TZ >> "$out/env.txt"
done

#!/usr/bin/env bash
# The eleventh session's second device call, in validation/bench (validation/HOLDOUT.md):
#   cuDNN's SDPA attention alone: the development grid, then the hold-out holdout10 (40 causal
#   prefill shapes, seed 10), committed unopened; then development data of whole steps:
#   transformers' prefill of long prompts, traced (prefill_kernels.py).
#   bash cudnn1.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/cudnn1"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 -c "import torch; print('torch', torch.__version__, 'cudnn', torch.backends.cudnn.version())" >> "$out/smi.txt"
date -u > "$out/date.txt"
python3 cudnn_attn.py --out "$out/cudnn1/dev.json" --plan dev > "$out/cudnn1/dev-log.txt" 2>&1
date -u >> "$out/date.txt"
python3 cudnn_attn.py --out "$out/cudnn1/holdout10.json" --plan holdout10 > "$out/cudnn1/holdout10-log.txt" 2>&1
date -u >> "$out/date.txt"
timeout 200 python3 prefill_kernels.py --out "$out/prefill-dev6" --cases qwen2-1b-kv2:1:16000,llama-2b-kv6:1:12000,phi3-2b-h40:2:6000 > "$out/prefill-dev6-log.txt" 2>&1
date -u >> "$out/date.txt"

#!/usr/bin/env bash
# The twelfth session's seventh device call, in validation/bench (validation/HOLDOUT.md): the
# hold-out impl-holdout15 (four layouts never run; transformers' DynamicCache decode from Python
# and prefill, the fused layout's prefill and graph decode, each step issued from Python with the
# implementation's own host time per layer timed around it, --host-layers), drawn after the
# session's last model change and committed unopened. The steps' times go to the log.
#   bash holdout_impl15.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cudnn', torch.backends.cudnn.version())" >> "$out/smi.txt"
date -u > "$out/date.txt"
IMPL_BENCH_EXTRA=--host-layers bash impl_holdout.sh "$out/impl-holdout15" holdout15 \
  llama-1b-kv4-20l,mistral-3b-kv4-20l,qwen3-1b-kv8-24l,phi3-1b-kv4-22l hf-dynamic,hf-prefill,fused > "$out/impl-holdout15-log.txt" 2>&1
date -u >> "$out/date.txt"

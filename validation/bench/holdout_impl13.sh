#!/usr/bin/env bash
# The twelfth session's fourth device call, in validation/bench (validation/HOLDOUT.md): the
# hold-out impl-holdout13 (four layouts never run; transformers' DynamicCache decode and prefill
# and the fused layout's prefill, each step issued from Python with the implementation's own host
# time per layer timed around it, --host-layers, the tiny models built and warmed before any
# timing; the fused layout's graph decode), drawn after the session's mends of --host-layer and
# committed unopened. The steps' times go to the log, not the console.
#   bash holdout_impl13.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cudnn', torch.backends.cudnn.version())" >> "$out/smi.txt"
date -u > "$out/date.txt"
IMPL_BENCH_EXTRA=--host-layers bash impl_holdout.sh "$out/impl-holdout13" holdout13 \
  llama-1b-kv8-24l,mistral-1b-kv4-26l,qwen2-2b-kv4-20l,qwen3-2b-kv4-20l hf-dynamic,hf-prefill,fused > "$out/impl-holdout13-log.txt" 2>&1
date -u >> "$out/date.txt"

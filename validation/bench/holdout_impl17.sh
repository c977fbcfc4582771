#!/usr/bin/env bash
# The thirteenth session's second hold-out, in validation/bench (validation/HOLDOUT.md): impl-holdout17
# (five layouts never run; transformers' DynamicCache decode from Python and prefill, the fused
# layout's prefill and graph decode, each step issued from Python with the implementation's own
# host time per layer timed around it under torch.no_grad(), --host-layers), drawn before it was
# measured and committed unopened. The steps' times go to the log.
#   bash holdout_impl17.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cudnn', torch.backends.cudnn.version())" >> "$out/smi.txt"
date -u > "$out/date.txt"
IMPL_BENCH_EXTRA=--host-layers bash impl_holdout.sh "$out/impl-holdout17" holdout17 \
  llama-3b-kv4-14l,mistral-2b-kv8-20l,qwen2-2b-kv6-20l,qwen3-2b-kv4-16l,phi3-1b-kv6-24l hf-dynamic,hf-prefill,fused > "$out/impl-holdout17-log.txt" 2>&1
date -u >> "$out/date.txt"

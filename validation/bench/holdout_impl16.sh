#!/usr/bin/env bash
# The thirteenth session's hold-out, in validation/bench (validation/HOLDOUT.md): impl-holdout16
# (four layouts never run; transformers' DynamicCache decode from Python and prefill, the fused
# layout's prefill and graph decode, each step issued from Python with the implementation's own
# host time per layer timed around it under torch.no_grad(), --host-layers), drawn before it was
# measured and committed unopened. The steps' times go to the log.
#   bash holdout_impl16.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cudnn', torch.backends.cudnn.version())" >> "$out/smi.txt"
date -u > "$out/date.txt"
IMPL_BENCH_EXTRA=--host-layers bash impl_holdout.sh "$out/impl-holdout16" holdout16 \
  llama-2b-kv6-16l,mistral-1b-kv2-24l,qwen3-1b-kv2-18l,phi3-2b-kv10-20l hf-dynamic,hf-prefill,fused > "$out/impl-holdout16-log.txt" 2>&1
date -u >> "$out/date.txt"

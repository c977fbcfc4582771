#!/usr/bin/env bash
# The twelfth session's fifth device call, in validation/bench (validation/HOLDOUT.md): the
# hold-out impl-holdout14 (four layouts never run; transformers' DynamicCache decode from Python
# and prefill, each step with transformers' own host time per layer timed around it,
# --host-layers), drawn after host_ops_native and committed unopened. The steps' times go to the
# log, not the console.
#   bash holdout_impl14.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cudnn', torch.backends.cudnn.version())" >> "$out/smi.txt"
date -u > "$out/date.txt"
IMPL_BENCH_EXTRA=--host-layers bash impl_holdout.sh "$out/impl-holdout14" holdout14 \
  llama-2b-kv2-22l,mistral-2b-kv6-18l,qwen2-1b-kv2-28l,phi3-2b-kv8-16l hf-dynamic,hf-prefill > "$out/impl-holdout14-log.txt" 2>&1
date -u >> "$out/date.txt"

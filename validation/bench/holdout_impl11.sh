#!/usr/bin/env bash
# The twelfth session's second device call, in validation/bench (validation/HOLDOUT.md): the
# hold-out impl-holdout11 (four layouts never run; transformers' and the fused layout's prefill,
# each prompt with the implementation's own host time per layer timed around it, --host-layers;
# the fused layout's graph decode), drawn before that figure enters the model and committed
# unopened. The steps' times go to the log, not to the console.
#   bash holdout_impl11.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cudnn', torch.backends.cudnn.version())" >> "$out/smi.txt"
date -u > "$out/date.txt"
IMPL_BENCH_EXTRA=--host-layers bash impl_holdout.sh "$out/impl-holdout11" holdout11 \
  llama-1b-kv2-20l,mistral-3b-h24-16l,qwen3-2b-kv8,phi3-2b-kv4-18l hf-prefill,fused > "$out/impl-holdout11-log.txt" 2>&1
date -u >> "$out/date.txt"

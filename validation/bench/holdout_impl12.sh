#!/usr/bin/env bash
# The twelfth session's third device call, in validation/bench (validation/HOLDOUT.md): the
# hold-out impl-holdout12 (five layouts never run; transformers' and the fused layout's prefill,
# each prompt with the implementation's own host time per layer timed around it, --host-layers,
# the tiny models built and warmed before any timing; the fused layout's graph decode), drawn
# after impl-holdout11 and committed unopened. The steps' times go to the log, not the console.
#   bash holdout_impl12.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cudnn', torch.backends.cudnn.version())" >> "$out/smi.txt"
date -u > "$out/date.txt"
IMPL_BENCH_EXTRA=--host-layers bash impl_holdout.sh "$out/impl-holdout12" holdout12 \
  llama-2b-kv4-18l,mistral-2b-h32hd64,qwen2-1b-kv2-24l,qwen3-1b-kv2-28l,phi3-1b-kv8-20l hf-prefill,fused > "$out/impl-holdout12-log.txt" 2>&1
date -u >> "$out/date.txt"

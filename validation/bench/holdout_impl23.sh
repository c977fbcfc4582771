#!/usr/bin/env bash
# The sixteenth session's second hold-out of the named implementations as they settle, in validation/bench
# (validation/HOLDOUT.md): impl-holdout23 (seven layouts never run, drawn at random by draw_holdout23.py; transformers' StaticCache decode replayed from a CUDA graph; transformers' DynamicCache decode
# from Python, each case timed twice in its process, the second time with cuDNN's plans for its
# lengths cached, --dynamic-warm; and host-paced prefills; the implementation's own host time per
# layer timed around each under torch.no_grad(), --host-layers; the fused layout's prefill and graph
# decode), drawn before it was measured and
# committed unopened. The steps' times go to the log.
#   bash holdout_impl23.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cudnn', torch.backends.cudnn.version())" >> "$out/smi.txt"
date -u > "$out/date.txt"
IMPL_BENCH_EXTRA="--host-layers --dynamic-warm" bash impl_holdout.sh "$out/impl-holdout23" holdout23 \
  llama-3b-kv1-19l,mistral-2b-kv4-18l,qwen2-1b-kv3-25l,qwen3-1b-kv2-15l,phi3-2b-kv2-17l,llama-1b-kv3-23l,mistral-2b-kv1-21l-f6144 hf-static,hf-dynamic,hf-prefill,fused > "$out/impl-holdout23-log.txt" 2>&1
date -u >> "$out/date.txt"

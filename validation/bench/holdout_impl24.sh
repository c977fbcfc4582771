#!/usr/bin/env bash
# The twentieth session's hold-out of the named implementations as they settle, in validation/bench
# (validation/HOLDOUT.md): impl-holdout24 (seven layouts never run, drawn at random by draw_holdout24.py; transformers' StaticCache decode replayed from a CUDA graph; transformers' DynamicCache decode
# from Python, each case timed twice in its process, the second time with cuDNN's plans for its
# lengths cached, --dynamic-warm; and host-paced prefills; the implementation's own host time per
# layer timed around each under torch.no_grad(), --host-layers; the fused layout's prefill and graph
# decode), drawn before it was measured and
# committed unopened. The steps' times go to the log.
#   bash holdout_impl24.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cudnn', torch.backends.cudnn.version())" >> "$out/smi.txt"
date -u > "$out/date.txt"
IMPL_BENCH_EXTRA="--host-layers --dynamic-warm" bash impl_holdout.sh "$out/impl-holdout24" holdout24 \
  llama-2b-kv1-22l,mistral-2b-kv3-14l,qwen2-2b-kv1-23l,qwen3-2b-kv1-17l,phi3-1b-kv8-22l,llama-2b-kv6-16l-h3072,mistral-2b-kv2-14l-f8192 hf-static,hf-dynamic,hf-prefill,fused > "$out/impl-holdout24-log.txt" 2>&1
date -u >> "$out/date.txt"

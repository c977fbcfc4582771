#!/usr/bin/env bash
# The fourteenth session's hold-out of the refitted host figures per layer, in validation/bench
# (validation/HOLDOUT.md): impl-holdout20 (seven layouts never run, drawn at random; transformers' DynamicCache decode
# from Python, each case timed twice in its process, the second time with cuDNN's plans for its
# lengths cached, --dynamic-warm; and host-paced prefills; the implementation's own host time per
# layer timed around each under torch.no_grad(), --host-layers; the fused layout's prefill and graph
# decode), drawn before it was measured and
# committed unopened. The steps' times go to the log.
#   bash holdout_impl20.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cudnn', torch.backends.cudnn.version())" >> "$out/smi.txt"
date -u > "$out/date.txt"
IMPL_BENCH_EXTRA="--host-layers --dynamic-warm" bash impl_holdout.sh "$out/impl-holdout20" holdout20 \
  llama-1b-kv4-14l,mistral-3b-kv2-25l,qwen2-3b-kv6-18l,qwen3-3b-kv8-22l,phi3-3b-kv8-18l-f9728,llama-2b-kv2-20l,mistral-2b-kv1-21l hf-dynamic,hf-prefill,fused > "$out/impl-holdout20-log.txt" 2>&1
date -u >> "$out/date.txt"

#!/usr/bin/env bash
# The thirteenth session's last hold-out, in validation/bench
# (validation/HOLDOUT.md): impl-holdout19 (four layouts never run; transformers' DynamicCache decode
# from Python, each case timed twice in its process, the second time with cuDNN's plans for its
# lengths cached, --dynamic-warm; and host-paced prefills; the implementation's own host time per
# layer timed around each under torch.no_grad(), --host-layers; the fused layout's prefill and graph
# decode), drawn before it was measured and
# committed unopened. The steps' times go to the log.
#   bash holdout_impl19.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cudnn', torch.backends.cudnn.version())" >> "$out/smi.txt"
date -u > "$out/date.txt"
IMPL_BENCH_EXTRA="--host-layers --dynamic-warm" bash impl_holdout.sh "$out/impl-holdout19" holdout19 \
  llama-1b-kv8-20l,mistral-2b-kv6-22l,qwen2-1b-kv4-24l,phi3-2b-kv4-20l hf-dynamic,hf-prefill,fused > "$out/impl-holdout19-log.txt" 2>&1
date -u >> "$out/date.txt"

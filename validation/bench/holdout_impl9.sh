#!/usr/bin/env bash
# The eleventh session's device call, in validation/bench (validation/HOLDOUT.md):
#   the named implementations' hold-out impl-holdout9 (five layouts never run, every
#   implementation), measured before any change of the session and committed unopened; then
#   development data: prefill_kernels.py (transformers' prefill traced at every shape, and its
#   linear layers timed alone with and without a bias).
#   bash holdout_impl9.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__)" >> "$out/smi.txt"
date -u > "$out/date.txt"
bash impl_holdout.sh "$out/impl-holdout9" holdout9 qwen2-2b-kv2b,llama-1b-hd64,qwen3-1b-kv4,mistral-3b-kv4,phi3-1b-kv4 > "$out/impl-holdout9-log.txt" 2>&1
date -u >> "$out/date.txt"
timeout 220 python3 prefill_kernels.py --out "$out/prefill-dev5" > "$out/prefill-dev5-log.txt" 2>&1
date -u >> "$out/date.txt"

#!/usr/bin/env bash
# The eleventh session's fourth device call (asked for an H200), in validation/bench
# (validation/HOLDOUT.md): the hold-outs impl-holdout10 (three layouts never run, every
# implementation) and ops-sdpa-rand2 (plain SDPA calls, seed 2), both drawn after the session's
# last model change and committed unopened.
#   bash holdout_impl10.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 -c "import torch, transformers; print('torch', torch.__version__, 'transformers', transformers.__version__, 'cudnn', torch.backends.cudnn.version())" >> "$out/smi.txt"
date -u > "$out/date.txt"
python3 ops_bench.py --plan sdpa-rand2 --out "$out/ops-sdpa-rand2.json" --budget-s 150 > "$out/ops-sdpa-rand2-log.txt" 2>&1
date -u >> "$out/date.txt"
bash impl_holdout.sh "$out/impl-holdout10" holdout10 qwen2-1b-h14kv2,llama-2b-h40hd64,mistral-2b-kv2 > "$out/impl-holdout10-log.txt" 2>&1
date -u >> "$out/date.txt"

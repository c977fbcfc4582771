#!/usr/bin/env bash
# The ninth session's first device call, in validation/bench (validation/HOLDOUT.md):
#   part "ops": development data for the choice map's shallow plane (large outputs, k of 1-32:
#     the sweep of roofcalc/expected/choice.py shallow_shapes, and ops_bench's plan flat-rand2),
#     then the reference and compiled implementations' hold-out llm-holdout22 (llm_bench.py);
#   part "impl": the named implementations' hold-out impl-holdout8 (transformers' graph decode,
#     DynamicCache decode and prefill, and the fused layout, of five layouts never run).
#   bash holdout_impl8.sh OUTDIR ops|impl
set -uo pipefail
out=$1; part=$2
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi-$part.txt"
date -u > "$out/date-$part.txt"
if [ "$part" = ops ]; then
  mkdir -p "$out/shallow1" "$out/flat-dev"
  PYTHONUNBUFFERED=1 python3 choice_sweep.py --shallow --out "$out/shallow1/shallow-sweep.json" > "$out/shallow1/log.txt" 2>&1
  date -u >> "$out/date-$part.txt"
  python3 ops_bench.py --plan flat-rand2 --out "$out/flat-dev/ops-flat-rand2.json" --budget-s 90 > "$out/flat-dev/ops-flat-rand2-log.txt" 2>&1
  date -u >> "$out/date-$part.txt"
  PYTHONUNBUFFERED=1 python3 llm_bench.py --out "$out/llm-holdout22.json" --models llama-3.2-3b,qwen2.5-7b,llama-2-7b --phases decode,prefill --engines eager,compiled --batches 5,28 --contexts 4200 --seqs 900 --budget-s 200 > "$out/llm-holdout22-log.txt" 2>&1
else
  bash impl_holdout.sh "$out/impl-holdout8" holdout8 llama-2b-kv6,qwen3-3b-qk,qwen2-1b-kv2,mistral-hd128-20l,phi3-2b-h40 > "$out/impl-holdout8-log.txt" 2>&1
fi
date -u >> "$out/date-$part.txt"

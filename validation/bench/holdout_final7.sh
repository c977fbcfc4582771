#!/usr/bin/env bash
# The hold-out of the shallow plane's aligned columns (validation/HOLDOUT.md, ninth session): the
# widened generator's seeds 136-139 and the plan flat-rand3, one GPU, in validation/bench, after the
# change. Then development data for issue 39: transformers' prefill of impl-holdout8's Qwen3 layout
# (qwen3-3b-qk, one of its three host-paced misses) timed again in a fresh process, one step traced.
#   bash holdout_final7.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/holdout"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
for s in 136 137 138 139; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/holdout/ops-wide$s.json" --budget-s 120 > "$out/holdout/ops-wide$s-log.txt" 2>&1
done
python3 ops_bench.py --plan flat-rand3 --out "$out/holdout/ops-flat-rand3.json" --budget-s 90 > "$out/holdout/ops-flat-rand3-log.txt" 2>&1
date -u >> "$out/date.txt"
PYTHONUNBUFFERED=1 python3 impl_bench.py --out "$out/impl-dev4-qwen3" --set holdout8 --models qwen3-3b-qk --impls hf-prefill --host --trace --budget-s 90 > "$out/impl-dev4-qwen3-log.txt" 2>&1
date -u >> "$out/date.txt"

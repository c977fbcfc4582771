#!/usr/bin/env bash
# The op model's hold-out for the stores of pre-Hopper GEMM kernels (validation/HOLDOUT.md): the
# widened generator's seeds 100-103 and the shallow-depth plan's seed 1, one GPU, in
# validation/bench. Then development data for the implementations issue: transformers' Phi-3
# prefill of impl-holdout5 again, timed and traced (its host-paced steps ran 1.43x the model).
#   bash holdout_final3.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/holdout" "$out/dev"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
for s in 100 101 102 103; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/holdout/ops-wide$s.json" --budget-s 120 > "$out/holdout/ops-wide$s-log.txt" 2>&1
done
python3 ops_bench.py --plan shallow-rand1 --out "$out/holdout/ops-shallow-rand1.json" --budget-s 120 > "$out/holdout/ops-shallow-rand1-log.txt" 2>&1
date -u >> "$out/date.txt"
PYTHONUNBUFFERED=1 python3 impl_bench.py --out "$out/dev/phi3-prefill" --set holdout5 --models phi3-mini-12l --impls hf-prefill --host --trace --budget-s 90 > "$out/dev/phi3-prefill-log.txt" 2>&1
date -u >> "$out/date.txt"

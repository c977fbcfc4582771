#!/usr/bin/env bash
# Development measurements of 2026-11-27 (fourth session), one GPU, in validation/bench:
#  1. ops_bench's wide draw of seed 43 (an H100 hold-out already seen, in-sample from now on)
#     timed with the GPU spin after each flush (--pacing spin) and, for its host-paced kinds,
#     with the flush alone (--pacing flush), on the same machine;
#  2. skinny cuBLAS products (--plan skinny): their kernels (kernel_shapes.py) and their times;
#  3. transformers' host time per decoder layer at 200 tokens (host_layers.py), four configs,
#     in two processes one after the other.
#   bash pacing_dev.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
python3 ops_bench.py --random 150 --wide --seed 43 --pacing spin --out "$out/wide43-spin.json" --budget-s 200 > "$out/wide43-spin-log.txt" 2>&1
python3 ops_bench.py --random 150 --wide --seed 43 --pacing flush --only 'naive|gemv|layernorm|softmax|dot' --out "$out/wide43-flush.json" --budget-s 100 > "$out/wide43-flush-log.txt" 2>&1
python3 kernel_shapes.py --plan skinny --out "$out/skinny-kernels.json" > "$out/skinny-kernels-log.txt" 2>&1
python3 ops_bench.py --plan skinny --out "$out/skinny-times.json" --budget-s 100 > "$out/skinny-times-log.txt" 2>&1
for run in a b; do
  python3 host_layers.py --out "$out/host-layers-$run" --models llama-1b-deep,phi3-mini-12l,mistral-4b,qwen2-1b-narrow --impls hf --seq 200 --full > "$out/host-layers-$run-log.txt" 2>&1
done

#!/usr/bin/env bash
# The op model's fresh hold-outs on one GPU, in validation/bench, with ops_bench's default
# (repeated-flush) pacing; then, as development data, the host-paced kinds of the seed-43 draw
# under the repeated flush and under the flush alone, on the same machine.
#   bash holdout_wide.sh OUTDIR "46 47 48 49"
set -uo pipefail
out=$1; seeds=$2
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
for s in $seeds; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/ops-wide$s.json" --budget-s 120 > "$out/ops-wide$s-log.txt" 2>&1
done
for p in repeat flush; do
  python3 ops_bench.py --random 150 --wide --seed 43 --pacing $p --only 'naive|gemv|layernorm|softmax|dot' --out "$out/ops-wide43-$p.json" --budget-s 100 > "$out/ops-wide43-$p-log.txt" 2>&1
done

#!/usr/bin/env bash
# The naive attention's batched GEMMs over key lengths that are not 16-byte aligned, one GPU, in
# validation/bench: first their kernels under the profiler (naive_kernels.py) and the development
# plan naive-short-rand2, then the op model's fresh hold-out, drawn before the change
# (validation/HOLDOUT.md): the widened generator's seeds 124-127 and the plan naive-short-rand1,
# committed unopened until the model settles.
#   bash holdout_naive1.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/naive1" "$out/dev" "$out/holdout"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
python3 naive_kernels.py --out "$out/naive1/naive-kernels.json" > "$out/naive1/naive-kernels-log.txt" 2>&1
gzip -9 "$out/naive1/naive-kernels.json"
python3 ops_bench.py --plan naive-short-rand2 --out "$out/dev/ops-naive-short-rand2.json" --budget-s 120 > "$out/dev/ops-naive-short-rand2-log.txt" 2>&1
date -u >> "$out/date.txt"
for s in 124 125 126 127; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/holdout/ops-wide$s.json" --budget-s 120 > "$out/holdout/ops-wide$s-log.txt" 2>&1
done
python3 ops_bench.py --plan naive-short-rand1 --out "$out/holdout/ops-naive-short-rand1.json" --budget-s 120 > "$out/holdout/ops-naive-short-rand1-log.txt" 2>&1
date -u >> "$out/date.txt"

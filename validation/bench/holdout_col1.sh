#!/usr/bin/env bash
# One-column 4-byte GEMMs (A @ x, a dot product at one row) as cuBLAS's GEMV kernels, one GPU, in
# validation/bench: first the probe's one-column sweep (roofcalc/expected/choice.py column_shapes,
# each kernel's block too), torch.mv against torch.matmul on a few shapes (mv_paths.py) and the
# development plan col-rand2, then the op model's fresh hold-out, drawn before the change
# (validation/HOLDOUT.md): the widened generator's seeds 120-123 and the plan col-rand1, committed
# unopened until the model settles.
#   bash holdout_col1.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/col1" "$out/dev" "$out/holdout"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
python3 choice_sweep.py --cols --out "$out/col1/col-sweep.json" > "$out/col1/col-sweep-log.txt" 2>&1
gzip -9 "$out/col1/col-sweep.json"
python3 mv_paths.py --out "$out/col1/mv-paths.json" > "$out/col1/mv-paths-log.txt" 2>&1
gzip -9 "$out/col1/mv-paths.json"
python3 ops_bench.py --plan col-rand2 --out "$out/dev/ops-col-rand2.json" --budget-s 120 > "$out/dev/ops-col-rand2-log.txt" 2>&1
date -u >> "$out/date.txt"
for s in 120 121 122 123; do
  python3 ops_bench.py --random 150 --wide --seed "$s" --out "$out/holdout/ops-wide$s.json" --budget-s 120 > "$out/holdout/ops-wide$s-log.txt" 2>&1
done
python3 ops_bench.py --plan col-rand1 --out "$out/holdout/ops-col-rand1.json" --budget-s 120 > "$out/holdout/ops-col-rand1-log.txt" 2>&1
date -u >> "$out/date.txt"

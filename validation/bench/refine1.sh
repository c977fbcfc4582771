#!/usr/bin/env bash
# The choice map's refinement (roofcalc/expected/choice.py refine_shapes, REFINE_PASSES passes over
# the registry's sweep kernels/choice8, as the probe refines its own grid), then, in the same call,
# the pre-registered op-model hold-out (holdout_final9.sh), committed unopened. One GPU, in
# validation/bench; kernels/choice8/choice-sweep.json.gz carried beside it.
#   bash refine1.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/refine1"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/refine1/smi.txt"
date -u > "$out/refine1/date.txt"
python3 choice_sweep.py --refine ../expected/h100/kernels/choice8/choice-sweep.json.gz --out "$out/refine1/refine-sweep.json" > "$out/refine1/refine-sweep-log.txt" 2>&1
gzip -9 "$out/refine1/refine-sweep.json"
date -u >> "$out/refine1/date.txt"
bash holdout_final9.sh "$out/holdout9"

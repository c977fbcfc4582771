#!/usr/bin/env bash
# The hold-out of the Phi-3 rotary cat (validation/HOLDOUT.md: impl-holdout7): transformers' graph
# decode and prefill of three Phi-3 layouts never run before, one GPU, in validation/bench. Then
# development data for issue 39: one config's host-paced prefills in three processes, one after
# the other, each with the host's speed timed around each step (how far apart processes are).
#   bash holdout_impl7.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/host-procs"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
PYTHONUNBUFFERED=1 python3 impl_bench.py --out "$out/impl-holdout7" --set holdout7 --impls hf-static,hf-prefill --host --budget-s 240 > "$out/impl-holdout7-log.txt" 2>&1
date -u >> "$out/date.txt"
for p in 1 2 3; do
  PYTHONUNBUFFERED=1 python3 impl_bench.py --out "$out/host-procs/p$p" --set holdout5 --models qwen2-1b-narrow --impls hf-prefill --host --budget-s 60 > "$out/host-procs/p$p-log.txt" 2>&1 || true
done
date -u >> "$out/date.txt"

#!/usr/bin/env bash
# Development data for issue 39 (no model change rests on it): transformers' prefill of two of
# impl-holdout8's layouts whose host-paced prompts missed (qwen3-3b-qk, phi3-2b-h40), each in four
# fresh processes one after the other, 15 steps a shape with the host's speed timed around them:
# how far one host-paced step moves within a process and between processes, against what the
# host's hot-loop figure says. One GPU, in validation/bench.
#   bash host_procs2.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/host-procs2"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/host-procs2/smi.txt"
date -u > "$out/host-procs2/date.txt"
for m in qwen3-3b-qk phi3-2b-h40; do
  for p in 1 2 3 4; do
    PYTHONUNBUFFERED=1 python3 impl_bench.py --out "$out/host-procs2/$m-p$p" --set holdout8 --models "$m" --impls hf-prefill --host --steps 15 --budget-s 60 > "$out/host-procs2/$m-p$p-log.txt" 2>&1 || true
  done
done
date -u >> "$out/host-procs2/date.txt"

#!/usr/bin/env bash
# The sixteenth session's hold-out of transformers at TP=2 (validation/HOLDOUT.md): h200x2/hf-tp-holdout5,
# four layouts never run, drawn at random by draw_tp_holdout5.py; StaticCache decode replayed from a
# CUDA graph, prefill and DynamicCache decode from Python, the hot loop timed around each step issued
# from Python. Committed unopened; the steps' times go to the log.
#   bash holdout_tp5.sh OUTDIR        (on two GPUs)
set -uo pipefail
out=$1
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv > "$out/smi.txt"
date -u >> "$out/smi.txt"
torchrun --nproc-per-node 2 hf_tp.py --out "$out" --set holdout5 --budget-s 300 > "$out/log.txt" 2>&1
date -u >> "$out/smi.txt"

#!/usr/bin/env bash
# The twentieth session's hold-out h200/host7 (validation/HOLDOUT.md), in validation/bench: the
# reference and compiled implementations (llm_bench.py) on steps Python issues, as drawn by
# draw_llm_host3.py (its seed "roofcalc h200 host7 2026-11-28") before they were measured, with the host's figures (host_rate.py) timed before and
# after them in the same call. The steps' times go to the files and the log.
#   bash holdout_llm_host7.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  python3 -c "import torch; print('torch', torch.__version__)"; date -u +%FT%TZ; } > "$out/env.txt"
python3 host_rate.py --out "$out/host-rate.json" > "$out/log.txt" 2>&1
date -u +%FT%TZ >> "$out/env.txt"
PYTHONUNBUFFERED=1 python3 llm_bench.py --out "$out/llm-decode.json" --models mistral-7b,qwen2.5-7b,llama-3.1-8b --phases decode --engines eager,compiled --graphs off --batches 1,11 --contexts 8128,15552 --budget-s 140 >> "$out/log.txt" 2>&1
date -u +%FT%TZ >> "$out/env.txt"
PYTHONUNBUFFERED=1 python3 llm_bench.py --out "$out/llm-prefill.json" --models mistral-7b,qwen2.5-7b,llama-3.1-8b --phases prefill --engines eager,compiled --batches 1,2 --seqs 192,240 --budget-s 140 >> "$out/log.txt" 2>&1
date -u +%FT%TZ >> "$out/env.txt"
python3 host_rate.py --out "$out/host-rate-after.json" >> "$out/log.txt" 2>&1
date -u +%FT%TZ >> "$out/env.txt"

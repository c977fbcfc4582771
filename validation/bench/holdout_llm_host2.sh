#!/usr/bin/env bash
# The seventeenth session's hold-out h200/host2 (validation/HOLDOUT.md), in validation/bench: the
# reference and compiled implementations (llm_bench.py) on steps Python issues, as drawn by
# draw_llm_host2.py before they were measured, with the host's figures (host_rate.py) timed before and
# after them in the same call. The steps' times go to the files and the log.
#   bash holdout_llm_host2.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc
  python3 -c "import torch; print('torch', torch.__version__)"; date -u +%FT%TZ; } > "$out/env.txt"
python3 host_rate.py --out "$out/host-rate.json" > "$out/log.txt" 2>&1
date -u +%FT%TZ >> "$out/env.txt"
PYTHONUNBUFFERED=1 python3 llm_bench.py --out "$out/llm-decode.json" --models qwen2.5-14b,llama-2-7b,mistral-7b --phases decode --engines eager,compiled --graphs off --batches 9,15 --contexts 14720,15360 --budget-s 170 >> "$out/log.txt" 2>&1
date -u +%FT%TZ >> "$out/env.txt"
PYTHONUNBUFFERED=1 python3 llm_bench.py --out "$out/llm-prefill.json" --models qwen2.5-14b,llama-2-7b,mistral-7b --phases prefill --engines eager,compiled --batches 2,4 --seqs 256,448 --budget-s 170 >> "$out/log.txt" 2>&1
date -u +%FT%TZ >> "$out/env.txt"
python3 host_rate.py --out "$out/host-rate-after.json" >> "$out/log.txt" 2>&1
date -u +%FT%TZ >> "$out/env.txt"

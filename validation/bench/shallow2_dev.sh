#!/usr/bin/env bash
# The shallow plane's columns of 4- and 8-byte alignment (choice_sweep.py --shallow-aligned), one
# GPU, in validation/bench: development data for the change that reads them (validation/HOLDOUT.md).
#   bash shallow2_dev.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/shallow2"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/shallow2/smi.txt"
date -u > "$out/shallow2/date.txt"
PYTHONUNBUFFERED=1 python3 choice_sweep.py --shallow-aligned --out "$out/shallow2/shallow-aligned.json" > "$out/shallow2/shallow-aligned-log.txt" 2>&1
gzip -9 "$out/shallow2/shallow-aligned.json"
date -u >> "$out/shallow2/date.txt"

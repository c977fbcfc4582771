#!/usr/bin/env bash
# The shallow plane's other columns of 4- and 8-byte alignment (choice_sweep.py --shallow-aligned-rest), one
# GPU, in validation/bench: development data for the change that reads them (validation/HOLDOUT.md).
#   bash shallow3_dev.sh OUTDIR
set -uo pipefail
out=$1
mkdir -p "$out/shallow3"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/shallow3/smi.txt"
date -u > "$out/shallow3/date.txt"
PYTHONUNBUFFERED=1 python3 choice_sweep.py --shallow-aligned-rest --out "$out/shallow3/shallow-aligned-rest.json" > "$out/shallow3/shallow-aligned-rest-log.txt" 2>&1
gzip -9 "$out/shallow3/shallow-aligned-rest.json"
date -u >> "$out/shallow3/date.txt"

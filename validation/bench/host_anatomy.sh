#!/usr/bin/env bash
# host_anatomy.py, one process per model, within a time budget (seconds).
#   bash host_anatomy.sh OUTDIR "model,model,..." BUDGET_S
set -uo pipefail
out=$1; models=$2; budget=${3:-400}
start=$(date +%s)
mkdir -p "$out"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > "$out/smi.txt"
date -u > "$out/date.txt"
for m in ${models//,/ }; do
  if (( $(date +%s) - start > budget )); then echo "budget spent before $m"; continue; fi
  PYTHONUNBUFFERED=1 python3 host_anatomy.py --out "$out/$m" --models "$m"
done
date -u >> "$out/date.txt"

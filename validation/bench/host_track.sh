#!/usr/bin/env bash
# host_track.py, one process per model, every model twice (two passes), within a time budget.
#   bash host_track.sh OUTDIR "model,model,..." BUDGET_S
set -uo pipefail
out=$1; models=$2; budget=${3:-480}
start=$(date +%s)
for pass in 1 2; do
  for m in ${models//,/ }; do
    if (( $(date +%s) - start > budget )); then echo "budget spent before $m pass $pass"; continue; fi
    PYTHONUNBUFFERED=1 python3 host_track.py --out "$out/p$pass-$m" --models "$m"
  done
done

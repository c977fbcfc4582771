#!/usr/bin/env bash
# host_seq.py, one process per model, each model twice.   bash host_seq.sh OUTDIR "m1,m2" BUDGET_S
set -uo pipefail
out=$1; models=$2; budget=${3:-400}
start=$(date +%s)
for pass in 1 2; do
  for m in ${models//,/ }; do
    if (( $(date +%s) - start > budget )); then echo "budget spent before $m pass $pass"; continue; fi
    PYTHONUNBUFFERED=1 python3 host_seq.py --out "$out/p$pass-$m" --models "$m"
  done
done

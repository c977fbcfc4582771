#!/usr/bin/env bash
# host_state.py in three processes at the same time, pinned to three CPUs (the first, the middle and
# the last the machine lists): do the CPUs switch speed together (the machine's clock or power) or
# each on its own (other work on the same physical cores)?
#   bash host_state_pair.sh OUTDIR [SECONDS]
set -uo pipefail
out=$1; secs=${2:-40}
mkdir -p "$out"
{ lscpu; nvidia-smi --query-gpu=name,driver_version --format=csv; } > "$out/machine.txt" 2>&1
last=$(( $(nproc --all) - 1 )); mid=$(( (last + 1) / 2 ))
for c in 0 "$mid" "$last"; do
  taskset -c "$c" python3 host_state.py --out "$out/pin$c" --seconds "$secs" &
done
wait

#!/usr/bin/env bash
# host_state.py in PROCS processes one after another (the last two pinned to the first and the
# last CPU the machine lists), with the machine's CPU and NUMA layout and the GPU's affinity.
#   bash host_state.sh OUTDIR [PROCS] [SECONDS]
set -uo pipefail
out=$1; procs=${2:-3}; secs=${3:-40}
mkdir -p "$out"
{ lscpu; nvidia-smi topo -m; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv; } > "$out/machine.txt" 2>&1
last=$(( $(nproc --all) - 1 ))
for i in $(seq 1 "$procs"); do
  python3 host_state.py --out "$out/p$i" --seconds "$secs"
done
taskset -c 0 python3 host_state.py --out "$out/pin0" --seconds "$secs"
taskset -c "$last" python3 host_state.py --out "$out/pin$last" --seconds "$secs"

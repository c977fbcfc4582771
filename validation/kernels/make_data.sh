#!/usr/bin/env bash
# Real kernel files for `roofcalc kernels`, made once on a GPU machine (an H100 with CUDA 13.0,
# Nsight Compute, python3 with torch and triton):
#
#   OUT=/some/folder bash validation/kernels/make_data.sh
#
# It builds validation/kernels/kernels.cu (kernels that each stress one resource) for sm_90 and
# as an sm_80 + sm_90 program, and records: the ptxas -v logs, cuobjdump -res-usage of the
# program and of the cubins, the cubins (nvcc -cubin and cuobjdump -xelf), the CUDA runtime's
# own answers (cudaFuncGetAttributes, cudaOccupancyMaxActiveBlocksPerMultiprocessor for 88
# launch configurations per kernel) as JSON, Nsight Compute raw-page CSV exports of the
# program (exact units and ncu's default scaled units), a Triton cache with two kernels and
# Triton's own view of them, and an ncu export of a small PyTorch program (bf16 matmul
# 4096^3, softmax, layer_norm). ncu always runs with --clock-control none (clocks untouched).
#
# Everything goes into ONE file, $OUT/kernels-data.tar.gz (plus $OUT/make_data.log, the same
# log as inside). Each step logs its command and output and the script goes on when one fails;
# a summary of every step is printed at the end. Device time: about a minute.
set -u

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
: "${OUT:?set OUT to the folder that receives kernels-data.tar.gz}"
mkdir -p "$OUT"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/roofcalc-kernels.XXXXXX")
D="$WORK/kernels-data"
mkdir -p "$D"
LOG="$D/make_data.log"
SUMMARY=()
DEADLINE=$(( $(date +%s) + ${BUDGET_S:-480} ))  # leave time to pack: a run past its limit returns nothing

find_tool() {  # the first of: $2 (an override), PATH, the usual CUDA folders
    local name=$1 override=${2:-} c
    if [ -n "$override" ]; then echo "$override"; return; fi
    if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return; fi
    for c in /usr/local/cuda/bin/"$name" /usr/local/cuda-*/bin/"$name" /opt/nvidia/nsight-compute/*/"$name" \
             /usr/local/cuda/nsight-compute*/"$name"; do
        if [ -x "$c" ]; then echo "$c"; return; fi
    done
    echo "$name"  # not found: the steps that need it fail and say so
}
NVCC=$(find_tool nvcc "${NVCC:-}")
CUOBJDUMP=$(find_tool cuobjdump "${CUOBJDUMP:-}")
NCU=$(find_tool ncu "${NCU:-}")
PY=${PYTHON:-python3}

# step NAME TIMEOUT_S COMMAND: run COMMAND (a bash string, run in $D) with a time limit, log it;
# every step also stops at the script's deadline, so that the results are always packed
step() {
    local name=$1 limit=$2 cmd=$3 t0 t1 rc left
    left=$(( DEADLINE - $(date +%s) ))
    if [ "$left" -lt 5 ]; then
        SUMMARY+=("SKIPPED        $name (out of time: BUDGET_S=${BUDGET_S:-480})")
        return 0
    fi
    [ "$limit" -gt "$left" ] && limit=$left
    {
        echo
        echo "=== $name"
        echo "\$ $cmd"
    } >> "$LOG"
    t0=$(date +%s.%N)
    (cd "$D" && timeout "$limit" bash -c "$cmd") >> "$LOG" 2>&1
    rc=$?
    t1=$(date +%s.%N)
    local secs
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    if [ $rc -eq 0 ]; then
        SUMMARY+=("ok      ${secs}s  $name")
    else
        SUMMARY+=("FAILED  ${secs}s  $name (exit $rc$([ $rc -eq 124 ] && echo ', timed out'))")
    fi
    echo "=== $name: exit $rc after ${secs}s" >> "$LOG"
    return 0
}

cp "$HERE/kernels.cu" "$HERE/triton_kernels.py" "$HERE/torch_ops.py" "$HERE/make_data.sh" "$D/" 2>>"$LOG"
{
    echo "roofcalc kernels test data, made $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "nvcc=$NVCC cuobjdump=$CUOBJDUMP ncu=$NCU python=$PY"
} >> "$LOG"

# ------------------------------------------------------------------ environment
step "environment" 60 "{ uname -srm; nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm,clocks.mem --format=csv; \
  '$NVCC' --version; '$NCU' --version; '$PY' -c 'import sys, torch; print(sys.version.split()[0], \"torch\", torch.__version__, torch.version.cuda); import triton; print(\"triton\", triton.__version__)'; } > env.txt 2>&1; cat env.txt"

# ------------------------------------------------------------------ compile (CPU only)
GEN80_90="-gencode arch=compute_80,code=sm_80 -gencode arch=compute_90,code=sm_90"
step "build program sm_80+sm_90 (ptxas -v)" 300 "'$NVCC' $GEN80_90 -Xptxas -v -o kernels kernels.cu > ptxas-program-sm80-sm90.log 2>&1"
step "cubin sm_90 (ptxas -v)" 300 "'$NVCC' -cubin -arch=sm_90 -Xptxas -v -o kernels.sm_90.cubin kernels.cu > ptxas-sm90.log 2>&1"
step "cubin sm_80 (ptxas -v)" 300 "'$NVCC' -cubin -arch=sm_80 -Xptxas -v -o kernels.sm_80.cubin kernels.cu > ptxas-sm80.log 2>&1"
step "cubin sm_90 light (as the test suite builds it)" 300 "'$NVCC' -cubin -arch=sm_90 -DKERNELS_LIGHT -Xptxas -v -o kernels-light.sm_90.cubin kernels.cu > ptxas-light-sm90.log 2>&1"
step "fatbin sm_80+sm_90" 300 "'$NVCC' -fatbin $GEN80_90 -o kernels.fatbin kernels.cu"
step "cuobjdump -res-usage program" 60 "'$CUOBJDUMP' -res-usage kernels > cuobjdump-res-usage-program.txt"
step "cuobjdump -res-usage cubins and fatbin" 60 "'$CUOBJDUMP' -res-usage kernels.sm_90.cubin > cuobjdump-res-usage-sm90-cubin.txt; \
  '$CUOBJDUMP' -res-usage kernels-light.sm_90.cubin > cuobjdump-res-usage-light-sm90-cubin.txt; \
  '$CUOBJDUMP' -res-usage kernels.fatbin > cuobjdump-res-usage-fatbin.txt"
step "cuobjdump -xelf all" 60 "mkdir -p xelf && cd xelf && '$CUOBJDUMP' -xelf all ../kernels && ls -l"
step "cuobjdump -elf sm_90 cubin (for reading .nv.info by eye)" 60 "'$CUOBJDUMP' -elf kernels.sm_90.cubin > cuobjdump-elf-sm90.txt"

# ------------------------------------------------------------------ the CUDA runtime's answers (GPU)
step "runtime attributes and occupancy" 120 "./kernels --no-launch > runtime.json && '$PY' -c 'import json; d = json.load(open(\"runtime.json\")); print(d[\"device\"], len(d[\"kernels\"]), \"kernels\")'"

# ------------------------------------------------------------------ Nsight Compute
step "ncu --query-metrics" 120 "'$NCU' --query-metrics > ncu-query-metrics.txt 2>&1 && grep -c . ncu-query-metrics.txt"
known() {  # whether this ncu lists a metric (its base name); yes when the query failed
    [ ! -s "$D/ncu-query-metrics.txt" ] || grep -qE "(^|[[:space:]])${1%.sum}([[:space:]]|$)" "$D/ncu-query-metrics.txt"
}
METRICS=""
for m in dram__bytes.sum dram__bytes_read.sum dram__bytes_write.sum \
         $(for op in fadd fmul ffma dadd dmul dfma hadd hmul hfma; do echo "smsp__sass_thread_inst_executed_op_${op}_pred_on.sum"; done); do
    if known "$m"; then METRICS="$METRICS,$m"; fi
done
METRICS="${METRICS#,}"
TENSOR=$(grep -oE 'sm__ops_path_tensor_src_[a-z0-9_]+' "$D/ncu-query-metrics.txt" 2>/dev/null | sort -u | sed 's/$/.sum/' | paste -sd, -)
TORCH_METRICS="$METRICS${TENSOR:+,$TENSOR}"
echo "metrics: $METRICS" >> "$LOG"
echo "metrics for torch: $TORCH_METRICS" >> "$LOG"
SECTIONS="--section SpeedOfLight --section LaunchStats --section Occupancy"

# ncu_step NAME OUTPUT "OPTIONS AND PROGRAM" METRICS...: the first metric list ncu accepts wins
# (an empty one means the sections alone)
ncu_step() {
    local name=$1 out=$2 prog=$3 cmd="" m
    shift 3
    for m in "$@"; do
        cmd+="'$NCU' --csv --page raw --clock-control none $SECTIONS ${m:+--metrics '$m'} $prog > $out 2>> $out.stderr || "
    done
    step "$name" 240 "( ${cmd}false ); rc=\$?; tail -3 $out.stderr; echo \"rows: \$(grep -c '^\"[0-9]' $out)\"; exit \$rc"
}
ncu_step "ncu program (raw page, --print-units base)" ncu-program-base.csv "--print-units base ./kernels" "$METRICS" ""
ncu_step "ncu program (raw page, default units, sections only)" ncu-program-auto.csv "./kernels" ""

# ------------------------------------------------------------------ Triton
step "triton kernels (cache in triton-cache/)" 300 "TRITON_CACHE_DIR=\$PWD/triton-cache '$PY' triton_kernels.py > triton-truth.json && cat triton-truth.json && find triton-cache -type f | sort"
step "cuobjdump -res-usage of the triton cubins" 60 "test -n \"\$(find triton-cache -name '*.cubin')\" && for f in \$(find triton-cache -name '*.cubin' | sort); do echo \"## \$f\"; '$CUOBJDUMP' -res-usage \"\$f\"; done > triton-cuobjdump.txt; cat triton-cuobjdump.txt"

# ------------------------------------------------------------------ PyTorch under ncu
ncu_step "ncu torch program (matmul, softmax, layer_norm)" ncu-torch.csv \
    "--print-units base --profile-from-start off '$PY' torch_ops.py" "$TORCH_METRICS" "$METRICS" ""

# ------------------------------------------------------------------ pack
rm -f "$D/kernels.o"
{
    echo
    echo "=== summary"
    printf '%s\n' "${SUMMARY[@]}"
    echo
    echo "=== files"
    (cd "$D" && find . -type f -printf '%10s  %p\n' | sort -k2)
} >> "$LOG"
tar -czf "$OUT/kernels-data.tar.gz" -C "$WORK" kernels-data
cp "$LOG" "$OUT/make_data.log"
echo "summary (log: \$OUT/make_data.log; data: \$OUT/kernels-data.tar.gz, $(du -h "$OUT/kernels-data.tar.gz" | cut -f1)):"
printf '  %s\n' "${SUMMARY[@]}"
rm -rf "$WORK"

#!/usr/bin/env bash
# roofcalc probe on one GPU machine: the full probe, its calibration file and a log, into $OUT.
#
# Run from the repository root, once roofcalc's dependencies are importable, e.g.:
#   python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl \
#     && export PYTHONPATH=/tmp/site:$PWD && bash roofcalc/probe/device_run.sh
#
# Writes three files:
#   $OUT/probe.json         the report (`roofcalc probe --json`), raw measurements included
#   $OUT/calibration.yaml   the calibration file (`--save-calibration`)
#   $OUT/probe-log.txt      nvidia-smi, versions, environment, progress lines, the report's tables
# and a fourth only if the comparison could not be made: $OUT/probe-raw.json, the raw
# measurements (`roofcalc probe --report probe-raw.json` rebuilds the report from them).
# The probe gets PROBE_BUDGET_S seconds (default 225), so that the script ends within 4 minutes.
# The environment is passed through unchanged (NVLink multicast switches included).
set -u
: "${OUT:?set OUT to the folder that receives the results}"
mkdir -p "$OUT"
LOG="$OUT/probe-log.txt"
BUDGET="${PROBE_BUDGET_S:-225}"
export ROOFCALC_CACHE="${ROOFCALC_CACHE:-/tmp/roofcalc-cache}"
export PYTHONUNBUFFERED=1
t0=$(date +%s)

{
  echo "== roofcalc probe, $(date -u '+%Y-%m-%d %H:%M:%S UTC'), host $(hostname), kernel $(uname -r)"
  echo "== repository: $(git rev-parse HEAD 2>/dev/null || echo 'not a git checkout'), $(git status --porcelain 2>/dev/null | wc -l) paths changed"
  echo "== nvidia-smi"
  nvidia-smi 2>&1
  nvidia-smi --query-gpu=index,name,pci.bus_id,driver_version,clocks.current.sm,clocks.max.sm,clocks.current.memory,power.limit,temperature.gpu,persistence_mode --format=csv 2>&1
  nvidia-smi topo -m 2>&1 || true
  echo "== nvcc"
  (nvcc --version || /usr/local/cuda/bin/nvcc --version) 2>&1
  echo "== python and packages"
  python3 - <<'PY' 2>&1
import importlib, sys
print(sys.version.replace("\n", " "), sys.executable)
for name in ("torch", "click", "pydantic", "rich", "yaml", "matplotlib", "roofcalc"):
    try:
        m = importlib.import_module(name)
        print(name, getattr(m, "__version__", "?"), getattr(m, "__file__", ""))
    except Exception as e:
        print(name, "NOT IMPORTABLE:", type(e).__name__, e)
try:
    import torch
    print("torch.version.cuda", torch.version.cuda, "| GPUs", torch.cuda.device_count(),
          "| nccl", torch.cuda.nccl.version() if torch.cuda.is_available() else "-")
except Exception as e:
    print("torch CUDA query failed:", e)
PY
  echo "== environment (as the machine sets it; passed through unchanged)"
  for v in NCCL_NVLS_ENABLE TORCH_SYMM_MEM_DISABLE_MULTICAST NVSHMEM_DISABLE_NVLS CUDA_VISIBLE_DEVICES CUDA_HOME PYTHONPATH; do
    echo "$v=${!v-(unset)}"
  done
  echo "== probe (budget ${BUDGET} s): python3 -m roofcalc.probe.command --json --save-calibration calibration.yaml --save-raw probe-raw.json"
} >> "$LOG" 2>&1

timeout --signal=TERM --kill-after=10 "$BUDGET" \
  python3 -m roofcalc.probe.command --json --save-calibration "$OUT/calibration.yaml" \
  --save-raw "$OUT/probe-raw.json" > "$OUT/probe.json" 2>> "$LOG"
rc=$?

{
  echo "== probe exit code $rc after $(( $(date +%s) - t0 )) s (124: the budget ran out)"
  if [ "$rc" -eq 0 ] && [ -s "$OUT/probe.json" ]; then
    rm -f "$OUT/probe-raw.json"  # probe.json holds the same raw measurements
    echo "== the report's tables (roofcalc probe --report probe.json)"
    COLUMNS=220 timeout 60 python3 -m roofcalc.probe.command --report "$OUT/probe.json" 2>&1
  else
    [ -s "$OUT/probe.json" ] || rm -f "$OUT/probe.json"
    echo "== no report: the raw measurements taken so far are in probe-raw.json (if any)"
  fi
  echo "== nvidia-smi after"
  nvidia-smi --query-gpu=index,clocks.current.sm,clocks.current.memory,temperature.gpu,power.draw,clocks_throttle_reasons.active --format=csv 2>&1
  echo "== done after $(( $(date +%s) - t0 )) s"
} >> "$LOG" 2>&1
exit "$rc"

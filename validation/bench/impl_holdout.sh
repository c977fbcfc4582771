#!/usr/bin/env bash
# One process per model (cuDNN's plan cache is per process: models with the same head shapes
# would otherwise find each other's plans), then one times.json of them all.
#   bash impl_holdout.sh OUTDIR SET "model,model,..." [IMPLS]
# IMPL_BENCH_EXTRA: more options for each impl_bench.py (default: --profiler-check)
set -uo pipefail
out=$1; set_name=$2; models=$3; impls=${4:-hf-static,hf-dynamic,hf-prefill,fused}
mkdir -p "$out"
for m in ${models//,/ }; do
  PYTHONUNBUFFERED=1 python3 impl_bench.py --out "$out/$m" --set "$set_name" --models "$m" --impls "$impls" --host ${IMPL_BENCH_EXTRA---profiler-check} --budget-s 100
done
python3 - "$out" "$models" <<'PY'
import json, sys
out, models = sys.argv[1], sys.argv[2].split(",")
docs = []
for m in models:
    try:
        docs.append(json.load(open(f"{out}/{m}/times.json")))
    except OSError as e:
        print("missing", m, e)
merged = {k: v for k, v in docs[0].items() if k not in ("cases", "host", "profiler_check")}
merged["command"] = "bash impl_holdout.sh OUT " + " ".join(sys.argv[2:]) + " (one process per model; each: " + docs[0]["command"] + ")"
merged["processes"] = [{"model": m, "date": d["date"], "host": d.get("host"), "profiler_check": d.get("profiler_check")} for m, d in zip(models, docs)]
merged["cases"] = [dict(c, host=d.get("host", {}).get("torch_op_s")) for d in docs for c in d["cases"]]
json.dump(merged, open(f"{out}/times.json", "w"), indent=1)
print("merged", len(merged["cases"]), "cases")
PY

#!/usr/bin/env bash
# host_footprint.py in PROCS processes a model (one model a process, the models in turn), then one
# host_footprint.json of them all.
#   bash host_footprint.sh OUTDIR "model,model" PROCS [ROUNDS]     (ROUNDS a process: 3 unless given)
set -uo pipefail
out=$1; models=$2; procs=${3:-4}; rounds=${4:-3}
mkdir -p "$out"
for i in $(seq 1 "$procs"); do
  for m in ${models//,/ }; do
    PYTHONUNBUFFERED=1 python3 host_footprint.py --out "$out/p$i-$m" --models "$m" --rounds "$rounds"
  done
done
python3 - "$out" "$models" "$procs" "$rounds" <<'PY'
import glob, json, sys
out = sys.argv[1]
docs = [(f.split("/")[-2], json.load(open(f))) for f in sorted(glob.glob(f"{out}/p*/host_footprint.json"))]
merged = {k: v for k, v in docs[0][1].items() if k not in ("cases", "date", "affinity")}
merged["command"] = "bash host_footprint.sh OUT " + " ".join(sys.argv[2:]) + " (each process: " + docs[0][1]["command"] + ")"
merged["processes"] = [{"process": p, "date": d["date"], "affinity": d["affinity"], "cpu_model": d["cpu_model"]} for p, d in docs]
merged["cases"] = [dict(c, process=p) for p, d in docs for c in d["cases"]]
json.dump(merged, open(f"{out}/host_footprint.json", "w"), indent=1)
print("merged", len(merged["cases"]), "rounds from", len(docs), "processes")
PY

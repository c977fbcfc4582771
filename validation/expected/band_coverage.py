"""How often a set's measured times fall inside the band `roofcalc op` prints beside the expected
time, with the band computed as make_bands.py computes it but without the set's own reports (so
the figure is the same before and after the set joins roofcalc/bands.json).

    python3 validation/expected/band_coverage.py h200/host6
    python3 validation/expected/band_coverage.py h200/impl-holdout23

reads every `report-*-registry.json` under validation/expected whose `source` lies in that folder
(e.g. h200/host6/llm-decode.json), or the named-implementation report of that set
(`named_report.py`: e.g. h200/impl-holdout24, its registry ratios), and for each case the band of its kind and, for a step issued
from Python, its pace (roofcalc.summary.band_for's lookup order), then prints, by kind and pace,
the cases whose measured / expected lies within [low, high]. A p5-p95 band should hold about 90%.
No GPU needed.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))
sys.path.insert(0, str(HERE))

import make_bands  # noqa: E402

from roofcalc.summary import pace  # noqa: E402


def bands_without(root: Path, folder: str) -> dict[str, dict[str, object]]:
    """make_bands's registry bands (op kinds, LLM kinds and their paces, the named implementations'
    kinds and paces) without the reports of the measurements under ``folder`` or of that named set."""
    ratios = make_bands.collect(root, leave_out=folder)
    ratios.update(make_bands.collect_named(root, set(), {}, leave_out=folder))
    return {k: make_bands._band(xs) for k, xs in ratios.items()}


def coverage(root: Path, folder: str) -> dict[str, object]:
    bands = bands_without(root, folder)
    rows: dict[str, list[int]] = {}
    for f in sorted(root.rglob("*-registry.json")):
        rep = json.loads(f.read_text())
        if not str(rep.get("source", "")).startswith(folder + "/"):
            continue
        for case in rep.get("cases", []):
            r = case.get("ratio")
            k = make_bands.kind_of(case)
            if k is None or not isinstance(r, (int, float)):
                continue
            paced = pace(case.get("limiter"), case.get("host_exposed"))
            keyed = f"{k}/{paced}" if "/python/" in k and paced else k
            if keyed not in bands or bands[keyed]["spread"] != "p5-p95":  # as summary.band_for
                keyed = k
            band = bands.get(keyed)
            if band is None:
                continue
            inside = float(band["low"]) <= r <= float(band["high"])  # type: ignore[arg-type]
            tally = rows.setdefault(keyed, [0, 0])
            tally[0] += inside
            tally[1] += 1
    for f in sorted(root.rglob("named-*.json")):
        rep = json.loads(f.read_text())
        if rep["set"] != folder:
            continue
        for row in rep["cases"]:
            keys = make_bands.named_keys(row)
            keyed = keys[-1] if keys[-1] in bands and bands[keys[-1]]["spread"] == "p5-p95" else keys[0]
            band = bands.get(keyed)
            if band is None:
                continue
            tally = rows.setdefault(keyed, [0, 0])
            tally[0] += float(band["low"]) <= float(row["ratio"]) <= float(band["high"])  # type: ignore[arg-type]
            tally[1] += 1
    return {
        "set": folder,
        "what": "cases within the band roofcalc op prints (p5-p95 of the registry reports without this set)",
        "by_kind": {
            k: {"within": w, "cases": n, "band": [bands[k]["low"], bands[k]["high"]]} for k, (w, n) in rows.items()
        },
        "within": sum(w for w, _ in rows.values()),
        "cases": sum(n for _, n in rows.values()),
    }


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: band_coverage.py CARD/SET (a folder under validation/expected)", file=sys.stderr)
        return 2
    out = coverage(HERE, sys.argv[1].strip("/"))
    if not out["cases"]:
        print(f"no registry report of {sys.argv[1]}", file=sys.stderr)
        return 1
    print(json.dumps(out, indent=1, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())

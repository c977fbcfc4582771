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

from roofcalc.summary import Band, band_for  # noqa: E402


def bands_without(root: Path, folder: str) -> dict[str, dict[str, object]]:
    """make_bands's registry bands (op kinds, LLM kinds and their paces, the named implementations'
    kinds and paces) without the reports of the measurements under ``folder`` or of that named set."""
    ratios = make_bands.collect(root, leave_out=folder)
    ratios.update(make_bands.collect_named(root, set(), {}, leave_out=folder))
    return {k: make_bands._band(xs) for k, xs in ratios.items()}


def coverage(root: Path, folder: str) -> dict[str, object]:
    bands = bands_without(root, folder)

    def named(kind: str) -> Band | None:
        b = bands.get(kind)
        return None if b is None else Band(kind=kind, sample="", cards="", **b)  # type: ignore[arg-type]

    rows: dict[str, list[int]] = {}

    def tally(band: Band | None, ratio: object) -> None:
        if band is not None and isinstance(ratio, (int, float)):
            count = rows.setdefault(band.kind, [0, 0])
            count[0] += band.low <= ratio <= band.high
            count[1] += 1

    for f in sorted(root.rglob("*-registry.json")):
        rep = json.loads(f.read_text())
        if str(rep.get("source", "")).startswith(folder + "/"):
            for case in rep.get("cases", []):
                if make_bands.kind_of(case) is not None:
                    args = (case.get("limiter"), False, case.get("host_exposed"), named)
                    tally(band_for(case["op"], case.get("params") or {}, *args), case.get("ratio"))
    for f in sorted(root.rglob("named-*.json")):
        rep = json.loads(f.read_text())
        if rep["set"] == folder:
            for row in rep["cases"]:
                args = (row.get("limiter"), False, row.get("host_exposed"), named)
                tally(band_for(*make_bands.named_step(row), *args), row["ratio"])
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

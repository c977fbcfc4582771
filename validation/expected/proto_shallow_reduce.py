"""A prototype, not part of the model: the small-side choice map's k-split reduction kept for a
product too shallow to cut (validation/traces/h200/tiny-gemm1/README.md). Recomputes every committed
GEMM case of the H100 and H200 registry op reports with the model as it is and with the prototype
(roofcalc.expected.gemm._gemm_measured_choice wrapped: where the nearest entry split k, the product
cuts none, and its k is at most the entry's, a one-slice reduction follows), and prints the cases
it changes, within [0.8, 1.25] before and after, in-sample and the seen hold-outs apart; then the
tiny-gemm1 shapes on the H200 both ways. No GPU.

    python3 validation/expected/proto_shallow_reduce.py
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

import roofcalc  # noqa: E402
from roofcalc.expected import gemm  # noqa: E402
from roofcalc.hardware import load_hardware  # noqa: E402
from roofcalc.opdefs import load_op  # noqa: E402
from roofcalc.roofline import evaluate  # noqa: E402

# fresh hold-outs whose GEMM cases entered the prototype's first count (validation/HOLDOUT.md)
SEEN = ("ops-wide144-", "ops-wide145-", "ops-wide146-", "ops-wide147-", "ops-small16-rand7-")
BAND = (0.8, 1.25)
_ORIGINAL = gemm._gemm_measured_choice


def _with_shallow_reduce(c, k, choice, dtype_bytes):  # type: ignore[no-untyped-def]
    out = _ORIGINAL(c, k, choice, dtype_bytes)
    near = choice[0]
    if near.splits > 1 and k.k <= near.k and len(out) == 1:
        out = [*out, gemm._measured_reduce(c, k, near, 1, dtype_bytes)]
    return out


def expected_all(hws: dict[str, object]) -> dict[tuple[str, str], tuple[float, float]]:
    out = {}
    for f in sorted(HERE.glob("h*/report-ops-*-registry.json")):
        card = f.parent.name
        if card not in hws:
            continue
        for case in json.loads(f.read_text())["cases"]:
            if case["op"] != "gemm" or not case.get("expected_s"):
                continue
            r = evaluate(load_op("gemm"), hws[card], case["params"], None)  # type: ignore[arg-type]
            out[(f"{card}/{f.name}", case["label"])] = (case["measured_s"], float(r.expected_s or 0))
    return out


def main() -> int:
    hws = {"h100": load_hardware("h100"), "h200": load_hardware("h200")}
    base = expected_all(hws)
    gemm._gemm_measured_choice = _with_shallow_reduce
    try:
        proto = expected_all(hws)
    finally:
        gemm._gemm_measured_choice = _ORIGINAL

    def within(m: float, e: float) -> bool:
        return BAND[0] <= m / e <= BAND[1]

    changed = [key for key in base if abs(base[key][1] - proto[key][1]) > 1e-12]
    for card in ("h100", "h200"):
        for label, seen in (("in-sample", False), ("seen hold-outs", True)):
            keys = [x for x in changed if x[0].startswith(card + "/") and any(s in x[0] for s in SEEN) == seen]
            if keys:
                before = sum(within(*base[x]) for x in keys)
                after = sum(within(base[x][0], proto[x][1]) for x in keys)
                print(f"{card} {label}: {len(keys)} changed, {before} within before, {after} after")
    ins = [x for x in changed if not any(s in x[0] for s in SEEN)]
    print(
        "in-sample median ratio of the changed:",
        f"{statistics.median(base[x][0] / base[x][1] for x in ins):.3f} ->",
        f"{statistics.median(base[x][0] / proto[x][1] for x in ins):.3f}",
    )
    tiny = json.loads((HERE.parent / "traces" / "h200" / "tiny-gemm1" / "tiny-gemm.json").read_text())
    for name, fn in (("model", _ORIGINAL), ("prototype", _with_shallow_reduce)):
        gemm._gemm_measured_choice = fn
        try:
            n = sum(
                within(
                    c["median_s"],
                    float(roofcalc.analyze("gemm", hws["h200"], dtype=c["dtype"], **c["params"]).expected_s or 0),
                )
                for c in tiny["cases"]
            )
        finally:
            gemm._gemm_measured_choice = _ORIGINAL
        print(f"tiny-gemm1 on the H200, {name}: {n} of {len(tiny['cases'])} within")
    return 0


if __name__ == "__main__":
    sys.exit(main())

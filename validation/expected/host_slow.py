"""The slow end of a card's hosts (torch_op_slow_s in hardware/h100.yaml and h200.yaml): the 95th
percentile of the hot loops (x.add_(1) back to back) timed just before and just after each step a
benchmark issued from Python on machines of that card.

A lender's host runs that loop in a fast or a slow state (about 6.3-7.8 or 8.4-11.5 us on the H100
machines, 6.5-7.5 or 10-12 us on the H200 ones) and moves between them within seconds; the card's
torch_op_floor_s is a typical state. `roofcalc op` reads a step that its GPU paces at that figure but
its host would pace at this one as exposed to the host's speed, and prints the band of the steps the
host paces (roofcalc/summary.py).

Records: llm_bench.py's `host_op_s` (before, after) of every committed set that timed it, and on the
H200 also impl_bench.py's around the implementation sets' steps (the records of host_pool.py).
Left out: the hold-out that tested the figure (h200/host6, unopened when it was set) and those
measured since, not yet evaluated (HELD_OUT below; validation/HOLDOUT.md).

    python3 validation/expected/host_slow.py            # prints the figures
    python3 validation/expected/host_slow.py --json F   # also writes them to F
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(HERE))

from make_bands import percentile  # noqa: E402

# the hold-out that tested the figure and the one measured after it, unopened (validation/HOLDOUT.md):
# their host records stay out of it
HELD_OUT = ("h200/host6/", "h200/host7/")
Q = 0.95


def bench_records(card: str) -> dict[str, list[float]]:
    """llm_bench.py's hot loops around each step, by measurement file, for folders of ``card``
    (h100 and h100x2, ...)."""
    out: dict[str, list[float]] = {}
    for f in sorted(HERE.glob(f"{card}*/**/*.json")):
        rel = f.relative_to(HERE).as_posix()
        if "report" in f.name or rel.startswith(HELD_OUT):
            continue
        raw = f.read_bytes()
        if b'"host_op_s"' not in raw:  # parse only the files that can hold such records
            continue
        try:
            doc = json.loads(raw)
        except ValueError:
            continue
        cases = doc.get("cases") if isinstance(doc, dict) else None
        if not isinstance(cases, list):
            continue
        recs = [
            float(c["host_op_s"][k])
            for c in cases
            if isinstance(c, dict) and isinstance(c.get("host_op_s"), dict)
            for k in ("before", "after")
            if isinstance(c["host_op_s"].get(k), (int, float))
        ]
        if recs:
            out[rel] = recs
    return out


def pool_records() -> dict[str, list[float]]:
    """impl_bench.py's hot loops around the H200 implementation sets' steps (host_pool.py's)."""
    import host_pool

    return {f"traces/h200/{s}": host_pool.around_steps(s) for s in host_pool.POOLED}


def figures() -> dict[str, object]:
    out: dict[str, object] = {
        "command": "python3 validation/expected/host_slow.py",
        "rule": f"p{Q * 100:.0f} of the hot loops timed just before and after each step issued from Python",
    }
    for card in ("h100", "h200"):
        sources = bench_records(card)
        if card == "h200":
            sources.update(pool_records())
        every = [r for v in sources.values() for r in v]
        out[card] = {
            "torch_op_slow_s": percentile(every, Q),
            "median_s": percentile(every, 0.5),
            "records": len(every),
            "sources": {k: len(v) for k, v in sorted(sources.items())},
        }
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, help="write the figures to this file")
    args = ap.parse_args()
    doc = figures()
    for card in ("h100", "h200"):
        c = doc[card]
        assert isinstance(c, dict)
        print(
            f"{card}: {c['records']} records, median {c['median_s'] * 1e6:.2f} us, p95 {c['torch_op_slow_s'] * 1e6:.2f} us"
        )
    if args.json:
        args.json.write_text(json.dumps(doc, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

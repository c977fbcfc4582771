"""Which host loop tracks an implementation's own time per layer from one round and process to the
next (validation/bench/host_footprint.py; development, nothing fitted on it).

For each implementation (transformers, the fused layout) and each loop (one op, the figure roofcalc
reads; 40 distinct ops; a Triton launch), over every round of every process: the time per layer
in that loop's units (median, least, largest, coefficient of variation) and the correlation of the
two times. And the rounds where an implementation's time per layer jumped: over 1.5x the median of
its process's other rounds in one-op units, with what the other implementation and the loops did in
that round. And, per process with rounds in both of the host's states (the one-op loop either side
of SPLIT_S), its slow rounds' time per layer in one-op units over its fast rounds' (by_state).

    python3 validation/expected/host_footprint_report.py h200/host-footprint1

Writes validation/expected/h200/host-footprint1.json.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
# between the host's two states of the hot loop of one op (about 6.5-7.5 and 10-12 us on the H200
# lender's machines)
from host_pool import SPLIT_S

ROOT = Path(__file__).resolve().parents[2]
LOOPS = ("one_op", "many_ops", "triton")
IMPLS = ("fused", "hf")
JUMP = 1.5  # a round over this many times its process's other rounds (one-op units)


def loop_s(rec: dict[str, Any], loop: str) -> float:
    """The loop's time per op in a round: the one- and many-op loops timed before and after the
    layers (their mean), the Triton launch before."""
    if loop == "triton":
        return float(rec["triton_s"])
    return (rec[f"{loop}_s"] + rec[f"{loop}_after_s"]) / 2


def correlation(x: list[float], y: list[float]) -> float:
    mx, my = statistics.fmean(x), statistics.fmean(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    return sxy / math.sqrt(sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y))


def report(set_name: str) -> dict[str, Any]:
    src = ROOT / "validation" / "traces" / set_name / "host_footprint.json"
    doc = json.loads(src.read_text())
    rounds = doc["cases"]
    loops: dict[str, Any] = {}
    for impl in IMPLS:
        layer = [r[f"{impl}_layer_s"] for r in rounds]
        for loop in LOOPS:
            x = [loop_s(r, loop) for r in rounds]
            units = [a / b for a, b in zip(layer, x, strict=True)]
            loops[f"{impl}/{loop}"] = {
                "median": round(statistics.median(units), 1),
                "min": round(min(units), 1),
                "max": round(max(units), 1),
                "cv": round(statistics.pstdev(units) / statistics.fmean(units), 3),
                "correlation": round(correlation(x, layer), 2),
            }

    def over_usual(rec: dict[str, Any], what: Any) -> float:
        """what(rec) over its median in the process's other rounds."""
        others = [r for r in rounds if r["process"] == rec["process"] and r["round"] != rec["round"]]
        return float(what(rec) / statistics.median(what(r) for r in others))

    def layer_units(impl: str) -> Any:
        return lambda r: r[f"{impl}_layer_s"] / loop_s(r, "one_op")

    jumps = []
    for rec in rounds:
        for impl in IMPLS:
            jump = over_usual(rec, layer_units(impl))
            if jump > JUMP:
                other = next(i for i in IMPLS if i != impl)
                jumps.append(
                    {
                        "process": rec["process"],
                        "round": rec["round"],
                        "impl": impl,
                        "layer_over_usual": round(jump, 2),
                        "other_layer_over_usual": round(over_usual(rec, layer_units(other)), 2),
                        "one_op_over_usual": round(over_usual(rec, lambda r: loop_s(r, "one_op")), 2),
                    }
                )
    # does a layer cost more one-op times when the CPU runs in its slow state? per process with
    # rounds on both sides of SPLIT_S, the median in one-op units of its slow rounds over its fast ones
    by_state: dict[str, Any] = {}
    for impl in IMPLS:
        per: list[dict[str, Any]] = []
        for proc in sorted({r["process"] for r in rounds}):
            mine = [r for r in rounds if r["process"] == proc]
            slow = [layer_units(impl)(r) for r in mine if loop_s(r, "one_op") > SPLIT_S]
            fast = [layer_units(impl)(r) for r in mine if loop_s(r, "one_op") <= SPLIT_S]
            if slow and fast:
                ratio = statistics.median(slow) / statistics.median(fast)
                per.append(
                    {
                        "process": proc,
                        "slow_rounds": len(slow),
                        "fast_rounds": len(fast),
                        "slow_over_fast": round(ratio, 2),
                    }
                )
        if per:
            ratios = [p["slow_over_fast"] for p in per]
            by_state[impl] = {
                "median": statistics.median(ratios),
                "min": min(ratios),
                "max": max(ratios),
                "processes": per,
            }
    return {
        "schema": "roofcalc-host-footprint-report-1",
        "set": set_name,
        "role": "development: nothing fitted on it",
        "command": f"python3 validation/expected/host_footprint_report.py {set_name}",
        "source": str(src.relative_to(ROOT)),
        "device": doc["device"],
        "cpu_model": doc["cpu_model"],
        "rounds": len(rounds),
        "processes": len(doc["processes"]),
        "loops": loops,
        "jump": JUMP,
        "jumps": jumps,
        "split_s": SPLIT_S,
        "by_state": by_state,
    }


def main() -> int:
    for set_name in sys.argv[1:]:
        rep = report(set_name)
        out = ROOT / "validation" / "expected" / f"{set_name}.json"
        out.write_text(json.dumps(rep, indent=1) + "\n")
        for k, v in rep["loops"].items():
            print(k, v)
        for j in rep["jumps"]:
            print("jump", j)
        for impl, v in rep["by_state"].items():
            print(
                f"{impl}: one-op times a layer, slow rounds over fast, median over processes {v['median']:.2f} "
                f"({v['min']:.2f}-{v['max']:.2f}, {len(v['processes'])} processes)"
            )
        print(out.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())

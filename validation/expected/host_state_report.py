"""Does the CPU a process runs on change speed when the hot loop of one op moves between its states,
or only its launch path?
(validation/bench/host_state.py; development, nothing fitted on it.)

Each round of each process timed plain Python (an integer loop, no PyTorch), the launch path alone
(300 x.add_(1) issued without waiting) and the probe's hot loop (the figure roofcalc reads). A
round is in the slow state where its plain Python took longer than the geometric middle of the
10th and 90th percentiles over every round of the set (one machine; a split of the rounds, not a
fitted figure; it needs both states among the set's rounds, between a tenth and nine tenths of
them: one process alone, 94% slow, would not do). The clock each round recorded is the guest's
fixed figure (2,100 MHz in a KVM guest), so the report does not read it. Per process: the rounds in each state, each loop's median in the slow state over the fast one, and the
correlation of the hot loop and of the launch path with plain Python over the rounds.

Where the processes ran at the same time (their rounds record the wall clock, ``at_s``:
host_state_pair.sh), each pair's rounds are lined up by time (within MATCH_S) and the report gives
how often the two CPUs were in the same state, beside how often they would be by chance (each
process's slow share, independent): together the machine switches; by chance each core does.
Concurrent processes share the GPU, so only plain Python is compared across them.

    python3 validation/expected/host_state_report.py h200/host-state1 h200/host-state2

Writes validation/expected/h200/host-state1.json.
"""

from __future__ import annotations

import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from host_footprint_report import correlation

ROOT = Path(__file__).resolve().parents[2]
LOOPS = ("py_s", "issue_s", "op_s")
MATCH_S = 0.2  # rounds of two concurrent processes this close in time are compared


def split_s(rounds: list[dict[str, Any]]) -> float:
    """The plain-Python time between the two states: the geometric middle of its 10th and 90th
    percentiles over the rounds given."""
    q = statistics.quantiles([r["py_s"] for r in rounds], n=10)
    return math.sqrt(q[0] * q[-1])


def process_summary(rounds: list[dict[str, Any]], split: float) -> dict[str, Any]:
    slow = [r for r in rounds if r["py_s"] > split]
    fast = [r for r in rounds if r["py_s"] <= split]
    out: dict[str, Any] = {"rounds": len(rounds), "slow_rounds": len(slow), "cpus": sorted({r["cpu"] for r in rounds})}
    for loop in LOOPS:
        f, s = statistics.median(r[loop] for r in fast), statistics.median(r[loop] for r in slow)
        out[loop] = {"fast": f, "slow": s, "slow_over_fast": round(s / f, 2)}
    py_all = [r["py_s"] for r in rounds]
    out["correlation_op_py"] = round(correlation([r["op_s"] for r in rounds], py_all), 2)
    out["correlation_issue_py"] = round(correlation([r["issue_s"] for r in rounds], py_all), 2)
    return out


def together(docs: dict[str, Any], split: float) -> dict[str, Any]:
    """Each pair of processes whose rounds overlap in time: the share of lined-up rounds in the
    same state, and that share by chance."""
    out: dict[str, Any] = {}
    names = [n for n, d in docs.items() if all("at_s" in r for r in d["rounds"])]
    for i, a in enumerate(names):
        for b in names[i + 1 :]:
            ra, rb = docs[a]["rounds"], docs[b]["rounds"]
            pairs = []
            for r in ra:
                o = min(rb, key=lambda x: abs(x["at_s"] - r["at_s"]))
                if abs(o["at_s"] - r["at_s"]) < MATCH_S:
                    pairs.append((r["py_s"] > split, o["py_s"] > split))
            if not pairs:
                continue
            pa = sum(r["py_s"] > split for r in ra) / len(ra)
            pb = sum(r["py_s"] > split for r in rb) / len(rb)
            out[f"{a}/{b}"] = {
                "rounds": len(pairs),
                "same_state": round(sum(x == y for x, y in pairs) / len(pairs), 2),
                "by_chance": round(pa * pb + (1 - pa) * (1 - pb), 2),
            }
    return out


def report(set_name: str) -> dict[str, Any]:
    base = ROOT / "validation" / "traces" / set_name
    docs = {f.parent.name: json.loads(f.read_text()) for f in sorted(base.glob("*/host_state.json"))}
    if not docs:
        raise SystemExit(f"{set_name}: no host_state.json under {base}")
    split = split_s([r for d in docs.values() for r in d["rounds"]])
    processes = {name: process_summary(d["rounds"], split) for name, d in docs.items()}
    device = next(iter(docs.values()))["device"]

    def across(loop: str) -> float:
        return float(statistics.median(p[loop]["slow_over_fast"] for p in processes.values()))

    concurrent = together(docs, split)
    return {
        "schema": "roofcalc-host-state-report-1",
        "set": set_name,
        "role": "development: nothing fitted on it",
        "command": f"python3 validation/expected/host_state_report.py {set_name}",
        "device": device,
        "split_py_s": split,
        "processes": processes,
        "slow_over_fast": {loop: across(loop) for loop in LOOPS},
        "slow_share": round(
            sum(p["slow_rounds"] for p in processes.values()) / sum(p["rounds"] for p in processes.values()), 2
        ),
        **({"together": concurrent} if concurrent else {}),
    }


def main() -> int:
    for set_name in sys.argv[1:]:
        rep = report(set_name)
        out = ROOT / "validation" / "expected" / f"{set_name}.json"
        out.write_text(json.dumps(rep, indent=1) + "\n")
        for name, p in rep["processes"].items():
            print(name, {k: (v["slow_over_fast"] if isinstance(v, dict) else v) for k, v in p.items()})
        print("slow over fast (median over processes)", rep["slow_over_fast"], "slow share", rep["slow_share"])
        for pair, v in rep.get("together", {}).items():
            print("together", pair, v)
        print(out.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())

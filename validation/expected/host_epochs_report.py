"""Are the slow stretches of an eager decode the host's or the GPU's?
(validation/bench/host_epochs.py; development, nothing fitted on it.)

One synchronized step after another, each with the host's time to issue it, the GPU's time from its
first kernel to its last and, every few steps, the hot loop of one op and a fixed piece of plain
Python. A step is slow where its GPU time is above the split of the run's steps into two classes
that Otsu's rule gives (in the logarithms of their times: the split that leaves the most variance
between the two; a split of one run, not a fitted figure). The steps after a sample, up to the
next, are its window, slow where their median is above the split (a window longer than the slow
stretches has none: host-epochs1's 25 steps, against host-epochs2's 10). Per
set: the medians in slow and fast windows of the GPU's time, the host's issue, the hot loop and plain
Python, and their ratios; how far the issue is from the GPU's time (a GPU that waits for its host
starts each kernel as it is issued: the two then agree); the stretches of slow steps; and what else
could slow a GPU or a vCPU: the SM and memory clocks and throttle reasons nvidia-smi read, and the
vCPUs' steal time in /proc/stat.

    python3 validation/expected/host_epochs_report.py h200/host-epochs1 h200/host-epochs2 \
        h200/host-epochs3 h200/host-epochs4 h200/host-epochs5

Writes validation/expected/h200/host-epochs1.json to -5.json.
"""

from __future__ import annotations

import itertools
import json
import math
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
STEAL = 7  # the steal column of /proc/stat's cpu line (after user, nice, system, idle, iowait, irq, softirq)


def otsu(xs: list[float]) -> float:
    """The split of ``xs`` into a lower and an upper class with the most variance between the
    classes (Otsu's rule), in the logarithms of the values: the middle of the gap it falls in."""
    logs = sorted(math.log(x) for x in xs)
    n, total = len(logs), sum(logs)
    best, at, acc = -1.0, 1, 0.0
    for i in range(1, n):
        acc += logs[i - 1]
        lo, hi = acc / i, (total - acc) / (n - i)
        between = i * (n - i) * (lo - hi) ** 2
        if between > best:
            best, at = between, i
    return math.exp((logs[at - 1] + logs[at]) / 2)


def _median_ratio(slow: list[float], fast: list[float]) -> dict[str, float]:
    s, f = statistics.median(slow), statistics.median(fast)
    return {"slow": s, "fast": f, "slow_over_fast": round(s / f, 3)}


def report(set_name: str) -> dict[str, Any]:
    doc = json.loads((ROOT / "validation" / "traces" / set_name / "host-epochs.json").read_text())
    steps, samples = doc["steps"], doc["hot_loop"]
    split = otsu([x["gpu_s"] for x in steps])
    bounds = [s["i"] for s in samples] + [len(steps)]
    windows = []
    for sample, lo, hi in zip(samples, bounds[:-1], bounds[1:], strict=True):
        win = steps[lo:hi]
        if win:
            windows.append((sample, statistics.median(x["gpu_s"] for x in win), win))
    slow = [w for w in windows if w[1] > split]
    fast = [w for w in windows if w[1] <= split]
    out: dict[str, Any] = {
        "set": set_name,
        "command": doc["command"],
        "device": doc["device"],
        "case": (
            f"{doc['model']} {doc.get('phase', 'decode')}, {doc.get('engine', 'eager')}, batch {doc['batch']} "
            + ("over" if doc.get("phase", "decode") == "decode" else "of")
            + f" {doc['context']} tokens"
        ),
        "steps": len(steps),
        "windows": len(windows),
        "slow_windows": len(slow),
        "split_gpu_s": round(split, 6),
        "step_median_gpu_s": round(statistics.median(x["gpu_s"] for x in steps), 6),
        "issue_over_gpu_median": round(statistics.median(x["issue_s"] / x["gpu_s"] for x in steps), 4),
        # what the GPU still had to run when the host had issued the step's last kernel (a GPU that
        # set the pace would have a queue of kernels left, milliseconds of them), and the least time
        # the GPU took for a step (its own work, where it did not wait)
        "gpu_after_issue_median_s": round(statistics.median(x["gpu_s"] - x["issue_s"] for x in steps), 6),
        "steps_gpu_after_issue_over_0_3ms": sum(x["gpu_s"] - x["issue_s"] > 3e-4 for x in steps),
        "min_gpu_s": round(min(x["gpu_s"] for x in steps), 6),
    }
    if slow and fast:
        by: dict[str, Any] = {
            "gpu_s": _median_ratio([w[1] for w in slow], [w[1] for w in fast]),
            "issue_s": _median_ratio(
                [statistics.median(x["issue_s"] for x in w[2]) for w in slow],
                [statistics.median(x["issue_s"] for x in w[2]) for w in fast],
            ),
            "hot_loop_op_s": _median_ratio([w[0]["op_s"] for w in slow], [w[0]["op_s"] for w in fast]),
        }
        if all("py_s" in w[0] for w in windows):
            by["plain_python_s"] = _median_ratio([w[0]["py_s"] for w in slow], [w[0]["py_s"] for w in fast])
        out["slow_and_fast_windows"] = by
        # how steadily the step's issue follows each loop over every window: the coefficient of
        # variation of the issue's median over the loop's time sampled at the window's start
        issue = [statistics.median(x["issue_s"] for x in w[2]) for w in windows]
        cv = {"issue_s": round(statistics.stdev(issue) / statistics.mean(issue), 4)}  # the spread to take out
        for loop, key in (("hot_loop_op_s", "op_s"), ("plain_python_s", "py_s")):
            if all(key in w[0] for w in windows):
                per = [statistics.median(x["issue_s"] for x in w[2]) / w[0][key] for w in windows]
                cv[loop] = round(statistics.stdev(per) / statistics.mean(per), 4)
        out["issue_per_loop_cv"] = cv
        out["gpu_after_issue_median_s_slow_and_fast"] = [
            round(statistics.median(x["gpu_s"] - x["issue_s"] for w in ws for x in w[2]), 6) for ws in (slow, fast)
        ]
    # the lengths of the stretches of consecutive slow steps
    runs = [len(list(g)) for slow_step, g in itertools.groupby(x["gpu_s"] > split for x in steps) if slow_step]
    out["slow_steps"] = sum(runs)
    out["slow_stretches"] = len(runs)
    out["longest_slow_stretch_steps"] = max(runs, default=0)
    smi = [line.split(", ") for _, line in doc["nvidia_smi"]]
    out["sm_and_memory_clocks_mhz"] = sorted({f"{r[1]}/{r[2]}" for r in smi if len(r) == 6})
    out["throttle_reasons"] = sorted({r[5] for r in smi if len(r) == 6})
    stat = doc["proc_stat"]
    out["steal_ticks"] = stat[-1]["stat"][STEAL] - stat[0]["stat"][STEAL]
    out["cpu_ticks"] = sum(stat[-1]["stat"][:8]) - sum(stat[0]["stat"][:8])
    return out


def main() -> int:
    for set_name in sys.argv[1:]:
        rep = report(set_name)
        path = ROOT / "validation" / "expected" / f"{set_name}.json"
        path.write_text(json.dumps(rep, indent=1) + "\n")
        print(json.dumps(rep, indent=1))
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())

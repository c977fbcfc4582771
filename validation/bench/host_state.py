"""Does the host's whole CPU change speed, or only its path to the GPU?

The hot loop of one PyTorch op (x.add_(1), the probe's torch_op_floor) ran either near 7 us or near
10 us an op on the lender's H200 hosts, switching between the two within a process and on the same
CPU (validation/traces/h200/host-footprint1: p3-llama-1b-hd64 on CPU 15, 7.1 then 10.3 us), and
impl-holdout17 to -21's processes started in one state or the other. If the CPU itself slows (its
clock, or a sibling hyperthread busy with other work), plain Python slows by the same factor; if
only the launch path slows (the driver, the PCIe doorbell), Python alone does not. In one process,
every ``--every`` seconds for ``--seconds``, this times:

- ``py_s``: a loop of plain Python integer arithmetic, per iteration (no PyTorch, no GPU);
- ``issue_s``: issuing 300 x.add_(1) without waiting for them, per op (the launch path alone);
- ``op_s``: the probe's hot loop (llm_bench.host_op_s: the median of 7 samples of 300 ops, each
  sample synchronized), the figure roofcalc reads;

with the CPU the process ran on (/proc/self/stat), the clock /proc/cpuinfo gives for that CPU and
the wall-clock time (``at_s``, from host-state2 on), so that processes run at the same time can be
lined up (host_state_pair.sh).

    python3 host_state.py --out DIR [--seconds 40] [--every 0.4]

Writes DIR/host_state.json.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path
from typing import Any

import torch

from benchlib import run_header
from llm_bench import host_op_s


def cpu_now() -> int:
    """The CPU this process last ran on (field 39 of /proc/self/stat; as host_footprint.py reads
    it, not imported from there so that this process loads no model code)."""
    return int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[36])


def py_loop_s(n: int = 200_000) -> float:
    t0 = time.perf_counter()
    s = 0
    for i in range(n):
        s += i * 3 & 7
    return (time.perf_counter() - t0) / n


def issue_s(x: Any, n: int = 300) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        x.add_(1)
    t = (time.perf_counter() - t0) / n
    torch.cuda.synchronize()
    return t


def cpu_mhz(cpu: int) -> float | None:
    block = None
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("processor"):
            block = int(line.split(":")[1])
        elif line.startswith("cpu MHz") and block == cpu:
            return float(line.split(":")[1])
    return None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=40.0)
    ap.add_argument("--every", type=float, default=0.4)
    args = ap.parse_args()
    doc: dict[str, Any] = run_header("roofcalc-host-state-1")
    doc["affinity"] = sorted(os.sched_getaffinity(0))
    x = torch.zeros(16, device="cuda")
    for _ in range(3):  # warm: the loops' code and the allocator
        py_loop_s(20_000), issue_s(x), host_op_s(3, 100)
    rounds = []
    start = time.perf_counter()
    while time.perf_counter() - start < args.seconds:
        t = time.perf_counter() - start
        cpu = cpu_now()
        rec = {"t_s": round(t, 3), "at_s": time.time(), "cpu": cpu, "mhz": cpu_mhz(cpu)}
        rec.update(py_s=py_loop_s(), issue_s=issue_s(x))
        rec["op_s"] = host_op_s()
        rec["cpu_after"] = cpu_now()
        rounds.append(rec)
        time.sleep(max(0.0, args.every - (time.perf_counter() - start - t)))
    doc["rounds"] = rounds
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "host_state.json").write_text(json.dumps(doc, indent=1) + "\n")
    print("rounds", len(rounds))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

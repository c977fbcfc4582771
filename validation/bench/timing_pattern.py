"""Small ops timed under seven benchmark patterns, interleaved, with the SM clock each pattern
leaves the GPU at: does the way a benchmark enqueues its repetitions change what a small op
costs?

Patterns (every one times the op alone between two CUDA events):
  queued, flush 256 MiB   ops_bench.py's loop: flush, start, op, end, all enqueued, one sync
  synced, flush 256 MiB   cold_ops.py: a sync before every repetition
  queued, flush 4x L2     as the first with a flush 4x the L2 (the probe's flush)
  synced, flush 4x L2     the same with a sync before every repetition
  queued, flush L2        as the first with a flush of the L2's size (shorter than the host's
                          enqueueing of a repetition: the GPU waits for the host)
  queued, busy            a sleep kernel instead of the flush (the GPU busy, memory idle)
  synced, busy            the same with a sync before every repetition

The clock: the op is torch.cuda._sleep(cycles), a kernel that spins on the SM's cycle counter;
the difference between 200k and 100k cycles over the difference of their times is the SM clock
while that pattern runs.

    python validation/bench/timing_pattern.py --out timing-pattern.json
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib

REPS = 50
ROUNDS = 3
PATTERNS = (
    "queued, flush 256 MiB",
    "synced, flush 256 MiB",
    "queued, flush 4x L2",
    "synced, flush 4x L2",
    "queued, flush L2",
    "queued, busy",
    "synced, busy",
)


def run_pattern(pattern: str, fn: Callable[[], Any], flushes: dict[str, torch.Tensor]) -> list[float]:
    flush = next((t for key, t in flushes.items() if pattern.endswith(key)), None)

    def before() -> None:
        if flush is None:
            torch.cuda._sleep(200_000)
        else:
            flush.zero_()

    if pattern.startswith("synced"):
        return sorted(benchlib.event_time(fn, before) for _ in range(REPS))
    return sorted(benchlib.queued_times(fn, before, REPS))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="timing-pattern.json")
    args = ap.parse_args()
    dev = torch.device("cuda")
    l2 = int(torch.cuda.get_device_properties(0).L2_cache_size)
    flushes = {
        "flush 256 MiB": torch.empty(256 << 18, dtype=torch.int32, device=dev),
        "flush 4x L2": torch.empty(l2, dtype=torch.int32, device=dev),
        "flush L2": torch.empty(l2 // 4, dtype=torch.int32, device=dev),
    }

    def t(*shape: int, dt: torch.dtype = torch.float32) -> torch.Tensor:
        return torch.randn(*shape, device=dev, dtype=dt)

    bf, f16 = torch.bfloat16, torch.float16
    ln = torch.nn.functional.layer_norm
    x1 = t(1)
    a4, b4 = t(4096), t(4096)
    d1, d2 = t(2656, dt=bf), t(2656, dt=bf)
    d3, d4 = t(4096, dt=bf), t(4096, dt=bf)
    s1, s2, s3 = t(1, 1024, dt=bf), t(8, 2064, dt=bf), t(8, 292, dt=bf)
    g1, g2 = t(660, 136, dt=f16), t(136, 80, dt=f16)
    g3, g4 = t(40, 64, dt=bf), t(64, 608, dt=bf)
    g5, g6 = t(1000, 1000, dt=bf), t(1000, 1000, dt=bf)
    v1, v2 = t(1024, 1024, dt=bf), t(1024, dt=bf)
    v3, v4 = t(1616, 704), t(704)
    l1, lw, lb = t(8, 1024, dt=bf), t(1024, dt=bf), t(1024, dt=bf)
    m1, m2 = t(1 << 20), t(1 << 20)
    ops: dict[str, Callable[[], Any]] = {
        "x.add_(1), 1 element": lambda: x1.add_(1),
        "sum, 4096 fp32": lambda: torch.sum(a4),
        "a + b, 4096 fp32": lambda: a4 + b4,
        "a + b, 1M fp32": lambda: m1 + m2,
        "dot, 2656 bf16": lambda: torch.dot(d1, d2),
        "dot, 4096 bf16": lambda: torch.dot(d3, d4),
        "softmax 1 x 1024 bf16": lambda: torch.softmax(s1, -1),
        "softmax 8 x 2064 bf16": lambda: torch.softmax(s2, -1),
        "softmax 8 x 292 bf16": lambda: torch.softmax(s3, -1),
        "matmul 660x80x136 fp16": lambda: g1 @ g2,
        "matmul 40x608x64 bf16": lambda: g3 @ g4,
        "matmul 1000x1000x1000 bf16": lambda: g5 @ g6,
        "mv 1024x1024 bf16": lambda: torch.mv(v1, v2),
        "mv 1616x704 fp32": lambda: torch.mv(v3, v4),
        "layer_norm 8 x 1024 bf16": lambda: ln(l1, (1024,), lw, lb),
        "sleep 100k cycles": lambda: torch.cuda._sleep(100_000),
        "sleep 200k cycles": lambda: torch.cuda._sleep(200_000),
    }
    with torch.no_grad():
        for fn in ops.values():
            fn()
            fn()
        torch.cuda.synchronize()
        t0 = time.time()
        medians: dict[tuple[str, str], list[float]] = {}
        records = []
        for rnd in range(ROUNDS):
            for pattern in PATTERNS:
                for name, fn in ops.items():
                    ts = run_pattern(pattern, fn, flushes)
                    med = ts[len(ts) // 2]
                    medians.setdefault((name, pattern), []).append(med)
                    records.append({"case": name, "pattern": pattern, "round": rnd, "median_s": med, "samples_s": ts})
    benchlib.write_record(args.out, "timing-pattern", dev, records, t0)
    print(f"{'case':28s}" + "".join(f"{p[:20]:>21s}" for p in PATTERNS))
    for name in ops:
        row = [statistics.median(medians[(name, p)]) for p in PATTERNS]
        print(f"{name:28s}" + "".join(f"{v * 1e6:18.2f} us" for v in row))
    print(f"{'SM clock (MHz)':28s}", end="")
    for p in PATTERNS:
        a = statistics.median(medians[("sleep 100k cycles", p)])
        b = statistics.median(medians[("sleep 200k cycles", p)])
        print(f"{100_000 / (b - a) / 1e6:21.0f}", end="")
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())

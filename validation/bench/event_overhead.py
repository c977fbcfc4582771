"""What an event-timed PyTorch call measures with the GPU idle at the start event (the host's
dispatch is timed too) and with the GPU kept busy by a sleep kernel enqueued before it (the
call's kernels are queued before the GPU reaches them: only the GPU's own time is timed).

    python validation/bench/event_overhead.py --out event-overhead.json
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib


def timed(fn, busy: bool, reps: int = 30) -> list[float]:
    # busy: about 100 us of GPU time before the start event, so the host gets ahead
    sleep = (lambda: torch.cuda._sleep(200_000)) if busy else None
    return sorted(benchlib.event_time(fn, sleep) for _ in range(reps))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="event-overhead.json")
    args = ap.parse_args()
    dev = torch.device("cuda")
    x1 = torch.zeros(1, device=dev)
    a16 = torch.randn(16, 8192, device=dev, dtype=torch.bfloat16)
    b = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    w = torch.randn(8192, 8192, device=dev, dtype=torch.bfloat16)
    s128 = torch.randn(128, 128, device=dev, dtype=torch.bfloat16)
    v = torch.randn(1 << 24, device=dev)
    cases = {
        "nothing": lambda: None,
        "x.add_(1), 1 element": lambda: x1.add_(1),
        "matmul 128x128x128 bf16": lambda: torch.matmul(s128, s128),
        "matmul 16x8192x8192 bf16 (NN)": lambda: torch.matmul(a16, b),
        "linear 16x8192x8192 bf16 (TN)": lambda: torch.nn.functional.linear(a16, w),
        "sum of 16M fp32": lambda: v.sum(),
    }
    records = []
    t0 = time.time()
    for name, fn in cases.items():
        fn()
        for busy in (False, True):
            ts = timed(fn, busy)
            rec = {"case": name, "gpu_busy_before": busy, "median_s": ts[len(ts) // 2], "p10_s": ts[len(ts) // 10],
                   "p90_s": ts[len(ts) * 9 // 10], "samples_s": ts}
            records.append(rec)
            print(f"{name:34s} {'busy' if busy else 'idle'}: median {rec['median_s'] * 1e6:8.2f} us "
                  f"(p10 {rec['p10_s'] * 1e6:.2f}, p90 {rec['p90_s'] * 1e6:.2f})", flush=True)
    benchlib.write_record(args.out, "event-overhead", dev, records, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

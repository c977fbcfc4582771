"""Small ops timed as the ops benchmark times them (between two CUDA events right after an L2
flush that writes) and with the GPU merely busy (no flush): what a cold start costs a small op.

    python validation/bench/cold_ops.py --out cold-ops.json
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib


def timed(fn, flush, mode: str, reps: int = 30) -> list[float]:
    before = flush.zero_ if mode == "flushed" else (lambda: torch.cuda._sleep(1_000_000))
    out = [benchlib.event_time(fn, before) for _ in range(reps + 3)]
    return sorted(out[3:])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="cold-ops.json")
    args = ap.parse_args()
    dev = torch.device("cuda")
    flush = torch.empty(256 << 18, dtype=torch.int32, device=dev)  # 256 MiB, as ops_bench.py
    x1 = torch.zeros(1, device=dev)
    a4k, b4k = torch.randn(4096, device=dev), torch.randn(4096, device=dev)
    a1m, b1m = torch.randn(1 << 20, device=dev), torch.randn(1 << 20, device=dev)
    m128 = torch.randn(128, 128, device=dev, dtype=torch.bfloat16)
    m40, m64 = torch.randn(40, 64, device=dev, dtype=torch.bfloat16), torch.randn(64, 608, device=dev, dtype=torch.bfloat16)
    row = torch.randn(1, 1024, device=dev, dtype=torch.bfloat16)
    cases = {
        "x.add_(1), 1 element": lambda: x1.add_(1),
        "a + b, 4096 fp32": lambda: a4k + b4k,
        "a + b, 1M fp32": lambda: a1m + b1m,
        "sum, 4096 fp32": lambda: a4k.sum(),
        "matmul 128x128x128 bf16": lambda: torch.matmul(m128, m128),
        "matmul 40x608x64 bf16": lambda: torch.matmul(m40, m64),
        "softmax 1 x 1024 bf16": lambda: torch.softmax(row, -1),
    }
    records = []
    t0 = time.time()
    for name, fn in cases.items():
        fn()
        for mode in ("busy", "flushed"):
            ts = timed(fn, flush, mode)
            rec = {"case": name, "mode": mode, "median_s": ts[len(ts) // 2], "samples_s": ts}
            records.append(rec)
            print(f"{name:28s} {mode:8s} median {rec['median_s'] * 1e6:7.2f} us", flush=True)
    benchlib.write_record(args.out, "cold-ops", dev, records, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

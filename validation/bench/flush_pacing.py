"""Does a small multi-call op measure host-paced under ops_bench.py's timing loop?

For a few small ops of several PyTorch calls (naive attention at batch 1), times the op as
ops_bench.py does (flush, start event, op, end event, 50 times back to back, one sync) with
flush buffers of 64 MB to 1 GB, and records per repetition the host's wall time to enqueue it
and the GPU time of the flush (events around it). If the host's enqueue of a repetition outlasts
the GPU's flush plus op, the GPU waits for the host and the op's time grows; a larger flush
hides the host again.

    python3 validation/bench/flush_pacing.py --out flush-pacing.json
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import write_record  # noqa: E402


def naive(b: int, h: int, s: int, causal: bool, dev: torch.device):
    q = torch.randn(b, h, s, 128, dtype=torch.bfloat16, device=dev)
    k, v = torch.randn_like(q), torch.randn_like(q)
    mask = torch.ones(s, s, dtype=torch.bool, device=dev).triu(1) if causal else None
    scale = 1.0 / math.sqrt(128)

    def fn():
        x = q @ k.transpose(-1, -2) * scale
        if mask is not None:
            x = x.masked_fill(mask, float("-inf"))
        return torch.softmax(x, dim=-1) @ v

    return fn


def run(fn, flush: torch.Tensor, n: int = 50) -> dict:
    ev = [[torch.cuda.Event(enable_timing=True) for _ in range(3)] for _ in range(n)]
    host = []
    torch.cuda.synchronize()
    for f0, s, e in ev:
        t = time.perf_counter()
        f0.record()
        flush.zero_()
        s.record()
        fn()
        e.record()
        host.append(time.perf_counter() - t)
    torch.cuda.synchronize()
    op = [s.elapsed_time(e) * 1e-3 for _, s, e in ev]
    fl = [f0.elapsed_time(s) * 1e-3 for f0, s, _ in ev]
    return {"op_median_s": statistics.median(op), "op_min_s": min(op), "flush_median_s": statistics.median(fl),
            "host_enqueue_median_s": statistics.median(host), "op_s": op}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    dev = torch.device("cuda")
    t0 = time.time()
    cases = []
    for b, h, s, causal in [(1, 8, 512, True), (1, 8, 512, False), (1, 8, 1024, False), (2, 8, 512, True)]:
        fn = naive(b, h, s, causal, dev)
        for _ in range(5):
            fn()
        for mb in (64, 256, 1024):
            flush = torch.empty(mb << 18, dtype=torch.int32, device=dev)
            rec = run(fn, flush)
            rec.update({"label": f"naive-b{b}h{h}-s{s}{'-causal' if causal else ''}", "flush_mb": mb})
            cases.append(rec)
            print(f"{rec['label']:28s} flush {mb:5d} MB: op {rec['op_median_s']*1e6:7.1f} us (min {rec['op_min_s']*1e6:6.1f})"
                  f"  flush {rec['flush_median_s']*1e6:7.1f} us  host enqueue {rec['host_enqueue_median_s']*1e6:6.1f} us", flush=True)
            del flush
    write_record(a.out, "flush-pacing", dev, cases, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

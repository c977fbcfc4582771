"""Weight-streaming GEMMs (few rows) through torch.matmul (NN) and F.linear (TN): the kernels
cuBLAS runs for each shape, their profiled durations, and the bandwidth the weights stream at.

Decode's projections are F.linear with one to a few dozen rows; the probe measures one
16 x 8192 x 8192 case of each layout. This sweep shows how the kernel choice and the
streaming rate change with rows, width and depth.

    python validation/bench/skinny_linear.py --out skinny-linear.json
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib
import kernel_shapes

SHAPES = [  # rows (m), out features (n), in features (k)
    (1, 4096, 4096),
    (1, 1024, 4096),
    (1, 14336, 4096),
    (1, 4096, 14336),
    (1, 128256, 4096),
    (1, 8192, 8192),
    (1, 28672, 8192),
    (1, 8192, 28672),
    (4, 14336, 4096),
    (16, 8192, 8192),
    (16, 14336, 4096),
    (16, 4096, 4096),
    (32, 14336, 4096),
    (32, 4096, 14336),
    (64, 14336, 4096),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="skinny-linear.json")
    args = ap.parse_args()
    dev = torch.device("cuda")
    flush = torch.empty(256 * 2**20, dtype=torch.uint8, device=dev)
    records = []
    t0 = time.time()
    for m, n, k in SHAPES:
        x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        w = torch.randn(n, k, device=dev, dtype=torch.bfloat16)  # nn.Linear's weight: out x in
        b = w.t().contiguous()  # the same weights as k x n for torch.matmul
        for layout, fn in (
            ("tn", lambda x=x, w=w: torch.nn.functional.linear(x, w)),
            ("nn", lambda x=x, b=b: torch.matmul(x, b)),
        ):
            fn()
            # L2 flushed before each: the weights come from DRAM
            times = sorted(benchlib.event_time(fn, flush.zero_) for _ in range(20))
            flush.zero_()
            kernels = kernel_shapes.kernels_of(fn, dev)
            weights = n * k * 2
            kt = sum(kk["duration_s"] for kk in kernels)
            rec = {"m": m, "n": n, "k": k, "layout": layout, "event_median_s": times[len(times) // 2],
                   "kernels": kernels, "kernel_sum_s": kt, "weight_bytes": weights,
                   "kernel_gb_per_s": weights / kt / 1e9 if kt else None}
            records.append(rec)
            print(f"{layout} {m:3d}x{n:6d}x{k:6d} event {rec['event_median_s'] * 1e6:8.1f} us  kernels "
                  f"{kt * 1e6:8.1f} us  {rec['kernel_gb_per_s'] or 0:7.0f} GB/s  "
                  + ", ".join(f"{kk['name'][:44]} g{kk.get('grid')} {kk['duration_s'] * 1e6:.1f}" for kk in kernels),
                  flush=True)
        del x, w, b
    benchlib.write_record(args.out, "skinny-linear", dev, records, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""FP32 GEMMs with few rows (torch.matmul, TF32 off): the kernels cuBLAS runs for each shape,
their launch shapes and profiled durations, and the op's time as ops_bench.py takes it.

The expected-time model's FP32 path assumes tiles that reach the card's measured FP32 rate
on the SMs they occupy. With 16 to 32 rows cuBLAS picks other kernels (gemmSN, SIMT tiles
with few blocks, in-kernel split-K with hundreds of slices) whose times the random sets of
ops_bench.py miss by up to 5x. This sweep records what runs, shape by shape.

    python validation/bench/skinny_fp32.py --out skinny-fp32.json
    # the same cases once each inside NVTX ranges "case", for Nsight Compute:
    ncu --csv --page raw --nvtx --nvtx-include "case/" --clock-control none \\
        --section SpeedOfLight --section Occupancy --section WarpStateStats \\
        python3 validation/bench/skinny_fp32.py --ncu --only-ncu
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

# (n, k) pairs: the random sets' outliers first, then a grid of widths and depths
NK = [
    (2600, 2992), (3056, 2384), (4096, 4096), (3646, 3664), (2576, 3602), (768, 2008), (216, 920),
    (64, 1728), (66, 706), (112, 320), (1783, 176), (208, 200),
    (256, 256), (512, 512), (1024, 1024), (2048, 2048), (8192, 8192), (4096, 1024), (1024, 4096),
    (14336, 4096), (4096, 14336), (512, 4096), (4096, 512),
]
ROWS = (8, 16, 24, 32, 48)
NCU = [(24, 2600, 2992), (24, 3056, 2384), (16, 4096, 4096), (16, 768, 2008), (21, 216, 920),
       (16, 64, 1728), (16, 66, 706), (16, 112, 320), (16, 8192, 8192), (2048, 2048, 2048)]


def shapes() -> list[tuple[int, int, int]]:
    out = [(m, n, k) for m in ROWS for n, k in NK]
    out += [(21, 216, 920), (18, 1783, 176), (2048, 2048, 2048)]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="skinny-fp32.json")
    ap.add_argument("--ncu", action="store_true", help="run the NCU cases once each inside NVTX ranges")
    ap.add_argument("--budget-s", type=float, default=200.0)
    args = ap.parse_args()
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    if args.ncu:
        for m, n, k in NCU:
            a = torch.randn(m, k, device=dev)
            b = torch.randn(k, n, device=dev)
            torch.matmul(a, b)
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_push("case")
            torch.matmul(a, b)
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
        return 0
    flush = torch.empty(256 * 2**20, dtype=torch.uint8, device=dev)
    records: list[dict] = []
    t0 = time.time()
    for m, n, k in shapes():
        if time.time() - t0 > args.budget_s:
            break
        a = torch.randn(m, k, device=dev)
        b = torch.randn(k, n, device=dev)

        def fn(a=a, b=b):
            return torch.matmul(a, b)

        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        ks = kernel_shapes.kernels_of(fn, dev)
        times = []
        for _ in range(30):
            flush.fill_(1)
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e) * 1e-3)
        times.sort()
        records.append({"m": m, "n": n, "k": k, "median_s": times[len(times) // 2], "min_s": times[0],
                        "kernels": ks})
        benchlib.write_record(args.out, "skinny-fp32", dev, records, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""FP32 GEMMs with few rows (torch.matmul, TF32 off): the kernels cuBLAS runs for each shape,
their launch shapes and profiled durations, and the op's time as ops_bench.py takes it.

The expected-time model's FP32 path assumes tiles that reach the card's measured FP32 rate
on the SMs they occupy. With 16 to 32 rows cuBLAS picks other kernels (gemmSN, SIMT tiles
with few blocks, in-kernel split-K with hundreds of slices) whose times the random sets of
ops_bench.py miss by up to 5x. This sweep records what runs, shape by shape.

    python validation/bench/skinny_fp32.py --out skinny-fp32.json
    python validation/bench/skinny_fp32.py --grid --reps 10 --out fp32-grid.json    # 1,408 shapes
    python validation/bench/skinny_fp32.py --random 300 --seed 1 --reps 10 --out fp32-rand1.json
    python validation/bench/skinny_fp32.py --narrow [--tf32] --reps 10 --out fp32-narrow.json  # 1,456 shapes
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


# --grid: where cuBLAS's choice between its FP32 kernels (gemmSN, SIMT split-K, xmma) changes,
# rows by widths by depths, with a width and a depth that are not multiples of 4 elements
GRID_M = (2, 4, 8, 12, 16, 20, 24, 32)
GRID_N = (256, 512, 1024, 1536, 2048, 2304, 2560, 2816, 3072, 3584, 4096, 4352, 5120, 6144, 8192, 3002)
GRID_K = (128, 256, 512, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 3002)


# --narrow: outputs of 64-256 columns, where cuBLAS was seen to run an xmma kernel with hundreds
# of in-kernel k-slices on one tile (16 x 66 x 706, 16 x 112 x 320: 3-5.6x the model)
NARROW_M = (8, 16, 24, 32)
# (until 19:45 UTC on 2026-11-26 the width 200 was listed twice: fp32-narrow.json, tf32-narrow.json
# and fp32-narrow-rows.json hold 1,508, 1,508 and 4,290 cases of 1,456, 1,456 and 4,095 shapes)
NARROW_N = (*range(64, 257, 8), 66, 90, 130)
NARROW_K = (64, 128, 192, 256, 320, 448, 512, 706, 1024, 1500, 2048, 3000, 4096)


def shapes(mode: str = "fixed", count: int = 0, seed: int = 1) -> list[tuple[int, int, int]]:
    if mode == "grid":
        return [(m, n, k) for m in GRID_M for n in GRID_N for k in GRID_K]
    if mode == "narrow":
        return [(m, n, k) for m in NARROW_M for n in NARROW_N for k in NARROW_K]
    if mode == "narrow-rows":  # every row count of 2-16, widths up to 200
        return [(m, n, k) for m in range(2, 17) for n in NARROW_N if n <= 200 for k in NARROW_K]
    if mode == "random-narrow":
        # a hold-out for --narrow: rows 2-20, widths 56-260, depths 64-4096 log-uniform, as drawn
        import math
        import random

        rng = random.Random(seed)
        return [(rng.randint(2, 20), rng.randint(56, 260), round(2 ** rng.uniform(6, 12))) for _ in range(count)]
    if mode == "random":
        # a hold-out: rows 2-32, widths and depths log-uniform over 256-8192, half of them
        # rounded to multiples of 16, the rest as drawn
        import math
        import random

        rng = random.Random(seed)

        def size(lo: int, hi: int) -> int:
            v = round(2 ** rng.uniform(math.log2(lo), math.log2(hi)))
            return max(lo, v // 16 * 16) if rng.random() < 0.5 else v

        return [(rng.randint(2, 32), size(256, 8192), size(128, 8192)) for _ in range(count)]
    out = [(m, n, k) for m in ROWS for n, k in NK]
    out += [(21, 216, 920), (18, 1783, 176), (2048, 2048, 2048)]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="skinny-fp32.json")
    ap.add_argument("--ncu", action="store_true", help="run the NCU cases once each inside NVTX ranges")
    ap.add_argument("--budget-s", type=float, default=200.0)
    ap.add_argument("--grid", action="store_true", help="the GRID_M x GRID_N x GRID_K shapes instead of the fixed list")
    ap.add_argument("--narrow", action="store_true", help="the NARROW_M x NARROW_N x NARROW_K shapes instead")
    ap.add_argument("--narrow-rows", action="store_true", help="rows 2-16 x NARROW_N up to 200 x NARROW_K instead")
    ap.add_argument("--tf32", action="store_true", help="TF32 on (torch.backends.cuda.matmul.allow_tf32)")
    ap.add_argument("--random", type=int, default=0, help="this many random shapes (a hold-out) instead")
    ap.add_argument("--random-narrow", action="store_true", help="with --random: draw them as --narrow's hold-out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    mode = "grid" if args.grid else "narrow" if args.narrow else "narrow-rows" if args.narrow_rows else "fixed"
    if args.random:
        mode = "random-narrow" if args.random_narrow else "random"
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = args.tf32
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
    for m, n, k in shapes(mode, args.random, args.seed):
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
        if mode != "fixed":  # name, launch shape and duration are what the choice needs
            ks = [{key: x[key] for key in ("name", "grid", "block", "duration_s") if key in x} for x in ks]
        times = []
        for _ in range(args.reps):
            flush.fill_(1)
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            times.append(s.elapsed_time(e) * 1e-3)
        times.sort()
        records.append({"m": m, "n": n, "k": k, "median_s": times[len(times) // 2], "min_s": times[0],
                        "kernels": ks, **({"dtype": "tf32"} if args.tf32 else {})})
        if mode == "fixed" or len(records) % 50 == 0:
            benchlib.write_record(args.out, "skinny-fp32", dev, records, t0)
    benchlib.write_record(args.out, "skinny-fp32", dev, records, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Which kernels cuBLAS runs for products whose depth is not a power of two, and for the batched
products of naive attention: the data behind the GEMM choice map's depth classes.

    python3 validation/bench/kdiv_sweep.py --out kdiv-sweep.json

Part "depth": torch.matmul of row-major operands (roofcalc/probe/torch_ops.py gemm_choices, as the
probe runs it) for few-row and few-column products at depths near 1,000-12,000 with every power of
two from 2^0 to 2^8 as the largest that divides them. Part "batched": q @ k^T and p @ v of naive
attention (a transposed K view, as ops_bench.py runs it), over heads, query rows, keys and head
sizes, each product once under the profiler with a sleep kernel between them.

Needs torch with CUDA; roofcalc importable (the repository root on PYTHONPATH), not pydantic.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import benchlib  # noqa: E402

from roofcalc.probe.torch_ops import gemm_choices, profiled_kernels  # noqa: E402

PAIRS = ((2, 2), (2, 6), (3, 2), (4, 2), (6, 10), (7, 2), (8, 2), (10, 4), (12, 10), (13, 10), (16, 16),
         (2, 16), (16, 2), (60, 3), (3, 60), (8, 1000), (1000, 8), (4, 4000), (4000, 4))
BASES = (1000, 2000, 3000, 4000, 6000, 9000, 12000)


def depths() -> list[int]:
    """Near each base, a depth whose largest power-of-two divisor is 2^v, for v = 0..8."""
    out = set()
    for base in BASES:
        for v in range(9):
            step = 2**v
            k = max(step, round(base / step) * step)
            while (k // step) % 2 == 0:  # exactly 2^v: an odd multiple of it
                k += step
            out.add(k)
    return sorted(out)


def profiled(calls: list) -> list[list[dict]]:
    """Each call's kernels (name, grid, block, duration): roofcalc/probe/torch_ops.py profiled_kernels."""
    return profiled_kernels(torch, calls, block=True)


def batched() -> list[dict]:
    dev = torch.device("cuda")
    out = []
    for d in (64, 128):
        for bh in (8, 16, 32, 64):
            for s in (1, 2, 4, 8, 16, 64, 256, 512):
                calls, meta = [], []
                for kv in (512, 1000, 2048, 4096, 7053, 7927, 8192):
                    q = torch.randn(1, bh, s, d, device=dev, dtype=torch.bfloat16)
                    k = torch.randn(1, bh, kv, d, device=dev, dtype=torch.bfloat16)
                    p = torch.randn(1, bh, s, kv, device=dev, dtype=torch.bfloat16)
                    calls.append(lambda q=q, k=k: q @ k.transpose(-1, -2))
                    meta.append({"product": "q@k^T", "bh": bh, "s": s, "kv": kv, "d": d})
                    calls.append(lambda p=p, v=k: p @ v)
                    meta.append({"product": "p@v", "bh": bh, "s": s, "kv": kv, "d": d})
                for m, ks in zip(meta, profiled(calls), strict=True):
                    out.append({**m, "kernels": ks})
                del calls
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="kdiv-sweep.json")
    args = ap.parse_args()
    dev = torch.device("cuda")
    t0 = time.time()
    grid = [(m, n, k) for m, n in PAIRS for k in depths()]
    records = [{"part": "depth", **r} for r in gemm_choices(torch, {dt: grid for dt in ("fp32", "tf32", "bf16", "fp16")})]
    print(f"depth: {len(records)} shapes in {time.time() - t0:.1f} s", flush=True)
    t1 = time.time()
    bat = [{"part": "batched", **r} for r in batched()]
    print(f"batched: {len(bat)} products in {time.time() - t1:.1f} s", flush=True)
    benchlib.write_record(args.out, "gemm-kdiv-sweep", dev, records + bat, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

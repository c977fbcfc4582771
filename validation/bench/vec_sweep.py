"""Which kernels cuBLAS runs for torch.matmul with one row or one column (a vector on one side):
fp32 with TF32 off and on, bf16 and fp16, row-major operands as ops_bench.py's GEMMs. Each product
once to warm, then once under the profiler with a sleep kernel between products (kdiv_sweep.py
profiled). Development data for the GEMM op's one-row and one-column products.

    python3 validation/bench/vec_sweep.py --out vec-sweep.json
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
from kdiv_sweep import profiled  # noqa: E402

SIDES = (2, 6, 14, 114, 176, 1000, 4000, 8514, 16304)
DEPTHS = (2, 16, 128, 416, 1241, 2564, 8000)
TORCH = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="vec-sweep.json")
    args = ap.parse_args()
    dev = torch.device("cuda")
    t0 = time.time()
    out = []
    for dtype, tdt in TORCH.items():
        torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
        calls, meta = [], []
        for other in SIDES:
            for k in DEPTHS:
                for m, n in ((other, 1), (1, other)):
                    a = torch.randn(m, k, device=dev, dtype=tdt)
                    b = torch.randn(k, n, device=dev, dtype=tdt)
                    calls.append(lambda a=a, b=b: torch.matmul(a, b))
                    meta.append({"dtype": dtype, "m": m, "n": n, "k": k})
        for mt, ks in zip(meta, profiled(calls), strict=True):
            out.append({**mt, "kernels": ks})
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"{len(out)} products in {time.time() - t0:.1f} s", flush=True)
    benchlib.write_record(args.out, "gemm-vector-sweep", dev, out, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

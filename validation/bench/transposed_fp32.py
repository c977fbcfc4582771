"""FP32 products (TF32 off) as a @ b and as q @ k.transpose(-2, -1) (naive attention's Q K^T):
which kernels cuBLAS runs for each layout, shape by shape. The gemmSN and serial split-K maps of
the expected-time model were measured on a @ b only (validation/expected/h100/kernels/fp32-choice/).

    python validation/bench/transposed_fp32.py --out transposed-fp32.json
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

# (m, n, k): in the serial split-K region, in the gemmSN map, and beside them
SHAPES = [(16, 66, 706), (8, 80, 512), (8, 128, 512), (12, 150, 300), (4, 90, 2000), (16, 112, 320),
          (16, 4096, 128), (8, 2048, 256), (4, 4096, 1024), (16, 3072, 512), (2, 8192, 2048), (16, 4096, 4096)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="transposed-fp32.json")
    args = ap.parse_args()
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    records = []
    t0 = time.time()
    for m, n, k in SHAPES:
        a = torch.randn(m, k, device=dev)
        b = torch.randn(k, n, device=dev)
        kt = torch.randn(n, k, device=dev)  # stored as K is: n rows of k
        pair = (("a @ b", lambda a=a, b=b: torch.matmul(a, b)),
                ("q @ k^T", lambda a=a, kt=kt: torch.matmul(a, kt.transpose(-2, -1))))
        for layout, fn in pair:
            for _ in range(3):
                fn()
            torch.cuda.synchronize()
            ks = kernel_shapes.kernels_of(fn, dev)
            records.append({"m": m, "n": n, "k": k, "layout": layout,
                            "kernels": [{key: x[key] for key in ("name", "grid", "block", "duration_s") if key in x} for x in ks]})
    benchlib.write_record(args.out, "transposed-fp32", dev, records, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

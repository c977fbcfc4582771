"""Do torch.mv(A, x) and torch.matmul(A, x as a k x 1 matrix) run the same cuBLAS kernels? fp32
with TF32 off and on, A of m rows of k (row-major), each call's kernels under the profiler with
grid and block: development data for the one-column plane of the GEMM choice map (the gemv op
times torch.mv, the GEMM op torch.matmul).

    python3 validation/bench/mv_paths.py --out mv-paths.json
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

from roofcalc.probe.torch_ops import profiled_kernels  # noqa: E402

ROWS = (1, 2, 7, 33, 80, 99, 256, 1000, 4099, 16384)
DEPTHS = (3, 64, 70, 348, 822, 1942, 6000, 13728, 24034)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="mv-paths.json")
    args = ap.parse_args()
    dev = torch.device("cuda")
    t0 = time.time()
    out = []
    for dtype in ("fp32", "tf32"):
        torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
        calls, meta = [], []
        for m in ROWS:
            for k in DEPTHS:
                a = torch.randn(m, k, device=dev)
                x = torch.randn(k, device=dev)
                calls.append(lambda a=a, x=x: torch.mv(a, x))
                meta.append({"dtype": dtype, "m": m, "k": k, "call": "mv"})
                calls.append(lambda a=a, x=x: torch.matmul(a, x.view(-1, 1)))
                meta.append({"dtype": dtype, "m": m, "k": k, "call": "matmul"})
        for mt, ks in zip(meta, profiled_kernels(torch, calls, block=True), strict=True):
            out.append({**mt, "kernels": ks})
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"{len(out)} calls in {time.time() - t0:.1f} s", flush=True)
    benchlib.write_record(args.out, "mv-paths", dev, out, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The kernels cuBLAS runs for torch.matmul of a depth of 1-16 (16-bit, fp32 and tf32; outputs of
about 0.01-150 M elements), and for the last hold-out's two misses, each under the profiler with
grid and block: development data for a model of tiny-depth GEMMs (16-bit ones of a depth under 8
ran 1.85-2.07x the model on the committed reports, 13-17 us whatever their size).

    python3 validation/bench/tinyk_kernels.py --out tinyk-kernels.json
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

TORCH = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
SIDES = ((99, 4521), (1104, 1152), (4433, 277), (3992, 133), (2048, 2048), (12960, 9856))
DEPTHS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16)
EXTRA = (("bf16", 1104, 1152, 7), ("bf16", 2, 102, 5120), ("bf16", 2, 100, 4002), ("bf16", 2, 100, 5120))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="tinyk-kernels.json")
    args = ap.parse_args()
    dev = torch.device("cuda")
    t0 = time.time()
    out = []
    shapes = [(dt, m, n, k) for dt in TORCH for m, n in SIDES for k in DEPTHS] + list(EXTRA)
    for dtype in TORCH:
        torch.backends.cuda.matmul.allow_tf32 = dtype == "tf32"
        calls, meta = [], []
        for dt, m, n, k in shapes:
            if dt != dtype:
                continue
            a = torch.randn(m, k, device=dev, dtype=TORCH[dt])
            b = torch.randn(k, n, device=dev, dtype=TORCH[dt])
            calls.append(lambda a=a, b=b: torch.matmul(a, b))
            meta.append({"dtype": dt, "m": m, "n": n, "k": k})
        for mt, ks in zip(meta, profiled_kernels(torch, calls, block=True), strict=True):
            out.append({**mt, "kernels": ks})
    torch.backends.cuda.matmul.allow_tf32 = False
    print(f"{len(out)} products in {time.time() - t0:.1f} s", flush=True)
    benchlib.write_record(args.out, "gemm-tiny-depth", dev, out, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

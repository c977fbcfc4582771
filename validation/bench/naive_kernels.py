"""The kernels of the naive attention (ops_bench.py's: S = Q K^T * scale, masked_fill, softmax,
O = P V) with a short query over long keys, and of its two batched GEMMs alone, each under the
profiler with grid and block: key lengths 16-byte aligned and not (bf16: a multiple of 8 or not),
development data for the attention op's naive GEMMs.

    python3 validation/bench/naive_kernels.py --out naive-kernels.json
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
from ops_bench import attention_case  # noqa: E402

from roofcalc.probe.torch_ops import profiled_kernels  # noqa: E402

# the hold-out misses and their aligned neighbours, then a grid
MISSES = [
    (4, 2, 2, 6955, 64, True),
    (8, 4, 2, 7053, 64, False),
    (8, 2, 10, 4053, 64, False),
    (1, 16, 2, 7927, 64, False),
    (8, 1, 11, 619, 64, True),
    (2, 16, 4, 2477, 128, True),
    (8, 4, 2, 1569, 128, True),
    (1, 2, 56, 1671, 64, True),
    (2, 2, 1, 7302, 64, True),
]


def shapes() -> list[tuple[int, int, int, int, int, bool]]:
    out = []
    for b, h, s, kv, d, c in MISSES:
        out += [(b, h, s, kv, d, c), (b, h, s, kv // 8 * 8, d, c)]
    for bh in (2, 16, 64):
        for s in (1, 4, 16, 64):
            for kv in (600, 1601, 4000, 4001, 4002, 4004, 7000, 7003):
                for d in (64, 128):
                    out.append((1, bh, s, kv, d, False))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="naive-kernels.json")
    args = ap.parse_args()
    dev = torch.device("cuda")
    t0 = time.time()
    calls, meta = [], []
    for b, h, s, kv, d, causal in shapes():
        fn, _check, _impl, _ctx = attention_case(b, h, h, s, kv, d, causal, "naive")["build"](dev)
        calls.append(fn)
        meta.append({"what": "naive", "batch": b, "heads": h, "seq": s, "kv_seq": kv, "head_dim": d, "causal": causal})
        p = torch.randn(b, h, s, kv, device=dev, dtype=torch.bfloat16)
        v = torch.randn(b, h, kv, d, device=dev, dtype=torch.bfloat16)
        calls.append(lambda p=p, v=v: p @ v)
        meta.append({"what": "probs_v", "batch": b, "heads": h, "seq": s, "kv_seq": kv, "head_dim": d})
        q = torch.randn(b, h, s, d, device=dev, dtype=torch.bfloat16)
        k = torch.randn(b, h, kv, d, device=dev, dtype=torch.bfloat16)
        calls.append(lambda q=q, k=k: q @ k.transpose(-1, -2))
        meta.append({"what": "scores", "batch": b, "heads": h, "seq": s, "kv_seq": kv, "head_dim": d})
    out = [{**m, "kernels": ks} for m, ks in zip(meta, profiled_kernels(torch, calls, block=True), strict=True)]
    print(f"{len(out)} calls in {time.time() - t0:.1f} s", flush=True)
    benchlib.write_record(args.out, "naive-kernels", dev, out, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

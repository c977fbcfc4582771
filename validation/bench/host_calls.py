"""What one PyTorch call costs the host (Python + ATen dispatch + launch), by kind of call, with
the GPU out of the way: each call runs N times in a loop on tiny tensors (the GPU finishes
every kernel long before the host issues the next), timed by the wall clock, one sync at the
end. The kinds are those an eager Llama layer issues (validation/bench/llm_bench.py):
elementwise ops and casts, reductions, views, slices, cat, F.linear (cuBLAS), index_put_ at
a tensor position, scaled_dot_product_attention; and torch.compile'd functions (the fixed cost
of entering a compiled region beside the launches inside it).

    python validation/bench/host_calls.py --out host-calls.json
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib

N = 2000
ROUNDS = 5


def per_call(fn: Callable[[], Any]) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(N):
        fn()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / N


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="host-calls.json")
    args = ap.parse_args()
    dev = torch.device("cuda")
    bf = torch.bfloat16
    x = torch.randn(1, 1, 256, device=dev, dtype=bf)
    xf = x.float()
    w = torch.randn(256, device=dev, dtype=bf)
    lw = torch.randn(256, 256, device=dev, dtype=bf)
    q = torch.randn(1, 8, 1, 64, device=dev, dtype=bf)
    kc = torch.randn(1, 2, 64, 64, device=dev, dtype=bf)
    vc = torch.randn(1, 2, 64, 64, device=dev, dtype=bf)
    kn = torch.randn(1, 2, 1, 64, device=dev, dtype=bf)
    pos = torch.tensor([5], device=dev)
    y = torch.empty(1, 1, 256, device=dev, dtype=bf)
    calls: dict[str, Callable[[], Any]] = {
        "nothing (loop only)": lambda: None,
        "x.add_(1)": lambda: y.add_(1),
        "x * y (new tensor)": lambda: x * w,
        "x.float() (cast)": lambda: x.float(),
        "x.pow(2)": lambda: xf.pow(2),
        "x.mean(-1, keepdim=True)": lambda: xf.mean(-1, keepdim=True),
        "torch.rsqrt(x + eps) (2 calls)": lambda: torch.rsqrt(xf + 1e-6),
        "F.silu(x)": lambda: F.silu(x),
        "x.view(1, 1, -1, 64)": lambda: x.view(1, 1, -1, 64),
        "x.transpose(1, 2)": lambda: q.transpose(1, 2),
        "x.reshape (a view)": lambda: q.reshape(1, 1, -1),
        "x[..., 32:] (slice)": lambda: q[..., 32:],
        "-x[..., 32:] (slice, neg)": lambda: -q[..., 32:],
        "torch.cat((a, b), -1)": lambda: torch.cat((q, q), dim=-1),
        "F.linear(x, w) bf16": lambda: F.linear(x, lw),
        "kc[:, :, pos] = k (index_put_)": lambda: kc.__setitem__((slice(None), slice(None), pos), kn),
        "sdpa(q, kc, vc, enable_gqa)": lambda: F.scaled_dot_product_attention(q, kc, vc, enable_gqa=True),
        "F.embedding": lambda: F.embedding(pos, lw),
    }
    # torch.compile'd functions (Inductor): the fixed cost of entering a compiled region
    # (guards, the runtime wrappers) beside the launches inside it
    one = torch.compile(lambda t: t * 2 + 1, dynamic=False)
    norm = torch.compile(lambda t, r, g: (((t + r).float() * torch.rsqrt((t + r).float().pow(2).mean(-1, keepdim=True)
                                                                         + 1e-6)).to(t.dtype) * g, t + r),
                         dynamic=False)
    mm = torch.compile(lambda t, w: F.silu(F.linear(t, w)) * F.linear(t, w), dynamic=False)
    calls["compiled t * 2 + 1 (1 kernel)"] = lambda: one(x)
    calls["compiled residual + RMSNorm"] = lambda: norm(x, x, w)
    calls["compiled silu(x W) * (x W) (2 GEMMs + 1)"] = lambda: mm(x, lw)
    with torch.no_grad():
        for fn in calls.values():
            for _ in range(20):
                fn()
        torch.cuda.synchronize()
        t0 = time.time()
        samples: dict[str, list[float]] = {k: [] for k in calls}
        for _ in range(ROUNDS):
            for name, fn in calls.items():
                samples[name].append(per_call(fn))
    records = [{"case": k, "per_call_s": statistics.median(v), "samples_s": v, "calls_per_sample": N}
               for k, v in samples.items()]
    benchlib.write_record(args.out, "host-calls", dev, records, t0)
    for r in records:
        print(f"{r['case']:36s} {r['per_call_s'] * 1e6:8.2f} us")
    return 0


if __name__ == "__main__":
    sys.exit(main())

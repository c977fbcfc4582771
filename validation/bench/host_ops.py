"""The host's time to issue one PyTorch call of each kind a small multi-kernel op makes (the
naive attention of ops_bench.py: bmm, a scalar multiply, masked_fill, softmax, repeat_interleave),
each in a hot loop on tiny tensors, beside the hot loop of x.add_ (the probe's torch_op_floor_s).
The GPU's work is tiny: each loop's time per call is the host's.

    python3 host_ops.py --out DIR

Writes DIR/host_ops.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch


def per_call(fn: Any, n: int = 2000) -> float:
    for _ in range(100):
        fn()
    torch.cuda.synchronize()
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        torch.cuda.synchronize()
        runs.append((time.perf_counter() - t0) / n)
    return statistics.median(runs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    dev = "cuda"
    x = torch.zeros(16, device=dev)
    q = torch.randn(2, 4, 3, 64, device=dev, dtype=torch.bfloat16)
    k = torch.randn(2, 4, 5, 64, device=dev, dtype=torch.bfloat16)
    kt = k.transpose(-1, -2)
    s = torch.randn(2, 4, 3, 5, device=dev, dtype=torch.bfloat16)
    mask = torch.ones(3, 5, dtype=torch.bool, device=dev).triu(1)
    k2 = torch.randn(2, 2, 5, 64, device=dev, dtype=torch.bfloat16)
    calls = {
        "add_": lambda: x.add_(1),
        "matmul_qk": lambda: q @ kt,
        "mul_scalar": lambda: s * 0.125,
        "masked_fill": lambda: s.masked_fill(mask, float("-inf")),
        "softmax": lambda: torch.softmax(s, dim=-1),
        "matmul_pv": lambda: s @ k,
        "repeat_interleave": lambda: k2.repeat_interleave(2, dim=1),
    }
    res = {name: per_call(fn) for name, fn in calls.items()}
    res["add_after"] = per_call(calls["add_"])
    from benchlib import run_header

    doc = {
        **run_header("roofcalc-host-ops-1"),
        "per_call_s": res,
        "per_call_in_add_": {k: v / ((res["add_"] + res["add_after"]) / 2) for k, v in res.items()},
    }
    (out / "host_ops.json").write_text(json.dumps(doc, indent=1))
    print(json.dumps(doc["per_call_in_add_"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())

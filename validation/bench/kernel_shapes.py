"""Which kernels PyTorch really launches for each op case, with their launch shapes.

For every case of ops_bench.py's plan, runs the op once (after a warm-up) under
torch.profiler and records each CUDA kernel: name, grid, block, registers per thread,
shared memory, the profiler's own occupancy estimate, and its duration. These are the
per-kernel facts the expected-time model's op files declare (grid, threads, registers,
shared memory, kernels per op), read off the real implementation instead of guessed.

    python validation/bench/kernel_shapes.py --out kernels.json [--only REGEX] [--random N --seed S | --plan paths]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import ops_bench  # noqa: E402


def kernels_of(fn, dev: torch.device) -> list[dict]:
    """Kernels of one call, with their launch shapes."""
    torch.cuda.synchronize(dev)
    out = []
    for ev in benchlib.profiled_events(fn, ("kernel",)):
        a = ev.get("args", {})
        out.append({"name": ev.get("name"), "duration_s": (ev.get("dur") or 0) * 1e-6,
                    **{k: a[k] for k in ("grid", "block", "registers per thread", "shared memory", "blocks per SM",
                                         "warps per SM", "est. achieved occupancy %") if k in a}})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="kernels.json")
    ap.add_argument("--only", default=None)
    ap.add_argument("--random", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--plan", choices=sorted(ops_bench.PLANS), default="fixed")
    args = ap.parse_args()
    dev = torch.device("cuda")
    cases = ops_bench.random_cases(args.random, args.seed) if args.random else ops_bench.PLANS[args.plan]()
    if args.only:
        cases = [c for c in cases if re.search(args.only, c["label"])]
    records = []
    t0 = time.time()
    for c in cases:
        rec = {"label": c["label"], "op": c["op"], "dtype": c["dtype"], "params": c["params"]}
        try:
            fn, _check, impl, ctx = c["build"](dev)
            rec["impl"] = impl
            with ctx():
                fn()
                torch.cuda.synchronize(dev)
                rec["kernels"] = kernels_of(fn, dev)
        except Exception as e:  # keep going: one failing case must not lose the rest
            rec["error"] = f"{type(e).__name__}: {e}"[:300]
        records.append(rec)
        names = ", ".join(f"{k['name'][:60]} g{k.get('grid')} b{k.get('block')} r{k.get('registers per thread')} "
                          f"s{k.get('shared memory')}" for k in rec.get("kernels", []))
        print(f"{c['label']:48s} {names or rec.get('error', '')}", flush=True)
        torch.cuda.empty_cache()
    benchlib.write_record(args.out, "kernel-shapes", dev, records, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

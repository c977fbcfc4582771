"""Small ops timed as the ops benchmark times them (between two CUDA events right after an L2
flush that writes) and with the GPU merely busy (no flush): what a cold start costs a small op.

Two more modes split that cost: "flushed, data warm" re-reads the op's inputs after the flush
(its kernel code stays cold), "flushed, code warm" runs the same op on a twin set of inputs
after the flush (its code is fetched, its data stays cold).

    python validation/bench/cold_ops.py --out cold-ops.json
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib


MODES = ("busy", "flushed", "flushed, data warm", "flushed, code warm")


def timed(fn, twin, inputs, flush, mode: str, reps: int = 30) -> list[float]:
    def before() -> None:
        if mode == "busy":
            torch.cuda._sleep(1_000_000)
            return
        flush.zero_()
        if mode == "flushed, data warm":
            for t in inputs:
                t.add_(0)
        elif mode == "flushed, code warm":
            twin()

    out = [benchlib.event_time(fn, before) for _ in range(reps + 3)]
    return sorted(out[3:])


def case(op, make):
    """(the op on its inputs, the same op on a twin set, its tensor inputs)."""
    a, b = make(), make()
    return (lambda: op(*a)), (lambda: op(*b)), [x for x in a if isinstance(x, torch.Tensor)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="cold-ops.json")
    args = ap.parse_args()
    dev = torch.device("cuda")
    flush = torch.empty(256 << 18, dtype=torch.int32, device=dev)  # 256 MiB, as ops_bench.py

    def t(*shape, dt=torch.float32):
        return torch.randn(*shape, device=dev, dtype=dt)

    bf = torch.bfloat16
    ln = torch.nn.functional.layer_norm
    ops = {  # name: (the call, a function making a fresh set of its arguments)
        "x.add_(1), 1 element": (torch.Tensor.add_, lambda: (t(1), 1)),
        "a + b, 4096 fp32": (torch.add, lambda: (t(4096), t(4096))),
        "a + b, 1M fp32": (torch.add, lambda: (t(1 << 20), t(1 << 20))),
        "sum, 4096 fp32": (torch.sum, lambda: (t(4096),)),
        "dot, 4096 bf16": (torch.dot, lambda: (t(4096, dt=bf), t(4096, dt=bf))),
        "matmul 128x128x128 bf16": (torch.matmul, lambda: (t(128, 128, dt=bf), t(128, 128, dt=bf))),
        "matmul 40x608x64 bf16": (torch.matmul, lambda: (t(40, 64, dt=bf), t(64, 608, dt=bf))),
        "gemv 1024x1024 bf16": (torch.mv, lambda: (t(1024, 1024, dt=bf), t(1024, dt=bf))),
        "softmax 1 x 1024 bf16": (torch.softmax, lambda: (t(1, 1024, dt=bf), -1)),
        "softmax 8 x 2064 bf16": (torch.softmax, lambda: (t(8, 2064, dt=bf), -1)),
        "layer_norm 8 x 1024 bf16": (ln, lambda: (t(8, 1024, dt=bf), (1024,), t(1024, dt=bf), t(1024, dt=bf))),
    }
    cases = {name: case(op, make) for name, (op, make) in ops.items()}
    records = []
    t0 = time.time()
    for name, (fn, twin, inputs) in cases.items():
        fn()
        twin()
        for mode in MODES:
            ts = timed(fn, twin, inputs, flush, mode)
            rec = {"case": name, "mode": mode, "median_s": ts[len(ts) // 2], "samples_s": ts}
            records.append(rec)
            print(f"{name:28s} {mode:20s} median {rec['median_s'] * 1e6:7.2f} us", flush=True)
    benchlib.write_record(args.out, "cold-ops", dev, records, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

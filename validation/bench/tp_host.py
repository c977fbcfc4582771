"""What an eager all-reduce costs a tensor-parallel step's host (torchrun, NCCL, one process
per GPU): for each rank, hot loops on tiny tensors, timed by the host clock with one sync at
the end (the GPU's work is negligible, so each is the host's issue or a wait for the peer):

- op: x.add_(1), the probe's hot-loop op;
- all_reduce: dist.all_reduce of 4 KB, back to back;
- segments: K x.add_(1) then one all_reduce, repeated (a layer's ops between two all-reduces):
  (segment - K x op) is what one all-reduce adds to a step that mixes them;
- segments_skewed: the same with rank 1 spending an extra busy-wait before each all-reduce (a
  slower host on one rank): what a step pays when its ranks' hosts run at different speeds.

    torchrun --nproc-per-node 2 validation/bench/tp_host.py --out tp-host.json
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from datetime import timedelta

import torch
import torch.distributed as dist

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib


def per_call(fn, n: int, dev) -> tuple[float, float]:
    """(host issue per call, per call to the end of the GPU's work), seconds."""
    torch.cuda.synchronize(dev)
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize(dev)
    return (t1 - t0) / n, (time.perf_counter() - t0) / n


def spin(seconds: float) -> None:
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        pass


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="tp-host.json")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--k", type=int, default=20, help="ops per segment")
    args = ap.parse_args()
    rank, local = int(os.environ["RANK"]), int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local)
    dev = torch.device("cuda", local)
    dist.init_process_group("nccl", timeout=timedelta(seconds=300), device_id=dev)
    t0 = time.time()
    x = torch.zeros(1, device=dev)
    t = torch.ones(1024, device=dev)
    k = args.k

    def op():
        x.add_(1)

    def ar():
        dist.all_reduce(t)

    def segment():
        for _ in range(k):
            x.add_(1)
        dist.all_reduce(t)

    skew = 50e-6

    def segment_skewed():
        for _ in range(k):
            x.add_(1)
        if rank == 1:
            spin(skew)
        dist.all_reduce(t)

    out = {}
    for name, fn, n in (("op", op, 2000), ("all_reduce", ar, 1000), ("segments", segment, 200),
                        ("segments_skewed", segment_skewed, 200)):
        for _ in range(20):
            fn()
        dist.barrier(device_ids=[local])
        torch.cuda.synchronize(dev)
        samples = []
        for _ in range(args.reps):
            dist.barrier(device_ids=[local])
            samples.append(per_call(fn, n, dev))
        out[name] = {"calls": n, "issue_s": [s[0] for s in samples], "done_s": [s[1] for s in samples]}
    t.fill_(1)
    dist.all_reduce(t)
    ok = bool((t == dist.get_world_size()).all().item())
    gathered = [None] * dist.get_world_size()
    dist.all_gather_object(gathered, out)
    if rank == 0:
        med = lambda xs: statistics.median(xs)  # noqa: E731
        cases = []
        for r, o in enumerate(gathered):
            cases.append({"rank": r, "k": k, "skew_s": skew, **o})
            opd = med(o["op"]["done_s"])
            print(f"rank {r}: op {opd * 1e6:.2f} us; all_reduce issue {med(o['all_reduce']['issue_s']) * 1e6:.1f} "
                  f"done {med(o['all_reduce']['done_s']) * 1e6:.1f} us; segment of {k} ops + 1 all_reduce "
                  f"{med(o['segments']['done_s']) * 1e6:.1f} us (all-reduce adds "
                  f"{(med(o['segments']['done_s']) - k * opd) * 1e6:.1f}); skewed by {skew * 1e6:.0f} us on rank 1: "
                  f"{med(o['segments_skewed']['done_s']) * 1e6:.1f} us")
        doc = {"schema": 1, "kind": "tp-host", "date": benchlib.utc_now(),
               "command": " ".join([os.path.basename(sys.argv[0]), *sys.argv[1:]]),
               "device": benchlib.device_info(dev), "torch": torch.__version__, "world": dist.get_world_size(),
               "verified": ok, "cases": cases, "wall_s": time.time() - t0}
        benchlib.write_json_atomic(args.out, doc)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

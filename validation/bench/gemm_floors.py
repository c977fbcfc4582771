"""The fixed cost of a cuBLAS GEMM kernel on each of its paths, and which kernels it runs.

roofcalc's GEMM model charges each library kernel a fixed cost (``gemm_kernel_floor_s``), which
the probe measures on one path only: a one-tile bf16 GEMM, which cuBLAS runs on Hopper with its
TMA kernels (nvjet). FP32 (TF32 off), TF32 and 16-bit GEMMs whose leading dimensions are not
multiples of 16 bytes run other kernels (CUTLASS 2.x / sm80 xmma, cp.async pipelines). This
script times the same one-tile GEMM on each path the way the probe times the bf16 one: GRAPH
GEMMs of it replayed from one CUDA graph, time per GEMM (so launch and event floors are out),
median of REPS replays. It also times the smallest kernel node (x.add_(1) on one element) the
same way, and lists the kernels each GEMM launches (torch.profiler: name, grid, duration), so
that a path whose GEMM launches two kernels is seen as such.

    python3 validation/bench/gemm_floors.py --out gemm-floors.json

torch and the standard library only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import profiled_events, write_record  # noqa: E402

GRAPH = 200
REPS = 15

# (label, roofcalc's GEMM path, torch dtype, allow_tf32, m, n, k). The unaligned and word paths
# take k odd and k = 2 mod 4 (A's rows start off 16-byte boundaries; B's rows keep them).
CASES = [
    ("bf16 one tile", "tma", torch.bfloat16, False, 128, 128, 128),
    ("fp16 one tile", "tma", torch.float16, False, 128, 128, 128),
    ("fp32 one tile (TF32 off)", "simt", torch.float32, False, 128, 128, 128),
    ("tf32 one tile", "tf32", torch.float32, True, 128, 128, 128),
    ("bf16 one tile, k odd", "unaligned", torch.bfloat16, False, 128, 128, 127),
    ("bf16 one tile, k = 2 mod 4", "word", torch.bfloat16, False, 128, 128, 126),
    # one k-block of each path's kernels (nvjet 64, SIMT/xmma FP32 8, s1688 TF32 16, s1688
    # 16-bit 32, s161616 16-bit 32): the fixed cost with the least k-loop beside it
    ("bf16 one tile, one k-block", "tma", torch.bfloat16, False, 128, 128, 64),
    ("fp32 one tile, one k-block (TF32 off)", "simt", torch.float32, False, 128, 128, 8),
    ("tf32 one tile, one k-block", "tf32", torch.float32, True, 128, 128, 16),
    ("bf16 one tile, one k-block, k odd", "unaligned", torch.bfloat16, False, 128, 128, 31),
    ("bf16 one tile, one k-block, k = 2 mod 4", "word", torch.bfloat16, False, 128, 128, 30),
    # many tiles (more than the SMs: no split-K), one k-block
    ("bf16 1024^2, one k-block", "tma", torch.bfloat16, False, 1024, 1024, 64),
    ("fp32 1024^2, one k-block (TF32 off)", "simt", torch.float32, False, 1024, 1024, 8),
    ("tf32 1024^2, one k-block", "tf32", torch.float32, True, 1024, 1024, 16),
    ("bf16 1024^2, one k-block, k odd", "unaligned", torch.bfloat16, False, 1024, 1024, 31),
    ("bf16 1024^2, one k-block, k = 2 mod 4", "word", torch.bfloat16, False, 1024, 1024, 30),
    # a longer k on each path: what grows with the k-loop, beside the fixed cost
    ("bf16 one tile, k 1024", "tma", torch.bfloat16, False, 128, 128, 1024),
    ("fp32 one tile, k 1024 (TF32 off)", "simt", torch.float32, False, 128, 128, 1024),
    ("tf32 one tile, k 1024", "tf32", torch.float32, True, 128, 128, 1024),
    ("bf16 one tile, k 1023", "unaligned", torch.bfloat16, False, 128, 128, 1023),
]


def graph_time(fn) -> list[float]:
    fn()  # the library picks and loads its kernel outside the capture
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(GRAPH):
            fn()
    g.replay()
    torch.cuda.synchronize()
    out = []
    for _ in range(REPS):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        g.replay()
        e.record()
        e.synchronize()
        out.append(s.elapsed_time(e) * 1e-3 / GRAPH)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    dev = torch.device("cuda")
    t0 = time.time()
    cases = []
    x = torch.zeros(1, device=dev)
    t = graph_time(lambda: x.add_(1))
    cases.append({"label": "x.add_(1), one element", "path": None, "per_node_s": t, "median_s": statistics.median(t)})
    print(f"{'x.add_(1)':34s} {statistics.median(t) * 1e6:6.2f} us per node", flush=True)
    for label, path, dt, tf32, m, n, k in CASES:
        torch.backends.cuda.matmul.allow_tf32 = tf32
        try:
            a_ = torch.randn(m, k, device=dev, dtype=dt)
            b_ = torch.randn(k, n, device=dev, dtype=dt)
            c_ = torch.empty(m, n, device=dev, dtype=dt)
            t = graph_time(lambda: torch.mm(a_, b_, out=c_))
            ref = a_.double() @ b_.double()
            err = float((c_.double() - ref).norm() / ref.norm())
            kern = [
                {"name": ev.get("name"), "grid": ev.get("args", {}).get("grid"),
                 "block": ev.get("args", {}).get("block"), "duration_s": ev.get("dur", 0) * 1e-6}
                for ev in profiled_events(lambda: torch.mm(a_, b_, out=c_), ("kernel",))
            ]
            rec = {"label": label, "path": path, "dtype": str(dt).removeprefix("torch."), "allow_tf32": tf32,
                   "params": {"m": m, "n": n, "k": k}, "per_node_s": t, "median_s": statistics.median(t),
                   "rel_err_vs_fp64": err, "kernels": kern}
            names = "; ".join(f"{kk['name'][:70]} g{kk['grid']}" for kk in kern)
            print(f"{label:34s} {rec['median_s'] * 1e6:6.2f} us per node  err {err:.1e}  {names}", flush=True)
        except Exception as e:  # recorded, not fatal
            rec = {"label": label, "path": path, "error": f"{type(e).__name__}: {e}"[:300]}
            print(label, rec["error"], flush=True)
        finally:
            torch.backends.cuda.matmul.allow_tf32 = False
        cases.append(rec)
        write_record(a.out, "gemm-floors", dev, cases, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

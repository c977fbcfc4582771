#!/usr/bin/env python3
"""How fast a GEMM runs fresh against back to back: the tensor rate as the GPU stays busy.

A kernel timed alone after the GPU idled (a benchmark's single op) and the same kernel among
seconds of back-to-back work (an LLM step timed in a loop) need not run at the same rate: the
board's power limit lowers the SM clock once the tensor cores have drawn full power for a
while. For each GEMM shape and input kind:

- fresh: one GEMM after ``--idle-s`` of idle GPU (a sleep on the host, GPU synchronised),
  repeated ``--fresh-reps`` times; the median time;
- back to back: GEMMs enqueued without a gap for ``--busy-s`` seconds, each between two CUDA
  events; the time of each by its elapsed time since the first started, so the curve shows
  when and how far the rate drops; with the power draw and SM clock NVML reports (when
  available) sampled on the host between batches.

Inputs: random normal (as the benchmarks and the LLM steps use) and zeros (little switching
power), so a drop that follows power shows as a difference between the two.

    python3 validation/bench/gemm_sustained.py --out gemm-sustained.json
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import device_info, driver_version, utc_now, write_json_atomic

SHAPES = [  # (m, n, k): a square one, an LLM prefill's MLP GEMM, a mid-size one
    (8192, 8192, 8192),
    (16384, 14336, 4096),
    (4096, 4096, 4096),
]


def nvml() -> Any:
    try:
        import pynvml  # type: ignore[import-not-found]

        pynvml.nvmlInit()
        return pynvml
    except Exception:
        return None


def sample(nv: Any, handle: Any) -> dict[str, float] | None:
    if nv is None:
        return None
    try:
        return {
            "power_w": nv.nvmlDeviceGetPowerUsage(handle) / 1000.0,
            "sm_clock_mhz": float(nv.nvmlDeviceGetClockInfo(handle, nv.NVML_CLOCK_SM)),
            "temp_c": float(nv.nvmlDeviceGetTemperature(handle, nv.NVML_TEMPERATURE_GPU)),
        }
    except Exception:
        return None


def run_shape(m: int, n: int, k: int, kind: str, args: argparse.Namespace, nv: Any, handle: Any) -> dict[str, Any]:
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(0)
    if kind == "normal":
        a = torch.randn(m, k, device=dev, dtype=torch.bfloat16, generator=g)
        b = torch.randn(k, n, device=dev, dtype=torch.bfloat16, generator=g)
    else:
        a = torch.zeros(m, k, device=dev, dtype=torch.bfloat16)
        b = torch.zeros(k, n, device=dev, dtype=torch.bfloat16)
    c = torch.empty(m, n, device=dev, dtype=torch.bfloat16)
    flops = 2.0 * m * n * k
    for _ in range(3):  # warm-up (cuBLAS heuristics, workspace)
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()

    fresh = []
    for _ in range(args.fresh_reps):
        time.sleep(args.idle_s)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        torch.matmul(a, b, out=c)
        e.record()
        e.synchronize()
        fresh.append(s.elapsed_time(e) * 1e-3)
    fresh_s = statistics.median(fresh)

    # back to back: batches of events, the host keeps the queue full (each batch is enqueued
    # while the previous one runs); NVML sampled between batches
    time.sleep(args.idle_s)
    per_batch = max(4, int(0.05 / fresh_s))
    batches = []
    t_end = time.perf_counter() + args.busy_s
    pending: list[tuple[list[Any], dict[str, float] | None]] = []
    while time.perf_counter() < t_end:
        evs = [torch.cuda.Event(enable_timing=True) for _ in range(per_batch + 1)]
        evs[0].record()
        for i in range(per_batch):
            torch.matmul(a, b, out=c)
            evs[i + 1].record()
        pending.append((evs, sample(nv, handle)))
        if len(pending) > 2:  # keep two batches queued ahead of the GPU
            pending[-3][0][-1].synchronize()
    torch.cuda.synchronize()
    t0 = None
    curve = []
    for evs, smp in pending:
        if t0 is None:
            t0 = evs[0]
        times = [evs[i].elapsed_time(evs[i + 1]) * 1e-3 for i in range(per_batch)]
        start = t0.elapsed_time(evs[0]) * 1e-3
        curve.append({"since_start_s": start, "median_s": statistics.median(times), "nvml": smp})
        batches.append(times)
    flat = [t for b_ in batches for t in b_]
    last = [t for b_ in batches[len(batches) // 2 :] for t in b_]
    return {
        "m": m,
        "n": n,
        "k": k,
        "input": kind,
        "flops": flops,
        "fresh_s": fresh_s,
        "fresh_samples_s": fresh,
        "first_in_loop_s": flat[0],
        "loop_median_s": statistics.median(flat),
        "loop_second_half_median_s": statistics.median(last),
        "gemms_in_loop": len(flat),
        "curve": curve,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="gemm-sustained.json")
    ap.add_argument("--idle-s", type=float, default=0.5)
    ap.add_argument("--fresh-reps", type=int, default=7)
    ap.add_argument("--busy-s", type=float, default=3.0)
    args = ap.parse_args()
    dev = torch.device("cuda")
    nv = nvml()
    handle = nv.nvmlDeviceGetHandleByIndex(torch.cuda.current_device()) if nv else None
    doc: dict[str, Any] = {
        "schema": 1,
        "kind": "gemm-sustained",
        "date": utc_now(),
        "command": " ".join(sys.argv),
        "device": device_info(dev),
        "driver": driver_version(),
        "torch": torch.__version__,
        "nvml": nv is not None,
        "idle_s": args.idle_s,
        "busy_s": args.busy_s,
        "cases": [],
    }
    t = time.perf_counter()
    for kind in ("normal", "zeros"):
        for m, n, k in SHAPES:
            r = run_shape(m, n, k, kind, args, nv, handle)
            doc["cases"].append(r)
            print(
                f"{kind:6s} {m}x{n}x{k}: fresh {r['fresh_s'] * 1e3:.3f} ms ({r['flops'] / r['fresh_s'] / 1e12:.0f} TFLOP/s), "
                f"loop {r['loop_median_s'] * 1e3:.3f} ms, second half {r['loop_second_half_median_s'] * 1e3:.3f} ms "
                f"({r['flops'] / r['loop_second_half_median_s'] / 1e12:.0f} TFLOP/s), {r['gemms_in_loop']} GEMMs",
                flush=True,
            )
            write_json_atomic(args.out, doc)
    doc["wall_s"] = time.perf_counter() - t
    write_json_atomic(args.out, doc)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

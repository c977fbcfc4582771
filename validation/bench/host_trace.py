"""Where an LLM step's time goes when it is not replayed from a CUDA graph: the host's issue
time against the GPU's busy time, and what the host spends it on.

For each case (llm_bench.py's model, random weights, as llm_bench builds it) this records:
- the step timed as llm_bench times it (CUDA events around back-to-back calls), and
- synchronised repetitions: the host's issue time (the wall clock from the call to its return,
  no sync inside), the GPU time of the step (events), on every rank;
- one profiled step (torch.profiler, CPU and CUDA): the kernels (count, summed durations, the
  union of their intervals: the GPU busy time), and the main thread's top-level host calls
  grouped by name (count, summed durations): aten ops, compiled regions, c10d collectives.

Single GPU:  python3 validation/bench/host_trace.py --out host-trace.json
TP=2:        torchrun --nproc-per-node 2 validation/bench/host_trace.py --out host-trace-tp2.json
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
import benchlib  # noqa: E402
import llm_bench  # noqa: E402

REPS = 10
CASES = [  # phase, engine, batch, n (prefill: prompt length; decode: context)
    ("prefill", "eager", 1, 256),
    ("prefill", "eager", 1, 512),
    ("prefill", "eager", 1, 1024),
    ("prefill", "compiled", 1, 256),
    ("prefill", "compiled", 1, 512),
    ("prefill", "compiled", 1, 1024),
    ("decode", "eager", 1, 1024),
    ("decode", "compiled", 1, 1024),
]


def union_busy(intervals: list[tuple[float, float]]) -> float:
    busy, end = 0.0, float("-inf")
    for a, b in sorted(intervals):
        if b <= end:
            continue
        busy += b - max(a, end)
        end = b
    return busy


def profile_step(step: Any, d: llm_bench.Dist) -> dict[str, Any]:
    d.barrier()
    evs = benchlib.profiled_events(step, ("kernel", "cpu_op", "user_annotation", "cuda_runtime"))
    kern = [e for e in evs if e.get("cat") == "kernel"]
    iv = [(float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0))) for e in kern]
    names: dict[str, list[float]] = {}
    for e in kern:
        names.setdefault(e["name"][:90], []).append(float(e.get("dur", 0)))
    host = [e for e in evs if e.get("cat") in ("cpu_op", "user_annotation") and "dur" in e]
    by_tid: dict[Any, list[dict[str, Any]]] = {}
    for e in host:
        by_tid.setdefault(e.get("tid"), []).append(e)
    main_tid = max(by_tid, key=lambda t: len(by_tid[t])) if by_tid else None
    top: dict[str, list[float]] = {}
    first = last = None
    end = float("-inf")
    for e in sorted(by_tid.get(main_tid, []), key=lambda e: (float(e["ts"]), -float(e["dur"]))):
        a, b = float(e["ts"]), float(e["ts"]) + float(e["dur"])
        if a < end:  # inside the last top-level call
            continue
        end = b
        top.setdefault(e["name"][:90], []).append(float(e["dur"]))
        first = a if first is None else first
        last = b
    runtime = [e for e in evs if e.get("cat") == "cuda_runtime" and "dur" in e]
    launches = [e for e in runtime if "LaunchKernel" in e.get("name", "") or "GraphLaunch" in e.get("name", "")]
    return {
        "kernels": len(kern),
        "kernel_sum_us": sum(b - a for a, b in iv),
        "gpu_busy_us": union_busy(iv),
        "gpu_span_us": (max(b for _, b in iv) - min(a for a, _ in iv)) if iv else 0.0,
        "host_span_us": (last - first) if first is not None else 0.0,
        "launch_calls": len(launches),
        "host_top": {k: {"n": len(v), "sum_us": sum(v)} for k, v in sorted(top.items(), key=lambda kv: -sum(kv[1]))},
        "kernel_names": {k: {"n": len(v), "sum_us": sum(v)} for k, v in sorted(names.items(), key=lambda kv: -sum(kv[1]))[:40]},
    }


def run(model: llm_bench.Model, d: llm_bench.Dist, phase: str, engine: str, b: int, n: int) -> dict[str, Any]:
    step, info, _state = llm_bench.make_step(model, phase, engine, b, n, "inductor")
    t0 = time.perf_counter()
    step()
    d.sync()
    first = time.perf_counter() - t0
    for _ in range(3):
        step()
    d.sync()
    # as llm_bench times it: back-to-back calls, an event pair around each
    d.barrier()
    back = llm_bench.time_events(step, REPS, 1, d)
    # synchronised repetitions: host issue time and GPU time of each
    host, gpu = [], []
    for _ in range(REPS):
        d.barrier()
        a, z = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        t0 = time.perf_counter()
        a.record()
        step()
        z.record()
        host.append(time.perf_counter() - t0)
        d.sync()
        gpu.append(a.elapsed_time(z) / 1e3)
    prof = profile_step(step, d)
    rec = {
        "phase": phase, "engine": engine, "batch": b, ("seq" if phase == "prefill" else "context"): n,
        "gpus": d.world, "first_call_s": first, "sdpa_backend": info.get("sdpa_backend"),
        "back_to_back_s": back, "back_to_back_median_s": statistics.median(back),
        "sync_host_issue_s": host, "sync_gpu_s": gpu,
        "sync_host_issue_median_s": statistics.median(host), "sync_gpu_median_s": statistics.median(gpu),
        "profile": prof,
    }
    return rec


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="host-trace.json")
    ap.add_argument("--model", default="llama-3.1-8b")
    ap.add_argument("--only", help="substring of 'phase-engine-b{batch}-{n}' to keep")
    args = ap.parse_args()
    torch.set_grad_enabled(False)
    llm_bench.configure_compile()
    d = llm_bench.Dist("cuda")
    t_start = time.time()
    model = llm_bench.Model(args.model, dict(llm_bench.MODELS[args.model]), d)
    cases = []
    for phase, engine, b, n in CASES:
        lab = f"{phase}-{engine}-b{b}-{n}"
        if args.only and args.only not in lab:
            continue
        try:
            rec = run(model, d, phase, engine, b, n)
            rec["label"] = lab
            rec["per_rank"] = d.gather_obj({k: rec[k] for k in ("back_to_back_median_s", "sync_host_issue_median_s",
                                                                 "sync_gpu_median_s")})
        except Exception as e:  # keep the other cases
            rec = {"label": lab, "error": benchlib.short_err(e)}
        cases.append(rec)
        if d.rank == 0:
            if "error" in rec:
                print(f"{lab:<28} ERROR {rec['error']}", flush=True)
            else:
                p = rec["profile"]
                tops = ", ".join(f"{k} {v['n']}x {v['sum_us'] / max(v['n'], 1):.1f}us"
                                 for k, v in list(p["host_top"].items())[:6])
                print(f"{lab:<28} b2b {rec['back_to_back_median_s'] * 1e3:8.3f} ms  host {rec['sync_host_issue_median_s'] * 1e3:8.3f} ms"
                      f"  gpu {rec['sync_gpu_median_s'] * 1e3:8.3f} ms  busy {p['gpu_busy_us'] / 1e3:8.3f} ms"
                      f"  kernels {p['kernels']}  | {tops}", flush=True)
    if d.rank == 0:
        doc = {"schema": 1, "kind": "host-trace", "date": benchlib.utc_now(),
               "command": ("torchrun --nproc-per-node %d " % d.world if d.tp else "") + " ".join(sys.argv),
               "device": benchlib.device_info(d.dev), "gpus": d.world, "driver": benchlib.driver_version(),
               "torch": torch.__version__, "model": args.model, "env": benchlib.selected_env(),
               "cases": cases, "wall_s": time.time() - t_start}
        benchlib.write_json_atomic(args.out, doc)
    d.barrier()
    if d.tp:
        import torch.distributed as dist

        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())

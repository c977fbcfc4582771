"""Development data for issue 39 (no model change rests on it): where does a host-paced step's
time go when one process runs it slower than another? transformers' prefill of a host-paced prompt
(impl_bench.py's configs), in one process: blocks of steps with Python's garbage collector as it
is, disabled, and with the objects alive after warm-up frozen (gc.freeze, as serving engines do
after loading), each step's wall time beside the main thread's CPU time (time.thread_time: a
thread that waits for the CPU or is preempted loses wall time, not CPU time), the process's
context switches (/proc/self/status), the collections run, the CPU it ran on and that CPU's
clock, and the host's hot-loop op before and after (llm_bench.host_op_s).

    python3 host_cpu.py --model qwen3-3b-qk --seq 400 --out OUT.json
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import torch
from impl_bench import build_hf
from llm_bench import host_op_s


def _status() -> dict[str, int]:
    out = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, val = line.partition(":")
        if key in ("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches"):
            out[key] = int(val.split()[0])
    return out


def _cpu() -> dict[str, Any]:
    try:
        cpu = int(Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()[36])
    except (OSError, ValueError, IndexError):
        return {}
    freq = Path(f"/sys/devices/system/cpu/cpu{cpu}/cpufreq/scaling_cur_freq")
    return {"cpu": cpu, "khz": int(freq.read_text()) if freq.exists() else None}


@torch.no_grad()
def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", required=True)
    ap.add_argument("--seq", type=int, default=400)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    model, cfg = build_hf(args.model)
    ids = torch.randint(0, cfg.vocab_size, (1, args.seq), device="cuda")

    def step() -> None:
        model(input_ids=ids, use_cache=True).logits[:, -1].argmax(-1)

    for _ in range(3):
        step()
    torch.cuda.synchronize()
    collections = [0]

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            collections[0] += 1

    gc.callbacks.append(on_gc)
    doc: dict[str, Any] = {
        "model": args.model,
        "seq": args.seq,
        "pid": os.getpid(),
        "affinity": sorted(os.sched_getaffinity(0)),
        "gc_objects_after_warmup": len(gc.get_objects()),
        "gc_threshold": gc.get_threshold(),
        "blocks": [],
    }
    for mode in ("default", "disabled", "frozen", "default"):
        if mode == "disabled":
            gc.collect()
            gc.disable()
        elif mode == "frozen":
            gc.enable()
            gc.collect()
            gc.freeze()
        else:
            gc.unfreeze()
            gc.enable()
        rec: dict[str, Any] = {"mode": mode, "host_op_before_s": host_op_s(), "steps": []}
        for _ in range(args.steps):
            s0, c0, n0 = _status(), collections[0], _cpu()
            torch.cuda.synchronize()
            w0, t0 = time.perf_counter(), time.thread_time()
            step()
            t1, wi = time.thread_time(), time.perf_counter()
            torch.cuda.synchronize()
            w1 = time.perf_counter()
            s1 = _status()
            rec["steps"].append(
                {
                    "wall_s": w1 - w0,
                    "issue_wall_s": wi - w0,
                    "thread_cpu_s": t1 - t0,
                    "collections": collections[0] - c0,
                    "nonvoluntary": s1.get("nonvoluntary_ctxt_switches", 0) - s0.get("nonvoluntary_ctxt_switches", 0),
                    "voluntary": s1.get("voluntary_ctxt_switches", 0) - s0.get("voluntary_ctxt_switches", 0),
                    **n0,
                }
            )
        rec["host_op_after_s"] = host_op_s()
        rec["median_wall_s"] = statistics.median(s["wall_s"] for s in rec["steps"])
        rec["median_thread_cpu_s"] = statistics.median(s["thread_cpu_s"] for s in rec["steps"])
        doc["blocks"].append(rec)
        print(mode, f"wall {rec['median_wall_s'] * 1e3:.2f} ms", f"cpu {rec['median_thread_cpu_s'] * 1e3:.2f} ms", flush=True)
    gc.unfreeze()
    gc.enable()
    Path(args.out).write_text(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

#!/usr/bin/env python3
"""How steady is the host that paces a step without CUDA graphs? A time series, one machine.

Round after round for --seconds, in one process: the probe's hot loop of one tiny op
(x.add_(1) back to back, as roofcalc/probe/torch_ops.py times it), then --steps back-to-back
steps of one LLM case (validation/bench/llm_bench.py's own step: eager, or compiled with
--engine compiled), timed with CUDA events as llm_bench.py times them. Each round also
records the CPU the process ran on (/proc/self/stat), the machine's steal and busy time
(/proc/stat) and the load average, so that a slow round can be told apart: migrated to
another CPU, time taken by the hypervisor, or other work on the machine.

Run it as is and under `taskset -c N` to see whether pinning the process changes the
spread. Stand-alone (torch and the standard library).

    python validation/bench/host_jitter.py --model llama-3.2-3b --seq 256 --seconds 60 --out j.json
    python validation/bench/host_jitter.py --read j.json      # its summary again (no GPU)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))


def cpu_now() -> int:
    """The CPU this process last ran on (field 39 of /proc/self/stat)."""
    with open("/proc/self/stat") as f:
        tail = f.read().rsplit(")", 1)[1].split()
    return int(tail[36])


def cpu_times() -> list[int]:
    """The machine's jiffies: user nice system idle iowait irq softirq steal ..."""
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:]]


WINDOW_S = 5.0  # the summary's windows of rounds


def summary(rec: dict) -> str:
    """What a record shows: the hot-loop op and the step per round (medians of each round's
    samples), their spread over windows of WINDOW_S seconds (each window's median), the
    round-by-round correlation, and the step in hot-loop ops (p10, median, p90)."""
    rounds = rec["rounds"]
    hot = [statistics.median(r["hot_op_s"]) for r in rounds]
    st = [statistics.median(r["step_s"]) for r in rounds]
    windows: dict[int, list[int]] = {}
    for i, r in enumerate(rounds):
        windows.setdefault(int(r["t_s"] // WINDOW_S), []).append(i)
    w_hot = [statistics.median(hot[i] for i in ix) for ix in windows.values()]
    w_st = [statistics.median(st[i] for i in ix) for ix in windows.values()]
    ratio = [s / h for s, h in zip(st, hot, strict=True)]
    q = statistics.quantiles(ratio, n=10)
    return "\n".join([
        f"{rec.get('label') or 'run'}: {len(rounds)} rounds, affinity {len(rec['affinity'])} cpus, cpus at the "
        f"rounds' ends {len({c for r in rounds for c in r['cpu']})}, steal at most "
        f"{max(r['steal_frac'] for r in rounds):.3f}",
        f"  {WINDOW_S:g}-s windows: hot op {min(w_hot) * 1e6:.2f}-{max(w_hot) * 1e6:.2f} us, step "
        f"{min(w_st) * 1e3:.2f}-{max(w_st) * 1e3:.2f} ms ({max(w_st) / min(w_st):.2f}x)",
        f"  round by round: correlation {statistics.correlation(hot, st):.2f}; step in hot-loop ops p10 "
        f"{q[0]:,.0f}, median {statistics.median(ratio):,.0f}, p90 {q[-1]:,.0f}",
    ])


def main() -> int:
    if len(sys.argv) == 3 and sys.argv[1] == "--read":
        with open(sys.argv[2]) as f:
            print(summary(json.load(f)))
        return 0
    import benchlib
    import llm_bench
    import torch

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="llama-3.2-3b", choices=sorted(llm_bench.MODELS))
    ap.add_argument("--phase", default="prefill", choices=("prefill", "decode"))
    ap.add_argument("--engine", default="eager", choices=("eager", "compiled"))
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--seq", type=int, default=256, help="prompt tokens (prefill) or context (decode)")
    ap.add_argument("--steps", type=int, default=5, help="timed steps a round")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--label", default="", help="what the condition was (recorded)")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()

    torch.set_grad_enabled(False)
    llm_bench.configure_compile()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    sdpa_kernel(SDPBackend.FLASH_ATTENTION).__enter__()
    d = llm_bench.Dist("cuda")
    model = llm_bench.Model(a.model, dict(llm_bench.MODELS[a.model]), d)
    step, _info, _state = llm_bench.make_step(model, a.phase, a.engine, a.batch, a.seq, "inductor")
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    rounds = []
    t_start = time.perf_counter()
    while time.perf_counter() - t_start < a.seconds:
        c0, cpu0 = cpu_times(), cpu_now()
        hot = benchlib.probe_ops().torch_op_floor(torch, 3)["samples_s"]
        steps = llm_bench.time_events(step, a.steps, 1, d)
        c1, cpu1 = cpu_times(), cpu_now()
        dt = [y - x for x, y in zip(c0, c1, strict=True)]
        total = sum(dt[:8]) or 1
        rounds.append({
            "t_s": round(time.perf_counter() - t_start, 3),
            "cpu": [cpu0, cpu1],
            "hot_op_s": [round(h, 9) for h in hot],
            "step_s": [round(s, 9) for s in steps],
            "steal_frac": dt[7] / total,
            "busy_frac": 1 - (dt[3] + dt[4]) / total,
            "loadavg1": os.getloadavg()[0],
        })
    out = {
        "schema": 1,
        "kind": "host-jitter",
        "date": benchlib.utc_now(),
        "command": " ".join([os.path.basename(sys.argv[0]), *sys.argv[1:]]),
        "label": a.label,
        "affinity": sorted(os.sched_getaffinity(0)),
        "cpus": os.cpu_count(),
        "device": benchlib.device_info(torch.device("cuda")),
        "driver": benchlib.driver_version(),
        "torch": torch.__version__,
        "case": {"model": a.model, "phase": a.phase, "engine": a.engine, "batch": a.batch, "n": a.seq},
        "rounds": rounds,
    }
    benchlib.write_json_atomic(a.out, out)
    print(summary(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

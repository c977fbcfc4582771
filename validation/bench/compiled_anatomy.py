"""What a compiled step of the reference implementation (llm_bench.py --engine compiled) costs its
host per layer, in decode and in prefill, beside the probe's measures of the same host taken in the
same seconds: the hot loop of one op (torch_op_floor) and the compiled chains (torch_compiled_floor's
functions of 1 and 8 GEMM + Triton links).

The probe fits a compiled call's cost per kernel from its two chains timed one after the other, and
the host's speed moves from one second to the next (validation/traces/h200/host-state1), so the fit
of one call spread 1.05-3.25x the op over the committed host_rate.py records. Here each round times,
back to back: the op loop, the two chains twice each (1, 8, 1, 8), and the layers of a compiled
decode and prefill step (the config at 2 and at 6 layers, interleaved; each step's issue time, the
time until its Python call returns with its kernels queued, and its total, synchronised); then the op
loop again. Rounds are 0.3 s apart, so that they spread over the host's states.

Once per model, the kernels of each step counted by the profiler (Triton's and others apart) and the
compiled calls it makes (one per layer and the head). Then each of ``--cases`` at the model's own
depth, issued as llm_bench.py times it (2 warm-ups, ``--steps`` steps, synchronised around each), the
op loop around each step.

    python3 compiled_anatomy.py --out DIR --model mistral-7b [--rounds 40] [--cases decode:9x14720,prefill:2x256]

Writes DIR/compiled-anatomy-MODEL.json.
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

from benchlib import probe_ops, run_header
from llm_bench import MODELS, Dist, Model, configure_compile, make_step

SMALL = {"decode": (1, 64), "prefill": (1, 16)}  # the layer pair's step: batch x context or prompt


def issue_and_total(step: Any) -> tuple[float, float]:
    """(issue, total) of one step: until its call returns, and until its kernels end."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    step()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return t1 - t0, time.perf_counter() - t0


def kernel_counts(fn: Any) -> dict[str, int]:
    """The GPU kernels of one call of fn, Triton's (Inductor's generated kernels) and the rest."""
    prof_mod = torch.profiler
    torch.cuda.synchronize()
    with prof_mod.profile(activities=[prof_mod.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA]
    names = [n for n in names if not n.startswith(("Memcpy", "Memset"))]
    triton = sum(1 for n in names if n.startswith("triton"))
    return {"kernels": len(names), "triton": triton, "other": len(names) - triton}


def chains(ops: Any) -> list[tuple[int, Any, int]]:
    """torch_compiled_floor's two functions, compiled and warmed: (links, call, kernels per call)."""
    x = torch.randn(16, 64, device="cuda", dtype=torch.float32)
    w = torch.randn(64, 64, device="cuda", dtype=torch.float32) / 8.0
    out = []
    for links in ops.COMPILED_LINKS:

        def chain(x: Any, w: Any, links: int = links) -> Any:
            for _ in range(links):
                x = (x @ w).relu() + 1.0
            return x

        fn = torch.compile(chain, dynamic=False, fullgraph=True)
        for _ in range(20):
            fn(x, w)
        call = lambda fn=fn: fn(x, w)  # noqa: E731
        out.append((links, call, ops._kernels_per_call(torch, call)))
    return out


def per_call(call: Any, n: int) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(n):
        call()
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / n


@torch.no_grad()
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--model", required=True, choices=sorted(MODELS))
    ap.add_argument("--rounds", type=int, default=40)
    ap.add_argument("--gap-s", type=float, default=0.3)
    ap.add_argument("--cases", default="", help="phase:BxN,... at the model's own depth")
    ap.add_argument("--steps", type=int, default=20)
    a = ap.parse_args()
    ops = probe_ops()
    configure_compile()
    d = Dist("cuda")
    # FlashAttention-2, as llm_bench.py holds it by default (--sdpa flash) for the whole run
    from torch.nn.attention import SDPBackend, sdpa_kernel

    sdpa_kernel(SDPBackend.FLASH_ATTENTION).__enter__()
    start = time.time()
    rec: dict[str, Any] = run_header("compiled-anatomy") | {"model": a.model}

    def op_s() -> float:
        return statistics.median(ops.torch_op_floor(torch, 3, 300)["samples_s"])

    ch = chains(ops)
    rec["chains"] = [{"links": links, "kernels": k} for links, _, k in ch]
    steps: dict[str, dict[int, Any]] = {}
    models = {n: Model(a.model, dict(MODELS[a.model], layers=n), d) for n in (2, 6)}
    rec["layer_steps"] = {}
    for phase, (b, n) in SMALL.items():
        steps[phase] = {}
        for layers, m in models.items():
            step, info, _state = make_step(m, phase, "compiled", b, n, "inductor")
            for _ in range(3):
                step()  # compiles on the first
            steps[phase][layers] = step
            rec["layer_steps"][f"{phase}/{layers}"] = {"batch": b, "n": n, **kernel_counts(step), **info}
    rounds = []
    for r in range(a.rounds):
        if r:
            time.sleep(a.gap_s)
        row: dict[str, Any] = {"t": time.time(), "op_before_s": op_s()}
        row["chain_s"] = {str(links): [] for links, _, _ in ch}
        for _ in range(2):
            for links, call, _k in ch:
                row["chain_s"][str(links)].append(per_call(call, 100))
        for phase in SMALL:
            got: dict[str, list[tuple[float, float]]] = {"2": [], "6": []}
            for _ in range(3):
                for layers in (2, 6):
                    got[str(layers)].append(issue_and_total(steps[phase][layers]))
            row[phase] = {k: {"issue_s": [x[0] for x in v], "total_s": [x[1] for x in v]} for k, v in got.items()}
        row["op_after_s"] = op_s()
        rounds.append(row)
    rec["rounds"] = rounds
    del steps, models
    torch.cuda.empty_cache()

    rec["cases"] = []
    full = Model(a.model, dict(MODELS[a.model]), d) if a.cases else None
    for spec in filter(None, a.cases.split(",")):
        phase, bn = spec.split(":")
        b, n = (int(x) for x in bn.split("x"))
        assert full is not None
        step, info, _state = make_step(full, phase, "compiled", b, n, "inductor")
        for _ in range(2):
            step()
        counted = kernel_counts(step)
        times = []
        for _ in range(a.steps):
            before = op_s()
            issue, total = issue_and_total(step)
            times.append({"op_before_s": before, "issue_s": issue, "total_s": total, "op_after_s": op_s()})
        rec["cases"].append({"phase": phase, "batch": b, "n": n, **counted, **info, "steps": times})
        print(f"{a.model} {phase} {b}x{n}: {counted['kernels']} kernels, issue median "
              f"{statistics.median(t['issue_s'] for t in times) * 1e3:.2f} ms, total "
              f"{statistics.median(t['total_s'] for t in times) * 1e3:.2f} ms", flush=True)
        del step, _state
        torch.cuda.empty_cache()
    rec["wall_s"] = time.time() - start
    Path(a.out).mkdir(parents=True, exist_ok=True)
    path = Path(a.out) / f"compiled-anatomy-{a.model}.json"
    path.write_text(json.dumps(rec, indent=1))
    print(f"wrote {path}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The kernels one decode step and one prefill launch, per engine, with their launch shapes.

Builds llm_bench.py's model with two layers (so the per-layer kernels are separated from the
embedding and LM head), runs a warm step, then profiles one step with torch.profiler and
records every CUDA kernel: name, grid, block, registers, shared memory, duration. These are
the facts the decode/prefill kernel lists of the expected-time model are read from.

With --graphs the decode step is captured in a CUDA graph (as llm_bench.py times decode) and
one replay is profiled: each kernel also gets its start (start_us, from the replay's first
kernel) and its node time (node_s: from its start to the next kernel's start, the last one's
duration), so what a kernel costs inside a graph, gaps included, is read directly; the replay
is also timed with CUDA events (replay_s, median of 20) to compare with the nodes' sum.

    python validation/bench/llm_kernels.py --out llm-kernels.json
    python validation/bench/llm_kernels.py --graphs --no-prefill --decode-batches 1,16,64 --out graph-kernels.json
    torchrun --nproc-per-node 2 validation/bench/llm_kernels.py --graphs --no-prefill --out tp2.json
      (tensor parallel: rank 0 writes tp2.json, rank 1 tp2.rank1.json)
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import kernel_shapes  # noqa: E402
import llm_bench  # noqa: E402


_SDPA_CTX = None


def graph_kernels(step, dev: torch.device) -> tuple[list[dict], float]:
    """The kernels of one replay of step captured in a CUDA graph, in launch order, each with
    its start (from the first kernel's) and node time (to the next kernel's start), and the
    replay's median time by CUDA events."""
    g = benchlib.capture(step)
    for _ in range(3):
        g.replay()
    torch.cuda.synchronize(dev)
    times = []
    for _ in range(20):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        g.replay()
        e.record()
        e.synchronize()
        times.append(s.elapsed_time(e) * 1e-3)
    evs = sorted(benchlib.profiled_events(g.replay, ("kernel",)), key=lambda ev: float(ev.get("ts") or 0))
    out = []
    t0 = float(evs[0]["ts"]) if evs else 0.0
    for i, ev in enumerate(evs):
        a = ev.get("args", {})
        ts, dur = float(ev.get("ts") or 0), float(ev.get("dur") or 0)
        nxt = float(evs[i + 1]["ts"]) if i + 1 < len(evs) else ts + dur
        out.append({"name": ev.get("name"), "duration_s": dur * 1e-6, "start_us": ts - t0, "node_s": (nxt - ts) * 1e-6,
                    **{k: a[k] for k in ("grid", "block", "registers per thread", "shared memory") if k in a}})
    times.sort()
    return out, times[len(times) // 2]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="llm-kernels.json")
    ap.add_argument("--model", default="llama-3.1-8b")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--decode-batches", default="1,32", help="batch sizes of the decode steps")
    ap.add_argument("--context", type=int, default=1024, help="tokens cached before each decode step")
    ap.add_argument("--no-prefill", action="store_true", help="profile the decode steps only")
    ap.add_argument("--graphs", action="store_true",
                    help="decode: profile one replay of the step captured in a CUDA graph (node times)")
    ap.add_argument("--sdpa", choices=("default", "flash"), default="default",
                    help="flash: force SDPA's flash backend, as llm_bench.py does by default")
    args = ap.parse_args()
    if args.sdpa == "flash":
        from torch.nn.attention import SDPBackend, sdpa_kernel
        global _SDPA_CTX  # a context manager: held by a name until the process exits, or it restores at once
        _SDPA_CTX = sdpa_kernel(SDPBackend.FLASH_ATTENTION)
        _SDPA_CTX.__enter__()
    torch.set_grad_enabled(False)
    llm_bench.configure_compile()
    d = llm_bench.Dist("cuda")
    cfg = dict(llm_bench.MODELS[args.model])
    cfg["layers"] = args.layers
    model = llm_bench.Model(args.model, cfg, d)
    records = []
    t0 = time.time()
    try:
        plan = [("decode", int(b), args.context) for b in args.decode_batches.split(",") if b.strip()]
    except ValueError:
        ap.error(f"--decode-batches: a comma list of batch sizes (got {args.decode_batches!r})")
    if not args.no_prefill:
        plan.append(("prefill", 1, 1024))
    for phase, b, n in plan:
        for engine in ("eager", "compiled"):
            rec = {"model": args.model, "layers": args.layers, "gpus": d.world, "rank": d.rank,
                   "phase": phase, "engine": engine, "batch": b,
                   ("context" if phase == "decode" else "seq"): n}
            try:
                step, info, _state = llm_bench.make_step(model, phase, engine, b, n, "inductor")
                for _ in range(3):
                    step()
                torch.cuda.synchronize()
                if args.graphs and phase == "decode":
                    rec["cuda_graphs"] = True
                    rec["kernels"], rec["replay_s"] = graph_kernels(step, d.dev)
                else:
                    rec["kernels"] = kernel_shapes.kernels_of(step, d.dev)
                rec["sdpa_backend"] = info.get("sdpa_backend")
            except Exception as e:  # keep going
                rec["error"] = f"{type(e).__name__}: {e}"[:300]
            records.append(rec)
            ks = rec.get("kernels", [])
            if d.rank:
                continue
            print(f"{phase} b{b} {engine}: {len(ks)} kernels, {sum(k['duration_s'] for k in ks) * 1e3:.3f} ms"
                  + (f"; nodes {sum(k['node_s'] for k in ks) * 1e3:.3f} ms, replay {rec['replay_s'] * 1e3:.3f} ms"
                     if "replay_s" in rec else "") + (f" {rec['error']}" if "error" in rec else ""), flush=True)
            for k in ks:
                print(f"   {k['name'][:90]:90s} g{k.get('grid')} b{k.get('block')} {k['duration_s'] * 1e6:8.1f} us"
                      + (f" node {k['node_s'] * 1e6:8.2f} us" if "node_s" in k else ""))
    # under torchrun (tensor parallel: each rank's share of the layers) every rank writes its own
    out = args.out if d.rank == 0 else f"{os.path.splitext(args.out)[0]}.rank{d.rank}.json"
    benchlib.write_record(out, "llm-kernels", d.dev, records, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The kernels one decode step and one prefill launch, per engine, with their launch shapes.

Builds llm_bench.py's model with two layers (so the per-layer kernels are separated from the
embedding and LM head), runs a warm step, then profiles one step with torch.profiler and
records every CUDA kernel: name, grid, block, registers, shared memory, duration. These are
the facts the decode/prefill kernel lists of the expected-time model are read from.

    python validation/bench/llm_kernels.py --out llm-kernels.json
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


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="llm-kernels.json")
    ap.add_argument("--model", default="llama-3.1-8b")
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--decode-batches", default="1,32", help="batch sizes of the decode steps (context 1024)")
    ap.add_argument("--no-prefill", action="store_true", help="profile the decode steps only")
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
        plan = [("decode", int(b), 1024) for b in args.decode_batches.split(",") if b.strip()]
    except ValueError:
        ap.error(f"--decode-batches: a comma list of batch sizes (got {args.decode_batches!r})")
    if not args.no_prefill:
        plan.append(("prefill", 1, 1024))
    for phase, b, n in plan:
        for engine in ("eager", "compiled"):
            rec = {"model": args.model, "layers": args.layers, "phase": phase, "engine": engine, "batch": b,
                   ("context" if phase == "decode" else "seq"): n}
            try:
                step, info, _state = llm_bench.make_step(model, phase, engine, b, n, "inductor")
                for _ in range(3):
                    step()
                torch.cuda.synchronize()
                rec["kernels"] = kernel_shapes.kernels_of(step, d.dev)
                rec["sdpa_backend"] = info.get("sdpa_backend")
            except Exception as e:  # keep going
                rec["error"] = f"{type(e).__name__}: {e}"[:300]
            records.append(rec)
            ks = rec.get("kernels", [])
            print(f"{phase} b{b} {engine}: {len(ks)} kernels, {sum(k['duration_s'] for k in ks) * 1e3:.3f} ms",
                  flush=True)
            for k in ks:
                print(f"   {k['name'][:90]:90s} g{k.get('grid')} b{k.get('block')} {k['duration_s'] * 1e6:8.1f} us")
    benchlib.write_record(args.out, "llm-kernels", d.dev, records, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Where a host-paced prefill's time goes: the host's issue (the time until the step's Python call
returns, its kernels queued) and the GPU's tail after it, beside the implementation's own host time
per layer, all in one process.

One process per model (as impl_holdout.sh runs them). For ``--rounds`` rounds, for each
implementation (hf: transformers with SDPA; fused: validation/bench/fused_model.py):

- the hot loop of one small PyTorch op (llm_bench.host_op_s), before and after;
- the config at 2 and at 6 layers, a 4-token prefill, interleaved (host_track.per_layer's
  recipe), each step's issue and total kept: before and after;
- the config at its own depth, a 4-token prefill (the GPU has almost nothing to do): the host's
  issue at full depth, against 2 layers plus the rest at the time per layer;
- each prompt of ``--prompts`` at full depth, issued from Python as impl_bench.py times it
  (2 warm-ups, then ``--steps`` steps with a CUDA synchronise around each), issue and total kept.

Once per implementation: the Python calls and ATen ops of the 2- and 6-layer steps and of the
full-depth 4-token step (host_track.counts).

    python3 host_anatomy.py --out DIR --models llama-1b-hd64 [--prompts 1x300,2x350,1x500]

Writes DIR/host_anatomy.json.
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

from benchlib import run_header
from host_track import build, counts
from impl_bench import config_of
from llm_bench import host_op_s


def timed(fn: Any) -> tuple[float, float]:
    """(issue, total): the seconds until fn returns (its kernels queued), and until the GPU ends."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    return t1 - t0, time.perf_counter() - t0


def series(fn: Any, n: int, warm: int = 2) -> dict[str, Any]:
    for _ in range(warm):
        fn()
    rows = [timed(fn) for _ in range(n)]
    issue = [r[0] for r in rows]
    total = [r[1] for r in rows]
    return {
        "issue_s": issue,
        "total_s": total,
        "issue_median_s": statistics.median(issue),
        "total_median_s": statistics.median(total),
    }


def layer_pair(s2: Any, s6: Any, warm: int = 5, n: int = 24) -> dict[str, Any]:
    """host_track.per_layer's recipe (impl_bench.py --host-layers: 5 warm, 24 interleaved), the
    issue of each step kept beside its total."""
    for _ in range(warm):
        s2()
        s6()
    r2, r6 = [], []
    for _ in range(n):
        r2.append(timed(s2))
        r6.append(timed(s6))
    med = statistics.median
    return {
        "s": (med(t for _, t in r6) - med(t for _, t in r2)) / 4,
        "issue_s": (med(i for i, _ in r6) - med(i for i, _ in r2)) / 4,
        "t2_s": [t for _, t in r2],
        "t6_s": [t for _, t in r6],
        "i2_s": [i for i, _ in r2],
        "i6_s": [i for i, _ in r6],
    }


@torch.no_grad()
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--impls", default="hf,fused")
    ap.add_argument("--prompts", default="1x300,2x350,1x500")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=7)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import transformers
    import triton

    prompts = [tuple(int(v) for v in p.split("x")) for p in args.prompts.split(",")]
    doc: dict[str, Any] = {
        **run_header("roofcalc-host-anatomy-1"),
        "transformers": transformers.__version__,
        "triton": triton.__version__,
        "prompts": prompts,
        "cases": [],
        "counts": [],
    }
    path = out / "host_anatomy.json"
    for name in args.models.split(","):
        impls = [i for i in args.impls.split(",") if i != "fused" or config_of(name)["model_type"] in ("llama", "mistral")]
        full4 = {i: build(i, name, None, 1, 4) for i in impls}
        steps = {i: {p: build(i, name, None, *p) for p in prompts} for i in impls}
        tiny = {i: (build(i, name, 2, 1, 4), build(i, name, 6, 1, 4)) for i in impls}
        for i in impls:  # warm the tiny pair as impl_bench.tiny_models does
            t_end = time.monotonic() + 2.0
            while time.monotonic() < t_end:
                tiny[i][0]()
                tiny[i][1]()
        torch.cuda.synchronize()
        for r in range(args.rounds):
            for i in impls:
                rec: dict[str, Any] = {"model": name, "impl": i, "round": r, "config": config_of(name)}
                rec["hot_op_before_s"] = host_op_s()
                rec["layer_before"] = layer_pair(*tiny[i])
                rec["full_4"] = series(full4[i], args.steps)
                rec["prompts"] = [{"batch": b, "seq": s, **series(step, args.steps)} for (b, s), step in steps[i].items()]
                rec["layer_after"] = layer_pair(*tiny[i])
                rec["hot_op_after_s"] = host_op_s()
                doc["cases"].append(rec)
                lay = (rec["layer_before"]["s"] + rec["layer_after"]["s"]) / 2
                print(
                    name, i, r, f"layer {lay * 1e6:.0f} us, full-4 issue {rec['full_4']['issue_median_s'] * 1e3:.2f} ms,",
                    " ".join(
                        f"{p['seq']}: issue {p['issue_median_s'] * 1e3:.2f} total {p['total_median_s'] * 1e3:.2f} ms"
                        for p in rec["prompts"]
                    ),
                    flush=True,
                )
                path.write_text(json.dumps(doc, indent=1))
        for i in impls:
            doc["counts"].append(
                {
                    "model": name,
                    "impl": i,
                    "layers_2": counts(tiny[i][0]),
                    "layers_6": counts(tiny[i][1]),
                    "full_4": counts(full4[i]),
                }
            )
        path.write_text(json.dumps(doc, indent=1))
        del steps, tiny, full4
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())

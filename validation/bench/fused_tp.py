"""The fused serving layout (fused_model.py) under tensor parallelism: decode replayed from a CUDA
graph (the all-reduces and the logits all-gather captured in it) and prefill issued from Python,
on every rank of a torchrun world; rank 0 writes each case's per-rank step times.

    torchrun --nproc-per-node 2 fused_tp.py --out DIR [--models llama-8b,mistral-7b]

Prefill is issued from Python, with every rank's host speed timed around its steps (host_op_s_per_rank).

Writes DIR/times.json (the impl_bench.py layout, with "gpus" and each rank's times).
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
from pathlib import Path
from typing import Any

import torch

import llm_bench
from benchlib import run_header
from fused_model import FusedModel
from impl_bench import config_of, gather_case, graph_time, issued

DECODE = [(1, 1024), (8, 4096), (32, 2048), (64, 512)]
PREFILL = [(1, 2048), (4, 1024)]


@torch.no_grad()
def decode(d: Any, cfg: dict[str, Any], batch: int, context: int, replays: int) -> list[float]:
    m = FusedModel(cfg, batch, context + 1, device=d.dev, dist=d)
    tok = torch.randint(0, cfg["vocab_size"], (batch, 1), device=d.dev)
    pos = torch.tensor([context], device=d.dev, dtype=torch.int32)

    def step() -> Any:
        return m.forward(tok, pos, context + 1)

    step()
    d.barrier()
    times, g = graph_time(step, replays)
    del g, m
    return times


@torch.no_grad()
def prefill(d: Any, cfg: dict[str, Any], batch: int, seq: int, steps: int, rec: dict[str, Any]) -> list[float]:
    """Issued from Python, with the host's speed timed around the steps into ``rec`` (impl_bench.issued)."""
    m = FusedModel(cfg, batch, seq, device=d.dev, dist=d)
    ids = torch.randint(0, cfg["vocab_size"], (batch, seq), device=d.dev)
    pos = torch.arange(seq, device=d.dev, dtype=torch.int32)

    def step() -> None:
        m.forward(ids, pos, seq)

    res = issued(step, steps, None, d.barrier)
    rec["host_op_s"] = res["host_op_s"]
    del m
    return res["times_s"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="llama-8b,mistral-7b")
    ap.add_argument("--replays", type=int, default=20)
    ap.add_argument("--steps", type=int, default=7)
    args = ap.parse_args()
    d = llm_bench.Dist("cuda")
    torch.manual_seed(0)
    doc: dict[str, Any] = {**run_header("roofcalc-impl-bench-1"), "set": "fused-tp", "gpus": d.world, "cases": []}
    out = Path(args.out)
    if d.rank == 0:
        out.mkdir(parents=True, exist_ok=True)
    for name in args.models.split(","):
        cfg = config_of(name)
        plan = [("decode", b, n) for b, n in DECODE] + [("prefill", b, n) for b, n in PREFILL]
        for phase, b, n in plan:
            case: dict[str, Any] = {"model": name, "config": cfg, "impl": "fused", "phase": phase, "batch": b,
                                    "gpus": d.world, "cuda_graphs": phase == "decode",
                                    ("context" if phase == "decode" else "seq"): n,
                                    "label": f"fused-tp{d.world}-{name}-{phase}-b{b}-{'c' if phase == 'decode' else 's'}{n}"}
            rec: dict[str, Any] = {}
            try:
                times = decode(d, cfg, b, n, args.replays) if phase == "decode" else prefill(d, cfg, b, n, args.steps, rec)
                err = None
            except Exception as e:  # noqa: BLE001 - recorded, the run goes on
                times, err = [], f"{type(e).__name__}: {e}"[:400]
                traceback.print_exc(limit=3)
            torch.cuda.empty_cache()
            gather_case(d, case, times, err, rec.get("host_op_s"))
            if d.rank == 0:
                doc["cases"].append(case)
                (out / "times.json").write_text(json.dumps(doc, indent=1))
                print(case["label"], case["median_s"], case["error"], flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

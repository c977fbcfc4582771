"""Hugging Face transformers under tensor parallelism (``from_pretrained(..., tp_plan="auto")``):
StaticCache decode replayed from a CUDA graph, prefill and DynamicCache decode issued from Python,
on every rank of a torchrun world; rank 0 writes each case's per-rank step times.

The weights are random: rank 0 makes the model from its config (impl_bench.CONFIGS) and saves it
to a scratch folder, which every rank then loads with the "auto" plan (transformers shards the
projections, gathers the logits and all-reduces after the row-parallel ones as its plan says).
Around each case issued from Python, every rank times its host's hot loop (llm_bench.host_op_s)
just before and just after, as llm_bench does (``host_op_s_per_rank``). With --trace, each rank
traces one step of the first shape of each phase (rank 0's trace is kept).

    torchrun --nproc-per-node 2 hf_tp.py --out DIR --set dev|holdout [--models a,b] [--trace]
    torchrun --nproc-per-node 2 hf_tp.py --out DIR --set dev --host-layers [--seq 4]
    python3 hf_tp.py --out DIR --set dev --host-layers      (the same on one GPU, no plan)

Writes DIR/times.json (the impl_bench.py layout, with "gpus" and each rank's times) and
DIR/traces/*.json.gz.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import torch

import llm_bench
from benchlib import run_header
from impl_bench import config_of, gather_case, graph_time, issued, static_cache
from trace_capture import trace_one

SETS = {
    "dev": dict(
        models="llama-1b,qwen3-0.6b,nemo-16l,qwen2-0.5b",
        decode=[(1, 512), (8, 2048), (32, 1024), (4, 4096)],
        prefill=[(1, 128), (1, 1024), (4, 2048)],
        dynamic=[(4, 1000)],
    ),
    "holdout": dict(
        models="llama-3b,qwen3-1.7b,mistral-7b,qwen2-1.5b",
        decode=[(2, 700), (12, 3000), (40, 900), (6, 6000)],
        prefill=[(1, 200), (2, 1500), (3, 3000)],
        dynamic=[(6, 1500)],
    ),
    # configs whose GPUs hold one KV head at TP=2 (and one that holds two), for the L2 re-reads
    "holdout3": dict(models="qwen2-3b,llama-3b-gqa2,qwen2-7b",
                     decode=[(4, 1500), (24, 3000), (64, 800)],
                     prefill=[(1, 100), (2, 2000)],
                     dynamic=[(4, 1200)]),
    # the sixteenth session's TP=2 hold-out of the H200 registry's host figure (draw_tp_holdout5.py)
    "holdout5": dict(
        models="llama-2b-kv2-20l-f7680,mistral-1b-kv2-26l,qwen2-1b-kv2-25l,qwen3-3b-kv4-26l",
        decode=[(9, 2300)],
        prefill=[(4, 470), (4, 290), (2, 430), (1, 3300)],
        dynamic=[(4, 1000), (11, 600)],
    ),
    "holdout2": dict(
        models="llama-1b-deep,qwen3-2b-wide,mistral-4b,qwen2-1b-narrow",
        decode=[(3, 1200), (16, 2500), (48, 600)],
        prefill=[(1, 64), (1, 400), (2, 1200), (4, 2500)],
        dynamic=[(2, 900), (12, 2000)],
    ),
}


def load_tp(d: Any, name: str, scratch: Path, layers: int | None = None) -> Any:
    """Random weights from the config (with ``layers`` decoder layers if given), saved by rank 0
    and loaded sharded by every rank."""
    from transformers import AutoConfig, AutoModelForCausalLM

    kw = config_of(name)
    if layers is not None:
        kw["num_hidden_layers"] = layers
    cfg = AutoConfig.for_model(kw.pop("model_type"), **kw)
    if d.world == 1:  # one GPU: the plain model, as impl_bench.py builds it
        with torch.device("cuda"):
            m = AutoModelForCausalLM.from_config(cfg, attn_implementation="sdpa", dtype=torch.bfloat16)
        return m.eval(), cfg
    path = scratch / f"{name}-{layers or 'all'}"
    if d.rank == 0:
        with torch.device("cuda"):
            m = AutoModelForCausalLM.from_config(cfg, dtype=torch.bfloat16)
        m.save_pretrained(path)
        del m
        torch.cuda.empty_cache()
    d.barrier()
    model = AutoModelForCausalLM.from_pretrained(path, tp_plan="auto", dtype=torch.bfloat16, attn_implementation="sdpa")
    return model.eval(), cfg


@torch.no_grad()
def decode_graph(
    d: Any, model: Any, cfg: Any, batch: int, context: int, replays: int, trace: Path | None
) -> list[float]:
    cache = static_cache(cfg, batch, context + 64)
    tok = torch.randint(0, cfg.vocab_size, (batch, 1), device=d.dev)
    pos = torch.tensor([context], device=d.dev)

    def step() -> Any:
        out = model(input_ids=tok, past_key_values=cache, cache_position=pos, use_cache=True)
        return out.logits[:, -1].argmax(-1)

    step()
    d.barrier()
    if trace is not None:
        trace_one(step, trace)
        d.barrier()
    times, g = graph_time(step, replays)
    del g, cache
    return times


@torch.no_grad()
def prefill(
    d: Any, model: Any, cfg: Any, batch: int, seq: int, steps: int, trace: Path | None, rec: dict[str, Any]
) -> list[float]:
    ids = torch.randint(0, cfg.vocab_size, (batch, seq), device=d.dev)

    def step() -> None:
        model(input_ids=ids, use_cache=True).logits[:, -1].argmax(-1)

    return _issued(d, step, steps, trace, rec)


def _issued(d: Any, step: Any, steps: int, trace: Path | None, rec: dict[str, Any]) -> list[float]:
    """impl_bench.issued, every rank past the barrier before the timing; the host's speed into ``rec``."""
    res = issued(step, steps, trace, d.barrier)
    rec["host_op_s"] = res["host_op_s"]
    return res["times_s"]


@torch.no_grad()
def dynamic(
    d: Any, model: Any, cfg: Any, batch: int, context: int, steps: int, trace: Path | None, rec: dict[str, Any]
) -> list[float]:
    ids = torch.randint(0, cfg.vocab_size, (batch, context), device=d.dev)
    cache = model(input_ids=ids, use_cache=True).past_key_values
    tok = torch.randint(0, cfg.vocab_size, (batch, 1), device=d.dev)

    def step() -> None:
        nonlocal cache
        o = model(input_ids=tok, past_key_values=cache, use_cache=True)
        cache = o.past_key_values
        o.logits[:, -1].argmax(-1)

    return _issued(d, step, steps, trace, rec)


@torch.no_grad()
def host_layers(d: Any, models: str, scratch: Path, seq: int, out: Path) -> None:
    """The host's time per decoder layer under tensor parallelism, as host_layers.py measures it
    on one GPU: each config with 2 and with 10 layers, a prefill of ``seq`` tokens (the GPUs have
    almost nothing to do) timed 30 times, the slower rank's median, twice each in the order 2, 10,
    10, 2; per layer, the difference of the means over 8 layers, in units of the slower rank's
    hot-loop op timed before and after; the rest of the step is its fixed host time."""
    from host_layers import hot_op_s, timed

    doc: dict[str, Any] = {**run_header("roofcalc-host-layers-1"), "gpus": d.world, "seq": seq, "cases": []}
    for name in models.split(","):
        ops = [hot_op_s()]
        models = {n: load_tp(d, name, scratch, n) for n in (2, 10)}
        steps: dict[int, list[float]] = {2: [], 10: []}
        for layers in (2, 10, 10, 2):  # in both orders: a drift of the host's speed cancels
            model, cfg = models[layers]
            ids = torch.randint(0, cfg.vocab_size, (1, seq), device=d.dev)
            d.barrier()
            steps[layers].append(
                max(d.gather_obj(timed(lambda: model(input_ids=ids, use_cache=True).logits[:, -1].argmax(-1))))
            )
        del models
        torch.cuda.empty_cache()
        ops.append(hot_op_s())
        per_rank = d.gather_obj(ops)
        hot = max(sum(o) / 2 for o in per_rank)
        t2, t10 = (statistics.mean(steps[n]) for n in (2, 10))
        case = {
            "impl": "hf",
            "model": name,
            "gpus": d.world,
            "steps_2_layers_s": steps[2],
            "steps_10_layers_s": steps[10],
            "host_per_layer_s": (t10 - t2) / 8,
            "host_fixed_s": t2 - 2 * (t10 - t2) / 8,
            "hot_op_s": hot,
            "hot_op_before_after_s_per_rank": per_rank,
        }
        case["host_per_layer_ops"] = case["host_per_layer_s"] / hot
        if d.rank == 0:
            doc["cases"].append(case)
            out.mkdir(parents=True, exist_ok=True)
            (out / "host_layers.json").write_text(json.dumps(doc, indent=1))
            print(
                name,
                f"{case['host_per_layer_s'] * 1e6:.1f} us/layer = {case['host_per_layer_ops']:.1f} ops,",
                f"fixed {case['host_fixed_s'] * 1e6:.0f} us = {case['host_fixed_s'] / hot:.0f} ops",
                flush=True,
            )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--set", choices=sorted(SETS), required=True)
    ap.add_argument("--models", default=None)
    ap.add_argument("--replays", type=int, default=20)
    ap.add_argument("--steps", type=int, default=7)
    ap.add_argument("--trace", action="store_true")
    ap.add_argument("--budget-s", type=float, default=400)
    ap.add_argument(
        "--host-layers", action="store_true", help="only the host's time per layer (host_layers), --seq tokens"
    )
    ap.add_argument("--seq", type=int, default=4)
    args = ap.parse_args()
    d = llm_bench.Dist("cuda")
    torch.manual_seed(0)
    import transformers

    if args.host_layers:
        scratch = Path(d.gather_obj(tempfile.mkdtemp(prefix="hf_tp_") if d.rank == 0 else None)[0])
        host_layers(d, args.models or SETS[args.set]["models"], scratch, args.seq, Path(args.out))
        if d.rank == 0:
            shutil.rmtree(scratch, ignore_errors=True)
        return 0

    spec = SETS[args.set]
    doc: dict[str, Any] = {
        **run_header("roofcalc-impl-bench-1"),
        "set": f"hf-tp-{args.set}",
        "gpus": d.world,
        "transformers": transformers.__version__,
        "cases": [],
    }
    out = Path(args.out)
    tdir = out / "traces"
    if d.rank == 0:
        tdir.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix="hf_tp_")) if d.rank == 0 else None
    scratch = Path(d.gather_obj(str(scratch))[0])  # every rank loads rank 0's folder
    t_end = time.monotonic() + args.budget_s
    for name in (args.models or spec["models"]).split(","):
        cfgd = config_of(name)
        try:
            model, cfg = load_tp(d, name, scratch)
        except Exception as e:  # noqa: BLE001 - recorded, the run goes on
            traceback.print_exc(limit=4)
            if d.rank == 0:
                doc["cases"].append(
                    {
                        "label": f"hf-tp-{name}",
                        "model": name,
                        "config": cfgd,
                        "error": f"load: {type(e).__name__}: {e}"[:400],
                    }
                )
            continue
        plan = (
            [("hf-static", "decode", b, c) for b, c in spec["decode"]]
            + [("hf", "prefill", b, s) for b, s in spec["prefill"]]
            + [("hf-dynamic", "decode", b, c) for b, c in spec["dynamic"]]
        )
        traced: set[str] = set()
        for impl, phase, b, n in plan:
            graphs = impl == "hf-static"
            size = "context" if phase == "decode" else "seq"
            label = f"{impl}-tp{d.world}-{name}-{phase}-b{b}-{'c' if phase == 'decode' else 's'}{n}"
            case: dict[str, Any] = {
                "model": name,
                "config": cfgd,
                "impl": impl,
                "phase": phase,
                "batch": b,
                "gpus": d.world,
                "cuda_graphs": graphs,
                size: n,
                "label": label,
            }
            if graphs:
                case["max_cache_len"] = n + 64
            tpath = None
            if args.trace and impl not in traced:
                traced.add(impl)
                tpath = (tdir if d.rank == 0 else Path(tempfile.gettempdir())) / f"{label}.json.gz"
            rec: dict[str, Any] = {}
            times: list[float] = []
            err = "skipped: over the time budget" if time.monotonic() > t_end else None
            if err is None:
                try:
                    if graphs:
                        times = decode_graph(d, model, cfg, b, n, args.replays, tpath)
                    elif phase == "prefill":
                        times = prefill(d, model, cfg, b, n, args.steps, tpath, rec)
                    else:
                        times = dynamic(d, model, cfg, b, n, args.steps, tpath, rec)
                        case["context_mid"] = n + 2 + args.steps // 2
                except Exception as e:  # noqa: BLE001 - recorded, the run goes on
                    times, err = [], f"{type(e).__name__}: {e}"[:400]
                    traceback.print_exc(limit=4)
            torch.cuda.empty_cache()
            ok = gather_case(d, case, times, err, rec.get("host_op_s"))
            if d.rank == 0:
                if tpath is not None and ok:
                    case["trace"] = tpath.name
                doc["cases"].append(case)
                (out / "times.json").write_text(json.dumps(doc, indent=1))
                print(label, case["median_s"], case["error"], flush=True)
        del model
        torch.cuda.empty_cache()
        d.barrier()
    if d.rank == 0:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

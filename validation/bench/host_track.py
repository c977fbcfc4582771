"""Which figure of the host, timed around a short prompt's prefill in the same process, tracks
that prefill's time when the host paces it?

One process per model (as impl_holdout.sh runs them). For ``--rounds`` rounds, for each
implementation (hf: transformers with SDPA; fused: validation/bench/fused_model.py):

- the hot loop of one small PyTorch op (llm_bench.host_op_s, the unit roofcalc counts host work
  in), before and after;
- the implementation's own host time per decoder layer: the same config built with 2 and with 6
  layers, a prefill of 4 tokens (the GPU has almost nothing to do, so the wall time is the host's),
  the two depths interleaved, 12 steps each after 3 warm-ups, the difference of the medians over
  the 4 layers; before and after;
- each prompt of ``--prompts`` issued from Python as impl_bench.py times it: 2 warm-ups, then 5
  steps with a CUDA synchronise around each.

Once per implementation, after the rounds: the Python calls and the ATen ops of one step of each
prompt and of the 2- and 6-layer steps (sys.setprofile, TorchDispatchMode): what the host does.

    python3 host_track.py --out DIR --models mistral-2b-kv2 [--prompts 1x300,1x500] [--rounds 4]

Writes DIR/host_track.json.
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
from impl_bench import CONFIGS, config_of
from llm_bench import host_op_s


def sync_time(fn: Any) -> float:
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    return time.perf_counter() - t0


def build(impl: str, name: str, layers: int | None, batch: int, seq: int) -> Any:
    """A prefill step of ``batch`` x ``seq`` tokens of the model (at ``layers`` deep, or its own)."""
    cfg = dict(config_of(name))
    if layers is not None:
        cfg["num_hidden_layers"] = layers
    if impl == "fused":
        from fused_model import FusedModel

        m = FusedModel(cfg, batch, seq)
        ids = torch.randint(0, cfg["vocab_size"], (batch, seq), device="cuda")
        pos = torch.arange(seq, device="cuda", dtype=torch.int32)
        return lambda: m.forward(ids, pos, seq)
    from transformers import AutoConfig, AutoModelForCausalLM

    kind, kw = CONFIGS[name]
    hcfg = AutoConfig.for_model(kind, **{**kw, **({"num_hidden_layers": layers} if layers else {})})
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(hcfg, attn_implementation="sdpa", dtype=torch.bfloat16).eval()
    ids = torch.randint(0, hcfg.vocab_size, (batch, seq), device="cuda")
    return lambda: model(input_ids=ids, use_cache=True).logits[:, -1].argmax(-1)


def per_layer(s2: Any, s6: Any, warm: int = 3, n: int = 12) -> dict[str, Any]:
    """The host's time per layer: ``warm`` steps of each depth, then ``n`` of each interleaved,
    the difference of the medians over the 4 layers."""
    for _ in range(warm):
        s2()
        s6()
    t2, t6 = [], []
    for _ in range(n):
        t2.append(sync_time(s2))
        t6.append(sync_time(s6))
    return {"s": (statistics.median(t6) - statistics.median(t2)) / 4, "t2_s": t2, "t6_s": t6}


def counts(step: Any) -> dict[str, int]:
    """Python calls (functions and builtins) and ATen ops of one step."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Count(TorchDispatchMode):
        n = 0

        def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
            Count.n += 1
            return func(*args, **(kwargs or {}))

    calls = {"call": 0, "c_call": 0}

    def prof(frame: Any, event: str, arg: Any) -> None:
        if event in calls:
            calls[event] += 1

    torch.cuda.synchronize()
    sys.setprofile(prof)
    try:
        step()
    finally:
        sys.setprofile(None)
    torch.cuda.synchronize()
    with Count():
        step()
    torch.cuda.synchronize()
    return {"py_calls": calls["call"], "c_calls": calls["c_call"], "aten_ops": Count.n}


@torch.no_grad()
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--impls", default="hf,fused")
    ap.add_argument("--prompts", default="1x300,1x500")
    ap.add_argument("--rounds", type=int, default=4)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import transformers
    import triton

    prompts = [tuple(int(v) for v in p.split("x")) for p in args.prompts.split(",")]
    doc: dict[str, Any] = {
        **run_header("roofcalc-host-track-1"),
        "transformers": transformers.__version__,
        "triton": triton.__version__,
        "prompts": prompts,
        "cases": [],
        "counts": [],
    }
    path = out / "host_track.json"
    for name in args.models.split(","):
        impls = [i for i in args.impls.split(",") if i != "fused" or config_of(name)["model_type"] in ("llama", "mistral")]
        steps = {i: {p: build(i, name, None, *p) for p in prompts} for i in impls}
        tiny = {i: (build(i, name, 2, 1, 4), build(i, name, 6, 1, 4)) for i in impls}
        for r in range(args.rounds):
            for i in impls:
                rec: dict[str, Any] = {"model": name, "impl": i, "round": r, "config": config_of(name)}
                rec["hot_op_before_s"] = host_op_s()
                rec["layer_before"] = per_layer(*tiny[i])
                rec["prompts"] = []
                for (b, s), step in steps[i].items():
                    for _ in range(2):
                        step()
                    ts = [sync_time(step) for _ in range(5)]
                    rec["prompts"].append({"batch": b, "seq": s, "times_s": ts, "median_s": statistics.median(ts)})
                rec["layer_after"] = per_layer(*tiny[i])
                rec["hot_op_after_s"] = host_op_s()
                doc["cases"].append(rec)
                lay = (rec["layer_before"]["s"] + rec["layer_after"]["s"]) / 2
                hot = (rec["hot_op_before_s"] + rec["hot_op_after_s"]) / 2
                print(name, i, r, f"hot {hot * 1e6:.2f} us, layer {lay * 1e6:.0f} us,",
                      " ".join(f"{p['seq']}:{p['median_s'] * 1e3:.2f}ms" for p in rec["prompts"]), flush=True)
                path.write_text(json.dumps(doc, indent=1))
        for i in impls:
            c = {"model": name, "impl": i, "layers_2": counts(tiny[i][0]), "layers_6": counts(tiny[i][1])}
            c["prompts"] = [{"batch": b, "seq": s, **counts(step)} for (b, s), step in steps[i].items()]
            doc["counts"].append(c)
            print(name, i, "counts", c, flush=True)
        path.write_text(json.dumps(doc, indent=1))
        del steps, tiny
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The host's time per decoder layer of an implementation issued from Python, measured where the
GPU has almost nothing to do (one token), so that each step's wall time is its host's issue time.

For each implementation and model: the same config built with 2 and with 6 layers, a prefill of
``--seq`` tokens timed (median of 30, CUDA synchronised around each); the host's time per layer is
the difference over the 4 layers. Beside it, the hot loop of one small PyTorch op (x.add_), the
unit roofcalc counts host work in. With --full, the config at its own depth too.

    python3 host_layers.py --out DIR [--models llama-1b,nemo-16l] [--seq 4]

Writes DIR/host_layers.json.
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


def hot_op_s() -> float:
    x = torch.zeros(16, device="cuda")
    for _ in range(100):
        x.add_(1)
    torch.cuda.synchronize()
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(2000):
            x.add_(1)
        torch.cuda.synchronize()
        runs.append((time.perf_counter() - t0) / 2000)
    return statistics.median(runs)


def timed(fn: Any, n: int = 30) -> float:
    for _ in range(5):
        fn()
    ts = []
    for _ in range(n):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts)


@torch.no_grad()
def step_time(impl: str, name: str, layers: int, seq: int) -> float:
    cfg = dict(config_of(name))
    cfg["num_hidden_layers"] = layers
    if impl == "fused":
        from fused_model import FusedModel

        m = FusedModel(cfg, 1, seq)
        ids = torch.randint(0, cfg["vocab_size"], (1, seq), device="cuda")
        pos = torch.arange(seq, device="cuda", dtype=torch.int32)
        t = timed(lambda: m.forward(ids, pos, seq))
    else:
        from transformers import AutoConfig, AutoModelForCausalLM

        kind, kw = CONFIGS[name]
        hcfg = AutoConfig.for_model(kind, **{**kw, "num_hidden_layers": layers})
        with torch.device("cuda"):
            m = AutoModelForCausalLM.from_config(hcfg, attn_implementation="sdpa", dtype=torch.bfloat16).eval()
        ids = torch.randint(0, hcfg.vocab_size, (1, seq), device="cuda")
        t = timed(lambda: m(input_ids=ids, use_cache=True).logits[:, -1].argmax(-1))
    del m
    torch.cuda.empty_cache()
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", default="llama-1b,nemo-16l,qwen2-0.5b,qwen3-0.6b,phi3-mini")
    ap.add_argument("--impls", default="fused,hf")
    ap.add_argument("--seq", type=int, default=4)
    ap.add_argument("--full", action="store_true", help="also time each config at its own depth")
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import transformers
    import triton

    doc: dict[str, Any] = {
        **run_header("roofcalc-host-layers-1"),
        "transformers": transformers.__version__,
        "triton": triton.__version__,
        "seq": args.seq,
        "cases": [],
    }
    for impl in args.impls.split(","):
        for name in args.models.split(","):
            if impl == "fused" and config_of(name)["model_type"] not in ("llama", "mistral"):
                continue
            op_before = hot_op_s()
            t2 = step_time(impl, name, 2, args.seq)
            t6 = step_time(impl, name, 6, args.seq)
            full = step_time(impl, name, config_of(name)["num_hidden_layers"], args.seq) if args.full else None
            op_after = hot_op_s()
            case = {"step_full_s": full, "impl": impl, "model": name, "step_2_layers_s": t2, "step_6_layers_s": t6,
                    "host_per_layer_s": (t6 - t2) / 4, "hot_op_s": (op_before + op_after) / 2,
                    "hot_op_before_after_s": [op_before, op_after]}
            case["host_per_layer_ops"] = case["host_per_layer_s"] / case["hot_op_s"]
            doc["cases"].append(case)
            (out / "host_layers.json").write_text(json.dumps(doc, indent=1))
            print(impl, name, f"{case['host_per_layer_s'] * 1e6:.1f} us/layer = {case['host_per_layer_ops']:.1f} ops", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

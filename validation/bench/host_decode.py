"""Which host time per layer paces transformers' DynamicCache decode issued from Python: the layer
of a 4-token prefill (impl_bench.py --host-layers' recipe), or the layer of a decode step?

A prefill's first forward call initialises each layer's DynamicCache; a decode step appends to it
(torch.cat). One process per model. For ``--rounds`` rounds:

- the hot loop of one small PyTorch op (llm_bench.host_op_s), before and after;
- the config at 2 and at 6 layers, a 4-token prefill (host_anatomy.layer_pair), before and after;
- the config at 2 and at 6 layers, a one-token decode step over a DynamicCache of 64 tokens that
  grows a token a step, SDPA held to its flash backend (so that no step builds a cuDNN plan, which
  the full model's step does once, whatever its depth), before and after;
- each decode case of ``--cases`` at full depth as impl_bench.py times it (hf_dynamic: 2 warm-ups,
  ``--steps`` steps, the hot loop around them).

Everything under torch.no_grad(), as the steps run.

    python3 host_decode.py --out DIR --models llama-1b-hd64 [--cases 2x900,8x2000]

Writes DIR/host_decode.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

import torch

from benchlib import run_header
from host_anatomy import layer_pair
from host_track import build
from impl_bench import CONFIGS, build_hf, config_of, hf_dynamic
from llm_bench import host_op_s


def decode_step(name: str, layers: int) -> Any:
    """A one-token decode step of the config at ``layers`` deep over a growing DynamicCache."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from transformers import AutoConfig, AutoModelForCausalLM

    kind, kw = CONFIGS[name]
    hcfg = AutoConfig.for_model(kind, **{**kw, "num_hidden_layers": layers})
    with torch.device("cuda"):
        model = AutoModelForCausalLM.from_config(hcfg, attn_implementation="sdpa", dtype=torch.bfloat16).eval()
    ids = torch.randint(0, hcfg.vocab_size, (1, 64), device="cuda")
    cache = model(input_ids=ids, use_cache=True).past_key_values
    tok = torch.randint(0, hcfg.vocab_size, (1, 1), device="cuda")

    def step() -> None:
        nonlocal cache
        with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
            o = model(input_ids=tok, past_key_values=cache, use_cache=True)
        cache = o.past_key_values
        o.logits[:, -1].argmax(-1)

    return step


@torch.no_grad()
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--cases", default="2x900,8x2000")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import transformers

    cases = [tuple(int(v) for v in c.split("x")) for c in args.cases.split(",")]
    doc: dict[str, Any] = {
        **run_header("roofcalc-host-decode-1"),
        "transformers": transformers.__version__,
        "cases": [],
    }
    path = out / "host_decode.json"
    for name in args.models.split(","):
        model, cfg = build_hf(name)
        prefill = (build("hf", name, 2, 1, 4), build("hf", name, 6, 1, 4))
        decode = (decode_step(name, 2), decode_step(name, 6))
        t_end = time.monotonic() + 2.0
        while time.monotonic() < t_end:
            for fn in (*prefill, *decode):
                fn()
        torch.cuda.synchronize()
        for r in range(args.rounds):
            rec: dict[str, Any] = {"model": name, "round": r, "config": config_of(name)}
            rec["hot_op_before_s"] = host_op_s()
            rec["prefill_layer_before"] = layer_pair(*prefill)
            rec["decode_layer_before"] = layer_pair(*decode)
            rec["steps"] = [
                {"batch": b, "context": c, **hf_dynamic(model, cfg, b, c, args.steps, None)} for b, c in cases
            ]
            rec["prefill_layer_after"] = layer_pair(*prefill)
            rec["decode_layer_after"] = layer_pair(*decode)
            rec["hot_op_after_s"] = host_op_s()
            doc["cases"].append(rec)
            pl = (rec["prefill_layer_before"]["s"] + rec["prefill_layer_after"]["s"]) / 2
            dl = (rec["decode_layer_before"]["s"] + rec["decode_layer_after"]["s"]) / 2
            print(name, r, f"prefill layer {pl * 1e6:.0f} us, decode layer {dl * 1e6:.0f} us", flush=True)
            path.write_text(json.dumps(doc, indent=1))
        del model, prefill, decode
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())

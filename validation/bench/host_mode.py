"""Does the autograd mode a step runs in move its host's time, and the implementation's own host time
per layer with it? transformers' modules hold parameters that require grad, so a forward call
outside torch.no_grad() records autograd's graph at each op; the fused layout's weights are plain
tensors.

One process per model. For ``--rounds`` rounds, for each implementation and each mode (grad:
PyTorch's default; no_grad; inference_mode), in turn:

- the implementation's own host time per layer in that mode (host_anatomy.layer_pair: the config
  at 2 and 6 layers, a 4-token prefill, 5 warm and 24 interleaved steps of each), before and after;
- each prompt of ``--prompts`` at full depth in that mode (2 warm-ups, ``--steps`` steps with a
  CUDA synchronise around each).

    python3 host_mode.py --out DIR --models llama-1b-hd64 [--prompts 1x300,1x500]

Writes DIR/host_mode.json.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from pathlib import Path
from typing import Any

import torch

from benchlib import run_header
from host_anatomy import layer_pair, series
from host_track import build
from impl_bench import config_of
from llm_bench import host_op_s

MODES = {
    "grad": contextlib.nullcontext,
    "no_grad": torch.no_grad,
    "inference_mode": torch.inference_mode,
}


def in_mode(mode: str, fn: Any) -> Any:
    def run() -> Any:
        with MODES[mode]():
            return fn()

    return run


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--impls", default="hf,fused")
    ap.add_argument("--prompts", default="1x300,1x500")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--steps", type=int, default=7)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import transformers

    prompts = [tuple(int(v) for v in p.split("x")) for p in args.prompts.split(",")]
    doc: dict[str, Any] = {
        **run_header("roofcalc-host-mode-1"),
        "transformers": transformers.__version__,
        "prompts": prompts,
        "modes": list(MODES),
        "cases": [],
    }
    path = out / "host_mode.json"
    for name in args.models.split(","):
        impls = [i for i in args.impls.split(",") if i != "fused" or config_of(name)["model_type"] in ("llama", "mistral")]
        with torch.no_grad():
            steps = {i: {p: build(i, name, None, *p) for p in prompts} for i in impls}
            tiny = {i: (build(i, name, 2, 1, 4), build(i, name, 6, 1, 4)) for i in impls}
        for i in impls:  # warmed as impl_bench.tiny_models does, in every mode
            t_end = time.monotonic() + 2.0
            while time.monotonic() < t_end:
                for mode in MODES:
                    in_mode(mode, tiny[i][0])()
                    in_mode(mode, tiny[i][1])()
        torch.cuda.synchronize()
        for r in range(args.rounds):
            for i in impls:
                for mode in MODES:
                    pair = (in_mode(mode, tiny[i][0]), in_mode(mode, tiny[i][1]))
                    rec: dict[str, Any] = {"model": name, "impl": i, "round": r, "mode": mode, "config": config_of(name)}
                    rec["hot_op_before_s"] = host_op_s()
                    rec["layer_before"] = layer_pair(*pair)
                    rec["prompts"] = [
                        {"batch": b, "seq": s, **series(in_mode(mode, step), args.steps)}
                        for (b, s), step in steps[i].items()
                    ]
                    rec["layer_after"] = layer_pair(*pair)
                    rec["hot_op_after_s"] = host_op_s()
                    doc["cases"].append(rec)
                    lay = (rec["layer_before"]["s"] + rec["layer_after"]["s"]) / 2
                    print(
                        name, i, r, mode, f"layer {lay * 1e6:.0f} us,",
                        " ".join(f"{p['seq']}: {p['total_median_s'] * 1e3:.2f} ms" for p in rec["prompts"]),
                        flush=True,
                    )
                    path.write_text(json.dumps(doc, indent=1))
        del steps, tiny
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())

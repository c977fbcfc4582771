"""Does an implementation's host time per layer depend on the prompt length it is timed at?

One process per model. For ``--rounds`` rounds, for each implementation: the hot loop of one op,
then the host time per layer (the config at 2 and 6 layers, host_track.per_layer with 5 warm steps
and 24 of each depth interleaved) at each prompt length of ``--seqs``, then the full model's
prefill at each of ``--prompts`` (2 warm-ups, 5 steps), then the hot loop again.

    python3 host_seq.py --out DIR --models llama-1b-hd64 [--seqs 4,32,128] [--prompts 128,300]

Writes DIR/host_seq.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

import torch

from benchlib import run_header
from host_track import build, per_layer, sync_time
from impl_bench import config_of
from llm_bench import host_op_s


@torch.no_grad()
def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--impls", default="hf,fused")
    ap.add_argument("--seqs", default="4,32,128")
    ap.add_argument("--prompts", default="128,300")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    import transformers

    seqs = [int(v) for v in args.seqs.split(",")]
    prompts = [int(v) for v in args.prompts.split(",")]
    doc: dict[str, Any] = {**run_header("roofcalc-host-seq-1"), "transformers": transformers.__version__,
                           "seqs": seqs, "prompts": prompts, "cases": []}
    path = out / "host_seq.json"
    for name in args.models.split(","):
        impls = [i for i in args.impls.split(",") if i != "fused" or config_of(name)["model_type"] in ("llama", "mistral")]
        tiny = {(i, s): (build(i, name, 2, 1, s), build(i, name, 6, 1, s)) for i in impls for s in seqs}
        full = {(i, p): build(i, name, None, 1, p) for i in impls for p in prompts}
        for r in range(args.rounds):
            for i in impls:
                rec: dict[str, Any] = {"model": name, "impl": i, "round": r, "config": config_of(name)}
                rec["hot_op_before_s"] = host_op_s()
                rec["layer_s"] = {str(s): per_layer(*tiny[i, s], warm=5, n=24)["s"] for s in seqs}
                rec["steps"] = {}
                for p in prompts:
                    step = full[i, p]
                    for _ in range(2):
                        step()
                    ts = [sync_time(step) for _ in range(5)]
                    rec["steps"][str(p)] = {"times_s": ts, "median_s": statistics.median(ts)}
                rec["layer_after_s"] = {str(s): per_layer(*tiny[i, s], warm=5, n=24)["s"] for s in seqs}
                rec["hot_op_after_s"] = host_op_s()
                doc["cases"].append(rec)
                path.write_text(json.dumps(doc, indent=1))
                print(name, i, r, {s: round(v * 1e6) for s, v in rec["layer_s"].items()},
                      {p: round(v["median_s"] * 1e3, 2) for p, v in rec["steps"].items()}, flush=True)
        del tiny, full
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())

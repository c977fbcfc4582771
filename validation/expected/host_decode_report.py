"""host_decode.py's DynamicCache decode steps (transformers, issued from Python): measured / expected
paced by the implementation's host time per layer timed at a 4-token prefill (impl_bench.py
--host-layers' recipe) and at a one-token decode step, each the mean of its timings before and
after the round; the cuDNN plan (native) at the hot loop timed around the step, as named_report.py
pays it. Apart: the process's first round, where cuDNN built a plan for each new KV length, and the
later ones, which ran the same lengths again and found the plans in its cache (evaluated with
--cudnn-plans-cached). Writes validation/expected/<card>/<set>.json; no GPU.

    python3 validation/expected/host_decode_report.py h200/host-decode1
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from host_track_report import Pacer, host_doc, trace_docs
from named_report import TARGETS, params_of, spread, write_reports

from roofcalc.impl.host_layer import paced
from roofcalc.opdefs import load_op
from roofcalc.roofline import evaluate
from roofcalc.validation import case_host_op, with_host_op


def report(set_name: str) -> dict[str, Any]:
    hw = Pacer(set_name).hw
    op = load_op("decode")
    docs = trace_docs(set_name, "host_decode.json")
    rows: list[dict[str, Any]] = []
    device = docs[-1][1]["device"]
    for _, doc in docs:
        for rec in doc["cases"]:
            layers = {
                at: (rec[f"{at}_layer_before"]["s"] + rec[f"{at}_layer_after"]["s"]) / 2 for at in ("prefill", "decode")
            }
            for step in rec["steps"]:
                case = {"config": rec["config"], "impl": "hf-dynamic", "phase": "decode", **step}
                p, preset = params_of(case)
                # the same lengths again in a later round: cuDNN finds their plans in its cache
                p["cudnn_plans_cached"] = rec["round"] > 0
                hot_hw = with_host_op(
                    hw, case_host_op(step, f"{rec['model']} {step['batch']}x{step['context']}"), "around"
                )
                row: dict[str, Any] = {
                    "model": rec["model"],
                    "round": rec["round"],
                    "batch": step["batch"],
                    "context": step["context"],
                    "measured_s": step["median_s"],
                    "layer_at_prefill_s": layers["prefill"],
                    "layer_at_decode_s": layers["decode"],
                }
                for at, layer in layers.items():
                    r = evaluate(op, paced(op, hot_hw, p, preset, layer, f"host per layer at {at}"), p, preset)
                    row[f"ratio_layer_at_{at}"] = step["median_s"] / r.expected_s
                    row[f"limiter_at_{at}"] = r.expected_limiter
                rows.append(row)
    lo, hi = TARGETS["python"]
    # each round times the same batches and lengths: cuDNN builds a plan for each new KV length in
    # the process's first round only, and finds it in its cache later (cudnn_plans_cached)
    summary: dict[str, Any] = {}
    for first, which in ((True, "plans_built"), (False, "plans_cached")):
        sel = [r for r in rows if (r["round"] == 0) == first]
        for at in ("prefill", "decode"):
            summary[f"hf-dynamic/{which}/ratio_layer_at_{at}"] = spread(
                [r[f"ratio_layer_at_{at}"] for r in sel], lo, hi
            )
    summary["hf-dynamic/decode_layer_over_prefill_layer_median"] = round(
        statistics.median(r["layer_at_decode_s"] / r["layer_at_prefill_s"] for r in rows), 3
    )
    doc = host_doc("host-decode", set_name, FITTED, device, summary, rows)
    doc["target"] = [lo, hi]
    return doc


FITTED = (
    "development: hf_layer_ops is fitted to its 4-token prefill layer timings with other sets' "
    "(validation/expected/step_ops.py)"
)


def main(argv: list[str]) -> int:
    return write_reports(argv, report, "")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Measured / expected for host_mode.py's host-paced prefills in PyTorch's three autograd modes, each
paced by the implementation's own host time per layer timed in the same mode, and, beside it, by
the time per layer timed in PyTorch's default (grad) mode for a step run under no_grad, as
impl_bench.py --host-layers timed it until impl-holdout15. Also the cost of each mode against
no_grad, of the time per layer and of the step (model-free). Writes
validation/expected/<card>/<set>.json; no GPU.

    python3 validation/expected/host_mode_report.py h200/host-mode1
"""

from __future__ import annotations

import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from host_track_report import DERIVED, Pacer, host_doc, trace_docs
from named_report import TARGETS, spread, write_reports


def report(set_name: str) -> dict[str, Any]:
    pacer = Pacer(set_name)
    docs = trace_docs(set_name, "host_mode.json")
    rows: list[dict[str, Any]] = []
    device = docs[-1][1]["device"]
    for _, doc in docs:
        by_key = {(r["model"], r["impl"], r["round"], r["mode"]): r for r in doc["cases"]}
        for (model, impl, rnd, mode), rec in by_key.items():
            hot = (rec["hot_op_before_s"] + rec["hot_op_after_s"]) / 2
            layer = (rec["layer_before"]["s"] + rec["layer_after"]["s"]) / 2
            grad = by_key.get((model, impl, rnd, "grad"))
            free = by_key.get((model, impl, rnd, "no_grad"))
            for i, pr in enumerate(rec["prompts"]):
                measured = pr["total_median_s"]
                _, by_layer, _ = pacer.expected(impl, rec["config"], pr["batch"], pr["seq"], hot, layer)
                row = {
                    "model": model,
                    "impl": impl,
                    "round": rnd,
                    "mode": mode,
                    "batch": pr["batch"],
                    "seq": pr["seq"],
                    "measured_s": measured,
                    "host_layer_s": layer,
                    "limiter": by_layer.expected_limiter,
                    "ratio_same_mode": measured / by_layer.expected_s,
                }
                if free is not None:
                    ref_layer = (free["layer_before"]["s"] + free["layer_after"]["s"]) / 2
                    if not ref_layer > 0:
                        raise SystemExit(
                            f"{set_name}: {model} {impl} round {rnd}: no_grad's time per layer {ref_layer!r}"
                        )
                    row["layer_vs_no_grad"] = layer / ref_layer
                    row["step_vs_no_grad"] = measured / free["prompts"][i]["total_median_s"]
                if mode == "no_grad" and grad is not None:
                    g_layer = (grad["layer_before"]["s"] + grad["layer_after"]["s"]) / 2
                    _, by_grad, _ = pacer.expected(impl, rec["config"], pr["batch"], pr["seq"], hot, g_layer)
                    row["ratio_layer_timed_in_grad"] = measured / by_grad.expected_s
                rows.append(row)
    lo, hi = TARGETS["prefill"]
    summary: dict[str, Any] = {}
    for impl in sorted({r["impl"] for r in rows}):
        for mode in ("grad", "no_grad", "inference_mode"):
            sel = [r for r in rows if r["impl"] == impl and r["mode"] == mode]
            if not sel:
                continue
            summary[f"{impl}/{mode}/ratio_same_mode"] = spread([r["ratio_same_mode"] for r in sel], lo, hi)
            if mode != "no_grad" and all("layer_vs_no_grad" in r for r in sel):
                summary[f"{impl}/{mode}/layer_vs_no_grad_median"] = round(
                    statistics.median(r["layer_vs_no_grad"] for r in sel), 3
                )
                summary[f"{impl}/{mode}/step_vs_no_grad_median"] = round(
                    statistics.median(r["step_vs_no_grad"] for r in sel), 3
                )
            if mode == "no_grad" and all("ratio_layer_timed_in_grad" in r for r in sel):
                summary[f"{impl}/no_grad/ratio_layer_timed_in_grad"] = spread(
                    [r["ratio_layer_timed_in_grad"] for r in sel], lo, hi
                )
    return host_doc("host-mode", set_name, DERIVED + " (its no_grad rounds)", device, summary, rows)


def main(argv: list[str]) -> int:
    return write_reports(argv, report, "")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

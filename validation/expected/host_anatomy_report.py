"""host_anatomy.py's host-paced prefills: measured / expected with the implementation's own host time
per layer timed around them, beside two model-free ratios that bound what any figure timed beside a
step can do: the prompt's time over the same config's 4-token step at full depth timed just before
it (nearly the same host work, the GPU's share apart), and that 4-token step over the 2-layer step
plus the other layers at the time per layer. Writes validation/expected/<card>/<set>.json; no GPU.

    python3 validation/expected/host_anatomy_report.py h200/host-anatomy1
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
    docs = trace_docs(set_name, "host_anatomy.json")
    rows: list[dict[str, Any]] = []
    steps: list[dict[str, Any]] = []  # one a round: the 4-token step at full depth
    device = docs[-1][1]["device"]
    med = statistics.median
    for _, doc in docs:
        for rec in doc["cases"]:
            hot = (rec["hot_op_before_s"] + rec["hot_op_after_s"]) / 2
            lb, la = rec["layer_before"], rec["layer_after"]
            layer = (lb["s"] + la["s"]) / 2
            t2 = (med(lb["t2_s"]) + med(la["t2_s"])) / 2
            full4 = rec["full_4"]["total_median_s"]
            linear = t2 + (rec["config"]["num_hidden_layers"] - 2) * layer
            for pr in rec["prompts"]:
                measured = pr["total_median_s"]
                _, by_layer, _ = pacer.expected(rec["impl"], rec["config"], pr["batch"], pr["seq"], hot, layer)
                rows.append(
                    {
                        "model": rec["model"],
                        "impl": rec["impl"],
                        "round": rec["round"],
                        "batch": pr["batch"],
                        "seq": pr["seq"],
                        "measured_s": measured,
                        "gpu_tail_s": measured - pr["issue_median_s"],
                        "host_layer_s": layer,
                        "limiter": by_layer.expected_limiter,
                        "ratio_host_layer": measured / by_layer.expected_s,
                        "prompt_over_full4": measured / full4,
                    }
                )
            steps.append({"impl": rec["impl"], "full4_over_linear": full4 / linear})
    lo, hi = TARGETS["prefill"]
    summary: dict[str, Any] = {}
    for impl in sorted({r["impl"] for r in rows}):
        sel = [r for r in rows if r["impl"] == impl]
        for key in ("ratio_host_layer", "prompt_over_full4"):
            summary[f"{impl}/{key}"] = spread([r[key] for r in sel], lo, hi)
        summary[f"{impl}/full4_over_linear"] = spread(
            [r["full4_over_linear"] for r in steps if r["impl"] == impl], lo, hi
        )
        summary[f"{impl}/gpu_tail_median_s"] = statistics.median(r["gpu_tail_s"] for r in sel)
    return host_doc("host-anatomy", set_name, DERIVED, device, summary, rows, full_depth_steps=steps)


def main(argv: list[str]) -> int:
    return write_reports(argv, report, "")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

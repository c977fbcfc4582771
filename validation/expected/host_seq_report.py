"""Measured / expected for host_seq.py's prefills with the implementation's own host time per
layer timed at each prompt length of the set (4, 32, 128 tokens), and with the hot loop of one op;
each figure the mean of its timing before and after the round's prefills, the hot loop's the
card's op for native work. Writes validation/expected/<card>/<set>.json; no GPU.

    python3 validation/expected/host_seq_report.py h200/host-seq1
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from host_track_report import Pacer, host_doc, trace_docs  # noqa: E402
from named_report import TARGETS, spread, write_reports  # noqa: E402


def report(set_name: str) -> dict[str, Any]:
    pacer = Pacer(set_name)
    docs = trace_docs(set_name, "host_seq.json")
    rows: list[dict[str, Any]] = []
    device = docs[-1][1]["device"]
    for f, doc in docs:
        for rec in doc["cases"]:
            hot = (rec["hot_op_before_s"] + rec["hot_op_after_s"]) / 2
            for prompt, step in rec["steps"].items():
                row: dict[str, Any] = {
                    "process": f.parent.name,
                    "model": rec["model"],
                    "impl": rec["impl"],
                    "round": rec["round"],
                    "seq": int(prompt),
                    "measured_s": step["median_s"],
                }
                for timed_at in rec["layer_s"]:
                    layer = (rec["layer_s"][timed_at] + rec["layer_after_s"][timed_at]) / 2
                    by_hot, by_layer, _ = pacer.expected(rec["impl"], rec["config"], 1, int(prompt), hot, layer)
                    row["ratio_hot_loop"] = step["median_s"] / by_hot.expected_s
                    row[f"ratio_layer_at_{timed_at}"] = step["median_s"] / by_layer.expected_s
                rows.append(row)
    lo, hi = TARGETS["prefill"]
    summary: dict[str, Any] = {}
    for impl in sorted({r["impl"] for r in rows}):
        sel = [r for r in rows if r["impl"] == impl]
        for key in sorted(k for k in sel[0] if k.startswith("ratio_")):
            summary[f"{impl}/{key}"] = spread([r[key] for r in sel], lo, hi)
    return host_doc("host-seq", set_name, FITTED, device, summary, rows)


FITTED = (
    "development: hf_layer_ops and fused_layer_ops are fitted to its 4-token layer timings with other sets' "
    "(validation/expected/step_ops.py)"
)


def main(argv: list[str]) -> int:
    return write_reports(argv, report, "")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

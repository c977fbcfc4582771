"""Measured / expected for host_seq.py's prefills with the implementation's own host time per
layer timed at each prompt length of the set (4, 32, 128 tokens), and with the hot loop of one op;
each figure the mean of its timing before and after the round's prefills, the hot loop's the
card's op for native work. Writes validation/expected/<card>/<set>.json; no GPU.

    python3 validation/expected/host_seq_report.py h200/host-seq1
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from named_report import TARGETS, params_of, spread, write_reports  # noqa: E402

from roofcalc.impl.host_layer import host_ops_per_layer  # noqa: E402
from roofcalc.opdefs import load_op  # noqa: E402
from roofcalc.resolve import resolve_hardware  # noqa: E402
from roofcalc.roofline import evaluate  # noqa: E402
from roofcalc.validation import with_host_op, with_impl_pace  # noqa: E402

TRACES = ROOT / "validation" / "traces"


def report(set_name: str) -> dict[str, Any]:
    hw = resolve_hardware(set_name.split("/")[0], None, None)
    op = load_op("prefill")
    files = sorted((TRACES / set_name).glob("*/host_seq.json"))
    if not files:
        raise SystemExit(f"{set_name}: no */host_seq.json")
    counted: dict[tuple[str, str, int], float] = {}
    rows: list[dict[str, Any]] = []
    device = None
    for f in files:
        doc = json.loads(f.read_text())
        device = doc["device"]
        for rec in doc["cases"]:
            hot = (rec["hot_op_before_s"] + rec["hot_op_after_s"]) / 2
            hot_hw = with_host_op(hw, hot, "hot loop around the round")
            for prompt, step in rec["steps"].items():
                case = {
                    "config": rec["config"],
                    "impl": rec["impl"],
                    "phase": "prefill",
                    "batch": 1,
                    "seq": int(prompt),
                }
                p, preset = params_of(case)
                key = (rec["impl"], rec["model"], int(prompt))
                if key not in counted:
                    n = host_ops_per_layer(op, hw, p, preset)
                    if not n:
                        raise SystemExit(
                            f"{set_name}: {key}: no host paces this prefill, so no time per layer enters it"
                        )
                    counted[key] = n
                row: dict[str, Any] = {
                    "process": f.parent.name,
                    "model": rec["model"],
                    "impl": rec["impl"],
                    "round": rec["round"],
                    "seq": int(prompt),
                    "measured_s": step["median_s"],
                    "ratio_hot_loop": step["median_s"] / evaluate(op, hot_hw, p, preset).expected_s,
                }
                for timed_at in rec["layer_s"]:
                    layer = (rec["layer_s"][timed_at] + rec["layer_after_s"][timed_at]) / 2
                    paced = with_impl_pace(hot_hw, layer / counted[key], f"host per layer at {timed_at} tokens")
                    row[f"ratio_layer_at_{timed_at}"] = step["median_s"] / evaluate(op, paced, p, preset).expected_s
                rows.append(row)
    lo, hi = TARGETS["prefill"]
    summary: dict[str, Any] = {}
    for impl in sorted({r["impl"] for r in rows}):
        sel = [r for r in rows if r["impl"] == impl]
        for key in sorted(k for k in sel[0] if k.startswith("ratio_")):
            summary[f"{impl}/{key}"] = spread([r[key] for r in sel], lo, hi)
    return {
        "schema": "roofcalc-host-seq-report-1",
        "set": set_name,
        "role": "development: no figure fitted on it",
        "device": device,
        "command": f"python3 validation/expected/host_seq_report.py {set_name}",
        "target": [lo, hi],
        "summary": summary,
        "cases": rows,
    }


def main(argv: list[str]) -> int:
    return write_reports(argv, report, "")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

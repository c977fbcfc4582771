"""Measured / expected for host_track.py's host-paced prefills, with two figures of the host timed
around them in the same process: the hot loop of one PyTorch op (the card's unit of host work) and
the implementation's own host time per layer (a 4-token prefill of the config at 2 and 6 layers;
roofcalc.impl.host_layer turns it into the pace of the implementation's ops). Each is the mean of
its timing before and after the round's prompts. Writes validation/expected/<card>/<set>.json; no GPU.

    python3 validation/expected/host_track_report.py h200/host-track1
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


DERIVED = (
    "development: hf_step_ops and fused_step_ops are fitted to it, and with other sets hf_layer_ops and "
    "fused_layer_ops (validation/expected/step_ops.py)"
)


def host_doc(
    kind: str, set_name: str, role: str, device: Any, summary: dict[str, Any], rows: list[Any], **more: Any
) -> dict[str, Any]:
    """A host report's document: validation/expected/<kind with underscores>_report.py's for ``set_name``."""
    return {
        "schema": f"roofcalc-{kind}-report-1",
        "set": set_name,
        "role": role,
        "device": device,
        "command": f"python3 validation/expected/{kind.replace('-', '_')}_report.py {set_name}",
        "target": list(TARGETS["prefill"]),
        "summary": summary,
        "cases": rows,
        **more,
    }


def trace_docs(set_name: str, name: str) -> list[tuple[Path, dict[str, Any]]]:
    """The measurement files ``name`` of a trace set (one a process), read."""
    files = sorted((TRACES / set_name).glob(f"*/{name}"))
    if not files:
        raise SystemExit(f"{set_name}: no */{name}")
    return [(f, json.loads(f.read_text())) for f in files]


class Pacer:
    """A host-paced prompt's expected time on one card, with the hot loop timed around it and with
    the implementation's own host time per layer; the host-op times counted per layer are counted
    once per implementation, config and prompt (host_op_from_layer's op time is the layer time over
    them)."""

    def __init__(self, set_name: str) -> None:
        self.set_name = set_name
        self.hw = resolve_hardware(set_name.split("/")[0], None, None)
        self.op = load_op("prefill")
        self.counted: dict[str, float] = {}

    def expected(self, impl: str, config: dict[str, Any], batch: int, seq: int, hot: float, layer: float) -> Any:
        """(by the hot loop, by the time per layer, the op time of the latter): two RooflineResults and
        seconds."""
        case = {"config": config, "impl": impl, "phase": "prefill", "batch": batch, "seq": seq}
        p, preset = params_of(case)
        hot_hw = with_host_op(self.hw, hot, "hot loop around the round")
        key = json.dumps([impl, config, batch, seq], sort_keys=True)
        if key not in self.counted:
            n = host_ops_per_layer(self.op, self.hw, p, preset)
            if not n:
                raise SystemExit(
                    f"{self.set_name}: {impl} {batch}x{seq}: no host paces this prefill, so no time per layer enters it"
                )
            self.counted[key] = n
        if not 0 < layer < 1:
            raise SystemExit(f"{self.set_name}: {impl} {batch}x{seq}: a time per layer of {layer!r} s is not one")
        op_s = layer / self.counted[key]  # as host_op_from_layer divides
        by_layer = evaluate(self.op, with_impl_pace(hot_hw, op_s, "host per layer"), p, preset)
        return evaluate(self.op, hot_hw, p, preset), by_layer, op_s


def report(set_name: str) -> dict[str, Any]:
    pacer = Pacer(set_name)
    docs = trace_docs(set_name, "host_track.json")
    rows: list[dict[str, Any]] = []
    device = docs[-1][1]["device"]
    for f, doc in docs:
        for rec in doc["cases"]:
            hot = (rec["hot_op_before_s"] + rec["hot_op_after_s"]) / 2
            layer = (rec["layer_before"]["s"] + rec["layer_after"]["s"]) / 2
            for pr in rec["prompts"]:
                by_hot, by_layer, op_s = pacer.expected(rec["impl"], rec["config"], pr["batch"], pr["seq"], hot, layer)
                rows.append(
                    {
                        "process": f.parent.name,
                        "model": rec["model"],
                        "impl": rec["impl"],
                        "round": rec["round"],
                        "batch": pr["batch"],
                        "seq": pr["seq"],
                        "measured_s": pr["median_s"],
                        "hot_op_s": hot,
                        "host_layer_s": layer,
                        "impl_op_s": op_s,
                        "limiter": by_layer.expected_limiter,
                        "ratio_hot_loop": pr["median_s"] / by_hot.expected_s,
                        "ratio_host_layer": pr["median_s"] / by_layer.expected_s,
                    }
                )
    lo, hi = TARGETS["prefill"]
    summary: dict[str, Any] = {}
    for impl in sorted({r["impl"] for r in rows}):
        sel = [r for r in rows if r["impl"] == impl]
        for key in ("ratio_hot_loop", "ratio_host_layer"):
            summary[f"{impl}/{key}"] = spread([r[key] for r in sel], lo, hi)
    return host_doc("host-track", set_name, DERIVED, device, summary, rows)


def main(argv: list[str]) -> int:
    return write_reports(argv, report, "")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""cuDNN's SM90 flash forward (roofcalc.expected.attention._cudnn_flash) against SDPA's cuDNN
kernel timed alone (validation/bench/cudnn_attn.py): each committed set's shapes, profiled
kernel time / the model's, written beside the measurements.

    python3 validation/expected/cudnn_report.py h100/kernels/cudnn1/dev h100/kernels/cudnn1/holdout10

writes validation/expected/<set>-report.json for each; tests/test_cudnn_attention.py checks that
the committed reports are what the code computes."""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))

from roofcalc.expected.attention import _cudnn_flash  # noqa: E402
from roofcalc.expected.card import card  # noqa: E402
from roofcalc.expected.records import Kernel  # noqa: E402
from roofcalc.hardware import load_hardware  # noqa: E402

# the sets' roles (validation/HOLDOUT.md): the grid the figures were fitted on, and the hold-out
ROLES = {"h100/kernels/cudnn1/dev": "in-sample (fit set)", "h100/kernels/cudnn1/holdout10": "hold-out"}


def kernel(c: dict[str, Any], dtype: str = "bf16") -> Kernel:
    """The SDPA call of a measured case as the hf implementation's sdpa_attention kernel."""
    b, h, kv, s, d = c["batch"], c["heads"], c["kv_heads"], c["seq"], c["head_dim"]
    return Kernel(
        name="sdpa_attention",
        model="cudnn_flash",
        help="SDPA (cuDNN)",
        dtype=dtype,
        threads=128,
        regs=255,
        smem=65536,
        batch=b,
        heads=h,
        kv_heads=kv,
        seq=s,
        kv_seq=s,
        head_dim=d,
        causal=bool(c["causal"]),
        flops=4 * b * h * d * (s * (s + 1) / 2 if c["causal"] else s * s),
        dram_bytes=b * s * (2 * h + 2 * kv) * d * 2,
    )


def report(set_name: str) -> dict[str, Any]:
    src = HERE / f"{set_name}.json"
    doc = json.loads(src.read_text())
    hw = load_hardware(set_name.split("/")[0])
    c = card(hw)
    rows = []
    for case in doc["cases"]:
        if case.get("error") or not case.get("cudnn", {}).get("median_us"):
            continue
        (e,) = _cudnn_flash(hw, c, kernel(case), 2)
        measured = case["cudnn"]["median_us"] * 1e-6
        rows.append(
            {
                "shape": {k: case[k] for k in ("batch", "heads", "kv_heads", "seq", "head_dim", "causal")},
                "kernel": case["cudnn"]["kernel"],
                "sdpa_default_is_cudnn": case["default"]["kernel"] == case["cudnn"]["kernel"],
                "measured_s": measured,
                "expected_s": e.seconds,
                "ratio": measured / e.seconds,
            }
        )
    ratios = [r["ratio"] for r in rows]
    return {
        "schema": "roofcalc-cudnn-report-1",
        "set": set_name,
        "role": ROLES.get(set_name, "in-sample"),
        "source": str(src.relative_to(ROOT)),
        "device": doc["device"],
        "command": f"python3 validation/expected/cudnn_report.py {set_name}",
        "summary": {
            "cases": len(rows),
            "within_0.8_1.25": sum(0.8 <= r <= 1.25 for r in ratios),
            "within_0.9_1.1": sum(0.9 <= r <= 1.1 for r in ratios),
            "median": round(statistics.median(ratios), 4) if ratios else None,
            "min": round(min(ratios), 4) if ratios else None,
            "max": round(max(ratios), 4) if ratios else None,
            "sdpa_default_is_cudnn": sum(r["sdpa_default_is_cudnn"] for r in rows),
        },
        "cases": rows,
    }


def main(argv: list[str]) -> int:
    for set_name in argv:
        rep = report(set_name)
        out = HERE / f"{set_name}-report.json"
        out.write_text(json.dumps(rep, indent=1) + "\n")
        print(out.relative_to(ROOT), rep["summary"])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

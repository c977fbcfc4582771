"""The figures of cuBLAS's narrow-tile F.linear kernels (expected.linear_gemm_floor_s and
linear_gemm_k_step_s), fitted to the projections of decode steps measured inside CUDA graphs.

Reads the committed llm_kernels.py records (eager decode steps of two-layer models: the q, k,
v, o, gate, up and down projections of the first layer, each an nvjet kernel; where cuBLAS
split k, its splitKreduce is left out, as the model's reduce kernel is), and finds the fixed
cost and the seconds per 64-deep k-step that
make roofcalc's own model of those kernels closest to their profiled durations (least squares
in log time; coarse grid, then a fine one around the best). No GPU; run from the repository:

    python3 validation/bench/fit_linear_gemm.py [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from roofcalc import analyze  # noqa: E402
from roofcalc.hardware import PositiveFigure, load_hardware  # noqa: E402

RECORDS = [  # (file, model, GPUs)
    ("validation/expected/h100/kernels/graph-decode/graph-kernels-llama-3.1-8b.json", "llama-3.1-8b", 1),
    ("validation/expected/h100/kernels/graph-decode/graph-kernels-qwen2.5-7b.json", "qwen2.5-7b", 1),
    ("validation/expected/h100x2/kernels/tp2-decode/tp1-llama-3.2-1b.json", "llama-3.2-1b", 1),
    ("validation/expected/h100x2/kernels/tp2-decode/tp1-llama-3.1-8b.json", "llama-3.1-8b", 1),
    ("validation/expected/h100x2/kernels/tp2-decode/tp2-llama-3.2-1b.json", "llama-3.2-1b", 2),
    ("validation/expected/h100x2/kernels/tp2-decode/tp2-llama-3.1-8b.json", "llama-3.1-8b", 2),
]
PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


def measured_cases() -> list[dict]:
    """Per eager decode record: its parameters and the first layer's seven projections, each
    the nvjet kernel's duration (seconds)."""
    cases = []
    for path, model, gpus in RECORDS:
        doc = json.loads((ROOT / path).read_text())
        for rec in doc["cases"]:
            if rec.get("engine") != "eager" or rec.get("phase") != "decode" or "kernels" not in rec:
                continue
            gemms: list[float] = []
            for k in rec["kernels"]:
                if "nvjet" in k["name"]:
                    gemms.append(k["duration_s"])
            params = {"model": model, "gpus": gpus, "batch": rec["batch"], "context": rec.get("context", 1024)}
            cases.append({"params": params, "measured": dict(zip(PROJECTIONS, gemms[:7], strict=True))})
    return cases


def modelled(hw, cases: list[dict]) -> list[tuple[float, float]]:
    """(measured, modelled) seconds for every projection of every case."""
    out = []
    for case in cases:
        r = analyze("decode", hw, layers=2, engine="eager", cuda_graphs=True, **case["params"])
        est = {k.name: k.seconds for k in r.expected_kernels}
        for name, t in case["measured"].items():
            out.append((t, est[name]))
    return out


def with_figures(base, floor_s: float, step_s: float):
    note = "candidate of validation/bench/fit_linear_gemm.py"
    figs = {
        "linear_gemm_floor_s": PositiveFigure(value=floor_s, source="bench-linear-gemm", kind="measured", note=note),
        "linear_gemm_k_step_s": PositiveFigure(value=step_s, source="bench-linear-gemm", kind="measured", note=note),
    }
    return base.model_copy(update={"expected": base.expected.model_copy(update=figs)})


def error(pairs: list[tuple[float, float]]) -> float:
    return sum(math.log(m / e) ** 2 for m, e in pairs)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true", help="print the fit as JSON")
    args = ap.parse_args()
    base = load_hardware("h100")
    cases = measured_cases()

    def err(f: float, s: float) -> float:
        return error(modelled(with_figures(base, f, s), cases))

    coarse = [(err(f * 1e-6, s * 1e-9), f, s) for f in [1 + 0.25 * i for i in range(17)] for s in range(10, 160, 10)]
    _, f0, s0 = min(coarse)
    fine = [
        (err(f * 1e-6, s * 1e-9), f, s)
        for f in [round(f0 + 0.05 * i, 2) for i in range(-5, 6)]
        for s in [s0 + 2 * i for i in range(-5, 6)]
        if s > 0
    ]
    _, f1, s1 = min(fine)
    pairs = modelled(with_figures(base, f1 * 1e-6, s1 * 1e-9), cases)
    ratios = [m / e for m, e in pairs]
    fit = {
        "linear_gemm_floor_s": round(f1 * 1e-6, 9),
        "linear_gemm_k_step_s": round(s1 * 1e-9, 12),
        "kernels": len(pairs),
        "median_ratio": statistics.median(ratios),
        "within_15pct": sum(0.85 <= x <= 1.15 for x in ratios) / len(ratios),
        "min_ratio": min(ratios),
        "max_ratio": max(ratios),
    }
    if args.json:
        print(json.dumps(fit, indent=1))
    else:
        print(
            f"{fit['kernels']} kernels: fixed {f1:.2f} us, {s1:.0f} ns a k-step; measured/model median "
            f"{fit['median_ratio']:.3f}, {fit['within_15pct']:.0%} within 15%, {fit['min_ratio']:.2f}-{fit['max_ratio']:.2f}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

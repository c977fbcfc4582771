"""Predict traced implementations at other shapes and compare with the measured steps.

For each set under validation/traces/<card>/<set>/ (times.json from validation/bench/trace_capture.py):
each traced case becomes an implementation file (roofcalc.impl.build, with the profiler's cost per
event from validation/traces/h200/overhead1 and, unless --no-step-time, the traced step timed
without the profiler), which is then predicted at every other shape of the same model,
implementation and phase. Writes validation/expected/<card>/impl-<set>.json; no GPU.

    python3 validation/expected/impl_report.py h200/hf1 [h200/holdout1 ...] [--no-step-time]
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from roofcalc.hardware import load_hardware  # noqa: E402
from roofcalc.impl import measured_overhead  # noqa: E402
from roofcalc.impl.build import build_impl  # noqa: E402
from roofcalc.impl.predict import predict  # noqa: E402
from roofcalc.impl.spec import Overhead  # noqa: E402
from roofcalc.trace import read_trace  # noqa: E402

TRACES = ROOT / "validation" / "traces"
BANDS = {"decode": (0.85, 1.2), "prefill": (0.85, 1.2)}  # the target for traced implementations


def overhead() -> Overhead:
    return measured_overhead()  # the package's figure: validation/traces/h200/overhead1


def traced_size(case: dict) -> int:
    """The context of the traced decode step: a growing cache (Hugging Face's DynamicCache, which
    records context_mid) ran 3 warm-up and `steps` timed steps first; a preallocated one (the
    reference model) steps at its context each time."""
    if case["phase"] == "prefill":
        return case["seq"]
    if "context_mid" not in case:
        return case["context"]
    return case["context"] + 3 + len(case["times_s"])


def timed_size(case: dict) -> int:
    if case["phase"] == "prefill":
        return case["seq"]
    return case.get("context_mid", case["context"])


def report(card_set: str, step_time: bool) -> dict:
    folder = TRACES / card_set
    doc = json.loads((folder / "times.json").read_text())
    hw = load_hardware(card_set.split("/")[0])
    ov = overhead()
    ok = [c for c in doc["cases"] if not c.get("error") and c.get("median_s")]
    rows = []
    for base in (c for c in ok if c.get("trace")):
        group = [c for c in ok if (c["impl"], c["model"], c["phase"]) == (base["impl"], base["model"], base["phase"])]
        key = "context" if base["phase"] == "decode" else "seq"
        impl = build_impl(
            read_trace(folder / "traces" / base["trace"]),
            hw,
            name=base["label"],
            phase=base["phase"],
            batch=base["batch"],
            size=traced_size(base),
            overhead=ov,
            measured_step_s=base["median_s"] if step_time else None,
        )
        for c in group:
            p = predict(impl, hw, {"batch": c["batch"], key: timed_size(c)})
            lo, hi = BANDS[c["phase"]]
            ratio = c["median_s"] / p.step_s
            rows.append(
                {
                    "traced": base["label"],
                    "case": c["label"],
                    "phase": c["phase"],
                    "impl": c["impl"],
                    "same_shape": c is base,
                    "measured_s": c["median_s"],
                    "predicted_s": p.step_s,
                    "ratio": ratio,
                    "in_band": lo <= ratio <= hi,
                    "limiter": p.limiter,
                    "host_s": p.host_s,
                    "gpu_busy_s": p.gpu_busy_s,
                    "host_scale": impl.host_scale,
                }
            )
    others = [r for r in rows if not r["same_shape"]]
    ratios = [r["ratio"] for r in others]
    return {
        "what": "measured / predicted step time of traced implementations at other shapes",
        "set": card_set,
        "device": doc.get("device"),
        "date": doc.get("date"),
        "command": doc.get("command"),
        "step_time_given": step_time,
        "overhead": ov.model_dump(),
        "summary": {
            "predictions": len(others),
            "in_band": sum(r["in_band"] for r in others),
            "median_ratio": statistics.median(ratios) if ratios else None,
            "min_ratio": min(ratios, default=None),
            "max_ratio": max(ratios, default=None),
            "bands": BANDS,
        },
        "rows": rows,
    }


def main() -> int:
    step_time = "--no-step-time" not in sys.argv
    for card_set in [a for a in sys.argv[1:] if not a.startswith("--")]:
        rep = report(card_set, step_time)
        card, name = card_set.split("/")
        out = ROOT / "validation" / "expected" / card / f"impl-{name}{'' if step_time else '-nostep'}.json"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(rep, indent=1, sort_keys=True) + "\n")
        s = rep["summary"]
        print(
            f"{card_set}: {s['in_band']} of {s['predictions']} in band, median {s['median_ratio']:.3f}, "
            f"{s['min_ratio']:.2f}-{s['max_ratio']:.2f} -> {out.relative_to(ROOT)}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

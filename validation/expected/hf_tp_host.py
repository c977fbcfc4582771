"""transformers' host work per decoder layer under tensor parallelism beyond what roofcalc counts:
impls/hf.yaml's hf_tp_layer_ops, derived from validation/traces/h100x2/hf-tp-host-layers2.

That set timed 4-token prefills (the GPUs almost idle, so a step is its host's time) of each config
with 2 and with 10 layers, at TP=2 (twice: tp2.json, tp2b.json) and on one GPU of the same machine
(tp1.json), in units of the hot-loop op timed around them. For each model and TP run:

    (measured per-layer ops at TP=2 - measured per-layer ops on one GPU)
  - (roofcalc's per-layer host ops at TP=2 - on one GPU, without hf_tp_layer_ops)

what the plan's hooks and its collectives called from Python cost the host beyond the kernels
roofcalc counts; the figure is the median. No GPU.

    python3 validation/expected/hf_tp_host.py
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "validation" / "expected"))

SET = ROOT / "validation" / "traces" / "h100x2" / "hf-tp-host-layers2"
DEV = ROOT / "validation" / "traces" / "h100x2" / "hf-tp-dev" / "times.json"  # the configs


def model_layer_ops(config: dict[str, Any], gpus: int) -> float:
    """roofcalc's host ops per layer of an hf 4-token prefill (the difference of 10 and 2 layers,
    over 8), less hf_tp_layer_ops where it applies."""
    from roofcalc.impl.named import load_named
    from roofcalc.opdefs import load_op
    from roofcalc.resolve import resolve_hardware
    from roofcalc.roofline import evaluate
    from named_report import params_of

    hw = resolve_hardware("h100", None, None)
    op_s = hw.expected.torch_op_floor_s.value
    ops = []
    for layers in (2, 10):
        case = {
            "config": {**config, "num_hidden_layers": layers},
            "batch": 1,
            "impl": "hf",
            "gpus": gpus,
            "phase": "prefill",
            "seq": 4,
        }
        p, preset = params_of(case)
        r = evaluate(load_op("prefill"), hw, p, preset)
        ops.append(next(t.seconds for t in r.expected_terms if t.name == "host issue") / op_s)
    own = load_named("hf").figures["hf_tp_layer_ops"].value if gpus > 1 else 0.0
    return (ops[1] - ops[0]) / 8 - own


def derive() -> dict[str, Any]:
    configs = {c["model"]: c["config"] for c in json.loads(DEV.read_text())["cases"]}
    one = {c["model"]: c["host_per_layer_ops"] for c in json.loads((SET / "tp1.json").read_text())["cases"]}
    rows = []
    for run in ("tp2.json", "tp2b.json"):
        for c in json.loads((SET / run).read_text())["cases"]:
            m = c["model"]
            model_diff = model_layer_ops(configs[m], 2) - model_layer_ops(configs[m], 1)
            rows.append(
                {
                    "run": run,
                    "model": m,
                    "measured_diff_ops": c["host_per_layer_ops"] - one[m],
                    "model_diff_ops": model_diff,
                    "excess_ops": c["host_per_layer_ops"] - one[m] - model_diff,
                }
            )
    return {"rows": rows, "hf_tp_layer_ops": statistics.median(r["excess_ops"] for r in rows)}


def main() -> int:
    d = derive()
    for r in d["rows"]:
        print(
            f"{r['run']:10s} {r['model']:12s} measured +{r['measured_diff_ops']:6.1f}  roofcalc +{r['model_diff_ops']:5.1f}"
            f"  excess {r['excess_ops']:6.1f}"
        )
    print(f"hf_tp_layer_ops = {d['hf_tp_layer_ops']:.1f} (median of {len(d['rows'])})")
    return 0


if __name__ == "__main__":
    sys.exit(main())

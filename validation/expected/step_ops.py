"""The host work of an implementation per decoder layer (hf_layer_ops, fused_layer_ops) and per
forward call outside its layers (hf_step_ops, fused_step_ops), beyond the issue of its kernels.

Per layer, in hot-loop op times: each timing of the implementation's host time per layer (a 4-token
prefill of the config at 6 layers less 2, the GPU almost idle) over the hot loop's op timed around
it, less the op times roofcalc counts per layer for issuing the layer's kernels (the figure the
file holds is added back, so that the result does not depend on it). Pooled over every such
timing in the sets named: the development sets below and the hold-outs whose prefills are in-sample
(impl-holdout11 to -19 but -14; transformers' only where timed under torch.no_grad(), as its steps
run: in PyTorch's default mode its parameters record autograd's graph, h200/host-mode1; the fused
layout's plain tensors do not care). The figures hf_layer_ops and fused_layer_ops are the pooled
medians. host-seq1's and host-decode1's 4-token layer timings are pooled too (the fourteenth
session's fit left them out by oversight; the fifteenth added them), host-seq1's first round of
its first process among them, timed with no warm-up in the process (transformers' Llama layer at
212 hot-loop ops, about twice that process's later timings; kept as measured: without its two
first timings the medians would read 19.9 for transformers and 19.3 for the fused layout). host-layers1's (the figures' first source) are not: it does not record its layouts.

Per forward call, in host-op times at
the implementation's own pace: the step at 2 layers (a 4-token prefill, the GPU almost idle, so
the host paces it) less 2 layers at the time per layer timed beside it, less what roofcalc
counts for the rest of that step (its kernels' issue and the step's last kernels). The figures
hf_step_ops (impls/hf.yaml) and fused_step_ops (impls/fused.yaml) are the medians printed here.

The step figures: development sets only, timed under torch.no_grad() as their steps run
(host-track1, host-anatomy1, and host-mode1's no_grad rounds). Each record's 2-layer step is evaluated at the pace its time per
layer gives (roofcalc.impl.host_layer), with the figure the implementation file holds added
back, so that the result does not depend on it. Writes validation/expected/h200/step-ops.json.

    python3 validation/expected/step_ops.py
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from named_report import params_of  # noqa: E402

from roofcalc.impl.host_layer import host_ops_per_layer  # noqa: E402
from roofcalc.impl.named import load_named  # noqa: E402
from roofcalc.opdefs import load_op  # noqa: E402
from roofcalc.resolve import resolve_hardware  # noqa: E402
from roofcalc.roofline import evaluate  # noqa: E402
from roofcalc.validation import with_host_op, with_impl_pace  # noqa: E402

TRACES = ROOT / "validation" / "traces" / "h200"
SETS = {
    "host-track1": ("host_track.json", None),
    "host-anatomy1": ("host_anatomy.json", None),
    "host-mode1": ("host_mode.json", "no_grad"),
}
FIGURE = {"hf": "hf_step_ops", "fused": "fused_step_ops"}
LAYER_FIGURE = {"hf": "hf_layer_ops", "fused": "fused_layer_ops"}
# hold-outs whose prefills are in-sample (named_report.SPENT) and that timed the implementation's
# host time per layer around each case (impl_bench.py --host-layers)
# (impl-holdout14 timed no layer under no_grad and ran no fused layout: it holds no such timing)
LAYER_HOLDOUTS = [f"impl-holdout{i}" for i in range(11, 20) if i != 14]
# development sets that timed the implementation's host time per layer (a 4-token prefill, under
# torch.no_grad()) beside other things, read for the per-layer figures only
LAYER_SETS = {"host-seq1": "host_seq.json", "host-decode1": "host_decode.json"}
OUT = ROOT / "validation" / "expected" / "h200" / "step-ops.json"


def records() -> Any:
    for set_name, (fname, mode) in SETS.items():
        for f in sorted((TRACES / set_name).glob(f"*/{fname}")):
            for rec in json.loads(f.read_text())["cases"]:
                if mode is None or rec.get("mode") == mode:
                    yield set_name, rec


def development_sets() -> list[str]:
    """The development sets as the document names them (with the rounds a set is read for)."""
    return [f"validation/traces/h200/{k}" + (f" ({m} rounds)" if m else "") for k, (_, m) in SETS.items()]


def layer_records() -> Any:
    """(set, impl, config, layer s, hot-loop op s) for every timing of an implementation's host time
    per layer, with the hot loop's op timed around it."""
    for set_name, rec in records():
        hot = (rec["hot_op_before_s"] + rec["hot_op_after_s"]) / 2
        for which in ("layer_before", "layer_after"):
            yield set_name, rec["impl"], rec["config"], rec[which]["s"], hot
    for set_name, fname in LAYER_SETS.items():
        for f in sorted((TRACES / set_name).glob(f"*/{fname}")):
            for rec in json.loads(f.read_text())["cases"]:
                hot = (rec["hot_op_before_s"] + rec["hot_op_after_s"]) / 2
                impl = rec.get("impl", "hf")  # host_decode.py times transformers only
                if fname == "host_seq.json":  # the layer at 4, 32 and 128 tokens: its 4-token prefill
                    timings = [rec["layer_s"]["4"], rec["layer_after_s"]["4"]]
                else:
                    timings = [rec["prefill_layer_before"]["s"], rec["prefill_layer_after"]["s"]]
                for layer_s in timings:
                    yield set_name, impl, rec["config"], layer_s, hot
    for set_name in LAYER_HOLDOUTS:
        for case in json.loads((TRACES / set_name / "times.json").read_text())["cases"]:
            layer, hot = case.get("host_layer_s"), case.get("host_op_s")
            if case.get("phase") != "prefill" or not isinstance(layer, dict) or not isinstance(hot, dict):
                continue
            if case["impl"] == "hf" and layer.get("autograd") != "no_grad":
                continue
            op_s = (hot["before"] + hot["after"]) / 2
            for which in ("before", "after"):
                yield set_name, case["impl"], case["config"], layer[which], op_s


def summarise(found: dict[str, dict[str, list[float]]], figures: dict[str, str]) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for impl, by_set in sorted(found.items()):
        pooled = [v for vals in by_set.values() for v in vals]
        q = statistics.quantiles(pooled, n=4)
        summary[impl] = {
            "figure": figures[impl],
            "median": round(statistics.median(pooled), 1),
            "quartiles": [round(q[0], 1), round(q[2], 1)],
            "timings": len(pooled),
            "by_set": {k: {"median": round(statistics.median(v), 1), "timings": len(v)} for k, v in by_set.items()},
        }
    return summary


def derive_layers() -> dict[str, Any]:
    """The per-layer figures: each timing in hot-loop op times less what roofcalc counts per layer
    for the layer's kernels (the count with the file's figure, less that figure)."""
    hw = resolve_hardware("h200", None, None)
    op = load_op("prefill")
    held = {impl: float(load_named(impl).figures[name].value) for impl, name in LAYER_FIGURE.items()}
    counted: dict[tuple[str, str], float] = {}
    found: dict[str, dict[str, list[float]]] = {}
    for set_name, impl, config, layer_s, hot in layer_records():
        key = (impl, json.dumps(config, sort_keys=True))
        if key not in counted:
            p, preset = params_of({"config": config, "impl": impl, "phase": "prefill", "batch": 1, "seq": 4})
            n = host_ops_per_layer(op, hw, p, preset)
            if not n:
                raise SystemExit(f"{set_name} {impl}: no host-op count per layer")
            counted[key] = n - held[impl]
        if not 0 < layer_s < 1 or not 0 < hot < 1:
            raise SystemExit(f"{set_name} {impl}: a layer of {layer_s!r} s at a hot-loop op of {hot!r} s")
        found.setdefault(impl, {}).setdefault(set_name, []).append(layer_s / hot - counted[key])
    return {
        "sets": development_sets()
        + [f"validation/traces/h200/{k} (4-token layer timings)" for k in LAYER_SETS]
        + [f"validation/traces/h200/{k} (prefill)" for k in LAYER_HOLDOUTS],
        "summary": summarise(found, LAYER_FIGURE),
    }


def derive() -> dict[str, Any]:
    """The document step_ops.py writes: the figures' medians, per set and pooled."""
    hw = resolve_hardware("h200", None, None)
    op = load_op("prefill")
    held = {
        impl: float(load_named(impl).figures[name].value) if name in load_named(impl).figures else 0.0
        for impl, name in FIGURE.items()
    }
    found: dict[str, dict[str, list[float]]] = {}
    for set_name, rec in records():
        hot = (rec["hot_op_before_s"] + rec["hot_op_after_s"]) / 2
        for which in ("layer_before", "layer_after"):
            timing = rec[which]
            s, t2 = timing["s"], statistics.median(timing["t2_s"])
            p, preset = params_of(
                {"config": rec["config"], "impl": rec["impl"], "phase": "prefill", "batch": 1, "seq": 4}
            )
            p2 = dict(p, layers=2)
            n = host_ops_per_layer(op, hw, p2, preset)
            if not n or not 0 < s < 1:
                raise SystemExit(f"{set_name} {rec['model']} {rec['impl']}: no host pace from a layer of {s!r} s")
            pace = s / n
            r = evaluate(op, with_impl_pace(with_host_op(hw, hot, "hot loop"), pace, "per layer"), p2, preset)
            if r.expected_limiter != "host":
                raise SystemExit(f"{set_name} {rec['model']} {rec['impl']}: the 2-layer step is not host-paced here")
            ops = (t2 - r.expected_s) / pace + held[rec["impl"]]
            found.setdefault(rec["impl"], {}).setdefault(set_name, []).append(ops)
    return {
        "schema": "roofcalc-step-ops-1",
        "command": "python3 validation/expected/step_ops.py",
        "role": "development: the sets the step figures are fitted to (the per-layer figures' sets, under layer, add spent hold-outs)",
        "sets": development_sets(),
        "summary": summarise(found, FIGURE),
        "layer": derive_layers(),
    }


def main() -> int:
    doc = derive()
    for impl, v in doc["summary"].items():
        print(impl, v)
    for impl, v in doc["layer"]["summary"].items():
        print(impl, v)
    OUT.write_text(json.dumps(doc, indent=1) + "\n")
    print(OUT.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())

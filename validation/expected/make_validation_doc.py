#!/usr/bin/env python3
"""Write docs/validation.md from the committed accuracy reports beside this file
(*/report-*-registry.json and */report-*-calibrated.json) and the totals of llm_totals.py.

No figure in that page is typed by hand: change the model, rerun make_reports.sh, then this.

    python3 validation/expected/make_validation_doc.py           # writes docs/validation.md
    python3 validation/expected/make_validation_doc.py --check   # exit 1 if the committed page differs

tests/test_docs.py checks that the committed page is what this script writes.
"""

from __future__ import annotations

import importlib.util
import json
import math
import re
import statistics
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
OUT = ROOT / "docs" / "validation.md"
FIGURES = ("registry", "calibrated")
HOLDOUT_MARKS = ("holdout", "rand", "wide")
# the hold-outs that no change has used yet, as validation/HOLDOUT.md lists them (its table);
# every other set is in-sample, the earlier hold-outs included
TRACE_SETS = (  # each report says its role (validation/expected/impl_report.py HOLDOUTS, SPENT)
    "h200/hf1",
    "h200/ref1",
    "h200/holdout1",
    "h200/holdout2",
    "h200/impl-dev1",
    "h100x2/hf-tp-dev",
    "h100/impl-trace5",
    "h100/impl-trace6",
)


def _script(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, HERE / f"{name}.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


FRESH_HOLDOUTS = _script("make_bands").FRESH_HOLDOUTS  # validation/HOLDOUT.md's fresh sets: one list


def llm_totals() -> ModuleType:
    return _script("llm_totals")


def reports() -> list[dict[str, Any]]:
    """Every registry and calibrated report, with its path and figures, sorted by path."""
    out = []
    for figures in FIGURES:
        for path in sorted(HERE.glob(f"**/report-*-{figures}.json")):
            rep = json.loads(path.read_text())
            rep["_path"] = path.relative_to(HERE).as_posix()
            rep["_figures"] = figures
            out.append(rep)
    return sorted(out, key=lambda r: natural(r["_path"]))


def is_holdout(rep: dict[str, Any]) -> bool:
    """A fresh hold-out (validation/HOLDOUT.md): drawn as one and not used by any change since."""
    return str(rep["source"]) in FRESH_HOLDOUTS


def was_holdout(rep: dict[str, Any]) -> bool:
    """Drawn as a hold-out (its file's name says so), whether or not a change has used it since."""
    name = Path(rep["source"]).name
    return any(mark in name for mark in HOLDOUT_MARKS)


def card(rep: dict[str, Any]) -> str:
    """The card the timings ran on (the registry part; a calibration is named after its part)."""
    return str(rep["hardware"]).removesuffix("-measured").upper()


def natural(text: str) -> list[Any]:
    """Sort key that puts rand2 before rand10."""
    return [int(t) if t.isdigit() else t for t in re.split(r"(\d+)", text)]


def worst_key(case: dict[str, Any]) -> tuple[float, str]:
    return (-abs(math.log(case["ratio"])), case["label"])


def stats(cases: list[dict[str, Any]]) -> tuple[str, str, str, str]:
    ratios = [c["ratio"] for c in cases]
    inside = sum(c["band"][0] <= c["ratio"] <= c["band"][1] for c in cases)
    worst = min(cases, key=worst_key)
    return (
        f"{len(cases):,}",
        f"{statistics.median(ratios):.3f}",
        f"{inside:,} ({100 * inside / len(cases):.1f}%)",
        f"{worst['ratio']:.2f} `{worst['label']}`",
    )


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def grouped(reps: list[dict[str, Any]], key: Any) -> dict[tuple[str, ...], list[dict[str, Any]]]:
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for rep in reps:
        for c in rep["cases"]:
            if isinstance(c.get("ratio"), (int, float)) and c["ratio"] > 0:
                groups.setdefault(key(rep, c), []).append(c)
    return dict(sorted(groups.items()))


def ops_key(rep: dict[str, Any], c: dict[str, Any]) -> tuple[str, ...]:
    return (card(rep), c["op"])


def llm_key(rep: dict[str, Any], c: dict[str, Any]) -> tuple[str, ...]:
    p = c["params"]
    gpus = "1 GPU" if p["gpus"] == 1 else f"TP={p['gpus']}"
    return (card(rep), gpus, c["op"], p["engine"], "graphs" if p["cuda_graphs"] else "no graphs")


def section(reps: list[dict[str, Any]], kind: str, figures: str) -> list[str]:
    lines: list[str] = []
    sel = [r for r in reps if r["kind"] == kind and r["_figures"] == figures]
    for label, holdout in (("Fresh hold-out sets", True), ("In-sample sets (spent hold-outs included)", False)):
        part = [r for r in sel if is_holdout(r) == holdout]
        lines += ["", f"#### {label}", ""]
        if not part:
            lines.append("None.")
            continue
        if kind == "ops":
            header = ["card", "op"]
            groups = grouped(part, ops_key)
        else:
            header = ["card", "GPUs", "step", "engine", "CUDA graphs"]
            groups = grouped(part, llm_key)
        header += ["cases", "median", "within band", "worst (furthest from 1)"]
        lines.append(f"{len(part)} report{'' if len(part) == 1 else 's'}.")
        lines.append("")
        lines += table(header, [[*k, *stats(v)] for k, v in groups.items()])
    return lines


# The two-number baseline an outside audit compared the model with: the bound times 1.28 plus
# 2.56 us per kernel the op file declares (figures quoted from that audit, not fitted here)
BASELINE_FACTOR, BASELINE_PER_KERNEL_S = 1.28, 2.56e-6


def ablation_section() -> list[str]:
    """Each mechanism's share of the model's accuracy on the fresh op hold-outs
    (validation/expected/ablation.json, written by ablation.py)."""
    doc = json.loads((HERE / "ablation.json").read_text())
    ops = sorted(doc["cases_per_op"])
    rows = []
    order = ["model", *sorted(k for k in doc["summary"] if k not in ("model", "baseline")), "baseline"]
    for label in order:
        s = doc["summary"][label]
        rows.append(
            [
                label,
                f"{s['within_band']:.0%}",
                str(s["outside_0.5_2"]),
                *(f"{s['per_op'][op]:.0%}" for op in ops),
            ]
        )
    return [
        "## Ablation: each mechanism on the fresh hold-outs",
        "",
        f"The {doc['cases']:,} cases of the fresh op hold-outs ({', '.join(f'`{x}`' for x in doc['sets'])}),",
        "evaluated by the model whole, by the model with one mechanism replaced by the plain roofline it",
        "refines (`python3 validation/expected/ablation.py`; docs/model.md names the mechanisms), and by",
        "the two-number baseline. Share within [0.8, 1.25] of measured / expected, all ops and per op",
        f"({', '.join(f'{op} {n}' for op, n in doc['cases_per_op'].items())} cases):",
        "",
        *table(["variant", "within", "outside [0.5, 2]", *ops], rows),
    ]


def baseline_section(reps: list[dict[str, Any]]) -> list[str]:
    """The fresh op hold-outs: the model against the two-number baseline, by op."""
    import roofcalc

    rows = []
    for rep in [r for r in reps if is_holdout(r) and r["_figures"] == "registry" and r["kind"] == "ops"]:
        by_op: dict[str, list[tuple[float, float]]] = {}
        for c in rep["cases"]:
            if not isinstance(c.get("ratio"), (int, float)):
                continue
            r = roofcalc.analyze(c["op"], rep["hardware"], **c["params"])
            base = c["bound_s"] * BASELINE_FACTOR + BASELINE_PER_KERNEL_S * r.launches
            by_op.setdefault(c["op"], []).append((c["ratio"], c["measured_s"] / base))
        for op, pairs in sorted(by_op.items()):
            lo, hi = 0.8, 1.25
            model = sum(lo <= m <= hi for m, _ in pairs)
            base = sum(lo <= b <= hi for _, b in pairs)
            rows.append(
                [
                    f"`{rep['source']}`",
                    op,
                    str(len(pairs)),
                    f"{model} ({100 * model / len(pairs):.0f}%)",
                    f"{base} ({100 * base / len(pairs):.0f}%)",
                ]
            )
    return [
        "## The model against a two-number baseline (fresh hold-outs)",
        "",
        f"The baseline: the bound x {BASELINE_FACTOR} + {BASELINE_PER_KERNEL_S * 1e6:.2f} us per kernel the op file",
        "declares (an outside audit's figures). Cases within [0.8, 1.25] of their measured time:",
        "",
        *table(["set", "op", "cases", "model", "baseline"], rows),
    ]


def traced_section() -> list[str]:
    """Traced implementations predicted at other shapes (validation/expected/impl_report.py)."""
    lines = [
        "## Traced implementations at other shapes",
        "",
        "Each traced step of a set becomes an implementation file (`roofcalc trace --save-impl`), which",
        "is predicted at the set's other shapes of the same model, implementation and phase",
        "(`python3 validation/expected/impl_report.py SET`). `step time` says whether the traced step's",
        "time without the profiler was given (`--step-time`); `graph replay` rows are steps replayed",
        "from a CUDA graph (`--cuda-graphs`, `impl_report.py SET --graphs`), where no host time applies.",
        "Within band: [0.85, 1.2].",
        "",
    ]
    rows = []
    for card_set in TRACE_SETS:
        card_dir, name = card_set.split("/")
        for suffix, given in (("", "given"), ("-nostep", "not given"), ("-graphs", "graph replay")):
            path = HERE / card_dir / f"impl-{name}{suffix}.json"
            if not path.exists():
                continue
            rep = json.loads(path.read_text())
            s, status = rep["summary"], rep.get("role", "development")
            rows.append(
                [
                    f"`{card_set}`",
                    status,
                    given,
                    str(s["predictions"]),
                    f"{s['in_band']} of {s['predictions']}",
                    f"{s['median_ratio']:.3f}",
                    f"{s['min_ratio']:.2f}-{s['max_ratio']:.2f}",
                ]
            )
    return lines + table(["set", "kind", "step time", "predictions", "within band", "median", "range"], rows)


NAMED_SETS = (
    "h200/impl-dev1",
    "h200/impl-dev2",
    "h200/impl-holdout1",
    "h200/impl-holdout2",
    "h200/impl-holdout3",
    "h100/impl-holdout4",
    "h100/impl-holdout5",
    "h100/impl-dev3-phi3",
    "h100/impl-holdout7",
    "h100/impl-holdout8",
    "h100/impl-holdout9",
    "h200/impl-holdout10",
    "h200/impl-holdout11",
    "h200/impl-holdout12",
    "h200/impl-holdout13",
    "h200/impl-holdout14",
    "h200/impl-holdout15",
    "h200/impl-holdout16",
    "h200/impl-holdout17",
    "h200/impl-holdout18",
    "h200/impl-holdout19",
    "h200/impl-holdout20",
    "h200/impl-holdout21",
    "h200/impl-holdout22",
    "h200/impl-holdout23",
    "h200/impl-holdout24",
    "h100/impl-dev4-qwen3",
    "h100x2/impl-tp1",
    "h100x2/hf-tp-dev",
    "h100x2/hf-tp-holdout1",
    "h100x2/hf-tp-holdout2",
    "h100x4/hf-tp4-holdout1",
    "h200x2/hf-tp-holdout3",
    "h200x2/fused-tp2",
    "h200x2/hf-tp-holdout4",
    "h200x2/hf-tp-holdout5",
    "h200x2/fused-tp3",
)


def profiler_slowdowns() -> list[float]:
    """After / before a profiler session, host-paced prefills of the named reports' profiler checks."""
    out = []
    for set_name in NAMED_SETS:
        card_dir, name = set_name.split("/")
        path = HERE / card_dir / f"named-{name}.json"
        if path.exists():
            for chk in json.loads(path.read_text()).get("profiler_check") or []:
                if chk:
                    out.append(chk["after_median_s"] / chk["before_median_s"])
    return out


def host_pool_lines() -> list[str]:
    """Where the H200 registry's host figure comes from, and which registry rows are in-sample for it."""
    pool = json.loads((HERE / "h200" / "host-pool.json").read_text())
    sets = pool["sets"]
    return [
        f"The H200 registry's host op time (`torch_op_floor_s`, {pool['torch_op_floor_s'] * 1e6:.2f} us) is the median of the",
        f"{pool['records']} hot loops timed just before and after the steps of {sets[0]['set']} to {sets[-1]['set']}",
        f"({pool['slow_fraction']:.0%} of them in the host's slow state; `validation/expected/host_pool.py`), chosen",
        "among other pools by those sets' registry rows: their registry columns are in-sample for it.",
    ]


def named_section() -> list[str]:
    """Named implementations (impls/*.yaml; validation/expected/named_report.py), hold-out and
    in-sample apart, each step kind against the issue's target."""
    slow = profiler_slowdowns()
    lines = [
        "## Named implementations (`--impl`)",
        "",
        "Steps of Hugging Face transformers (`hf`: StaticCache decode replayed from a CUDA graph, and",
        "prefill; `hf-dynamic`: DynamicCache decode from Python) and of a fused serving layout",
        "(`fused`, `validation/bench/fused_model.py`) on random-weight models from configs, timed by",
        '`validation/bench/impl_bench.py` and, under tensor parallelism (transformers\' `tp_plan="auto"`),',
        "`validation/bench/hf_tp.py` (`python3 validation/expected/named_report.py SET`). Ratios use",
        "the implementation's own host time per layer timed just before and after each prefill where",
        "the set has it (`impl_bench.py --host-layers`), else the host's op time timed around each step",
        "issued from Python (`host around each case`), else the one timed in the same process (`host of",
        "the run`), else the registry's. Targets: prefill [0.8, 1.25], decode from a CUDA graph",
        "[0.85, 1.2], decode from Python [0.67, 1.5]. A set's role is per kind of step: a hold-out",
        "whose host-paced steps informed a change counts those in-sample since (each report's",
        "`note`). The host-paced steps of impl-dev1 and impl-dev2 ran after a profiler session in",
        f"their process, which slows the host (the {len(slow)} profiler checks of impl-holdout2 and -holdout3:",
        f"a prefill {min(slow):.2f}-{max(slow):.2f}x slower after one); they are shown but left out of the bands.",
        "Until impl-holdout15, `impl_bench.py` timed transformers' layer in PyTorch's default autograd mode",
        "beside steps run under no_grad (its parameters then record autograd's graph: \"The host's pace",
        'of a host-paced prefill" below); those rows read faster than the model and stay out of the',
        "`/host-layer` bands, and their sets' prefills are in-sample since. Each report's summary also",
        "counts apart the cases whose two timings of the layer agreed within",
        f"{_script('named_report').STEADY_LAYER}x (`steady_layer`): a description of how far the host moved, not a filter.",
        *host_pool_lines(),
        "",
    ]
    rows = []
    for role in ("hold-out", "in-sample"):
        for set_name in NAMED_SETS:
            card_dir, name = set_name.split("/")
            path = HERE / card_dir / f"named-{name}.json"
            if not path.exists():
                continue
            rep = json.loads(path.read_text())
            for key, v in rep["summary"].items():
                kind = key.split("/")[1]
                if rep["role"][kind] != role:
                    continue
                rows.append(
                    [
                        role,
                        f"`{set_name}`",
                        key,
                        v["figures"],
                        str(v["cases"]),
                        f"{v['within_target']} of {v['cases']}",
                        f"{v['median']:.3f}",
                        f"{v['min']:.2f}-{v['max']:.2f}",
                    ]
                )
    both = []
    for set_name in NAMED_SETS:
        card_dir, name = set_name.split("/")
        path = HERE / card_dir / f"named-{name}.json"
        if path.exists():
            for key, v in json.loads(path.read_text())["summary"].items():
                if "within_target_hot_loop" in v:
                    both.append(
                        f"- `{set_name}` {key}: {v['within_target']} of {v['cases']} within target with the "
                        f"implementation's host time per layer; {v['within_target_hot_loop']} of {v['cases']} "
                        "with the hot loop timed around the same cases."
                    )
    out = lines + table(
        ["role", "set", "implementation/step", "figures", "cases", "within target", "median", "range"], rows
    )
    if both:
        out += ["", "Where a set timed both figures of the host around its cases:", "", *both]
    return out


HOST_TRACK_SETS = ("h200/host-track1",)
# the host time per layer timed at several prompt lengths (host_seq_report.py)
SEQ_SETS = ("h200/host-seq1",)
# where a host-paced prefill's time goes (host_anatomy_report.py) and the autograd modes
# (host_mode_report.py)
ANATOMY_SETS = ("h200/host-anatomy1",)
MODE_SETS = ("h200/host-mode1",)
# which loop of the host tracks an implementation's time per layer (host_footprint_report.py)
FOOTPRINT_SETS = ("h200/host-footprint1", "h200/host-footprint2")
LOOP_NAMES = {"one_op": "one op (roofcalc's unit)", "many_ops": "40 distinct ops", "triton": "a Triton launch"}
MODE_NAMES = {"grad": "PyTorch's default mode", "no_grad": "no_grad", "inference_mode": "inference_mode"}


def _host_figure(label: str) -> str:
    """What a host report's summary key measured, in words."""
    fixed = {
        "ratio_hot_loop": "hot loop of one op",
        "ratio_host_layer": "the implementation's own host time per layer",
        "prompt_over_full4": "no model: the prompt over the same config's 4-token step timed just before it",
        "full4_over_linear": "no model: the 4-token step at full depth over 2 layers plus the rest at the time per layer",
        "no_grad/ratio_layer_timed_in_grad": "its own host time per layer timed in PyTorch's default mode, the step under no_grad",
    }
    if label in fixed:
        return fixed[label]
    if label.startswith("ratio_layer_at_"):
        return f"its own host time per layer, timed at {label.rsplit('_', 1)[1]} tokens"
    mode, _ = label.split("/", 1)
    return f"its own host time per layer, layer and step in {MODE_NAMES[mode]}"


def host_track_section() -> list[str]:
    """Host-paced prefills against figures of the host timed around them (host_track_report.py,
    host_seq_report.py, host_anatomy_report.py, host_mode_report.py)."""
    rows = []
    costs = []
    for set_name in (*HOST_TRACK_SETS, *SEQ_SETS, *ANATOMY_SETS, *MODE_SETS):
        path = HERE / f"{set_name}.json"
        if not path.exists():
            continue
        for key, v in json.loads(path.read_text())["summary"].items():
            impl, label = key.split("/", 1)
            if label.endswith("_vs_no_grad_median"):
                mode, what = label.split("/")
                thing = "its time per layer" if what.startswith("layer") else "its prefills"
                costs.append(f"- `{set_name}` {impl}: {thing} in {MODE_NAMES[mode]}: {v:.3f}x of no_grad's (median)")
                continue
            if label == "gpu_tail_median_s":
                costs.append(
                    f"- `{set_name}` {impl}: the GPU ended {v * 1e6:.0f} us after the step's Python call returned (median)"
                )
                continue
            rows.append(
                [
                    f"`{set_name}`",
                    impl,
                    _host_figure(label),
                    str(v["cases"]),
                    f"{v['within_target']} of {v['cases']}",
                    f"{v['median']:.3f}",
                    f"{v['min']:.2f}-{v['max']:.2f}",
                ]
            )
    lines = [
        "## The host's pace of a host-paced prefill",
        "",
        "Short prompts issued from Python take their host's time. `validation/bench/host_track.py` timed",
        "two figures of the host around such prefills in the same process: the hot loop of one PyTorch",
        "op, the card's unit of host work, and the implementation's own host time per layer (the config",
        "at 2 and 6 layers, a 4-token prefill), which `roofcalc.impl.host_layer` turns into the pace of",
        "the implementation's ops (`--host-layer`); `validation/bench/host_seq.py` timed the latter at 4,",
        "32 and 128 tokens; `validation/bench/host_anatomy.py` timed, beside them, the config at full",
        "depth at 4 tokens and each prompt's issue and total; `validation/bench/host_mode.py` timed the",
        "layer and the prompts in each autograd mode. All development data: the host work of a forward",
        "call outside its layers (`hf_step_ops`, `fused_step_ops`) is fitted to host-track1,",
        "host-anatomy1 and host-mode1's no_grad rounds (`python3 validation/expected/step_ops.py`), and",
        "the per-layer figures (`hf_layer_ops`, `fused_layer_ops`) to their time per layer with",
        "host-seq1's and host-decode1's 4-token layer timings and the spent hold-outs' (impl-holdout11",
        "to -19). The",
        "rows marked 'no model' use no roofcalc figure: the prompt over the same config's 4-token step",
        "at full depth timed just before it (nearly the same host work, timed twice within a second:",
        "what any figure timed beside a step can do at best), and that step over the 2-layer step plus",
        "the other layers at the time per layer (how well the layers add up). Within [0.8, 1.25]",
        "(`python3 validation/expected/host_track_report.py",
        "SET`, `host_seq_report.py SET`, `host_anatomy_report.py SET`, `host_mode_report.py SET`):",
        "",
    ]
    out = lines + table(["set", "implementation", "host figure", "prefills", "within", "median", "range"], rows)
    if costs:
        out += ["", *costs]
    return out + footprint_lines() + fused_pace_lines() + state_lines() + epochs_lines()


# the H200 hold-outs that timed the fused layout's own host time per layer around its prefills
FUSED_PACE_SETS = tuple(f"h200/impl-holdout{i}" for i in range(11, 22))


def fused_pace_lines() -> list[str]:
    """The fused layout's own time per layer in hot-loop op times, and its host-paced prefills with
    the hot loop alone, over the hold-outs that timed both around each prompt."""
    ops, ratios, names = [], [], []
    for set_name in FUSED_PACE_SETS:
        card, name = set_name.split("/")
        times, report = ROOT / "validation" / "traces" / set_name / "times.json", HERE / card / f"named-{name}.json"
        if not times.exists() or not report.exists():
            continue
        found = False
        for c in json.loads(times.read_text())["cases"]:
            layer, hot = c.get("host_layer_s"), c.get("host_op_s")
            if c.get("impl") == "fused" and c.get("phase") == "prefill" and isinstance(layer, dict):
                ops.append((layer["before"] + layer["after"]) / (hot["before"] + hot["after"]))
                found = True
        for row in json.loads(report.read_text())["cases"]:
            if row["impl"] == "fused" and row["kind"] == "prefill" and row["limiter"] == "host":
                ratios.append(row["ratio_hot_loop"])
        if found:
            names.append(name)
    if not ops or not ratios:
        return []
    return [
        "",
        f"The fused layout's own host time per layer, over {names[0]} to -{names[-1].removeprefix('impl-holdout')} "
        f"(H200, {len(ops)} prompts, each prompt's two timings averaged), was {min(ops):.0f}-{max(ops):.0f} "
        f"hot-loop op times (median {statistics.median(ops):.1f}); with the hot loop alone, its {len(ratios)} "
        f"host-paced prompts there read {min(ratios):.2f}-{max(ratios):.2f} of the model (median "
        f"{statistics.median(ratios):.3f}).",
    ]


STATE_SETS = ("h200/host-state1", "h200/host-state2")


def state_lines() -> list[str]:
    """The host's two speeds: plain Python, the launch path and the hot loop in the slow state over
    the fast one (host_state_report.py)."""
    out: list[str] = []
    for set_name in STATE_SETS:
        path = HERE / f"{set_name}.json"
        if not path.exists():
            continue
        rep = json.loads(path.read_text())
        r, procs = rep["slow_over_fast"], rep["processes"]
        pinned = [name for name in procs if name.startswith("pin")]
        out += [
            "",
            f"The host's two speeds (`{set_name}`, development;",
            f"`python3 validation/expected/host_state_report.py {set_name}`): in {len(procs)} processes run "
            f"{'at the same time (their hot loops sharing one GPU)' if 'together' in rep else 'one after another'} "
            f"on one lender machine ({len(pinned)} of them pinned to one CPU each; CPUs "
            f"{', '.join(str(c) for c in sorted({c for p in procs.values() for c in p['cpus']}))} seen), "
            f"{rep['slow_share']:.0%} of the rounds ran in a slow state of the CPU the process ran on, not of its "
            f"launch path alone: plain Python, with no PyTorch in it, took {r['py_s']:.2f}x as long there as in the fast "
            f"state, the launch path alone {r['issue_s']:.2f}x and the probe's hot loop of one op {r['op_s']:.2f}x "
            "(medians over the processes). The guest cannot see the cause (its clock reads a fixed figure). An "
            "implementation's Python counted in hot-loop op times therefore reads more ops in the slow state, and a "
            "figure taken in one state paces the other wrongly.",
        ]
        if "together" in rep:
            pairs = rep["together"].values()
            out[-1] += (
                f" Run at the same time, each pair of these CPUs was in the same state in "
                f"{min(v['same_state'] for v in pairs):.0%}-{max(v['same_state'] for v in pairs):.0%} of their rounds, "
                f"against {min(v['by_chance'] for v in pairs):.0%}-{max(v['by_chance'] for v in pairs):.0%} by chance: "
                "each CPU switches on its own, as other work on its physical core would make it, not with a clock or "
                "power state of the whole machine."
            )
    return out


EPOCHS_SETS = tuple(f"h200/host-epochs{i}" for i in range(1, 6))


def epochs_lines() -> list[str]:
    """Host-paced steps' slow stretches against the GPU's clocks, the host's loops and steal time
    (host_epochs_report.py)."""
    reps = [json.loads(p.read_text()) for p in (HERE / f"{s}.json" for s in EPOCHS_SETS) if p.exists()]
    if not reps:
        return []
    rows = []
    for rep in reps:
        w = rep.get("slow_and_fast_windows")
        if w is None:  # no window ran slow (its slow stretches were shorter than a window)
            continue
        cv = rep["issue_per_loop_cv"]
        rows.append(
            [
                f"`{rep['set']}`",
                rep["case"],
                f"{rep['issue_over_gpu_median']:.0%}, {rep['gpu_after_issue_median_s'] * 1e3:.2f} ms, "
                f"{rep['steps_gpu_after_issue_over_0_3ms']}",
                f"{rep['slow_windows']} of {rep['windows']}",
                f"{w['gpu_s']['slow'] * 1e3:.1f} / {w['gpu_s']['fast'] * 1e3:.1f} ms",
                f"{w['issue_s']['slow_over_fast']:.2f}",
                f"{w['plain_python_s']['slow_over_fast']:.2f}" if "plain_python_s" in w else "-",
                f"{w['hot_loop_op_s']['slow_over_fast']:.2f}",
                " / ".join(f"{cv[k]:.3f}" if k in cv else "-" for k in ("issue_s", "hot_loop_op_s", "plain_python_s")),
            ]
        )
    clocks = sorted({c for r in reps for c in r["sm_and_memory_clocks_mhz"]})
    throttle = sorted({t for r in reps for t in r["throttle_reasons"]})
    steal, ticks = sum(r["steal_ticks"] for r in reps), sum(r["cpu_ticks"] for r in reps)
    return [
        "",
        "Whose are host-paced steps' slow stretches (`validation/bench/host_epochs.py`, development;",
        "`python3 validation/expected/host_epochs_report.py SET`): one synchronized step after another",
        "on an H200, the reference implementation, each step's issue and GPU time, and every 10 steps the",
        "probe's hot loop of one op and a fixed piece of plain Python (`host-epochs1`: the hot loop alone,",
        "every 25 steps). The host's issue of a step against the GPU's time for it (median), the GPU's time",
        "after the last kernel was issued (a GPU setting the pace would have a queue of kernels left) and",
        "the steps that left it busy over 0.3 ms after the issue (the GPU's own work paced those); the",
        "windows of steps that ran slow (Otsu's split of the run's step times), their GPU time against the",
        "fast ones', and each loop's slow over fast; then the coefficient of variation over the windows of",
        "the issue itself and of the issue over each loop sampled at the window's start (issue / hot loop",
        "/ plain Python: how much of the issue's spread each loop takes out). A set whose slow stretches",
        "were all shorter than a window has no row (`host-epochs1`).",
        "",
        *table(
            [
                "set",
                "step",
                "issue / GPU, after, steps > 0.3 ms",
                "slow windows",
                "GPU slow / fast",
                "issue",
                "plain Python",
                "hot loop",
                "CV issue / hot / py",
            ],
            rows,
        ),
        "",
        f"SM and memory clocks read {', '.join(clocks)} MHz throughout, throttle reasons {', '.join(throttle)},",
        f"and the vCPUs lost {steal} of {ticks:,} ticks to steal: the slow stretches are the host CPU's, and",
        "real steps slow about as much as plain Python, more than the hot loop the model counts in; a single",
        "short sample of either loop takes out a quarter to a half of the spread of a window's issue,",
        "neither more than the other.",
    ]


def footprint_lines() -> list[str]:
    """Each implementation's time per layer in units of three host loops timed beside it, over the
    rounds of several processes (host_footprint_report.py)."""
    rows, jumps, states, cut = [], [], [], None
    for set_name in FOOTPRINT_SETS:
        path = HERE / f"{set_name}.json"
        if not path.exists():
            continue
        rep = json.loads(path.read_text())
        cut = rep["jump"]
        for key, v in rep["loops"].items():
            impl, loop = key.split("/")
            rows.append(
                [
                    f"`{set_name}`",
                    impl,
                    LOOP_NAMES[loop],
                    f"{v['median']:.1f}",
                    f"{v['min']:.1f}-{v['max']:.1f}",
                    f"{v['cv']:.3f}",
                    f"{v['correlation']:.2f}",
                ]
            )
        for impl, v in rep.get("by_state", {}).items():
            states.append(
                f"- `{set_name}` {impl}: {v['median']:.2f} (processes {v['min']:.2f}-{v['max']:.2f}, "
                f"{len(v['processes'])} with rounds in both states)"
            )
        for j in rep["jumps"]:
            jumps.append(
                f"- `{set_name}` {j['process']} round {j['round']}: {j['impl']}'s layer {j['layer_over_usual']:.2f}x its "
                f"process's other rounds, the other implementation's {j['other_layer_over_usual']:.2f}x, the one-op loop "
                f"{j['one_op_over_usual']:.2f}x"
            )
    if not rows:
        return []
    lines = [
        "",
        "Which loop of the host tracks an implementation's own time per layer from one round and process",
        "to the next (`validation/bench/host_footprint.py`, development; `python3",
        "validation/expected/host_footprint_report.py SET`): the time per layer in each loop's units, and",
        "the correlation of the two times over every round.",
        "",
    ]
    out = lines + table(["set", "implementation", "loop", "median", "range", "cv", "correlation"], rows)
    if jumps:
        out += [
            "",
            f"Rounds where a layer's time jumped (over {cut}x its process's other rounds, in one-op units):",
            "",
            *jumps,
        ]
    if states:
        out += [
            "",
            "A layer's time in one-op units in the rounds whose one-op loop ran in the host's slow state,",
            "over the process's fast rounds (the median over processes; `by_state`):",
            "",
            *states,
        ]
    return out


CUDNN_SETS = ("h100/kernels/cudnn1/dev", "h100/kernels/cudnn1/holdout10")


def cudnn_section() -> list[str]:
    """cuDNN's SM90 flash forward against SDPA's cuDNN kernel timed alone (cudnn_report.py)."""
    rows = []
    for set_name in CUDNN_SETS:
        path = HERE / f"{set_name}-report.json"
        if not path.exists():
            continue
        rep = json.loads(path.read_text())
        s = rep["summary"]
        rows.append(
            [
                rep["role"],
                f"`{set_name}`",
                str(s["cases"]),
                f"{s['within_0.8_1.25']} of {s['cases']}",
                f"{s['within_0.9_1.1']} of {s['cases']}",
                f"{s['median']:.3f}",
                f"{s['min']:.2f}-{s['max']:.2f}",
            ]
        )
    lines = [
        "## cuDNN's SM90 flash forward, alone",
        "",
        "SDPA's cuDNN attention kernel (what transformers' prefill runs on H100 and H200) timed alone",
        "by `validation/bench/cudnn_attn.py` (profiler kernel time, median of five calls) against",
        "`roofcalc.expected.attention._cudnn_flash` (`python3 validation/expected/cudnn_report.py SET`).",
        "Its four figures were fitted on the development grid; the hold-out's 40 causal prefill",
        "shapes were drawn before the model existed (validation/HOLDOUT.md).",
        "",
    ]
    return lines + table(["role", "set", "cases", "within [0.8, 1.25]", "within [0.9, 1.1]", "median", "range"], rows)


def totals_section() -> list[str]:
    mod = llm_totals()
    lines = [
        "## LLM totals by kind of step",
        "",
        "What `python3 validation/expected/llm_totals.py` prints: every committed LLM report,",
        "hold-out or not, by the figures it was evaluated with (`registry`: the card's file;",
        "`calibrated`: the probe's calibration; `hostrate`: the host's figures timed in the same call",
        "by `validation/bench/host_rate.py`; `hostcase`: each step against its host's speed timed",
        "around it, `--host-per-case`) and kind of step. A prefill is host-paced when the model reads it",
        "so (its limiter is the host: the host's wait over a tenth of the step).",
    ]
    for kind in mod.KINDS:
        rows = []
        for key, (inside, n, lo, hi) in sorted(mod.totals(kind).items()):
            rows.append([key, f"{int(inside)} of {int(n)}", f"{lo:.2f}-{hi:.2f}"])
        lines += ["", f"### {kind}", ""]
        lines += table(["step", "within the band", "range of measured/expected"], rows)
    return lines


def sets_section(reps: list[dict[str, Any]]) -> list[str]:
    rows = []
    for r in reps:
        s = r["summary"]
        rows.append(
            [
                f"`{r['_path']}`",
                r["_figures"],
                "hold-out" if is_holdout(r) else "spent hold-out" if was_holdout(r) else "in-sample",
                r["date"][:10],
                str(s["evaluated"]),
                f"{s['median_ratio']:.3f}",
                f"{100 * s['share_in_band']:.1f}%",
                str(s["outside_outer"]),
            ]
        )
    return [
        "## Every report",
        "",
        "One row per report; `outside` counts the cases outside [0.5, 2]. The same numbers, with",
        "more columns, are in `validation/expected/summary.txt` (written by `make_reports.sh`).",
        "",
        *table(["report", "figures", "set", "date", "cases", "median", "within band", "outside"], rows),
    ]


def render() -> str:
    reps = reports()
    n_hold = sum(is_holdout(r) for r in reps if r["_figures"] == "registry")
    n_reg = sum(r["_figures"] == "registry" for r in reps)
    bound = [c["bound_ratio"] for r in reps for c in r["cases"] if isinstance(c.get("bound_ratio"), (int, float))]
    lines = [
        "# Validation: the expected time against measured timings",
        "",
        "<!-- Generated by validation/expected/make_validation_doc.py from the committed reports.",
        "     Do not edit by hand: rerun the script (tests/test_docs.py checks it). -->",
        "",
        "> **Hold-outs follow [validation/HOLDOUT.md](../validation/HOLDOUT.md).** Only the sets it",
        "> lists as fresh (drawn before the change they test, not used by any change since) are",
        "> counted as hold-out here. The earlier random and hold-out sets (file names with `rand` or",
        "> `holdout`) informed later model changes and are counted in-sample, marked `spent hold-out`",
        "> in the list of reports.",
        "",
        "## What the reports are",
        "",
        "Timings measured on real GPUs are committed under `validation/expected/<card>/`:",
        "",
        "- **ops**: single ops through PyTorch (`validation/bench/ops_bench.py`): a fixed set per card",
        "  and seeded random sets, each timed between CUDA events after an L2 flush, median of the",
        "  repetitions.",
        "- **llm**: decode and prefill steps of a Llama-shaped decoder in plain PyTorch with random",
        "  bf16 weights (`validation/bench/llm_bench.py`), eager or torch.compile, with or without",
        "  CUDA graphs, on one GPU or tensor-parallel over two.",
        "",
        "Each report is `roofcalc validate FILE --json` on one such file, evaluated with the current",
        "model against the card's registry file (`registry`) or against the probe's calibration of",
        "the machine (`calibrated`). A case's ratio is measured / expected; it is within the band",
        "when it lies in its kind's band: [0.8, 1.25] for ops and prefill, [0.85, 1.2] for decode.",
        "`tests/test_validation.py` fails when a committed report is no longer what the code",
        "computes. The bands that `roofcalc op` prints beside the expected time",
        "(`roofcalc/bands.json`, `validation/expected/make_bands.py`) come from the same registry",
        "reports.",
        "",
        "Recompute every report from the saved timings (no GPU needed), then this page:",
        "",
        "```sh",
        "bash validation/expected/make_reports.sh",
        "python3 validation/expected/make_validation_doc.py",
        "```",
        "",
        f"{n_reg} registry reports ({n_hold} of them hold-out sets by the rule above) and",
        f"{len(reps) - n_reg} calibrated reports. The reports against the host's own figures",
        "(`*-hostrate.json`, `*-hostcase.json`) are counted only in the LLM totals below.",
        "",
        f"Measured / bound over the {len(bound):,} cases of these reports: lowest {min(bound):.2f}"
        + (
            ", so no measured time fell below the bound."
            if min(bound) >= 1
            else f"; {sum(b < 1 for b in bound)} measured times fell below the bound."
        ),
        "",
        "In the tables, `median` is the median of measured / expected, `within band` the cases",
        "inside their band, and `worst` the case whose ratio is furthest from 1, with its label.",
    ]
    for kind, title in (("ops", "Single ops"), ("llm", "LLM steps")):
        lines += ["", f"## {title}"]
        for figures, what in (("registry", "registry figures"), ("calibrated", "the probe's calibration")):
            lines += ["", f"### {title}, {what}"]
            lines += section(reps, kind, figures)
    lines += ["", *baseline_section(reps)]
    lines += ["", *ablation_section()]
    lines += ["", *traced_section()]
    lines += ["", *named_section()]
    lines += ["", *cudnn_section()]
    lines += ["", *host_track_section()]
    lines += ["", *totals_section()]
    lines += ["", *sets_section(reps)]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if OUT.exists() and OUT.read_text() == text:
            return 0
        print(f"{OUT.relative_to(ROOT)} differs from what {Path(__file__).name} writes; rerun it", file=sys.stderr)
        return 1
    OUT.write_text(text)
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

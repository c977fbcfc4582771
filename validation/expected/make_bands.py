"""Write roofcalc/bands.json: the spread of measured / expected over the committed validation
reports, by kind of case, which `roofcalc op` prints beside the expected time.

A kind is the op and, for LLM steps, the implementation that ran (engine, CUDA graphs or not)
and whether it ran on one GPU or several. The band is the 5th and 95th percentile of
measured / expected over every case of that kind in the committed `*-registry.json` reports
(registry figures, not calibrations); with fewer than 20 cases it is the minimum and maximum.
Most of these cases are in-sample (the model was tuned on them): the file says so, and the
tool prints it. Run from anywhere: `python3 validation/expected/make_bands.py` (no GPU).
tests/test_summary.py checks the committed file is what this script computes.
"""

from __future__ import annotations

import json
import math
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent.parent))

from roofcalc.impl.named import load_named  # noqa: E402
from roofcalc.summary import band_kind, pace  # noqa: E402

OUT = HERE.parent.parent / "roofcalc" / "bands.json"
FEW = 20  # below this many cases the band is min..max, not percentiles
# the fresh hold-outs of validation/HOLDOUT.md (make_validation_doc.py reads this list too)
FRESH_HOLDOUTS = (
    "h100/ops-wide144.json",
    "h100/ops-wide145.json",
    "h100/ops-wide146.json",
    "h100/ops-wide147.json",
    "h100/ops-small16-rand7.json",
    "h100/ops-sdpa-rand1.json",
    "h200/ops-sdpa-rand2.json",
    "h100/llm-holdout22.json",
    "h200/host6/llm-decode.json",
    "h200/host6/llm-prefill.json",
)


def kind_of(case: dict) -> str | None:
    """The band a case counts in: the one `roofcalc op` looks up for the same op and parameters."""
    op = case.get("op")
    return band_kind(op, case.get("params") or {}) if isinstance(op, str) else None


def percentile(xs: list[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    s = sorted(xs)
    pos = (len(s) - 1) * q
    lo, hi = math.floor(pos), math.ceil(pos)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def collect(root: Path, fresh: set[str] | None = None, leave_out: str | None = None) -> dict[str, list[float]]:
    """measured / expected by kind; the kinds with a case from a fresh hold-out go into ``fresh``;
    the reports of the measurements under folder ``leave_out`` (e.g. h200/host6) left out."""
    ratios: dict[str, list[float]] = {}
    for f in sorted(root.rglob("*-registry.json")):
        report = json.loads(f.read_text())
        if leave_out and str(report.get("source", "")).startswith(leave_out + "/"):
            continue
        for case in report.get("cases", []):
            r = case.get("ratio")
            k = kind_of(case)
            if k is None or not isinstance(r, (int, float)) or not math.isfinite(r) or r <= 0:
                continue
            # a step issued from Python also under whose time paces it in the model, as the named
            # implementations' are (collect_named): the host's speed moves between processes and
            # spreads the host-paced steps far wider than those the GPU paces
            paced = (
                [f"{k}/{pace(case['limiter'], case.get('host_exposed'))}"]
                if "/python/" in k and case.get("limiter")
                else []
            )
            for key in (k, *paced):
                ratios.setdefault(key, []).append(float(r))
                if fresh is not None and report.get("source") in FRESH_HOLDOUTS:
                    fresh.add(key)
    return ratios


def collect_traced(root: Path, roles: dict[str, set[str]], cards: dict[str, set[str]]) -> dict[str, list[float]]:
    """Traced implementations predicted at other shapes (impl_report.py): measured / predicted by
    phase, with the step time given (traced), without (traced-nostep), and replayed from a CUDA
    graph (traced-graphs); the role of each set that contributes (hold-out, development or a
    spent hold-out) into ``roles``, its cards into ``cards``."""
    ratios: dict[str, list[float]] = {}
    for f in sorted(root.rglob("impl-*.json")):
        rep = json.loads(f.read_text())
        if "rows" not in rep:
            continue
        kind = "traced-graphs" if rep.get("graphs") else "traced-nostep" if f.stem.endswith("-nostep") else "traced"
        for row in rep["rows"]:
            if not row["same_shape"]:
                k = f"{row['phase']}/{kind}"
                ratios.setdefault(k, []).append(float(row["ratio"]))
                roles.setdefault(k, set()).add(rep.get("role") or "development")
                cards.setdefault(k, set()).add(card_of(rep["set"]))
    return ratios


def card_of(set_name: str) -> str:
    """The card of a set's folder name: h100x2/... -> H100 (the count of cards stripped)."""
    return re.sub(r"x\d+$", "", set_name.split("/")[0]).upper()


# named-implementation sets whose processes ran a profiler session before their host-paced steps
# (validation/traces/h200/impl-holdout2 and -holdout3 timed a prefill before and after one, slower
# after: docs/validation.md): their graph-replayed steps count, their host-paced ones do not
PROFILED = {"h200/impl-dev1", "h200/impl-dev2"}
# implementations whose weights require grad (transformers' parameters): a host time per layer timed
# outside torch.no_grad() recorded autograd's graph that their steps, run under no_grad, did not
# (validation/traces/h200/host-mode1: 1.17x the no_grad time per layer); such rows (impl_bench.py
# before impl-holdout16) stay out of the /host-layer bands, which are for a layer timed as the step runs
RECORDS_AUTOGRAD = {"hf", "hf-dynamic"}
NAMED_OP = {"graphs": "decode", "python": "decode", "prefill": "prefill"}


def named_step(row: dict) -> tuple[str, dict]:
    """The op and parameters `roofcalc op` looks a named-implementation row's band up by
    (DynamicCache decode with cuDNN's plans cached apart)."""
    step = {
        "impl": row["impl"],
        "cuda_graphs": row["kind"] == "graphs",
        "gpus": row.get("gpus", 1),
        "cudnn_plans_cached": row.get("cudnn_plans_cached", False),
    }
    return NAMED_OP[row["kind"]], step


def named_keys(row: dict) -> tuple[str, ...]:
    """The band keys a named-implementation row counts under: its kind (named_step) and, for a
    step issued from Python, that kind under whose time paces it in the model (the host's, also
    where the host would at the slow end of the card's hosts, or the GPU's): the host's speed
    moves between processes, the GPU's far less."""
    k = band_kind(*named_step(row))
    paced = pace(row.get("limiter"), row.get("host_exposed"))
    return (k, f"{k}/{paced}") if row["kind"] != "graphs" and paced else (k,)


def collect_named(
    root: Path, fresh: set[str], cards: dict[str, set[str]], leave_out: str | None = None
) -> dict[str, list[float]]:
    """The named implementations (named_report.py): measured / expected with registry figures, by
    the band key `roofcalc op` looks up; kinds with a fresh hold-out case go into ``fresh``, the
    cards each kind was measured on into ``cards``; the set ``leave_out`` (e.g. h200/impl-holdout24)
    left out."""
    ratios: dict[str, list[float]] = {}
    for f in sorted(root.rglob("named-*.json")):
        rep = json.loads(f.read_text())
        if rep["set"] == leave_out:
            continue
        for row in rep["cases"]:
            if rep["set"] in PROFILED and row["kind"] != "graphs":
                continue
            graphs = "graphs" if row["kind"] == "graphs" else "python"
            keys = named_keys(row)
            k = keys[0]
            for key in keys:
                ratios.setdefault(key, []).append(float(row["ratio"]))
                cards.setdefault(key, set()).add(card_of(rep["set"]))
                if rep["role"].get(row["kind"]) == "hold-out":
                    fresh.add(key)
            # a step the host paces with the implementation's own host time per layer timed around
            # it (its ratio and its pace with that figure): the band `roofcalc op ... --host-layer`
            # prints for a step it paces. Not where the step has native host work, which the report
            # pays at the hot loop timed around the case and the command at the card's figure
            native = load_named(row["impl"]).phases[NAMED_OP[row["kind"]]].host_ops_native not in (0, "0")
            timed_as_run = row.get("host_layer_autograd") == "no_grad" or row["impl"] not in RECORDS_AUTOGRAD
            if (
                graphs == "python"
                and row.get("host_layer_s")
                and timed_as_run
                and pace(row.get("limiter_host")) == "host"
                and not native
            ):
                key = f"{k}/host/host-layer"
                ratios.setdefault(key, []).append(float(row["ratio_host"]))
                cards.setdefault(key, set()).add(card_of(rep["set"]))
                if rep["role"].get(row["kind"]) == "hold-out":
                    fresh.add(key)
    return ratios


def _band(xs: list[float]) -> dict[str, object]:
    few = len(xs) < FEW
    return {
        "low": round(min(xs) if few else percentile(xs, 0.05), 4),
        "high": round(max(xs) if few else percentile(xs, 0.95), 4),
        "median": round(percentile(xs, 0.5), 4),
        "cases": len(xs),
        "spread": "min-max" if few else "p5-p95",
    }


def bands(root: Path) -> dict[str, object]:
    out: dict[str, object] = {}
    fresh: set[str] = set()
    for k, xs in sorted(collect(root, fresh).items()):
        out[k] = {**_band(xs), "cards": "H100/H200"}
        if k in fresh:
            out[k]["sample"] = "in-sample and hold-out"
    roles: dict[str, set[str]] = {}
    traced_cards: dict[str, set[str]] = {}
    for k, xs in sorted(collect_traced(root, roles, traced_cards).items()):
        sample = (
            "hold-out"
            if roles[k] == {"hold-out"}
            else "in-sample and hold-out"
            if "hold-out" in roles[k]
            else "in-sample"
        )
        out[k] = {**_band(xs), "sample": sample, "cards": "/".join(sorted(traced_cards[k]))}
    named_fresh: set[str] = set()
    named_cards: dict[str, set[str]] = {}
    for k, xs in sorted(collect_named(root, named_fresh, named_cards).items()):
        out[k] = {**_band(xs), "cards": "/".join(sorted(named_cards[k]))}
        if k in named_fresh:
            out[k]["sample"] = "in-sample and hold-out"
    return {
        "what": "measured / expected over the committed validation reports (registry figures; the keys ending in "
        "/host/host-layer: host-paced steps with the implementation's own host time per layer timed around each), "
        "by kind of case",
        "made_by": "python3 validation/expected/make_bands.py",
        "sample": "in-sample: most of these cases informed the model; hold-out results are reported apart in docs/validation.md",
        "bands": out,
    }


def main() -> int:
    text = json.dumps(bands(HERE), indent=1, sort_keys=True) + "\n"
    if "--check" in sys.argv:
        return 0 if OUT.read_text() == text else 1
    OUT.write_text(text)
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

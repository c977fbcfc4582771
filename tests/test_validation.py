"""The committed accuracy reports are what the current code computes from the saved timings.

validation/expected/*/report-*.json were written by validation/expected/make_reports.sh
(`roofcalc validate ... --json`) from GPU timings saved beside them; this recomputes each one
and fails when the model changed without the reports being recomputed and committed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from roofcalc.hardware import load_calibration, load_hardware
from roofcalc.validation import llm_report, ops_report, with_host_rates

from .conftest import VerifiedFor, committed_report

ROOT = Path(__file__).resolve().parent.parent / "validation" / "expected"
REPORTS = sorted(ROOT.glob("*/report-*.json"))


def test_reports_exist() -> None:
    assert len(REPORTS) >= 16


@pytest.mark.parametrize("path", REPORTS, ids=[str(p.relative_to(ROOT)) for p in REPORTS])
def test_committed_report_matches_the_code(path: Path, verified: VerifiedFor) -> None:
    """The committed report is what the code computes from its saved measurements (skipped only
    where this very check passed before with every input unchanged: tests/conftest.py Verified)."""
    committed = json.loads(path.read_text())
    source = ROOT / committed["source"]
    inputs = [path, source]
    calibration = None
    if path.stem.endswith("-calibrated"):
        # the probe run of the card, or one made in the same call as this set's timings
        probe = ROOT.parent / "probe" / path.parent.name
        own = probe / path.stem.removeprefix("report-").removesuffix("-calibrated") / "calibration.yaml"
        calibration = own if own.is_file() else probe / "calibration.yaml"
        inputs.append(calibration)
    rates = sorted(source.parent.glob("host-rate*.json")) if path.stem.endswith("-hostrate") else []

    def check() -> None:
        data = json.loads(source.read_text())
        hw = load_calibration(calibration) if calibration is not None else load_hardware(committed["hardware"])
        if rates:
            # the host's figures from the host_rate.py records of the same call (make_reports.sh)
            records = [(str(f.relative_to(ROOT)), json.loads(f.read_text())) for f in rates]
            hw, said = with_host_rates(hw, records, data["device"]["name"])
            assert said == committed["host_rate"]
        if data["kind"] == "ops":
            fresh = ops_report(data, hw, committed["source"])
        else:
            # -hostcase: each case against its own host op, timed around it (--host-per-case)
            fresh = llm_report(data, hw, committed["source"], case_host=path.stem.endswith("-hostcase"))
        assert fresh.model_dump(mode="json")["summary"] == committed["summary"]
        assert [c["label"] for c in committed["worst"]] == [c.label for c in fresh.worst]

    verified.once("committed-report", inputs + rates, check)


def test_bound_is_never_above_a_measurement() -> None:
    """measured / bound >= 0.95 on every measured case (the bound is a speed-of-light bound)."""
    for path in REPORTS:
        s = json.loads(path.read_text())["summary"]
        assert s["min_bound_ratio"] >= 0.95, path


def test_expected_time_helps_where_the_bound_missed() -> None:
    """On the measured H100 ops the expected time is closer to the measurement than the bound."""
    rep = json.loads((ROOT / "h100" / "report-ops-registry.json").read_text())
    import math

    exp_err = sorted(abs(math.log(c["ratio"])) for c in rep["cases"])
    bound_err = sorted(abs(math.log(c["bound_ratio"])) for c in rep["cases"])
    assert exp_err[len(exp_err) // 2] < bound_err[len(bound_err) // 2] / 3


def test_a_case_the_model_refuses_is_listed_not_fatal() -> None:
    """Run 2 on the H100 timed Llama-2-7B at context 4,096 (llm_bench.py does not check the
    model's maximum, 4,096 positions, and the cache holds context + 1): the report lists those
    cases as refused, with the op's reason, and evaluates the rest."""
    source = "h100/host/run2/llm-host.json"
    data = json.loads((ROOT / source).read_text())
    rep = llm_report(data, load_hardware("h100"), source)
    refused = [c for c in data["cases"] if c["model"] == "llama-2-7b" and c.get("context") == 4096]
    assert len(refused) == 2 and len(rep.refused) == 2
    assert all("exceeds the model's maximum context" in r for r in rep.refused)
    assert rep.summary.cases == len(data["cases"]) - 2


def test_a_malformed_case_still_fails_the_report(tmp_path: Path) -> None:
    """Only the op's own checks make a case refused; a value that is no valid parameter (batch
    0) is a bad file: an input error naming the file and the case."""
    from roofcalc.errors import InputError

    data = json.loads((ROOT / "h100" / "host" / "run2" / "llm-host.json").read_text())
    data["cases"][0]["batch"] = 0
    with pytest.raises(InputError, match=r"bad\.json: case .*-b0-.*: batch: must be at least 1"):
        llm_report(data, load_hardware("h100"), "bad.json")


def test_host_rate_records_give_the_host_figures_and_bad_ones_are_refused(tmp_path: Path) -> None:
    """--host-rate: the host's op floor from host_rate.py records (the mean of their medians), and
    compiled code's figures the fixed multiples of it (the records' chains are described, not used),
    named in the report; a file of another kind, or with samples that are not positive seconds, is
    a usage error (exit 2), and nothing is written."""
    import subprocess
    import sys

    from roofcalc.expected import COMPILED_ENTRY_OPS, COMPILED_KERNEL_OPS, card

    run = ROOT / "h100" / "host" / "run4"
    recs = [json.loads((run / n).read_text()) for n in ("host-rate.json", "host-rate-after.json")]
    hw, said = with_host_rates(load_hardware("h100"), [("a", recs[0]), ("b", recs[1])])
    ops = [sorted(r["torch_op"]["samples_s"])[3] for r in recs]  # medians of 7
    assert ops[0] != ops[1]
    op = (ops[0] + ops[1]) / 2
    assert float(hw.expected.torch_op_floor_s.value) == pytest.approx(op, rel=1e-12)  # type: ignore[union-attr]
    assert hw.expected.compiled_kernel_host_s is None and hw.expected.compiled_entry_host_s is None
    c = card(hw)
    assert c.compiled_kernel == pytest.approx(COMPILED_KERNEL_OPS * op, rel=1e-12)
    assert c.compiled_entry == pytest.approx(COMPILED_ENTRY_OPS * op, rel=1e-12)
    assert said.startswith(f"host op {op * 1e6:.2f} us; compiled figures 1.79x and 6.81x this host's op (the chains' ")
    assert "a call not used; a, b)" in said
    cmd = [sys.executable, "-m", "roofcalc", "validate", str(run / "llm-nograph-holdout.json"), "--json"]
    ok = subprocess.run([*cmd, "--host-rate", str(run / "host-rate.json")], capture_output=True, text=True)
    assert ok.returncode == 0 and json.loads(ok.stdout)["host_rate"].startswith("host op ")
    bad = tmp_path / "bad.json"
    bad.write_text(
        '{"kind": "host-rate", "device": {"name": "NVIDIA H100 80GB HBM3"}, "torch_op": {"samples_s": [-1], "verified": true}}'
    )
    for arg, why in (
        (str(ROOT / "h100" / "llm.json"), "not a record of validation/bench/host_rate.py"),
        (str(bad), "not a positive number of seconds"),
        (str(tmp_path / "missing.json"), "no such host-rate record"),
    ):
        r = subprocess.run([*cmd, "--host-rate", arg], capture_output=True, text=True)
        assert r.returncode == 2 and r.stdout == "" and "Traceback" not in r.stderr and why in r.stderr


@pytest.mark.parametrize(
    ("change", "why"),
    [
        ({"torch_op": [1, 2]}, "torch_op is not an object"),
        ({"torch_op": {"samples_s": [True, True], "verified": True}}, "not a positive number of seconds"),
        ({"torch_op": {"samples_s": [1e25], "verified": True}}, "not a host's cost per op"),
        ({"torch_op": {"samples_s": ["1e-5"], "verified": True}}, "not a positive number of seconds"),
        ({"device": {"name": "NVIDIA A100-SXM4-80GB"}}, "not on the timings' device"),
        (
            {
                "torch_compiled": {
                    "chains": [{"kernels": 2, "samples_s": []}, {"kernels": 16, "samples_s": [1e-4]}],
                    "verified": True,
                }
            },
            "chains[0].samples_s is not a non-empty list",
        ),
        (
            {"torch_compiled": {"chains": [{"kernels": False, "samples_s": [1e-4]}], "verified": True}},
            "kernels is not a positive whole number",
        ),
        ({"torch_compiled": {"chains": [{"kernels": 2, "samples_s": "1"}], "verified": True}}, "samples_s is not"),
        ({"torch_compiled": {"chains": [], "verified": "false"}}, "verified is not true or false"),
        ({"torch_compiled": [1]}, "torch_compiled is not an object"),
    ],
)
def test_a_malformed_or_foreign_host_rate_record_is_a_usage_error(change: dict[str, object], why: str) -> None:
    """Booleans or strings for seconds, implausible figures, another device's record, malformed
    compiled chains: an InputError (exit 2) naming what is wrong, never an internal error."""
    from roofcalc.errors import InputError

    run = ROOT / "h100" / "host" / "run4"
    rec = {**json.loads((run / "host-rate.json").read_text()), **change}
    with pytest.raises(InputError, match=re.escape(why)):
        with_host_rates(load_hardware("h100"), [("rec.json", rec)], "NVIDIA H100 80GB HBM3")


def test_an_unusable_compiled_fit_is_named_and_the_compiled_figures_follow_the_op() -> None:
    """A record whose compiled fit is unusable gives its op floor, as every record does: the
    compiled figures are the registry's rule, its multiples of this host's op floor, and the report
    names why the chains gave no fit."""
    from roofcalc.expected import COMPILED_KERNEL_OPS, card

    run = ROOT / "h100" / "host" / "run4"
    rec = json.loads((run / "host-rate.json").read_text())
    rec["torch_compiled"] = {**rec["torch_compiled"], "verified": False}
    hw, said = with_host_rates(load_hardware("h100"), [("rec.json", rec)])
    op = sorted(rec["torch_op"]["samples_s"])[3]
    assert card(hw).compiled_kernel == pytest.approx(COMPILED_KERNEL_OPS * op, rel=1e-12)
    assert "this host's op (no chain fit: rec.json: its results did not match float64; rec.json)" in said


def test_an_implausible_compiled_fit_is_named_not_a_refusal() -> None:
    """The records' compiled chains are described, never used: a chain fit no host could have (a
    slope of picoseconds) is named in the report's host line, not a refusal of the record, whose op
    floor stands."""
    run = ROOT / "h100" / "host" / "run4"
    rec = json.loads((run / "host-rate.json").read_text())
    lo, hi = rec["torch_compiled"]["chains"]
    rec["torch_compiled"]["chains"][1] = {**hi, "samples_s": [x + 1e-11 for x in lo["samples_s"]]}
    hw, said = with_host_rates(load_hardware("h100"), [("rec.json", rec)])
    assert float(hw.expected.torch_op_floor_s.value) == pytest.approx(sorted(rec["torch_op"]["samples_s"])[3])  # type: ignore[union-attr]
    assert "no chain fit: rec.json: its fit (" in said and "is not a host's cost" in said
    # beside a record whose chains gave a fit, the implausible one is still named
    good = json.loads((run / "host-rate-after.json").read_text())
    _, said = with_host_rates(load_hardware("h100"), [("rec.json", rec), ("good.json", good)])
    assert "the chains' " in said and "not used; no chain fit: rec.json: its fit (" in said


def test_host_per_case_takes_each_case_own_host_op_and_refuses_bad_records(tmp_path: Path) -> None:
    """--host-per-case: a step without graphs is evaluated with the hot loop timed around it
    (host_op_s: the mean of before and after; under TP the slowest rank's). By hand, for a step
    its host paces, the host's issue is its eager ops x EAGER_STEP_HOST_FACTOR x that op, then
    the logits GEMM the GPU runs after the last issue, so each 8 us more of the host's op adds the
    same time (the ops' count x 2 x 8 us), nearly all of the step; a step replayed from a graph records none
    and keeps the card's figures. Malformed records (under TP one per rank), malformed fields of
    a case, a file where no measured case has a record, and an ops file are usage errors (exit 2)
    with one line."""
    from roofcalc.expected import EAGER_STEP_HOST_FACTOR
    from roofcalc.validation import case_host_op

    from .conftest import run

    def case(**kw: object) -> dict[str, object]:
        base = {"model": "llama-3.2-1b", "phase": "prefill", "engine": "eager", "batch": 1, "seq": 128}
        return {**base, "gpus": 1, "cuda_graphs": False, "median_s": 0.01, **kw}

    graph = case(phase="decode", context=512, cuda_graphs=True, seq=None)
    data = {
        "kind": "llm",
        "device": {"name": "NVIDIA H100 80GB HBM3"},
        "cases": [
            case(host_op_s={"before": 6e-6, "after": 10e-6}),
            case(host_op_s={"before": 16e-6, "after": 16e-6}),
            graph,
            case(host_op_s={"before": 24e-6, "after": 24e-6}),
        ],
    }
    hw = load_hardware("h100")
    rep = llm_report(data, hw, "t", case_host=True)
    a, b, g, c = rep.cases
    assert "at 16.0 us (2 x the 8.0 us of a hot loop" in a.why and "at 32.0 us (2 x the 16.0 us" in b.why
    assert EAGER_STEP_HOST_FACTOR == 2.0
    assert c.expected_s - b.expected_s == pytest.approx(b.expected_s - a.expected_s, rel=1e-9)
    assert 0.9 * a.expected_s < b.expected_s - a.expected_s < a.expected_s
    assert g.expected_s == llm_report({**data, "cases": [graph]}, hw, "t").cases[0].expected_s
    # the slowest rank's host paces a tensor-parallel step
    ranks = [{"before": 6e-6, "after": 6e-6}, {"before": 9e-6, "after": 11e-6}]
    tp = {"gpus": 2, "host_op_s": ranks[0], "host_op_s_per_rank": ranks}
    assert case_host_op(tp, "t") == pytest.approx(10e-6)
    assert case_host_op({}, "t") is None
    # a hot loop that failed its own check (null) leaves the case on the card's figures
    assert case_host_op({"host_op_s": {"before": None, "after": 7e-6}}, "t") is None

    good = tmp_path / "good.json"
    good.write_text(json.dumps(data))
    res = run("validate", str(good), "--host-per-case", "--json")
    assert res.exit_code == 0 and "own hot loop" in json.loads(res.stdout)["host_rate"]
    bad_records = [{"before": 6e-6}, {"before": "6e-6", "after": 6e-6}, {"before": 6e-6, "after": -1.0}, [1, 2]]
    files = [(f"bad{i}.json", {**data, "cases": [case(host_op_s=r)]}) for i, r in enumerate(bad_records)]
    # under TP, one record per rank: none, too few, or not a list
    for i, per in enumerate([None, [], ranks[:1], ranks[0]]):
        files.append((f"tp{i}.json", {**data, "cases": [case(gpus=2, host_op_s=ranks[0], host_op_s_per_rank=per)]}))
    # malformed fields of a case, with or without the flag
    for key, v in [("gpus", "two"), ("gpus", 0), ("median_s", "x"), ("layers", "x"), ("batch", None)]:
        bad = case(host_op_s=ranks[0], **{key: v})
        if v is None:
            del bad[key]
        files.append((f"field-{key}.json", {**data, "cases": [bad]}))
    files.append(("none.json", {**data, "cases": [graph]}))
    files.append(("ops.json", {"kind": "ops", "device": data["device"], "cases": []}))
    for name, content in files:
        p = tmp_path / name
        p.write_text(json.dumps(content))
        res = run("validate", str(p), "--host-per-case")
        assert res.exit_code == 2, (name, res.output)
        assert len(res.stderr.strip().splitlines()) == 1 and res.stdout == "", (name, res.output)


@pytest.mark.parametrize("chains", [False, True])
def test_a_host_rate_scales_the_files_compiled_figures(chains: bool) -> None:
    """A hardware file (a calibration) that gives compiled-call figures, with a host-rate record,
    with or without its compiled chains: the file's figures move with the host's op floor (op / the
    file's op), as they do for a case's own hot loop, not kept at the file's machine's speed."""
    from roofcalc.hardware import PositiveFigure

    base = load_hardware("h100")
    floor = float(base.expected.torch_op_floor_s.value)  # type: ignore[union-attr]
    figs = {
        "compiled_kernel_host_s": PositiveFigure(value=2 * floor, source="t", kind="measured"),
        "compiled_entry_host_s": PositiveFigure(value=7 * floor, source="t", kind="measured"),
    }
    hw = base.model_copy(update={"expected": base.expected.model_copy(update=figs)})
    rec = json.loads((ROOT / "h100" / "host" / "run4" / "host-rate.json").read_text())
    if not chains:
        rec.pop("torch_compiled")
    op = sorted(rec["torch_op"]["samples_s"])[3]  # the median of 7
    out, said = with_host_rates(hw, [("r", rec)])
    assert float(out.expected.torch_op_floor_s.value) == pytest.approx(op, rel=1e-12)  # type: ignore[union-attr]
    assert float(out.expected.compiled_kernel_host_s.value) == pytest.approx(2 * op, rel=1e-12)  # type: ignore[union-attr]
    assert float(out.expected.compiled_entry_host_s.value) == pytest.approx(7 * op, rel=1e-12)  # type: ignore[union-attr]
    assert "scaled with its op floor" in said


@pytest.mark.parametrize("key", ["seq", "batch", "engine", "model"])
def test_a_null_field_of_an_llm_case_is_refused(tmp_path: Path, key: str) -> None:
    """Found by a hostile test: "seq": null was evaluated at another prompt length (the op's
    default) under a label reading sNone. A null field is refused as a missing one is: one line,
    exit 2."""
    from .conftest import run

    case = {"model": "llama-3.2-1b", "phase": "prefill", "engine": "eager", "batch": 1, "seq": 160, "median_s": 0.01}
    data = {"kind": "llm", "device": {"name": "NVIDIA H100 80GB HBM3"}, "cases": [{**case, key: None}]}
    f = tmp_path / "llm.json"
    f.write_text(json.dumps(data))
    res = run("validate", str(f), "--hw", "h100")
    assert res.exit_code == 2 and res.stdout == "", res.output
    lines = [ln for ln in res.stderr.splitlines() if ln.startswith("Error:")]
    assert len(lines) == 1 and f"{key!r} is null" in lines[0], res.stderr


def test_compiled_dev1_reads_as_the_cards_comment_says(verified: VerifiedFor) -> None:
    """h200/compiled-dev1 (committed measurement; validation/expected/compiled_anatomy_report.py):
    its full-depth compiled steps against the model three ways, the per-case medians that
    roofcalc/expected/card.py's comment above COMPILED_KERNEL_OPS quotes, and a layer's cost in ops."""
    rep = committed_report(verified, "compiled_anatomy_report", "h200/compiled-dev1")
    cases = [c["measured_over_expected"] for m in rep["models"] for c in m["cases"]]
    assert len(cases) == 6
    quoted = {"fixed multiples": (0.81, 1.22), "chains in ops": (0.99, 1.52), "chains in seconds": (0.90, 1.85)}
    for rule, want in quoted.items():
        medians = [c[rule]["median"] for c in cases]
        assert (round(min(medians), 2), round(max(medians), 2)) == want, rule
    assert round(rep["chain_kernel_ops"]["median"], 1) == 1.4
    assert {p: round(rep["layer_ops"][p]["median"]) for p in ("decode", "prefill")} == {"decode": 43, "prefill": 46}


def test_the_h200_holdouts_quoted_for_the_compiled_figures() -> None:
    """The three H200 hold-outs roofcalc/expected/card.py and docs/model.md quote (committed
    timings): compiled decode from Python within [0.67, 1.5] with the op of the machine that ran them
    and its chains (the rule --host-rate had before: the records' op and chain fit as the card's
    figures, as validation/HOLDOUT.md's evaluations read them) or the fixed multiples of that op (the
    committed -hostrate reports), and with the fixed multiples of the hot loop timed around each
    step (the committed -hostcase reports)."""
    from roofcalc.hardware import PositiveFigure
    from roofcalc.probe.torch_ops import compiled_floor_fit

    def within(doc: dict[str, Any]) -> tuple[int, int]:
        rs = [c["ratio"] for c in doc["cases"] if "-compiled-" in c["label"] and c["ratio"] is not None]
        return sum(0.67 <= r <= 1.5 for r in rs), len(rs)

    h200 = load_hardware("h200")
    chains: list[tuple[int, int]] = []
    fixed: list[tuple[int, int]] = []
    own: list[tuple[int, int]] = []
    for host in ("host2", "host3", "host4"):
        recs = [json.loads(p.read_text()) for p in sorted((ROOT / "h200" / host).glob("host-rate*.json"))]
        fits = [fit for fit, _ in (compiled_floor_fit(r["torch_compiled"]) for r in recs) if fit is not None]
        figs = {
            "torch_op_floor_s": sum(sorted(r["torch_op"]["samples_s"])[3] for r in recs) / len(recs),
            "compiled_kernel_host_s": sum(f[0] for f in fits) / len(fits),
            "compiled_entry_host_s": sum(f[1] for f in fits) / len(fits),
        }
        old = h200.model_copy(
            update={
                "expected": h200.expected.model_copy(
                    update={k: PositiveFigure(value=v, source="t", kind="measured") for k, v in figs.items()}
                )
            }
        )
        data = json.loads((ROOT / "h200" / host / "llm-decode.json").read_text())
        chains.append(within(llm_report(data, old, host).model_dump()))
        fixed.append(within(json.loads((ROOT / "h200" / f"report-llm-{host}-decode-hostrate.json").read_text())))
        own.append(within(json.loads((ROOT / "h200" / f"report-llm-{host}-decode-hostcase.json").read_text())))
    assert chains == [(4, 8), (6, 12), (9, 12)]
    assert fixed == [(7, 8), (11, 12), (12, 12)]
    assert own == [(8, 8), (11, 12), (12, 12)]

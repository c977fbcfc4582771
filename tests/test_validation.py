"""The committed accuracy reports are what the current code computes from the saved timings.

validation/expected/*/report-*.json were written by validation/expected/make_reports.sh
(`roofcalc validate ... --json`) from GPU timings saved beside them; this recomputes each one
and fails when the model changed without the reports being recomputed and committed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roofcalc.hardware import load_calibration, load_hardware
from roofcalc.validation import llm_report, ops_report

ROOT = Path(__file__).resolve().parent.parent / "validation" / "expected"
REPORTS = sorted(ROOT.glob("*/report-*.json"))


def test_reports_exist() -> None:
    assert len(REPORTS) >= 16


@pytest.mark.parametrize("path", REPORTS, ids=[str(p.relative_to(ROOT)) for p in REPORTS])
def test_committed_report_matches_the_code(path: Path) -> None:
    committed = json.loads(path.read_text())
    source = ROOT / committed["source"]
    data = json.loads(source.read_text())
    if path.stem.endswith("-calibrated"):
        card = path.parent.name
        hw = load_calibration(ROOT.parent / "probe" / card / "calibration.yaml")
    else:
        hw = load_hardware(committed["hardware"])
    fresh = (ops_report if data["kind"] == "ops" else llm_report)(data, hw, committed["source"])
    assert fresh.model_dump(mode="json")["summary"] == committed["summary"]
    assert [c["label"] for c in committed["worst"]] == [c.label for c in fresh.worst]


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

"""Inputs that contradict each other or cannot be read back, found by a hostile test of the CLI:
a spec whose measured kernel times beat its own peaks, a calibration too large for its reader,
malformed largek sweep records, a measurement case whose params are not an object, ranges past
2^53."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from roofcalc.charts import parse_range
from roofcalc.expected.choice import record_choice

from .conftest import h100_with_map, run

ROOT = Path(__file__).resolve().parent.parent
SCAL = {"name": "void scal_kernel<float, float, 1, true, 6, 5, 5, 3>(x)", "grid": [63, 1, 1], "duration_s": 1.088e-6}
LARGEK = {
    "name": "void sgemm_largek_lds64<false, false, 6, 3, 4, 5, 4>(x)",
    "grid": [63, 1, 7],
    "duration_s": 46.689e-6,
}


def test_measured_times_below_the_files_own_bound_are_held_at_it(tmp_path: Path) -> None:
    """h100.yaml with its bf16 peak lowered to 1 TFLOP/s: bf16 40 x 4000 x 3000 (960 MFLOP) has a
    bound of at least 960 us there, while its choice map's kernel took 7.39 us. The expected
    time is held at the bound, with a term and a note saying why."""
    spec = tmp_path / "low.yaml"
    low = ("  bf16: {value: 989.4e12, source: hopper-wp", "  bf16: {value: 1.0e12, source: hopper-wp")
    # the registry map's entry for this shape, its time as measured
    spec.write_text(h100_with_map(["bf16 40x4000x3000 nvjet 40x64 1 7.39"], low))
    doc = json.loads(
        run(
            "op", "gemm", "--m", "40", "--n", "4000", "--k", "3000", "--dtype", "bf16", "--hw-file", str(spec), "--json"
        ).stdout
    )
    assert doc["bound_s"] >= 2 * 40 * 4000 * 3000 / 1e12
    assert doc["expected_s"] == doc["bound_s"]
    assert "held at the bound" in [t["name"] for t in doc["expected_terms"]]
    assert sum(t["seconds"] for t in doc["expected_terms"]) == pytest.approx(doc["expected_s"])


def test_a_calibration_too_large_to_read_back_is_not_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The committed H100 probe report re-derived with a reader limit below its calibration's
    size: one line, exit 1, no file."""
    monkeypatch.setattr("roofcalc.specfile.MAX_SPEC_BYTES", 10_000)
    out = tmp_path / "cal.yaml"
    r = run(
        "probe", "--report", str(ROOT / "validation" / "probe" / "h100" / "probe.json"), "--save-calibration", str(out)
    )
    assert r.exit_code == 1 and not out.exists()
    assert len(r.stderr.strip().splitlines()) == 1 and "nothing written" in r.stderr


@pytest.mark.parametrize(
    "kernels",
    [
        [SCAL, LARGEK, LARGEK],  # a third kernel
        [SCAL, {**LARGEK, "duration_s": -1.0}],
        [SCAL, {**LARGEK, "duration_s": "47"}],
        [SCAL, {**LARGEK, "grid": [63, 1, -7]}],
        [SCAL, {**LARGEK, "grid": [63, 1, 7.5]}],
        [SCAL, {**LARGEK, "grid": [63]}],
    ],
)
def test_a_malformed_largek_record_is_dropped(kernels: list[dict]) -> None:
    """Not the scal_kernel's 1 us as a 47 us product's time, nor one slice for seven: no entry."""
    assert record_choice({"dtype": "fp32", "m": 2, "n": 4000, "k": 3000, "kernels": kernels}) is None
    good = record_choice({"dtype": "fp32", "m": 2, "n": 4000, "k": 3000, "kernels": [SCAL, LARGEK]})
    assert good is not None and good[0].entry() == "fp32 2x4000x3000 largek - 7 47.78"


@pytest.mark.parametrize("params", [[["m", 8]], None, "m=8"])
def test_a_case_whose_params_are_not_an_object_is_refused(tmp_path: Path, params: object) -> None:
    case = {"op": "gemm", "dtype": "bf16", "label": "x", "median_s": 1e-5}
    if params is not None:
        case["params"] = params
    path = tmp_path / "m.json"
    path.write_text(json.dumps({"kind": "ops", "cases": [case]}))
    r = run("validate", str(path), "--hw", "h100")
    assert r.exit_code == 2 and "'params' must be an object" in r.stderr and len(r.stderr.strip().splitlines()) == 1


def test_ranges_keep_their_ends_past_two_to_the_53() -> None:
    """Linear steps in whole numbers; log steps end where the range ends."""
    assert parse_range("2..9223372036854775807", 3, linear=True) == [2, 4611686018427387905, 9223372036854775807]
    assert parse_range("1..9007199254740993", 2) == [1, 9007199254740993]
    assert parse_range("3..9223372036854775807", 3)[-1] == 9223372036854775807
    assert parse_range("1..100", 5, linear=True) == [1, 26, 51, 75, 100]  # 1 + 99 i / 4, to the nearest


def _probe_report(tmp_path: Path, change: str) -> Path:
    doc = json.loads((ROOT / "validation" / "probe" / "h100" / "probe.json").read_text())
    raw = doc["raw"]
    if change == "ceiling of no value":
        raw["ceilings"][0]["value"] = 0
    elif change == "device not a mapping":
        raw["device"] = "x"
    elif change == "latency rows not mappings":
        raw["latency"] = [None]
    elif change == "writeback a list":
        raw["torch"]["writeback"] = [1]
    elif change == "an op row without params":
        raw["torch"]["ops"] = [{"x": 1}]
    elif change == "skipped not a list":
        doc["skipped"] = 5
    path = tmp_path / "probe.json"
    path.write_text(json.dumps(doc))
    return path


@pytest.mark.parametrize(
    "change",
    [
        "ceiling of no value",
        "device not a mapping",
        "latency rows not mappings",
        "writeback a list",
        "an op row without params",
        "skipped not a list",
    ],
)
def test_a_malformed_probe_report_is_refused_in_one_line(tmp_path: Path, change: str) -> None:
    """The committed H100 probe report with one section broken (each raised KeyError, TypeError,
    AttributeError or ZeroDivisionError, exit 70): exit 2, one line naming the section."""
    r = run("probe", "--report", str(_probe_report(tmp_path, change)))
    assert r.exit_code == 2 and len(r.stderr.strip().splitlines()) == 1 and "probe.json" in r.stderr


def test_a_probe_report_nested_too_deeply_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000)
    r = run("probe", "--report", str(path))
    assert r.exit_code == 2 and "nested too deeply" in r.stderr

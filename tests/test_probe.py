"""The probe runner on reports recorded on real cards (validation/), and its failure modes."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import stat
from pathlib import Path

import pytest

from roofcalc.errors import DomainError, InputError
from roofcalc.hardware import load_hardware, load_hardware_file
from roofcalc.probe import runner
from roofcalc.probe.runner import ProbeReport, build_report, calibrated_hardware, report_from_file

from .conftest import run

VALIDATION = Path(__file__).resolve().parent.parent / "validation"
DEVICES = sorted(p.name for p in VALIDATION.iterdir() if (p / "probe.json").is_file())


def _load(dev: str) -> dict:  # type: ignore[type-arg]
    return json.loads((VALIDATION / dev / "probe.json").read_text())


def test_both_cards_recorded() -> None:
    assert set(DEVICES) >= {"h100", "h200"}


@pytest.mark.parametrize("dev", DEVICES)
def test_report_parses_and_recomputes_identically(dev: str) -> None:
    saved = _load(dev)
    ProbeReport.model_validate(saved)
    again = report_from_file(str(VALIDATION / dev / "probe.json"))
    assert [r.model_dump(mode="json") for r in again.residency] == saved["residency"]
    assert [c.model_dump(mode="json") for c in again.ceilings] == saved["ceilings"]
    # Op predictions are recomputed with today's op files, which may be refined after a
    # measurement (prefill gained its norm FLOPs, +0.007%). A drift past 0.5% means the
    # model changed enough that the validation should be measured again.
    for got, want in zip(again.ops, saved["ops"], strict=True):
        assert got.ratio == pytest.approx(want["ratio"], rel=5e-3), got.label
        assert got.measured_s == want["measured_s"]
    assert again.summary["median_ratio_large_ops"] == pytest.approx(saved["summary"]["median_ratio_large_ops"],
                                                                     rel=5e-3)


@pytest.mark.parametrize("dev", DEVICES)
def test_calibration_file_loads_as_hardware_and_matches_raw(dev: str) -> None:
    saved = _load(dev)
    cal = load_hardware_file(VALIDATION / dev / "calibration.yaml")
    assert cal.calibration is not None and cal.calibration.base == saved["hardware"]
    base = load_hardware(saved["hardware"])
    meta = {k: saved[k] for k in ("date", "command", "driver")}
    doc = calibrated_hardware(base, saved["raw"], meta)
    assert cal.bandwidth == doc["memory"]["bandwidth_bytes_per_s"]["value"]
    for dt, fig in doc["peak_flops_per_s"].items():
        assert cal.peak(dt) == fig["value"]
    # the calibrated bandwidth is the best device-memory pattern measured
    best = max(c["value"] for c in saved["raw"]["ceilings"] if c["name"].startswith("dram_"))
    assert cal.bandwidth == best < base.bandwidth


@pytest.mark.parametrize("dev", DEVICES)
def test_issue_targets_as_recorded(dev: str) -> None:
    s = _load(dev)["summary"]
    assert s["residency_configs"] >= 12 and s["residency_agree"] == s["residency_configs"]
    assert 1.0 <= s["median_ratio_large_ops"] <= 1.3
    limiters = {lim for r in _load(dev)["residency"] for lim in r["solver_limiters"]}
    assert {"registers", "shared_memory", "warps", "blocks"} <= limiters


@pytest.mark.parametrize("dev", DEVICES)
def test_summary_and_readme_match_the_json(dev: str) -> None:
    saved = _load(dev)
    summary = (VALIDATION / dev / "summary.txt").read_text()
    readme = (VALIDATION / dev / "README.md").read_text()
    assert summary.rstrip("\n") in readme  # the README embeds the generated tables verbatim
    for c in saved["ceilings"]:
        if c["fraction"] is not None:
            line = next(ln for ln in summary.splitlines() if ln.startswith(c["name"] + " "))
            assert f"{c['fraction']:.1%}" in line
    for o in saved["ops"]:
        line = next(ln for ln in summary.splitlines() if ln.startswith(f"{o['op']}: {o['label']}"))
        assert line.rstrip().endswith(f"{o['ratio']:.2f}")
    s = saved["summary"]
    for text in (f"{s['median_ratio_large_ops']:.2f}", f"{s['residency_agree']} of {s['residency_configs']}",
                 f"{s['fp32_fma_fraction']:.1%}", f"{s['dram_read_fraction']:.1%}", saved["driver"],
                 saved["device"]["name"], saved["date"]):
        assert text in readme, text


def test_cli_report_json(tmp_path: Path) -> None:
    res = run("probe", "--report", str(VALIDATION / "h100" / "probe.json"), "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["summary"] == _load("h100")["summary"]
    table = run("probe", "--report", str(VALIDATION / "h100" / "probe.json"))
    assert "14 of 14" in table.stdout and "wgmma" in table.stdout


def _meta(saved: dict) -> dict:  # type: ignore[type-arg]
    return {k: saved[k] for k in ("date", "command", "driver")}


def test_impossible_bandwidth_is_refused() -> None:
    saved = _load("h100")
    raw = copy.deepcopy(saved["raw"])
    raw["ceilings"][0]["value"] = 1.3 * 3.35e12
    with pytest.raises(DomainError, match="impossible measurement: dram_read"):
        build_report(raw, load_hardware("h100"), _meta(saved), [], False)


def test_failed_check_is_refused() -> None:
    saved = _load("h100")
    raw = copy.deepcopy(saved["raw"])
    raw["torch"]["ops"][0]["verified"] = False
    with pytest.raises(DomainError, match="result check of op gemm"):
        build_report(raw, load_hardware("h100"), _meta(saved), [], False)


def test_no_gpu(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    out = tmp_path / "cal.yaml"
    res = run("probe", "--save-calibration", str(out))
    assert res.exit_code == 1 and "no NVIDIA GPU found" in res.output and "Traceback" not in res.output
    assert not out.exists()


def test_no_nvcc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.setattr(runner, "DEFAULT_NVCC", "/nonexistent/nvcc")
    with pytest.raises(DomainError, match="nvcc not found"):
        runner.find_nvcc()


def test_failed_build_shows_nvcc_lines(tmp_path: Path) -> None:
    fake = tmp_path / "nvcc"
    fake.write_text("#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'release 0.0'; exit 0; fi\n"
                    "echo 'probe.cu(1): error: something broke' >&2; exit 1\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(DomainError, match=r"nvcc failed: probe\.cu\(1\): error: something broke"):
        runner.build_probe(str(fake), "90", cache_dir=tmp_path / "cache")
    assert not any((tmp_path / "cache").glob("probe-*"))


def test_write_atomic(tmp_path: Path) -> None:
    target = tmp_path / "cal.yaml"
    runner.write_atomic(str(target), "a: 1\n")
    assert target.read_text() == "a: 1\n"
    assert stat.S_IMODE(target.stat().st_mode) & 0o044  # readable by others, like a normal file
    with pytest.raises(InputError, match="cannot write"):
        runner.write_atomic(str(tmp_path / "missing" / "cal.yaml"), "x")
    assert [p.name for p in tmp_path.iterdir()] == ["cal.yaml"]  # nothing half-written left behind


def test_calibrated_op_from_the_cli() -> None:
    cal = str(VALIDATION / "h100" / "calibration.yaml")
    d = json.loads(run("op", "gemm", "--m", "8192", "--hw", "h100", "--calibration", cal, "--json").stdout)
    assert d["calibrated"] is True and d["peak_flops_per_s"] < 989.4e12
    res = run("op", "gemm", "--hw", "a100", "--calibration", cal)
    assert res.exit_code == 2 and "calibrates h100, not a100" in res.output


@pytest.mark.slow
def test_probe_compiles_for_sm90(tmp_path: Path) -> None:
    try:
        nvcc = runner.find_nvcc()
    except DomainError as e:
        if os.environ.get("CI") == "true" and Path("/usr/local/cuda").exists():
            raise
        pytest.skip(str(e))
    exe = runner.build_probe(nvcc, "90", cache_dir=tmp_path)
    assert exe.is_file() and re.match(r"probe-sm90-[0-9a-f]{16}$", exe.name)
    assert runner.build_probe(nvcc, "90", cache_dir=tmp_path) == exe  # cached

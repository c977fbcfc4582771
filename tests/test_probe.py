"""The probe: reports recorded on real cards (validation/), the schema-2 sections on synthetic
measurements, the whole host path against fake nvidia-smi/nvcc/probe binaries, and (where nvcc
is installed) the CUDA sources compiled for the targets the runner uses."""

from __future__ import annotations

import copy
import itertools
import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from roofcalc.cli import cli
from roofcalc.errors import DomainError, InputError
from roofcalc.expected import gemm_floor_residue
from roofcalc.hardware import Calibration, Expected, Hardware, load_calibration, load_hardware, load_hardware_file
from roofcalc.probe import nccl_bench, runner
from roofcalc.probe.command import probe as probe_command
from roofcalc.probe.render import ProgressDisplay, console, probe_report
from roofcalc.probe.report import quantile
from roofcalc.probe.runner import ProbeReport, build_report, calibrated_hardware, report_from_file
from roofcalc.specfile import validate

from .conftest import VerifiedFor, tool_version

VALIDATION = Path(__file__).resolve().parent.parent / "validation"
DEVICES = sorted(p.name for p in VALIDATION.iterdir() if (p / "probe.json").is_file())


def _load(dev: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((VALIDATION / dev / "probe.json").read_text())
    return data


def _meta(saved: dict[str, Any]) -> dict[str, Any]:
    return {k: saved[k] for k in ("date", "command", "driver")}


def probe_cli(*args: str, env: dict[str, str] | None = None) -> Any:
    """`roofcalc probe ...` through the CLI's group class with this package's probe command."""
    group = type(cli)(name="roofcalc")
    assert isinstance(group, click.Group)
    group.add_command(probe_command)
    return CliRunner().invoke(group, ["probe", *args], env=env, catch_exceptions=False)


# ------------------------------------------------------------------ recorded reports (schema 1)


def test_both_cards_recorded() -> None:
    assert set(DEVICES) >= {"h100", "h200"}


@pytest.mark.parametrize("dev", DEVICES)
def test_report_parses_and_recomputes_identically(dev: str) -> None:
    saved = _load(dev)
    ProbeReport.model_validate(saved)
    again = report_from_file(str(VALIDATION / dev / "probe.json"))
    assert [r.model_dump(mode="json") for r in again.residency] == saved["residency"]
    # fields added after a report was saved are compared where the saved report has them
    for got, want in zip(again.ceilings, saved["ceilings"], strict=True):
        assert {k: v for k, v in got.model_dump(mode="json").items() if k in want} == want
    # Op predictions are recomputed with today's op files, which may be refined after a
    # measurement (prefill gained its norm FLOPs, +0.007%). A drift past 0.5% means the
    # model changed enough that the validation should be measured again.
    for got_op, want_op in zip(again.ops, saved["ops"], strict=True):
        assert got_op.ratio == pytest.approx(want_op["ratio"], rel=5e-3), got_op.label
        assert got_op.measured_s == want_op["measured_s"]
    assert again.summary["median_ratio_large_ops"] == pytest.approx(
        saved["summary"]["median_ratio_large_ops"], rel=5e-3
    )
    assert set(again.summary) == set(saved["summary"])  # no schema-2 keys without schema-2 sections


@pytest.mark.parametrize("dev", DEVICES)
def test_calibration_file_loads_as_hardware_and_matches_raw(dev: str) -> None:
    saved = _load(dev)
    cal = load_hardware_file(VALIDATION / dev / "calibration.yaml")
    assert cal.calibration is not None and cal.calibration.base == saved["hardware"]
    base = load_hardware(saved["hardware"])
    doc = calibrated_hardware(base, saved["raw"], _meta(saved))
    validate(Hardware, doc, "calibration")
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
    for text in (
        f"{s['median_ratio_large_ops']:.2f}",
        f"{s['residency_agree']} of {s['residency_configs']}",
        f"{s['fp32_fma_fraction']:.1%}",
        f"{s['dram_read_fraction']:.1%}",
        saved["driver"],
        saved["device"]["name"],
        saved["date"],
    ):
        assert text in readme, text


def test_cli_report_json() -> None:
    res = probe_cli("--report", str(VALIDATION / "h100" / "probe.json"), "--json")
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["summary"] == _load("h100")["summary"]
    table = probe_cli("--report", str(VALIDATION / "h100" / "probe.json"))
    assert "14 of 14" in table.stdout and "wgmma" in table.stdout


def test_report_option_conflicts() -> None:
    path = str(VALIDATION / "h100" / "probe.json")
    for extra in (["--save-raw", "x.json"], ["--quick"]):
        res = probe_cli("--report", path, *extra)
        assert res.exit_code == 2 and "Traceback" not in res.output, res.output


def test_report_rederives_the_calibration(tmp_path: Path) -> None:
    """--report with --save-calibration: the calibration from the saved raw measurements, by the current code."""
    out = tmp_path / "cal.yaml"
    res = probe_cli("--report", str(VALIDATION / "h100" / "probe.json"), "--save-calibration", str(out))
    assert res.exit_code == 0, res.output
    cal = load_calibration(out)
    assert cal.calibration is not None and cal.calibration.base == "h100"
    assert cal.memory.bandwidth_bytes_per_s.kind == "measured"


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


# ------------------------------------------------------------------ schema 2 on synthetic measurements

SMS = 132


def _samples(t: float, n: int = 7, spread: float = 0.02) -> list[float]:
    return [t * (1 - spread + 2 * spread * i / (n - 1)) for i in range(n)]


def _per_sm_section() -> dict[str, Any]:
    """One SM saturates at 60 GB/s with >= 64 KiB in flight; the card at 3.0 TB/s."""
    rows, copies = [], []

    def bw(k: int, th: int, u: int) -> float:
        return min(k * min(60e9, th * u * 16 / 1e-6), 3.0e12)

    def row(k: int, th: int, u: int, copy_: bool = False) -> dict[str, Any]:
        nbytes = min(512 << 20, k * (16 << 20))
        return {
            "blocks": k,
            "threads": th,
            "unroll": u,
            "bytes": nbytes,
            "distinct_sms": k,
            "verified": True,
            "samples_s": _samples((2 if copy_ else 1) * nbytes / (bw(k, th, u) * (0.9 if copy_ else 1))),
        }

    for k in (1, SMS):
        rows += [row(k, th, u) for th in (128, 256, 512, 1024) for u in (1, 2, 4, 8)]
    for k in (2, 4, 8, 16, 32, 48, 64, 96, 128):
        rows.append(row(k, 1024, 8))
    copies = [row(k, 1024, 8, True) for k in (1, 2, 4, 8, 16, 32, 48, 64, 96, 128, SMS)]
    return {"buffer_bytes": 1 << 30, "dyn_smem": 117760, "blocks_per_sm": 1, "read": rows, "copy": copies}


def _wgmma_rows() -> list[dict[str, Any]]:
    out = []
    for dt, frac in (("bf16", 0.90), ("fp16", 0.91), ("fp8", 0.88), ("tf32", 0.89), ("int8", 0.92)):
        peak = load_hardware("h100").peak(dt)
        out.append(
            {
                "name": f"{dt}_wgmma",
                "unit": "FLOP/s",
                "value": frac * peak,
                "work": 1e13,
                "median_s": 1e13 / (frac * peak),
                "reps": 7,
                "verified": True,
                "sm_clock_mhz": 1755.0,
                "instruction": f"wgmma.mma_async.sync.aligned (test {dt})",
                "variant": "test",
                "samples_s": _samples(1e13 / (frac * peak)),
            }
        )
    return out


def _gemm_rows() -> list[dict[str, Any]]:
    def g(label: str, dt: str, m: int, n: int, k: int, rate: float, **kw: Any) -> dict[str, Any]:
        t = 2.0 * m * n * k / rate
        return {
            "label": label,
            "dtype": dt,
            "m": m,
            "n": n,
            "k": k,
            "reps": 10,
            "samples_s": _samples(t, 10),
            "median_s": t,
            "verified": True,
            "check": "rel. error 1e-3",
            "impl": "torch.matmul (cuBLAS)",
            **kw,
        }

    return [
        g("m not a multiple of 8", "bf16", 8191, 8192, 8192, 700e12),
        g("k not a multiple of 8", "bf16", 8192, 8192, 8191, 200e12),
        g("n not a multiple of 8", "bf16", 8192, 8191, 8192, 300e12),
        g("odd (not multiples of 8)", "bf16", 6143, 6145, 6147, 130e12),
        g("small", "bf16", 512, 512, 512, 9e12),
        g("skinny", "bf16", 16, 8192, 8192, 60e12),
        # torch.mv: A streamed once, 2 bytes an element (aligned; k odd; m odd)
        g("gemv", "bf16", 16384, 1, 16384, 2 * 16384 * 16384 / (2 * 16384 * 16384 / 3.0e12), impl="torch.mv (cuBLAS)"),
        g("gemv, k not a multiple of 8", "bf16", 16384, 1, 16383, 2 * 16384 * 16383 / (2 * 16384 * 16383 / 2.4e12)),
        g("gemv, m not a multiple of 8", "bf16", 16383, 1, 16384, 2 * 16383 * 16384 / (2 * 16383 * 16384 / 2.2e12)),
        g(
            "gemv, m and k not multiples of 8",
            "bf16",
            12289,
            1,
            12287,
            2 * 12289 * 12287 / (2 * 12289 * 12287 / 2.3e12),
        ),
        g("m not a multiple of 16", "fp8", 8191, 8192, 8192, 1.2e15),
        {
            "label": "k not a multiple of 16",
            "dtype": "fp8",
            "m": 8192,
            "n": 8192,
            "k": 8184,
            "reps": 10,
            "verified": False,
            "error": "RuntimeError: Expected trailing dimension of mat1 to be divisible by 16",
        },
        g("CUDA cores (tf32 off)", "fp32", 8192, 8192, 8192, 50e12),
        g("CUDA cores (tf32 off)", "fp32", 4096, 4096, 4096, 48e12),
    ]


def _interconnect() -> dict[str, Any]:
    rows = []
    for nbytes, t, gt in ((8 << 10, 12e-6, 7e-6), (32 << 20, 150e-6, 148e-6), (1 << 30, 3.6e-3, None)):
        r: dict[str, Any] = {
            "dtype": "bf16",
            "bytes": nbytes,
            "elements": nbytes // 2,
            "verified": True,
            "eager_samples_s": _samples(t, 9),
            "eager_calls_per_sample": 20,
        }
        if gt is not None:
            r.update(graph_samples_s=_samples(gt, 9), graph_calls_per_sample=20, graph_verified=True)
        rows.append(r)
    env = {"NCCL_NVLS_ENABLE": "0", "TORCH_SYMM_MEM_DISABLE_MULTICAST": "1", "NVSHMEM_DISABLE_NVLS": "1"}
    return {
        "gpus": 2,
        "env": env,
        "nccl": {
            "world": 2,
            "torch": "2.11.0",
            "nccl": "2.27.7",
            "device": "NVIDIA H200",
            "env": env,
            "rows": rows,
            "complete": True,
        },
        "p2p": {
            "bytes": 1 << 30,
            "src": 0,
            "dst": 1,
            "peer_access": True,
            "samples_s": _samples(2.9e-3),
            "verified": True,
        },
    }


def synthetic_raw(interconnect: bool = True) -> dict[str, Any]:
    """The recorded H100 measurements plus every schema-2 section, with figures of the right size."""
    raw = copy.deepcopy(_load("h100")["raw"])
    raw["schema"] = 2
    raw["ceilings"] += _wgmma_rows()
    raw["floors"] = [
        {"name": "event", "kernels_per_sample": 1, "samples_s": _samples(4.1e-6, 200, 0.1), "verified": True},
        {"name": "stream", "kernels_per_sample": 2000, "samples_s": _samples(2.3e-6, 9), "verified": True},
        {"name": "graph", "kernels_per_sample": 1000, "samples_s": _samples(1.05e-6, 9), "verified": True},
    ]
    raw["per_sm"] = _per_sm_section()
    raw["latency"] = [
        {
            "name": "dram",
            "buffer_bytes": 256 << 20,
            "stride_bytes": 256,
            "steps": 12000,
            "samples_s": _samples(690e-9),
            "verified": True,
        },
        {
            "name": "l2",
            "buffer_bytes": 13107200,
            "stride_bytes": 128,
            "steps": 20000,
            "samples_s": _samples(260e-9),
            "verified": True,
        },
    ]
    raw["torch"]["floor"] = {
        "name": "torch_op",
        "kernels_per_sample": 1000,
        "samples_s": _samples(6.5e-6),
        "verified": True,
    }
    raw["torch"]["gemm"] = _gemm_rows()
    raw["torch"]["device_count"] = 2 if interconnect else 1
    if interconnect:
        raw["interconnect"] = _interconnect()
    raw["phase_wall_s"] = {"per-SM bandwidth": 4.2, "op kernels": 21.0}
    return raw


META = {"date": "2026-11-22 10:00 UTC", "command": "roofcalc probe --json", "driver": "580.159.04"}


@pytest.fixture(scope="module")
def synthetic() -> tuple[ProbeReport, dict[str, Any]]:
    return build_report(synthetic_raw(), load_hardware("h100"), META, [], False)


def test_peaks_are_the_best_instruction_and_fractions_are_cublas_over_it(synthetic: Any) -> None:
    report, doc = synthetic
    cal = validate(Hardware, doc, "calibration")
    h100 = load_hardware("h100")
    assert cal.peak("bf16") == pytest.approx(0.90 * h100.peak("bf16"))  # wgmma 90% beats cuBLAS 81.3%
    assert doc["peak_flops_per_s"]["bf16"]["note"].startswith("bf16_wgmma")
    assert cal.peak("int8") == pytest.approx(0.92 * h100.peak("int8"))
    tf = cal.expected.tensor_fraction["bf16"]
    cublas = next(c["value"] for c in synthetic_raw()["torch"]["ceilings"] if c["name"] == "bf16_matmul_torch")
    assert tf.value == pytest.approx(cublas / (0.90 * h100.peak("bf16")))
    assert (tf.source, tf.kind) == ("probe", "measured")
    # every figure the probe wrote names its source and kind and says how it was taken
    for path, fig in cal.figures():
        if fig.source == "probe":
            assert fig.kind == "measured" and fig.note, path
    got = doc["expected"]
    ceil = {c["name"]: c["value"] for c in synthetic_raw()["ceilings"]}
    if "sustained_sm_clock_mhz" in Expected.model_fields:  # the tensor-core clock where wgmma ran
        assert (
            got["sustained_sm_clock_mhz"]["value"] == 1755.0 and "bf16_wgmma" in got["sustained_sm_clock_mhz"]["note"]
        )
    if "mma_sync_fraction" in Expected.model_fields:
        assert got["mma_sync_fraction"]["bf16"]["value"] == pytest.approx(ceil["bf16_mma_sync"] / cal.peak("bf16"))
    if "l2_bandwidth_bytes_per_s" in Expected.model_fields:
        assert got["l2_bandwidth_bytes_per_s"]["value"] == ceil["l2_read"]
    # the gemv rows stream 2 bytes an element of A (and x, y) in (time - graph floor); the three
    # misaligned ones give the figure, their median over the streaming-read ceiling (each
    # row's time is the upper middle of its ten samples, spread +-2%: the probe's median)
    floor = got["graph_floor_s"]["value"]
    rates = []
    for m, k, bw in ((16384, 16383, 2.4e12), (16383, 16384, 2.2e12), (12289, 12287, 2.3e12)):
        t = 2 * m * k / bw * (1 - 0.02 + 0.04 * 5 / 9)
        rates.append((m * k + m + k) * 2 / (t - floor))
    want = sorted(rates)[1] / ceil["dram_read"]
    assert got["unaligned_gemv_bandwidth_fraction"]["value"] == pytest.approx(want, rel=1e-9)
    assert "16384x16383" in got["unaligned_gemv_bandwidth_fraction"]["note"]
    notes = " ".join(report.notes)
    assert "bf16_wgmma ran at an effective SM clock of 1755 MHz" in notes
    assert "wgmma.mma_async" in notes and "each peak is the best of them" in notes


def test_floors_latency_and_per_sm(synthetic: Any) -> None:
    report, doc = synthetic
    cal = validate(Hardware, doc, "calibration")
    floors = {f.name: f for f in report.floors}
    assert set(floors) == {"event", "stream", "graph", "torch_op"}
    assert floors["stream"].median_s == pytest.approx(2.3e-6, rel=0.02) and floors["stream"].samples == 9
    assert floors["event"].p10_s < floors["event"].median_s < floors["event"].p90_s
    exp = cal.expected
    assert exp.stream_floor_s is not None and exp.stream_floor_s.value == floors["stream"].median_s
    assert exp.graph_floor_s is not None and exp.event_floor_s is not None and exp.torch_op_floor_s is not None
    assert exp.stream_floor_s.note and "median of 9, p10-p90" in exp.stream_floor_s.note
    assert exp.dram_latency_s is not None and exp.dram_latency_s.value == pytest.approx(690e-9, rel=0.02)
    ps = report.per_sm
    assert ps is not None
    # one SM: 60 GB/s needs 64 KiB in flight (1024 threads x 4 or 8 loads)
    assert ps.per_sm_bytes_per_s == pytest.approx(60e9, rel=1e-6)
    assert (
        exp.per_sm_bandwidth_bytes_per_s is not None and exp.per_sm_bandwidth_bytes_per_s.value == ps.per_sm_bytes_per_s
    )
    # the card's read ceiling is the recorded dram_read (3.13 TB/s): 90% of it needs 2.82 TB/s = 47 SMs -> 48
    assert ps.read_ceiling_bytes_per_s == pytest.approx(3.1295e12, rel=1e-4)
    assert ps.sms_for_90pct == 48
    assert [p.sms for p in ps.curve] == [1, 2, 4, 8, 16, 32, 48, 64, 96, 128, SMS]
    assert all(p.copy_bytes_per_s for p in ps.curve)
    assert {(q.sms, q.threads, q.unroll) for q in ps.inflight} >= {(1, 128, 1), (SMS, 1024, 8)}
    assert len(ps.inflight) == 32


def test_gemm_efficiency_figures(synthetic: Any) -> None:
    report, doc = synthetic
    cal = validate(Hardware, doc, "calibration")
    rows = {(g.dtype, g.label, g.m, g.n, g.k): g for g in report.gemm}
    odd = rows[("bf16", "odd (not multiples of 8)", 6143, 6145, 6147)]
    assert odd.flops_per_s == pytest.approx(130e12, rel=0.01)
    assert odd.fraction == pytest.approx(130e12 / cal.peak("bf16"), rel=0.01)
    # unaligned = median of the shapes with an unaligned leading dimension (k, n, all odd): 200 TFLOP/s
    un = cal.expected.unaligned_tensor_fraction["bf16"]
    assert un.value == pytest.approx(200e12 / cal.peak("bf16"), rel=0.01)
    assert "6143x6145x6147" in (un.note or "") and "8191x8192x8192" not in (un.note or "")
    assert "fp8" not in cal.expected.unaligned_tensor_fraction  # the library refused that shape
    refused = rows[("fp8", "k not a multiple of 16", 8192, 8192, 8184)]
    assert not refused.verified and refused.error and refused.flops_per_s is None
    cc = cal.expected.cuda_core_gemm_fraction
    assert cc is not None and cc.value == pytest.approx(50e12 / cal.peak("fp32"), rel=0.01)
    assert rows[("bf16", "aligned", 8192, 8192, 8192)].fraction == pytest.approx(
        cal.expected.tensor_fraction["bf16"].value
    )


def test_interconnect_figures(synthetic: Any) -> None:
    report, doc = synthetic
    cal = validate(Hardware, doc, "calibration")
    ic = report.interconnect
    assert ic is not None and ic.gpus == 2 and ic.env["NCCL_NVLS_ENABLE"] == "0"
    big = max(ic.allreduce, key=lambda r: r.bytes)
    assert big.algbw_bytes_per_s == pytest.approx((1 << 30) / 3.6e-3, rel=1e-6)
    assert big.busbw_bytes_per_s == pytest.approx(big.algbw_bytes_per_s * 2 * (2 - 1) / 2)
    exp = cal.expected
    assert exp.allreduce_latency_s is not None and exp.allreduce_latency_s.value == pytest.approx(12e-6, rel=0.02)
    assert exp.allreduce_graph_latency_s is not None and exp.allreduce_graph_latency_s.value == pytest.approx(
        7e-6, rel=0.02
    )
    assert exp.allreduce_bus_bytes_per_s is not None and exp.allreduce_bus_bytes_per_s.value == big.busbw_bytes_per_s
    assert exp.p2p_bytes_per_s is not None and exp.p2p_bytes_per_s.value == pytest.approx((1 << 30) / 2.9e-3, rel=0.02)
    assert report.summary["allreduce_latency_s"] == exp.allreduce_latency_s.value


def test_fields_the_model_lacks_are_named_not_written(synthetic: Any) -> None:
    report, doc = synthetic
    for name in ("read_bandwidth_by_sms", "sms_to_saturate_read", "l2_latency_s"):
        if name in Expected.model_fields:
            assert name in doc["expected"]
        else:
            assert name not in doc["expected"]
            assert any(f"expected.{name} measured" in n for n in report.notes), name
    assert ("schema" in doc["calibration"]) == ("schema" in Calibration.model_fields)


def test_schema2_report_round_trips(tmp_path: Path, synthetic: Any) -> None:
    report, _ = synthetic
    path = tmp_path / "probe.json"
    path.write_text(json.dumps(report.model_dump(mode="json")))
    again = report_from_file(str(path))
    assert again.model_dump(mode="json") == report.model_dump(mode="json")
    res = probe_cli("--report", str(path))
    assert res.exit_code == 0, res.output
    for text in (
        "kernel floors",
        "read bandwidth against SMs busy",
        "memory latency",
        "GEMM efficiency",
        "all-reduce (sum) across 2 GPUs",
        "NCCL_NVLS_ENABLE=0",
        "per-SM saturation bandwidth: 60.0 GB/s",
        "bf16_wgmma",
        "expected: section",
    ):
        assert text in res.stdout, text


def test_bad_points_are_left_out_with_a_reason() -> None:
    raw = synthetic_raw(interconnect=False)
    raw["per_sm"]["read"][0]["distinct_sms"] = 0  # a block placed off its own SM
    raw["latency"][0]["samples_s"] = _samples(100e-9)  # "DRAM" faster than L2: it hit a cache
    report, doc = build_report(raw, load_hardware("h100"), META, [], False)
    notes = " ".join(report.notes)
    assert "1 blocks ran on 0 SMs" in notes and "DRAM chase was no slower than the L2 chase" in notes
    assert doc["expected"].get("dram_latency_s", {}).get("source") != "probe"  # the registry's, if any
    assert report.interconnect is None
    assert doc["expected"].get("allreduce_latency_s", {}).get("source") != "probe"  # the registry's, if any


def test_new_ceilings_that_fail_are_dropped_not_fatal() -> None:
    hw = load_hardware("h100")
    rows = _wgmma_rows()
    rows[0]["value"] = 1.5 * hw.peak("bf16")
    rows[1]["verified"] = False
    skipped: list[str] = []
    kept = runner._drop_unusable([*rows, {"name": "dram_read", "value": 9e99, "unit": "B/s"}], hw, skipped)
    assert [c["name"] for c in kept] == ["fp8_wgmma", "tf32_wgmma", "int8_wgmma", "dram_read"]
    assert skipped[0].startswith("bf16_wgmma: ") and "1.50x the datasheet" in skipped[0]
    assert skipped[1].startswith("fp16_wgmma: its result check failed")


def test_quantile() -> None:
    assert quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.5) == 3.0
    assert quantile([1.0, 2.0, 3.0, 4.0, 5.0], 0.1) == pytest.approx(1.4)
    assert quantile([7.0], 0.9) == 7.0


def test_nccl_message_sizes() -> None:
    sizes = nccl_bench.message_sizes(False)
    assert sizes[0] == 8 << 10 and sizes[-1] == 1 << 30
    assert all(b == 4 * a for a, b in itertools.pairwise(sizes[:-1]))
    assert len(nccl_bench.message_sizes(True)) == 3


# ------------------------------------------------------------------ the host path against fakes


def fake_answers(data: dict[str, Any], into: Path) -> None:
    """What each probe binary prints, written once per test: the stand-in binaries are shell
    scripts that print these files (a Python process per section would cost more than the test)."""
    into.mkdir()
    dev = data["device"]

    def put(name: str, obj: dict[str, Any]) -> None:
        (into / name).write_text(json.dumps({"device": dev, **obj}) + "\n")

    for c in data["ceilings"]:
        if c["name"].endswith("_wgmma"):
            put(f"dtype-{c['name'][: -len('_wgmma')]}.json", {"ceilings": [c], "variants": []})
    pick = {
        "memory": lambda c: c["name"].startswith(("dram_", "l2_")),
        "fma": lambda c: c["name"].endswith("_fma"),
        "mma": lambda c: c["name"].endswith("_mma_sync"),
        "floors": lambda c: c["name"] == "launch_overhead",
    }
    keys = {"floors": "floors", "per_sm": "per_sm", "latency": "latency", "residency": "occupancy", "ops": "ops"}
    for section in set(pick) | set(keys):
        obj: dict[str, Any] = {}
        if section in pick:
            obj["ceilings"] = [c for c in data["ceilings"] if pick[section](c)]
        if section in keys:
            obj[keys[section]] = data[keys[section]]
        put(f"section-{section}.json", obj)
    put("section-other.json", {})


FAKE_EXE = r"""#!/bin/sh
# a probe binary: --section NAME or --dtype DT; prints the answer written for it
prev=''; sec=''; dt=''
for a in "$@"; do
  [ "$prev" = --section ] && sec="$a"
  [ "$prev" = --dtype ] && dt="$a"
  prev="$a"
done
if [ -n "$dt" ]; then
  echo "@progress $dt wgmma variant 1 of 6" >&2
  exec cat "$FAKE_PROBE_ANSWERS/dtype-$dt.json"
fi
echo "@progress $sec: working" >&2
if [ "${FAKE_FAIL_SECTION:-}" = "$sec" ]; then
  echo "CUDA error cudaErrorIllegalAddress at probe.cu:123: an illegal memory access" >&2
  exit 3
fi
f="$FAKE_PROBE_ANSWERS/section-$sec.json"
[ -f "$f" ] || f="$FAKE_PROBE_ANSWERS/section-other.json"
exec cat "$f"
"""


@pytest.fixture
def fake_gpu(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """nvidia-smi, nvcc and the probe binaries it 'builds', all fakes serving synthetic_raw()."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake_answers(synthetic_raw(), tmp_path / "answers")
    (tmp_path / "fake_exe.py").write_text(FAKE_EXE)
    scripts = {
        "nvidia-smi": "#!/bin/sh\necho 'NVIDIA H100 80GB HBM3, 9.0, 580.159.04'\n",
        "nvcc": (
            "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'Cuda compilation tools, release 13.0'; exit 0; fi\n"
            f'echo "$@" >> {tmp_path}/nvcc.log\n'
            'out=\'\'; prev=\'\'\nfor a in "$@"; do [ "$prev" = -o ] && out="$a"; prev="$a"; done\n'
            f'cp {tmp_path}/fake_exe.py "$out" && chmod +x "$out"\n'
        ),
    }
    for name, text in scripts.items():
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("ROOFCALC_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("FAKE_PROBE_ANSWERS", str(tmp_path / "answers"))
    monkeypatch.setitem(sys.modules, "torch", None)  # no PyTorch: its parts are skipped, the rest runs
    return tmp_path


class _Recorder:
    def __init__(self) -> None:
        self.phases: list[str] = []
        self.details: list[str] = []
        self.total = 0

    def plan(self, phases: int) -> None:
        self.total = phases

    def phase(self, name: str) -> None:
        self.phases.append(name)

    def detail(self, text: str) -> None:
        self.details.append(text)


def test_full_run_against_fakes(fake_gpu: Path) -> None:
    rec = _Recorder()
    report, doc = runner.run_probe(False, None, "roofcalc probe", rec)
    names = [c.name for c in report.ceilings]
    assert names[:6] == ["dram_read", "dram_write", "dram_copy", "dram_copy_memcpy", "dram_triad", "l2_read"]
    assert {"bf16_wgmma", "fp16_wgmma", "fp8_wgmma", "tf32_wgmma", "int8_wgmma"} <= set(names)
    assert report.per_sm is not None and report.latency and report.residency and report.floors
    assert report.skipped == [
        "PyTorch is not installed: its floor, GEMM, attention, decode and prefill timings and "
        "the interconnect (NCCL) part skipped"
    ]
    assert "per-SM bandwidth" in rec.phases and "tensor cores: wgmma (sm_90a)" in rec.phases
    assert rec.phases[-1] == "comparing with the engines" and len(rec.phases) <= rec.total
    assert "per_sm: working" in rec.details and "bf16 wgmma variant 1 of 6" in rec.details
    assert set(report.raw["phase_wall_s"]) >= {"per-SM bandwidth", "device-memory and L2 ceilings"}
    log = (fake_gpu / "nvcc.log").read_text().splitlines()
    assert len(log) == 6 and sum("compute_90a,code=sm_90a" in ln for ln in log) == 5
    assert sorted(re.findall(r"-DWGMMA_DT=(\d)", " ".join(log))) == ["0", "1", "2", "3", "4"]
    validate(Hardware, doc, "calibration")
    runner.run_probe(True, None, "roofcalc probe --quick", rec)  # built once: the cache serves the rest
    assert len((fake_gpu / "nvcc.log").read_text().splitlines()) == 6


def test_cli_run_writes_json_calibration_and_raw(fake_gpu: Path) -> None:
    cal, raw = fake_gpu / "cal.yaml", fake_gpu / "raw.json"
    res = probe_cli("--json", "--save-calibration", str(cal), "--save-raw", str(raw))
    assert res.exit_code == 0, res.output
    report = json.loads(res.stdout)  # stdout holds the JSON only; progress went to stderr
    assert report["version"] == 2 and report["per_sm"]["sms_for_90pct"] == 48
    assert "roofcalc probe [1/" in res.stderr and "done in" in res.stderr
    hw = load_calibration(str(cal), "h100")
    assert hw.expected.stream_floor_s is not None and hw.calibration is not None
    assert cal.read_text().startswith("# Written by 'roofcalc probe --save-calibration' (calibration schema 2)")
    again = report_from_file(str(raw))  # the raw file alone rebuilds the report
    assert again.summary == report["summary"]


def test_a_failing_section_is_skipped_with_its_reason(fake_gpu: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_FAIL_SECTION", "floors")
    report, doc = runner.run_probe(True, None, "roofcalc probe --quick", _Recorder())
    assert not report.floors and "launch_overhead" not in [c.name for c in report.ceilings]
    assert report.ceilings[0].name == "dram_read"
    assert doc["expected"].get("stream_floor_s", {}).get("source") != "probe"
    assert any(
        s.startswith("kernel floors and launch overhead: CUDA error cudaErrorIllegalAddress") for s in report.skipped
    )


def test_a_failing_memory_section_is_one_line(fake_gpu: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_FAIL_SECTION", "memory")
    res = probe_cli("--quick")
    assert res.exit_code == 1 and "Traceback" not in res.output
    assert "the probe failed (device-memory and L2 ceilings): CUDA error" in res.output


def test_run_section_timeout_and_garbage(tmp_path: Path) -> None:
    slow = tmp_path / "slow"
    slow.write_text("#!/bin/sh\necho '@progress starting' >&2\nsleep 30\n")
    slow.chmod(0o755)
    seen: list[str] = []
    with pytest.raises(DomainError, match="did not finish in 1 s"):
        runner.run_section([str(slow)], 1, seen.append)
    assert seen == ["starting"]
    junk = tmp_path / "junk"
    junk.write_text("#!/bin/sh\necho 'not json'\n")
    junk.chmod(0o755)
    with pytest.raises(DomainError, match="not JSON"):
        runner.run_section([str(junk)], 10, seen.append)


def test_interconnect_children_and_their_failures(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """torch.distributed.run is a child process given the environment unchanged; what it wrote is kept."""
    doc = dict(_interconnect()["nccl"], env={"NCCL_NVLS_ENABLE": "@NVLS@"})
    (tmp_path / "doc.json").write_text(json.dumps(doc))
    # a shell script (a Python one can take longer to start than the hang test's 1 s on a busy
    # machine): checks its arguments, writes the record with the environment it was given
    fake = tmp_path / "python"
    fake.write_text(
        "#!/bin/sh\n"
        '[ "$1 $2 $3 $4" = "-m torch.distributed.run --standalone --nproc-per-node=2" ] || exit 9\n'
        'case "$5" in *nccl_bench.py) ;; *) exit 9 ;; esac\n'
        'out=""; prev=""; for a in "$@"; do [ "$prev" = --out ] && out="$a"; prev="$a"; done\n'
        f'sed "s/@NVLS@/$NCCL_NVLS_ENABLE/" {tmp_path / "doc.json"} > "$out"\n'
        "echo 'worker log line'\n"
        '[ -n "${FAKE_HANG:-}" ] && sleep 30\n'
        "exit 0\n"
    )
    fake.chmod(0o755)
    monkeypatch.setattr(sys, "executable", str(fake))
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setenv("NCCL_NVLS_ENABLE", "0")
    ic, skipped = runner.run_interconnect(2, False, _Recorder())
    assert (
        ic["nccl"]["rows"] and ic["nccl"]["env"] == {"NCCL_NVLS_ENABLE": "0"} and ic["env"]["NCCL_NVLS_ENABLE"] == "0"
    )
    assert skipped == [next(s for s in skipped if s.startswith("peer-to-peer copy: "))]  # no torch here
    monkeypatch.setenv("FAKE_HANG", "1")
    ic, skipped = runner.run_interconnect(2, False, _Recorder(), timeout=1)
    assert "rows" in ic["nccl"] and skipped[0].startswith(
        "interconnect (NCCL all-reduce): did not finish in 1 s; the sizes measured before that are kept"
    )


def test_progress_display_plain_lines(capsys: pytest.CaptureFixture[str]) -> None:
    with ProgressDisplay(tty=False) as p:
        p.phase("detecting the GPU")
        p.plan(3)
        p.detail("not shown in plain mode")
        p.phase("measuring")
        p.phase("comparing")
    err = capsys.readouterr()
    assert err.out == ""
    lines = err.err.splitlines()
    assert lines[0].startswith("roofcalc probe [1] detecting the GPU")
    assert lines[1].startswith("roofcalc probe [2/3] measuring") and lines[2].startswith(
        "roofcalc probe [3/3] comparing"
    )
    assert lines[-1].startswith("roofcalc probe: done in")


def test_device_text_is_escaped(synthetic: Any) -> None:
    report, _ = synthetic
    hostile = report.model_copy(
        update={"device": {**report.device, "name": "[bold red]GPU[/]"}, "notes": ["[link=x]n[/link]"]}
    )
    c = console()
    with c.capture() as cap:
        probe_report(c, hostile)
    assert "[bold red]GPU[/]" in cap.get() and "[link=x]n[/link]" in cap.get()


def test_plot_needs_a_curve_and_a_known_format(tmp_path: Path) -> None:
    old = str(VALIDATION / "h100" / "probe.json")
    res = probe_cli("--report", old, "--plot", str(tmp_path / "x.png"))
    assert res.exit_code == 1 and "no per-SM bandwidth curve" in res.output
    res = probe_cli("--report", old, "--plot", str(tmp_path / "x.bmp"))
    assert res.exit_code == 2 and "unknown chart format" in res.output


def test_plot_of_the_curve(tmp_path: Path, synthetic: Any) -> None:
    pytest.importorskip("matplotlib")
    report, _ = synthetic
    path = tmp_path / "probe.json"
    path.write_text(json.dumps(report.model_dump(mode="json")))
    res = probe_cli("--report", str(path), "--plot", str(tmp_path / "per-sm.svg"), "--json")
    assert res.exit_code == 0, res.output
    assert (tmp_path / "per-sm.svg").read_text().lstrip().startswith("<?xml")
    json.loads(res.stdout)


# ------------------------------------------------------------------ failure modes of the environment


def test_no_gpu(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(shutil, "which", lambda name: None)
    out = tmp_path / "cal.yaml"
    res = probe_cli("--save-calibration", str(out))
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
    fake.write_text(
        "#!/bin/sh\nif [ \"$1\" = --version ]; then echo 'release 0.0'; exit 0; fi\n"
        "echo 'probe.cu(1): error: something broke' >&2; exit 1\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    with pytest.raises(DomainError, match=r"nvcc failed: probe\.cu\(1\): error: something broke"):
        runner.build_probe(str(fake), "90", cache_dir=tmp_path / "cache")
    assert not any((tmp_path / "cache").iterdir())  # nothing half-built left behind


def test_write_atomic(tmp_path: Path) -> None:
    target = tmp_path / "cal.yaml"
    runner.write_atomic(str(target), "a: 1\n")
    assert target.read_text() == "a: 1\n"
    assert stat.S_IMODE(target.stat().st_mode) & 0o044  # readable by others, like a normal file
    with pytest.raises(InputError, match="cannot write"):
        runner.write_atomic(str(tmp_path / "missing" / "cal.yaml"), "x")
    assert [p.name for p in tmp_path.iterdir()] == ["cal.yaml"]  # nothing half-written left behind


def test_calibrated_op_from_the_cli() -> None:
    from .conftest import run

    cal = str(VALIDATION / "h100" / "calibration.yaml")
    d = json.loads(run("op", "gemm", "--m", "8192", "--hw", "h100", "--calibration", cal, "--json").stdout)
    assert d["calibrated"] is True and d["peak_flops_per_s"] < 989.4e12
    res = run("op", "gemm", "--hw", "a100", "--calibration", cal)
    assert res.exit_code == 2 and "calibrates h100, not a100" in res.output


# ------------------------------------------------------------------ the CUDA sources


@pytest.mark.slow
def test_cuda_sources_compile(tmp_path: Path, verified: VerifiedFor) -> None:
    """probe.cu for sm_90 and wgmma.cu for sm_90a (bf16: HGMMA): nvcc's front end without
    optimisation, then ptxas, which checks the inline PTX (wgmma, mma.sync, fences) for the
    target. The optimised builds take minutes on a 2-core machine; the runner's own build and
    its cache are checked with a tiny source below. A pure function of the sources and the
    compiler: checked once per their bytes and nvcc's version (tests/conftest.py Verified)."""
    try:
        nvcc = runner.find_nvcc()
    except DomainError as e:
        if os.environ.get("CI") == "true" and Path("/usr/local/cuda").exists():
            raise
        pytest.skip(str(e))
    ptxas = Path(nvcc).with_name("ptxas")
    src = Path(runner.__file__).with_name("probe.cu")
    jobs: list[tuple[Path, str, str, str]] = [(src, "sm_90", "compute_90", "")]
    jobs += [(src.with_name("wgmma.cu"), "sm_90a", "compute_90a", f"-DWGMMA_DT={runner.WGMMA_DTYPES.index('bf16')}")]

    def check() -> None:
        procs = []
        for i, (cu, sm, compute, define) in enumerate(jobs):
            ptx = tmp_path / f"{i}.ptx"
            cmd = (
                f"{nvcc} -ptx -std=c++17 -Xcicc -O0 -gencode=arch={compute},code={compute} {define} -o {ptx} {cu}"
                f" && {ptxas} -O0 -arch={sm} -o {tmp_path / f'{i}.cubin'} {ptx}"
            )
            procs.append(subprocess.Popen(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True))
        for p in procs:
            out, _ = p.communicate(timeout=120)
            assert p.returncode == 0, out[-2000:]

    versions = tool_version(nvcc) + tool_version(str(ptxas))
    verified.once(f"cuda-sources:{nvcc}:{versions}", sorted(src.parent.glob("*.cu*")), check)


def test_runner_build_is_cached(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Build: one compile per source, target, flags and nvcc; a second request finds the cached binary.
    (A stand-in compiler that writes the -o file: the real nvcc is exercised above.)"""
    nvcc = tmp_path / "nvcc"
    nvcc.write_text(
        '#!/bin/sh\nif [ "$1" = "--version" ]; then echo "Build cuda_13.0 fake"; exit 0; fi\n'
        'while [ $# -gt 0 ]; do if [ "$1" = "-o" ]; then shift; echo bin > "$1"; fi; shift; done\n'
    )
    nvcc.chmod(0o755)
    nvcc = str(nvcc)  # type: ignore[assignment]
    monkeypatch.setattr(runner, "cuda_source", lambda name: "__global__ void k() {}\nint main() { return 0; }\n")
    exe = runner.Build(nvcc, "probe.cu", "probe-sm90", "arch=compute_90,code=sm_90", cache_dir=tmp_path).wait()
    assert re.match(r"probe-sm90-[0-9a-f]{16}$", exe.name) and exe.is_file()
    assert runner.build_probe(nvcc, "90", cache_dir=tmp_path) == exe  # cached: no second compile


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda raw: raw["torch"]["gemm"].append({"label": "gemv"}), "raw.torch.gemm[{i}] needs a label and a dtype"),
        (
            lambda raw: raw["torch"]["gemm"].append({"label": "gemv", "dtype": "bf16", "m": -5, "n": 1, "k": 8}),
            "raw.torch.gemm[{i}].m must be a whole number of at least 1 (got -5)",
        ),
        (lambda raw: raw.update(ceilings=None), "raw.ceilings must be a list of rows, each with a name"),
    ],
)
def test_a_saved_report_with_malformed_rows_is_refused(tmp_path: Path, edit: Any, message: str) -> None:
    saved = _load("h100")
    saved["raw"].setdefault("torch", {}).setdefault("gemm", [])
    i = len(saved["raw"]["torch"]["gemm"])
    edit(saved["raw"])
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(saved))
    res = probe_cli("--report", str(path))
    assert res.exit_code == 2 and "Traceback" not in res.output
    assert f"{path}: {message.format(i=i)}" in res.output


@pytest.mark.parametrize("dev", ["h100", "h200"])
def test_calibration_derives_the_pre_hopper_gemm_floors(dev: str) -> None:
    """The probe's one-k-block GEMM rows give expected.gemm_kernel_floor_extra_s as the registry
    has it from validation/bench/gemm_floors.py: here the bench's own timings, put in a saved
    probe run as the probe would record them."""
    saved = json.loads((VALIDATION / "probe" / dev / "probe.json").read_text())
    raw = copy.deepcopy(saved["raw"])
    bench = json.loads((VALIDATION / "expected" / dev / "kernels" / "gemm-floors.json").read_text())
    names = {"bfloat16": "bf16"}
    for case in bench["cases"]:
        p = case.get("params") or {}
        if p.get("m") == 1024 and len(case["kernels"]) == 1:
            dtype = names.get(case["dtype"]) or ("tf32" if case["allow_tf32"] else "fp32")
            raw["torch"]["gemm"].append(
                {
                    "label": "one k-block in a graph",
                    "dtype": dtype,
                    **p,
                    "samples_s": case["per_node_s"],
                    "verified": True,
                }
            )
    base = load_hardware(dev)
    doc = calibrated_hardware(base, raw, _meta(saved))
    got = doc["expected"]["gemm_kernel_floor_extra_s"]
    for path, fig in base.expected.gemm_kernel_floor_extra_s.items():
        assert got[path]["source"] == "probe" and "less its modelled time" in got[path]["note"]
        assert got[path]["value"] == pytest.approx(float(fig.value), rel=5e-3)
    # without those rows the calibration keeps the registry's figures
    kept = calibrated_hardware(base, saved["raw"], _meta(saved))["expected"]["gemm_kernel_floor_extra_s"]
    assert all(kept[p]["source"] == "bench-gemm-floors" for p in kept)


def test_odd_one_k_block_rows_are_left_out_not_fatal() -> None:
    """A one-k-block row of a dtype the derivation does not take, a TMA row the report rejects as
    impossible, and duplicates: the calibration is still written; the impossible row is not the
    reference; of two rows of one path the median (of two, the larger) is taken."""
    saved = json.loads((VALIDATION / "probe" / "h100" / "probe.json").read_text())
    base = load_hardware("h100")

    def row(dtype: str, m: int, k: int, s: float) -> dict[str, Any]:
        return {
            "label": "one k-block in a graph",
            "dtype": dtype,
            "m": m,
            "n": m,
            "k": k,
            "samples_s": [s] * 5,
            "verified": True,
        }

    raw = copy.deepcopy(saved["raw"])
    raw["torch"]["gemm"] += [row("bogus", 1024, 8, 4e-6), row("fp4", 1024, 64, 4e-6), row("bf16", 10**6, 64, 3e-6)]
    raw["torch"]["gemm"] += [row("fp32", 1024, 8, 4.0e-6), row("fp32", 1024, 8, 9.0e-6)]
    doc = calibrated_hardware(base, raw, _meta(saved))
    extra = doc["expected"]["gemm_kernel_floor_extra_s"]
    assert all(f["source"] == "bench-gemm-floors" for f in extra.values())  # no usable TMA reference
    raw["torch"]["gemm"].append(row("bf16", 1024, 64, 3.4e-6))
    simt = calibrated_hardware(base, raw, _meta(saved))["expected"]["gemm_kernel_floor_extra_s"]["simt"]
    # a residue past what a figure may be is a note, not a failed report
    notes: list[str] = []
    huge = copy.deepcopy(raw)
    huge["torch"]["gemm"].append(row("tf32", 1024, 16, 1e40))
    doc = calibrated_hardware(base, huge, _meta(saved), notes)
    assert doc["expected"]["gemm_kernel_floor_extra_s"]["tf32"]["source"] == "bench-gemm-floors"
    assert any("gemm_kernel_floor_extra_s.tf32 not written" in n for n in notes)
    want = (
        gemm_floor_residue(base, "fp32", 1024, 1024, 8, 9.0e-6)[1]
        - gemm_floor_residue(base, "bf16", 1024, 1024, 64, 3.4e-6)[1]
    )
    assert simt["source"] == "probe" and simt["value"] == pytest.approx(want, rel=1e-9)


def test_calibration_notes_the_compiled_chains_and_writes_no_compiled_figures() -> None:
    """The probe's torch_compiled_floor record (here the one host_rate.py committed, as the probe
    would store it) is described in a note, its slope and intercept of the per-call time over the
    kernels per call (by hand from the medians), and gives no expected.compiled_* figures: compiled
    code's figures follow the op floor (roofcalc/expected/card.py COMPILED_KERNEL_OPS)."""
    from roofcalc.expected import COMPILED_KERNEL_OPS, card

    saved = json.loads((VALIDATION / "probe" / "h100" / "probe.json").read_text())
    raw = copy.deepcopy(saved["raw"])
    rec = json.loads((VALIDATION / "expected" / "h100" / "host" / "run3" / "host-rate.json").read_text())
    cf = rec["torch_compiled"]
    raw["torch"]["compiled_floor"] = cf
    (lo, hi) = sorted(cf["chains"], key=lambda c: c["kernels"])
    assert (lo["kernels"], hi["kernels"]) == (2, 16)  # one and eight (GEMM + Triton) links

    def med(xs: list[float]) -> float:
        return sorted(xs)[len(xs) // 2]

    slope = (med(hi["samples_s"]) - med(lo["samples_s"])) / 14
    entry = med(lo["samples_s"]) - 2 * slope
    assert 15e-6 < slope < 30e-6  # 19.1 us on that host
    notes: list[str] = []
    doc = calibrated_hardware(load_hardware("h100"), raw, _meta(saved), notes)
    e = doc["expected"]
    assert "compiled_kernel_host_s" not in e and "compiled_entry_host_s" not in e
    want = f"the compiled chains took {slope * 1e6:.2f} us a kernel and {entry * 1e6:.1f} us a call"
    assert any(want in n for n in notes), notes
    c = card(Hardware.model_validate(doc))
    assert c.compiled_kernel == pytest.approx(COMPILED_KERNEL_OPS * e["torch_op_floor_s"]["value"], rel=1e-12)


@pytest.mark.parametrize(
    "bad",
    [
        {"chains": [{"kernels": 2, "samples_s": []}, {"kernels": 16, "samples_s": [1e-4]}], "verified": True},
        {"chains": "ab", "verified": True},
        [1, 2],
        {"chains": [{"kernels": None, "samples_s": [1e-4]}], "verified": True},
    ],
)
def test_a_malformed_compiled_floor_record_is_named_not_fatal(bad: object) -> None:
    """A probe record whose compiled-call floor is malformed: the calibration is still written,
    and a note says why the chains were not read."""
    from roofcalc.probe.torch_ops import compiled_floor_fit

    saved = json.loads((VALIDATION / "probe" / "h100" / "probe.json").read_text())
    raw = copy.deepcopy(saved["raw"])
    raw["torch"]["compiled_floor"] = bad
    notes: list[str] = []
    doc = calibrated_hardware(load_hardware("h100"), raw, _meta(saved), notes)
    assert "compiled_kernel_host_s" not in doc["expected"]
    assert any("the compiled chains gave no fit: the record is malformed" in n for n in notes)
    with pytest.raises(ValueError, match="torch_compiled"):
        compiled_floor_fit(bad)


def test_the_op_floor_spreads_its_samples_over_seconds(monkeypatch: pytest.MonkeyPatch) -> None:
    """PyTorch's op floor in a probe pauses TORCH_OP_GAP_S between its samples (hosts switch the
    CPU's speed within seconds: validation/traces/h200/host-state1), says so in its method, and the
    benchmarks' hot loop around a case (gap 0) does not pause at all."""
    from roofcalc.probe import torch_ops
    from roofcalc.probe.report import floor_rows

    class Tensor:
        def __init__(self) -> None:
            self.v = 0.0

        def add_(self, k: float) -> None:
            self.v += k

        def item(self) -> float:
            return self.v

    class FakeTorch:
        float32 = "float32"

        class cuda:  # torch.cuda
            @staticmethod
            def synchronize() -> None:
                pass

        @staticmethod
        def zeros(*_: Any, **__: Any) -> Tensor:
            return Tensor()

    sleeps: list[float] = []
    monkeypatch.setattr(torch_ops.time, "sleep", sleeps.append)
    rec = torch_ops.torch_op_floor(FakeTorch, 25, n=10, gap_s=runner.TORCH_OP_GAP_S)
    assert rec["verified"] and len(rec["samples_s"]) == 25
    assert sleeps == [runner.TORCH_OP_GAP_S] * 24 and rec["gap_s"] == runner.TORCH_OP_GAP_S
    [row] = floor_rows({"torch": {"floor": rec}})
    assert row.method.endswith(f"samples {runner.TORCH_OP_GAP_S:g} s apart") and row.samples == 25
    sleeps.clear()
    torch_ops.torch_op_floor(FakeTorch, 7, n=10)
    assert sleeps == []
    for bad in (float("inf"), float("nan"), -1.0, True, "0.1"):
        [row] = floor_rows({"torch": {"floor": {**rec, "gap_s": bad}}})
        assert "apart" not in row.method

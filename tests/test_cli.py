"""The CLI: exit codes, the JSON contract, errors as one line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from roofcalc.hardware import load_hardware

from .conftest import DATA, run, run_json

CONTRACT = {
    "op",
    "hardware",
    "dtype",
    "params",
    "flops",
    "bytes",
    "bytes_breakdown",
    "intensity",
    "ridge",
    "bound",
    "peak_flops_per_s",
    "bandwidth_bytes_per_s",
    "t_compute_s",
    "t_memory_s",
    "t_overhead_s",
    "predicted_s",
    "attainable_flops_per_s",
    "warnings",
    "version",
}


def test_gemm_table() -> None:
    res = run("op", "gemm", "--m", "8192", "--hw", "h100")
    assert res.exit_code == 0
    out = res.stdout
    for text in ("1.10 TFLOP", "402.7 MB", "COMPUTE-BOUND", "1.11 ms", "A ", "B ", "C_write"):
        assert text in out


def test_gemm_json_contract() -> None:
    d = run_json("op", "gemm", "--m", "4096", "--n", "14336", "--k", "4096", "--dtype", "fp8", "--hw", "b200")
    assert set(d) >= CONTRACT
    assert d["hardware"] == "b200" and d["dtype"] == "fp8" and d["bound"] == "compute"
    assert d["flops"] == 2 * 4096 * 14336 * 4096
    assert d["peak_flops_per_s"] == 4.5e15  # dense, not the 9 PF sparse headline
    assert d["predicted_s"] == pytest.approx(max(d["t_compute_s"], d["t_memory_s"]) + d["t_overhead_s"])
    assert sum(b["bytes"] for b in d["bytes_breakdown"]) == d["bytes"]


@pytest.mark.parametrize(
    "args",
    [
        ["op", "dot", "--n", "4096", "--dtype", "fp16"],
        ["op", "gemv", "--m", "4096", "--n", "4096"],
        ["op", "softmax", "--rows", "4096", "--cols", "32000"],
        ["op", "layernorm", "--rows", "16384", "--cols", "4096"],
        [
            "op",
            "attention",
            "--batch",
            "1",
            "--heads",
            "32",
            "--kv-heads",
            "8",
            "--seq",
            "8192",
            "--head-dim",
            "128",
            "--causal",
            "--impl",
            "flash",
        ],
        ["op", "decode", "--model", "llama-3.1-8b", "--batch", "1", "--context", "1024"],
        ["op", "prefill", "--model", "llama-3.1-70b", "--batch", "1", "--seq", "2048"],
    ],
)
def test_issue_examples_run(args: list[str]) -> None:
    res = run(*args)
    assert res.exit_code == 0, res.output
    d = run_json(*args)
    assert d["op"] == args[1]
    assert d["bound"] in ("memory", "compute")


def test_env_default_hardware() -> None:
    res = run("op", "gemm", "--m", "64", "--json", env={"ROOFCALC_HW": "a100"})
    assert json.loads(res.stdout)["hardware"] == "a100"
    assert run_json("op", "gemm", "--m", "64")["hardware"] == "h100"


def test_alias_and_case() -> None:
    assert run_json("op", "gemm", "--m", "64", "--hw", "H100-SXM")["hardware"] == "h100"


def test_hw_file() -> None:
    d = run_json("op", "gemm", "--m", "64", "--hw-file", str(DATA / "seed002-h100.yaml"))
    assert d["peak_flops_per_s"] == 1e15


def test_size_suffix_accepted() -> None:
    assert run_json("op", "gemm", "--m", "8k")["params"]["m"] == 8192


def test_op_list() -> None:
    res = run("op", "--list")
    assert res.exit_code == 0
    for name in ("dot", "gemv", "gemm", "softmax", "layernorm", "attention", "decode", "prefill"):
        assert name in res.stdout
    ops = json.loads(run("op", "--list", "--json").stdout)
    assert {o["op"] for o in ops} >= {"gemm", "decode"}


def test_hw_list_and_show() -> None:
    res = run("hw", "list")
    assert res.exit_code == 0 and "h100-pcie" in res.stdout and "m3-max" in res.stdout
    show = run("hw", "show", "h100")
    assert show.exit_code == 0
    assert "Hopper" in show.stdout and "datasheet" in show.stdout and "measured" in show.stdout
    # a table of times by key reads as times, like the scalar ones (h100.yaml's simt figure, in ns)
    simt = load_hardware("h100").expected.gemm_kernel_floor_extra_s["simt"].value
    row = next(line for line in show.stdout.splitlines() if "gemm_kernel_floor_extra_s.simt" in line)
    assert f"{simt * 1e9:.0f} ns" in row
    d = json.loads(run("hw", "show", "m3-max", "--json").stdout)
    assert "registers_per_sm" in d["unknown"] and d["sm"]["registers_per_sm"] is None


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (["op", "gemm", "--m", "0"], 2, "--m: must be at least 1"),
        (["op", "gemm", "--m", "-4"], 2, "must be at least 1"),
        (["op", "gemm", "--m", "abc"], 2, "'abc' is not an integer"),
        (["op", "gemm", "--m", "1.5"], 2, "not an integer"),
        (["op", "gemm", "--m", "99999999999999999999"], 2, "absurdly large"),
        (["op", "gemm", "--hw", "h1000"], 2, "unknown hardware 'h1000' (did you mean"),
        (["op", "gemm", "--dtype", "fp9"], 2, "unknown dtype 'fp9' (did you mean"),
        (["op", "gemn"], 2, "unknown op 'gemn' (did you mean"),
        (["op", "gemm", "--dtype", "fp4", "--hw", "h100"], 1, "h100 has no fp4 peak"),
        (["op", "gemm", "--dtype", "fp8", "--hw", "a100"], 1, "a100 has no fp8 peak"),
        (["op", "gemm", "--hw-file", "/no/such.yaml"], 2, "no such hardware file"),
        (["op", "decode"], 2, "needs --layers (or --model)"),
        (["op", "decode", "--model", "llama-4"], 2, "unknown model"),
        (["hw", "show", "tpu"], 2, "unknown hardware 'tpu'"),
    ],
)
def test_errors_are_one_line(args: list[str], code: int, text: str) -> None:
    res = run(*args)
    assert res.exit_code == code, res.output
    assert text in res.output
    assert "Traceback" not in res.output
    assert res.stdout == "" or "Usage:" in res.output  # nothing half-written on stdout


@pytest.mark.parametrize(
    ("yaml_text", "text"),
    [
        ("name: x\n  bad: [", "invalid YAML"),
        ("- a list", "expected a mapping"),
        ("name: x\nvendor: y\n", "required field is missing"),
    ],
)
def test_bad_hw_file(tmp_path, yaml_text: str, text: str) -> None:  # type: ignore[no-untyped-def]
    p = tmp_path / "mine.yaml"
    p.write_text(yaml_text)
    res = run("op", "gemm", "--hw-file", str(p))
    assert res.exit_code == 2
    assert str(p) in res.output and text in res.output


def test_hw_file_typo_names_the_field(tmp_path) -> None:  # type: ignore[no-untyped-def]
    src = (DATA / "seed002-h100.yaml").read_text().replace("bandwidth_bytes_per_s", "bandwith_bytes_per_s")
    p = tmp_path / "typo.yaml"
    p.write_text(src)
    res = run("op", "gemm", "--hw-file", str(p))
    assert res.exit_code == 2
    assert (
        f"{p}: memory.bandwith_bytes_per_s: unknown key (did you mean 'bandwidth_bytes_per_s'?) (+1 more)" in res.output
    )


def test_hw_file_negative_peak(tmp_path) -> None:  # type: ignore[no-untyped-def]
    src = (DATA / "seed002-h100.yaml").read_text().replace("1.0e15", "-1.0e15", 1)
    p = tmp_path / "neg.yaml"
    p.write_text(src)
    res = run("op", "gemm", "--hw-file", str(p))
    assert res.exit_code == 2 and "peak_flops_per_s.bf16: value must not be negative" in res.output


def test_python_dash_m() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "roofcalc", "op", "gemm", "--m", "64", "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert json.loads(out.stdout)["op"] == "gemm"


def test_help_has_examples() -> None:
    for args in (["--help"], ["op", "--help"], ["op", "gemm", "--help"], ["hw", "--help"]):
        res = run(*args)
        assert res.exit_code == 0 and "roofcalc" in res.stdout and "xample" in res.stdout

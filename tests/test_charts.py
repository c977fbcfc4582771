"""Charts, comparisons and sweeps: files written, data equal to the tables, bad input refused."""

from __future__ import annotations

import builtins
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from roofcalc import analyze
from roofcalc.charts import parse_range

from .conftest import run, run_json

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.mark.parametrize("ext", ["png", "svg"])
def test_roofline_files(tmp_path: Path, ext: str) -> None:
    out = tmp_path / f"roofline.{ext}"
    res = run(
        "roofline",
        "--hw",
        "h100",
        "--op",
        "gemm:m=8192",
        "--op",
        "gemv:m=4096,n=4096",
        "--op",
        "decode:model=llama-3.1-8b,batch=8",
        "-o",
        str(out),
    )
    assert res.exit_code == 0, res.output
    data = out.read_bytes()
    assert 5_000 < len(data) < 3_000_000
    if ext == "png":
        assert data.startswith(PNG)
    elif ext == "svg":
        root = ET.fromstring(data)
        assert root.tag.endswith("svg")
        assert b"gemv m=4096 n=4096" in data and b"ridge 295 FLOP/B" in data
    else:
        assert data.startswith(b"%PDF")


def test_chart_points_are_the_table_numbers() -> None:
    chart = run_json("roofline", "--hw", "h100", "--hw", "h200", "--op", "gemm:m=8192", "--op", "gemv:m=4096")
    assert len(chart["points"]) == 4 and {r["hardware"] for r in chart["roofs"]} == {"h100", "h200"}
    for p in chart["points"]:
        name, _, rest = p["label"].partition(" ")
        params = dict(kv.split("=") for kv in rest.split())
        r = analyze(name, p["hardware"], **params)
        assert p["intensity"] == r.intensity and p["attainable_flops_per_s"] == r.attainable_flops_per_s


def test_roofline_in_the_terminal() -> None:
    res = run("roofline", "--hw", "h100", "--op", "gemm:m=8192", "--op", "gemv:m=4096,n=4096")
    assert res.exit_code == 0
    out = res.stdout
    assert "1  gemm m=8192 on h100: intensity 2,731 FLOP/B" in out
    assert "ridge (R) at 295 FLOP/B" in out and "FLOP/B" in out


def test_roofline_with_calibration(tmp_path: Path) -> None:
    cal = Path(__file__).resolve().parent.parent / "validation" / "h100" / "calibration.yaml"
    chart = run_json("roofline", "--hw", "h100", "--op", "gemm:m=8192", "--calibration", str(cal))
    kinds = {(r["hardware"], r["calibrated"]) for r in chart["roofs"]}
    assert kinds == {("h100", False), ("h100-measured", True)}


def test_compare() -> None:
    res = run("compare", "gemm", "--m", "8192", "--hw", "h100,h200,a100,b200,m3-max")
    assert res.exit_code == 0
    assert "b200 (fastest)" in res.stdout
    assert "skipped m3-max: m3-max has no bf16 peak" in res.output
    rows = json.loads(run("compare", "gemm", "--m", "8192", "--hw", "h100,h200,a100,b200", "--json").stdout)
    assert [r["hardware"] for r in rows] == ["h100", "h200", "a100", "b200"]
    assert min(rows, key=lambda r: r["predicted_s"])["hardware"] == "b200"


def test_sweep_crossover_by_hand() -> None:
    # square bf16 GEMM: intensity 2m^3 / (3 m^2 * 2 B) = m/3; ridge 989.4e12 / 3.35e12 = 295.34,
    # so compute-bound from m = ceil(3 * 295.34) = 887
    d = run_json("sweep", "gemm", "--m", "1..16384", "--hw", "h100")
    assert d["values"] == [2**i for i in range(15)]
    assert d["crossover"]["h100"]["value"] == 887
    table = run("sweep", "gemm", "--m", "1..16384", "--hw", "h100")
    assert "turns compute-bound at --m 887" in table.stdout


def test_sweep_two_hardware_and_chart(tmp_path: Path) -> None:
    out = tmp_path / "sweep.png"
    res = run("sweep", "decode", "--model", "llama-3.1-8b", "--batch", "1..512", "--hw", "h100,h200", "-o", str(out))
    assert res.exit_code == 0, res.output
    assert out.read_bytes().startswith(PNG)
    assert "h100:" in res.stdout and "h200:" in res.stdout


@pytest.mark.parametrize(
    ("text", "steps", "linear", "expected"),
    [
        ("1..16384", None, False, [2**i for i in range(15)]),
        ("3..20", None, False, [3, 6, 12, 20]),
        ("1..1000", 4, False, [1, 10, 100, 1000]),
        ("10..50", 5, True, [10, 20, 30, 40, 50]),
    ],
)
def test_parse_range(text: str, steps: int | None, linear: bool, expected: list[int]) -> None:
    assert parse_range(text, steps, linear) == expected


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["sweep", "gemm", "--m", "512..64"], "empty or reversed"),
        (["sweep", "gemm", "--m", "64..64"], "empty or reversed"),
        (["sweep", "gemm", "--m", "0..64"], "start must be at least 1"),
        (["sweep", "gemm", "--m", "1..100000", "--linear", "--steps", "500"], "--steps must be 2..200"),
        (["sweep", "gemm", "--m", "64"], "exactly one parameter as a range"),
        (["sweep", "gemm", "--m", "1..8", "--k", "1..8"], "only one parameter can be swept"),
        (["sweep", "gemm", "--m", "1..x"], "range '1..x'"),
        (["roofline", "--op", "gemx:m=1"], "unknown op 'gemx'"),
        (["roofline", "--op", "gemm:q=1"], "no parameter 'q'"),
        (["roofline", "--op", "gemm:m=abc"], "--m: 'abc' is not an integer"),
        (["roofline", "--op", "gemm:m"], "is not param=value"),
        (["roofline", "--op", ":m=1"], "expected NAME"),
    ],
)
def test_bad_input_exit_2(args: list[str], text: str) -> None:
    res = run(*args)
    assert res.exit_code == 2, res.output
    assert text in res.output and "Traceback" not in res.output


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("chart.jpg", "unknown chart format .jpg"),
        ("chart", "unknown chart format (no extension)"),
        ("missing/chart.png", "does not exist"),
    ],
)
def test_bad_output_paths(tmp_path: Path, name: str, text: str) -> None:
    out = tmp_path / name
    res = run("roofline", "--op", "gemm:m=64", "-o", str(out))
    assert res.exit_code == 2 and text in res.output
    assert list(tmp_path.iterdir()) == []  # nothing half-written


def test_unwritable_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    ro = tmp_path / "ro"
    ro.mkdir()
    real_access = os.access
    # root can write anywhere, so the folder's permission is simulated
    monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == ro else real_access(p, mode))
    res = run("roofline", "--op", "gemm:m=64", "-o", str(ro / "c.png"))
    assert res.exit_code == 2 and "not writable" in res.output
    assert list(ro.iterdir()) == []


def test_without_matplotlib(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    real_import = builtins.__import__

    def fake_import(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "matplotlib" or name.startswith("matplotlib."):
            raise ImportError("no matplotlib")
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", fake_import)
    res = run("roofline", "--op", "gemm:m=64", "-o", str(tmp_path / "c.png"))
    assert res.exit_code == 1 and "pip install 'roofcalc[plot]'" in res.output
    assert not (tmp_path / "c.png").exists()
    assert run("roofline", "--op", "gemm:m=64").exit_code == 0  # the terminal chart needs nothing


def test_occupancy_plot_and_curves(tmp_path: Path) -> None:
    out = tmp_path / "occ.png"
    res = run("occupancy", "--hw", "h100", "--threads", "256", "--regs", "64", "--smem", "32k", "--plot", str(out))
    assert res.exit_code == 0 and out.read_bytes().startswith(PNG)
    from roofcalc import occupancy
    from roofcalc.charts import occupancy_curves
    from roofcalc.hardware import load_hardware

    for threads, regs, smem in ((256, 64, 32 * 1024), (100, 37, 12345)):
        oc = occupancy_curves(load_hardware("h100"), threads, regs, smem)
        r = occupancy("h100", threads=threads, regs=regs, smem=smem)
        for cv in oc.curves:
            # the marked point of every curve is the configuration's own occupancy
            assert cv.current in cv.x
            assert cv.occupancy[cv.x.index(cv.current)] == r.occupancy
    text = run("occupancy", "--hw", "h100", "--threads", "256", "--regs", "64", "--smem", "32k").stdout
    assert "occupancy curves" in text and "registers per thread" in text

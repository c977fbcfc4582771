"""Every chart roofcalc writes, opened: an SVG of a sane size whose labels are what the chart
shows (matplotlib keeps each text as a comment beside its glyphs)."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from .conftest import run

ROOT = Path(__file__).resolve().parent.parent

CHARTS = {
    "sweep": (
        ["sweep", "gemm", "--m", "64..4096", "--hw", "h100"],
        ["time (s): bound and expected", "h100 bound", "h100 expected", "attainable FLOP/s"],
    ),
    "occupancy": (
        ["occupancy", "--hw", "h100", "--threads", "256", "--regs", "64", "--smem", "32k"],
        ["threads per block", "occupancy (%)"],
    ),
    "kernels": (
        ["kernels", str(ROOT / "tests/data/kernels/h200/ncu-torch.csv"), "--hw", "h200"],
        ["arithmetic intensity (FLOP/byte)", "attainable FLOP/s", "roofline"],
    ),
    "probe": (
        ["probe", "--report", str(ROOT / "validation/probe/h100/probe.json")],
        ["SMs busy (one block each)"],
    ),
    "trace": (
        ["trace", str(ROOT / "validation/traces/h200/hf1/traces/hf-sdpa-llama-1b-decode-b3-c1000.json.gz")],
        ["traced ops against the roofline", "achieved FLOP/s (area: GPU time)", "aten::mm"],
    ),
}


@pytest.mark.parametrize("name", sorted(CHARTS))
def test_every_chart_opens_with_its_labels(tmp_path: Path, name: str) -> None:
    pytest.importorskip("matplotlib")
    args, labels = CHARTS[name]
    out = tmp_path / f"{name}.svg"
    res = run(*args, "--plot", str(out))
    assert res.exit_code == 0, res.output
    data = out.read_text()
    assert 5_000 < len(data) < 3_000_000 and ET.fromstring(data).tag.endswith("svg")
    texts = set(re.findall(r"<!-- (.*?) -->", data))
    missing = [label for label in labels if label not in texts]
    assert not missing, (missing, sorted(t for t in texts if len(t) < 60)[:30])

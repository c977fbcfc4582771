"""The YAML data ships inside the wheel and loads from an install outside the checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_wheel_contains_data(tmp_path: Path) -> None:
    if (
        shutil.which("pip") is None
        and subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode
    ):
        pytest.skip("pip is not available")
    out = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w", str(tmp_path), str(ROOT)],
        capture_output=True,
        text=True,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    wheel = next(tmp_path.glob("roofcalc-*.whl"))
    names = set(zipfile.ZipFile(wheel).namelist())
    for f in (ROOT / "hardware").glob("*.yaml"):
        assert f"roofcalc/hwdata/{f.name}" in names
    for f in (ROOT / "ops").glob("*.yaml"):
        assert f"roofcalc/opdata/{f.name}" in names
    # and it runs from the unpacked wheel, far from the checkout
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = dict(os.environ, PYTHONPATH=str(site))
    res = subprocess.run(
        [sys.executable, "-m", "roofcalc", "op", "gemm", "--m", "8192", "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    assert '"bound": "compute"' in res.stdout

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
    # build from a copy without build/ (a stale build/lib would hide a package missing from pyproject)
    src = tmp_path / "src"
    shutil.copytree(
        ROOT,
        src,
        ignore=shutil.ignore_patterns(
            "build",
            "dist",
            ".git",
            "*.egg-info",
            "__pycache__",
            ".whl",
            "validation",
            "docs",
            ".gl",
            "tests",
            "benchmarks",
            # tool caches (mypy's is tens of megabytes and is written by test_lint meanwhile)
            ".mypy_cache",
            ".ruff_cache",
            ".pytest_cache",
            ".hypothesis",
            ".benchmarks",
        ),
    )
    # the build backend pyproject.toml names, called in the copy as a PEP 517 front end without
    # build isolation calls it (pip wheel --no-build-isolation), without pip's own start-up
    backend = "setuptools.build_meta"
    assert f'build-backend = "{backend}"' in (ROOT / "pyproject.toml").read_text()
    out = subprocess.run(
        [sys.executable, "-c", f"import sys, {backend} as b; b.build_wheel(sys.argv[1])", str(tmp_path)],
        cwd=src,
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
    for f in (ROOT / "models").glob("*.yaml"):
        assert f"roofcalc/modeldata/{f.name}" in names
    # every module and CUDA source of the package (a subpackage left out of pyproject's list
    # would install a CLI that cannot start)
    for f in (ROOT / "roofcalc").rglob("*"):
        if f.suffix in (".py", ".cu", ".typed") and "__pycache__" not in f.parts:
            assert f"roofcalc/{f.relative_to(ROOT / 'roofcalc').as_posix()}" in names, f
    # and it runs from the unpacked wheel, far from the checkout
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    env = dict(os.environ, PYTHONPATH=str(site))
    res = subprocess.run(
        [sys.executable, "-c", "import roofcalc, sys; sys.stderr.write(roofcalc.__file__)"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0 and res.stderr.startswith(str(site)), res.stderr  # the wheel's, not the checkout's
    res = subprocess.run(
        [sys.executable, "-m", "roofcalc", "op", "gemm", "--m", "8192", "--json"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert res.returncode == 0, res.stderr
    assert '"bound": "compute"' in res.stdout

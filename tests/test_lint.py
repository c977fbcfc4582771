"""ruff (curated rules in pyproject.toml) and mypy --strict on the package, as part of the suite."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _tool(name: str) -> list[str]:
    exe = shutil.which(name) or str(Path(sys.executable).parent / name)
    if not Path(exe).exists():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is missing; it is in the test extras")
        pytest.skip(f"{name} not installed (pip install -e '.[test]')")
    return [exe]


def test_ruff() -> None:
    out = subprocess.run([*_tool("ruff"), "check", "roofcalc", "tests"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:]


def test_ruff_format() -> None:
    out = subprocess.run(
        [*_tool("ruff"), "format", "--check", "roofcalc", "tests"], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stdout[-3000:]


@pytest.mark.slow
def test_mypy_strict() -> None:
    out = subprocess.run([*_tool("mypy"), "roofcalc"], cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:]

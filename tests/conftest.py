from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from roofcalc.cli import cli

DATA = Path(__file__).parent / "data"

# Write bytecode caches even where the environment says not to (PYTHONDONTWRITEBYTECODE): the
# suite starts many Python processes (the CLI in subprocesses, pytest-xdist workers), and
# recompiling every module in each of them is most of their start-up.
sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
# The validated built-in files go to a cache folder of the suite's own, never the user's (the
# CLI in subprocesses inherits it); tests of the cache itself point it elsewhere.
if "ROOFCALC_CACHE" not in os.environ:
    import atexit
    import shutil
    import tempfile

    os.environ["ROOFCALC_CACHE"] = tempfile.mkdtemp(prefix="roofcalc-test-cache-")
    atexit.register(shutil.rmtree, os.environ["ROOFCALC_CACHE"], True)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ROOFCALC_HW", raising=False)
    monkeypatch.delenv("ROOFCALC_DEBUG", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "120")  # tables as a 120-column pipe shows them, whatever runs the tests


def run(*args: str, env: dict[str, str] | None = None) -> Any:
    """Invoke the CLI; stdout and stderr kept apart."""
    runner = CliRunner()
    return runner.invoke(cli, list(args), env=env, catch_exceptions=False)


def run_json(*args: str) -> Any:
    res = run(*args, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)

from __future__ import annotations

import gc
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

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


def _freeze_long_lived() -> None:
    """What exists once the tests are collected (modules, test items, strategies) lives until
    the end: moved out of the cyclic collector's full passes, each of which would otherwise walk
    it again (a few hundred thousand objects per worker, and pytest's five passes at the end);
    and a full pass at most every 100 passes of the middle generation (Python's default: 10).
    Young garbage is collected as before."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(700, 10, 100)


def pytest_sessionstart(session: pytest.Session) -> None:
    _freeze_long_lived()  # pytest-xdist's controller collects nothing: this is its only call


def pytest_collection_finish(session: pytest.Session) -> None:
    _freeze_long_lived()


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ROOFCALC_HW", raising=False)
    monkeypatch.delenv("ROOFCALC_DEBUG", raising=False)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "120")  # tables as a 120-column pipe shows them, whatever runs the tests


def run(*args: str, env: dict[str, str] | None = None) -> Any:
    """Invoke the CLI; stdout and stderr kept apart."""
    # imported here, not at the top: pytest-xdist's controller process loads this file too and
    # runs no test, so the CLI's imports would only delay the start of the workers
    from click.testing import CliRunner

    from roofcalc.cli import cli

    runner = CliRunner()
    return runner.invoke(cli, list(args), env=env, catch_exceptions=False)


def load_script(path: Path) -> Any:
    """A validation script (not a package module) loaded as a module, to call its functions."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run_json(*args: str) -> Any:
    res = run(*args, "--json")
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout)

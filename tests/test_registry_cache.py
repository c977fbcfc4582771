"""The cache of validated built-in files (roofcalc/registry.py, load_builtin)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from roofcalc import registry
from roofcalc.hardware import hardware_names, load_hardware
from roofcalc.opdefs import OpDef, load_op, op_names


class Counting:
    """A build function that records how often it ran."""

    def __init__(self) -> None:
        self.calls = 0

    def __call__(self, text: str) -> OpDef:
        self.calls += 1
        return load_op("gemm")  # any validated object of the expected class


def test_a_second_load_of_the_same_bytes_comes_from_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROOFCALC_CACHE", str(tmp_path))
    build = Counting()
    first = registry.load_builtin("op", "gemm", build, OpDef)
    assert build.calls == 1 and len(list((tmp_path / "validated").glob("op-gemm-*.pickle"))) == 1
    again = registry.load_builtin("op", "gemm", build, OpDef)
    assert build.calls == 1  # not rebuilt
    assert again == first and again is not first  # an equal copy, read from the folder


def test_other_bytes_miss_the_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROOFCALC_CACHE", str(tmp_path))
    build = Counting()
    registry.load_builtin("op", "gemm", build, OpDef)
    text = registry.read_builtin("op", "gemm")
    monkeypatch.setattr(registry, "read_builtin", lambda kind, stem: text + "\n# edited\n")
    registry.load_builtin("op", "gemm", build, OpDef)
    assert build.calls == 2 and len(list((tmp_path / "validated").glob("op-gemm-*.pickle"))) == 2


@pytest.mark.parametrize("garbage", [b"", b"not a pickle", pickle.dumps({"a": 1})])
def test_a_broken_or_foreign_entry_is_rebuilt(garbage: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ROOFCALC_CACHE", str(tmp_path))
    build = Counting()
    registry.load_builtin("op", "gemm", build, OpDef)
    (entry,) = (tmp_path / "validated").glob("op-gemm-*.pickle")
    entry.write_bytes(garbage)
    assert isinstance(registry.load_builtin("op", "gemm", build, OpDef), OpDef)
    assert build.calls == 2
    assert pickle.loads(entry.read_bytes()) == load_op("gemm")  # and written again, whole


def test_an_unwritable_folder_or_an_empty_setting_means_no_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("ROOFCALC_CACHE", str(blocker / "cache"))  # under a file: mkdir fails
    build = Counting()
    for _ in range(2):
        assert isinstance(registry.load_builtin("op", "gemm", build, OpDef), OpDef)
    assert build.calls == 2
    monkeypatch.setenv("ROOFCALC_CACHE", "")
    assert registry.cache_dir() is None
    registry.load_builtin("op", "gemm", build, OpDef)
    assert build.calls == 3 and sorted(p.name for p in tmp_path.iterdir()) == ["a-file"]


def test_the_folder_follows_xdg_and_home_and_never_lands_in_the_working_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ROOFCALC_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", "/var/cache/me")
    assert registry.cache_dir() == Path("/var/cache/me/roofcalc/validated")
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/cache")  # ignored, as the XDG rule says
    monkeypatch.setenv("HOME", "/home/me")
    assert registry.cache_dir() == Path("/home/me/.cache/roofcalc/validated")
    monkeypatch.setenv("HOME", "")  # no usable home: no cache rather than a '~' folder here
    monkeypatch.setattr(os.path, "expanduser", lambda p: p)
    assert registry.cache_dir() is None


def test_every_built_in_file_round_trips_through_the_cache_unchanged() -> None:
    for name in hardware_names():
        hw = load_hardware(name)
        assert pickle.loads(pickle.dumps(hw)) == hw, name
    for name in op_names():
        op = load_op(name)
        copy = pickle.loads(pickle.dumps(op))
        assert copy == op and copy.formula("flops") == op.formula("flops"), name


def test_a_warm_command_builds_no_validator(tmp_path: Path) -> None:
    """The mechanism behind start-up (benchmarks/startup.py measures it): with the cache warm,
    `op gemm --hw a100` neither parses YAML nor builds a pydantic validator (a100: a part without
    a choice map, whose 7 MB would make the cold run a few seconds; the cache is the same)."""
    script = (
        "import sys, yaml\n"
        "from roofcalc.cli import cli\n"
        "from roofcalc.hardware import Hardware\n"
        "from roofcalc.opdefs import OpDef, Param\n"
        "parsed = []\n"
        "real = yaml.load\n"
        "yaml.load = lambda *a, **k: parsed.append(1) or real(*a, **k)\n"
        "try:\n"
        "    cli.main(['op', 'gemm', '--m', '8192', '--hw', 'a100'], standalone_mode=False)\n"
        "except SystemExit:\n"
        "    pass\n"
        "built = [c.__name__ for c in (Hardware, OpDef, Param) if c.__pydantic_complete__]\n"
        "print('parsed', len(parsed), 'built', built, file=sys.stderr)\n"
    )
    env = {**os.environ, "ROOFCALC_CACHE": str(tmp_path)}
    cold = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert "parsed 2 built ['Hardware', 'OpDef']" in cold.stderr  # the first run validates both files
    warm = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, check=True)
    assert "parsed 0 built []" in warm.stderr
    assert warm.stdout == cold.stdout and "expected time" in warm.stdout

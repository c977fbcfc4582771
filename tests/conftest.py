from __future__ import annotations

import functools
import gc
import json
import os
import re
import sys
from collections.abc import Callable
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


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Once the tests have run: one full pass (garbage left by the tests is collected here, and
    what its finalizers raise is still reported by pytest), then the survivors frozen, so that
    pytest's five passes at the end walk only what is left after this hook. A whole run that ends
    (pytest-xdist's controller, or a run without workers; every test file, no selection, to the
    end) marks pytest's cache as holding records of every check (Verified)."""
    config = session.config
    cache = getattr(config, "cache", None)
    whole = (
        config.args_source == pytest.Config.ArgsSource.TESTPATHS  # every test file, as `pytest` alone runs
        and session.exitstatus in (pytest.ExitCode.OK, pytest.ExitCode.TESTS_FAILED)  # ran to the end
        and not any(getattr(config.option, o, None) for o in ("collectonly", "keyword", "markexpr", "lf", "deselect"))
    )
    if cache is not None and whole and not hasattr(config, "workerinput"):
        cache.set(PRIMED, True)
    _freeze_long_lived()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """A test that passed with a check deferred (Verified) is reported as skipped, with the reason."""
    outcome = yield
    rep = outcome.get_result()
    if rep.when == "call" and rep.passed and any(k == DEFERRED for k, _ in item.user_properties):
        rep.outcome = "skipped"
        rep.longrepr = (str(Path(__file__).resolve()), VerifiedFor.once.__code__.co_firstlineno, DEFERRED_WHY)


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


# ------------------------------------------------------------------ recomputed reports, verified once
#
# The committed reports under validation/ are checked against what the code computes from their
# saved measurements: hundreds of reports, about a fifth of the suite's time. Such a check is a pure
# function of its inputs, so a check that passed is recorded in pytest's cache under a digest of
# every input: the package's code and data, the hardware, op and implementation files, the Python
# and dependency versions, and each check's own files. A later run with the same inputs, byte for
# byte, skips recomputing it; any change to any of them (an edit to the model, a new report, another
# pydantic) changes the digest and the check runs again. With CI set, or ROOFCALC_TEST_RECOMPUTE=1,
# every check runs.
#
# Without CI and without such a record, a check runs where it is new (once a whole run has kept
# records) or its files changed since a run last saw it (a report or a page edited), and otherwise
# where its key, which holds the code's digest, falls in a share of one in SHARE (another share
# after each change to the code). The others are deferred and reported as skipped, with the
# reason: recomputing all of them is more than half of a first run on a two-core machine. CI
# recomputes every one.

ROOT = Path(__file__).resolve().parent.parent

# what else shapes what a check's commands print: roofcalc's settings (its cache folder apart: a
# place, keyed by content) and rich's terminal ones
_ENV_READ = (
    "ROOFCALC_HW",
    "ROOFCALC_DEBUG",
    "COLUMNS",
    "LINES",
    "NO_COLOR",
    "FORCE_COLOR",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
    "TERM",
    "COLORTERM",
)


def _hash_files(paths: list[Path]) -> str:
    import hashlib

    h = hashlib.sha256()
    for p in paths:
        h.update(str(p).encode())
        h.update(b"\0")
        h.update(p.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def _code_digest() -> str:
    """The digest of everything a check can read besides its own files: the package's code and
    data as Python imports them, the built-in files (hardware, ops, models, implementations) as
    the registry finds them (an installed copy) and as this checkout has them (what an example
    names by path), the Python and library versions, and the environment that shapes output."""
    import importlib.metadata

    import roofcalc
    from roofcalc.registry import FOLDERS, builtin_files

    package = Path(roofcalc.__file__).resolve().parent
    files = [
        p
        for p in sorted(package.rglob("*"))
        if p.is_file() and p.suffix in (".py", ".yaml", ".json", ".txt") and "__pycache__" not in p.parts
    ]
    for kind in sorted(FOLDERS):
        files += [Path(str(f)) for f in builtin_files(kind).values()]  # type: ignore[arg-type]
        files += sorted((ROOT / FOLDERS[kind]).glob("*.yaml"))
    versions = [sys.version]
    for dist in ("pydantic", "pydantic-core", "PyYAML", "click", "rich", "matplotlib", "numpy"):
        try:
            versions.append(f"{dist}={importlib.metadata.version(dist)}")
        except importlib.metadata.PackageNotFoundError:
            versions.append(f"{dist}=-")
    env = sorted((k, v) for k, v in os.environ.items() if k in _ENV_READ)
    return _hash_files(files) + "|" + "|".join(versions) + "|" + repr(env)


SHARE = 4
PRIMED = "roofcalc/verified-primed"
DEFERRED = "roofcalc_deferred_check"  # a test's user property: a check this run deferred
DEFERRED_WHY = (
    "deferred: a check of committed files against the code, run where it is new or its files changed, "
    f"else one in {SHARE} drawn by the code's digest (tests/conftest.py Verified); CI=true or "
    "ROOFCALC_TEST_RECOMPUTE=1 runs all"
)


def recompute_all() -> bool:
    """CI, or ROOFCALC_TEST_RECOMPUTE=1: every check runs and every build is made (no record kept)."""
    yes = ("1", "true", "yes")
    return os.environ.get("CI", "").lower() in yes or os.environ.get("ROOFCALC_TEST_RECOMPUTE", "").lower() in yes


class Verified:
    """Checks that passed with these exact inputs (see above)."""

    def __init__(self, config: pytest.Config) -> None:
        import hashlib

        self.cache = getattr(config, "cache", None)
        off = recompute_all()
        # a run without pytest's cache (-p no:cacheprovider) records nothing, so it defers nothing
        self.share = SHARE if not off and self.cache is not None else 1
        if off:
            self.cache = None
        self.code = hashlib.sha256(_code_digest().encode()).hexdigest()[:24] if self.cache is not None else ""
        # whether an earlier run kept records here (set at the end of a run: pytest_sessionfinish)
        self.primed = self.cache is not None and self.cache.get(PRIMED, False) is True

    @staticmethod
    def files_digest(name: str, files: list[Path]) -> str:
        import hashlib

        return hashlib.sha256((name + _hash_files(files)).encode()).hexdigest()[:32]

    def key(self, name: str, files: list[Path]) -> str:
        return f"roofcalc/verified/{self.code}/{self.files_digest(name, files)}"

    def seen(self, key: str) -> bool:
        return self.cache is not None and self.cache.get(key, None) is True

    def in_share(self, key: str) -> bool:
        """Whether this run recomputes the check of ``key`` (one key in ``share``)."""
        import hashlib

        return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % self.share == 0

    @staticmethod
    def _slot(who: str) -> str:
        import hashlib

        return f"roofcalc/verified-files/{hashlib.sha256(who.encode()).hexdigest()[:32]}"

    def files_changed(self, who: str, digest: str) -> bool:
        """Whether the check ``who`` (a test and a check's name) must run for its files: they
        changed since a run last saw them passed or deferred (saw), or it is new where earlier
        runs kept records (in a fresh checkout no check has been seen, and the share decides)."""
        if self.cache is None:
            return True
        last = self.cache.get(self._slot(who), None)
        return (last is None and self.primed) or (last is not None and last != digest)

    def saw(self, who: str, digest: str) -> None:
        """Keep the files ``who`` passed or was deferred with (never those it failed with: a check
        that failed runs again while its files stay as they were)."""
        if self.cache is not None and self.cache.get(self._slot(who), None) != digest:
            self.cache.set(self._slot(who), digest)

    def record(self, key: str) -> None:
        if self.cache is not None:
            self.cache.set(key, True)


class VerifiedFor:
    """Verified for one test: its own module and this file are inputs of its checks too (an
    assertion added to a check runs it again)."""

    def __init__(self, session: Verified, test_file: Path, node: pytest.Item | None = None) -> None:
        self.session, self.own, self.node = session, [test_file, Path(__file__).resolve()], node

    def once(self, name: str, files: list[Path], check: Callable[[], None]) -> None:
        """check(), unless it passed before with these inputs, or this run defers it (see above:
        the test is then reported as skipped, once the rest of it has run); recorded when it passes."""
        inputs = [*self.own, *files]
        key = self.session.key(name, inputs)
        if self.session.seen(key):
            return
        # a test may ask for several checks of one name: each is told apart by its files too
        who = "\0".join([self.node.nodeid if self.node is not None else "", name, *map(str, files)])
        digest = self.session.files_digest(name, inputs)
        if not (self.session.files_changed(who, digest) or self.session.in_share(key)):
            self.session.saw(who, digest)
            if self.node is not None:
                self.node.user_properties.append((DEFERRED, name))
            return
        check()
        self.session.record(key)
        self.session.saw(who, digest)


def example_files(cmd: str) -> list[Path]:
    """The files a documented ``roofcalc ...`` example names (relative to the repository; a comma
    list split, an op file's ``PATH:params`` cut at the colon, a folder by every file in it): with
    the code's digest and the page, the inputs of the check that the example runs and prints what
    its page shows."""
    import shlex

    out: list[Path] = []
    for word in shlex.split(cmd.split(" | ")[0].split(" > ")[0])[1:]:
        for part in word.split(","):
            for name in dict.fromkeys((part, part.split(":", 1)[0])):
                p = ROOT / name
                if name and p.is_file():
                    out.append(p)
                elif name and p.is_dir():
                    out += sorted(f for f in p.rglob("*") if f.is_file())
    return out


@functools.lru_cache(maxsize=8)
def tool_version(tool: str) -> str:
    """What ``tool --version`` prints ("-" where it cannot run): part of a build's or a check's key."""
    import subprocess

    try:
        out = subprocess.run([tool, "--version"], capture_output=True, text=True)
    except OSError:
        return "-"
    return out.stdout + out.stderr


def nvcc_cached(config: pytest.Config, nvcc: str, flags: list[str], source: Path, out: Path) -> tuple[int, str]:
    """``nvcc FLAGS -o OUT SOURCE``: its exit status and its output (ptxas's -v lines). A build that
    succeeded is kept in pytest's cache under the digest of nvcc's and the host compiler's
    versions, nvcc's environment (NVCC_*), the flags and the source's bytes (it includes no file of
    its own), and copied from there by a later run: a build cache, what the tests read is the
    compiler's output all the same. Without pytest's cache, with CI set or with
    ROOFCALC_TEST_RECOMPUTE=1, it always builds."""
    import hashlib
    import shutil
    import subprocess
    import tempfile

    cache = None if recompute_all() else getattr(config, "cache", None)
    env = sorted((k, v) for k, v in os.environ.items() if k.startswith("NVCC_"))
    host = os.environ.get("NVCC_CCBIN") or shutil.which("g++") or "g++"
    key = hashlib.sha256(
        "\0".join([tool_version(nvcc), tool_version(host), repr(env), *flags, source.suffix]).encode()
        + b"\0"
        + source.read_bytes()
    ).hexdigest()[:32]
    kept = cache.mkdir("roofcalc-nvcc") / key if cache is not None else None
    if kept is not None and (kept / "done").is_file():
        shutil.copyfile(kept / "out", out)
        return 0, (kept / "log").read_text()
    res = subprocess.run([nvcc, *flags, "-o", str(out), str(source)], capture_output=True, text=True)
    log = res.stdout + res.stderr
    if kept is not None and res.returncode == 0 and not kept.exists():
        # written whole in a folder of its own, then renamed into place: another worker building
        # the same entry, or a run stopped midway, never leaves a part of one
        tmp = Path(tempfile.mkdtemp(dir=kept.parent, prefix=".building-"))
        shutil.copyfile(out, tmp / "out")
        (tmp / "log").write_text(log)
        (tmp / "done").write_text("")
        try:
            tmp.rename(kept)
        except OSError:  # another worker's came first
            shutil.rmtree(tmp, ignore_errors=True)
    return res.returncode, log


def trace_set_files(card_set: str) -> list[Path]:
    """A trace set's committed files (validation/traces/CARD/SET: its times and traces)."""
    return sorted(p for p in (ROOT / "validation" / "traces" / card_set).rglob("*") if p.is_file())


@functools.lru_cache(maxsize=4)
def hardware_yaml(name: str) -> dict[str, Any]:
    """hardware/<name>.yaml as YAML reads it (not roofcalc: a figure as the file states it), with
    libyaml's loader where PyYAML has it (the registry's 7 MB choice map takes seconds in Python's)."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    data: dict[str, Any] = yaml.load((ROOT / "hardware" / f"{name}.yaml").read_text(), Loader=loader)
    return data


def committed_report(verified: VerifiedFor, script_name: str, set_name: str) -> dict[str, Any]:
    """validation/expected/<set_name>.json, once checked (per inputs) to be what
    validation/expected/<script_name>.py's report(set_name) computes from the trace set's files."""
    script = ROOT / "validation" / "expected" / f"{script_name}.py"
    path = ROOT / "validation" / "expected" / f"{set_name}.json"
    committed: dict[str, Any] = json.loads(path.read_text())

    def check() -> None:
        assert json.loads(json.dumps(load_script(script).report(set_name))) == committed

    verified.once(script_name, [script, path, *trace_set_files(set_name)], check)
    return committed


@pytest.fixture(scope="session")
def _verified_session(request: pytest.FixtureRequest) -> Verified:
    return Verified(request.config)


@pytest.fixture
def verified(request: pytest.FixtureRequest, _verified_session: Verified) -> VerifiedFor:
    return VerifiedFor(_verified_session, Path(str(request.node.path)).resolve(), request.node)


@functools.lru_cache(maxsize=2)
def without_column_plane(name: str = "h100") -> Any:
    """The part with its choice map's one-column plane taken out: the op files' own gemv kernels
    (gemv2T, dot_kernel, gemvx_split) model its one-column products, as on a calibration of an
    earlier probe (gemv_plane = 0)."""
    from roofcalc.hardware import load_hardware

    hw = load_hardware(name)
    fig = hw.expected.gemm_choice_map
    kept = "".join(e + "\n" for e in fig.entries if not re.match(r"\S+ [0-9]+x1x", e))
    fig = fig.model_copy(update={"value": kept})
    return hw.model_copy(update={"expected": hw.expected.model_copy(update={"gemm_choice_map": fig})})


def kept(seconds: float) -> float:
    """A kernel time as a choice-map entry keeps it: to 0.01 us."""
    return round(seconds * 1e6, 2) * 1e-6


@functools.lru_cache(maxsize=1)
def _h100_parts() -> tuple[str, str]:
    """hardware/h100.yaml around its choice map's entries: the text before them and after them."""
    text = (ROOT / "hardware" / "h100.yaml").read_text()
    marker = "    value: |\n"
    at = text.index(marker) + len(marker)
    end = at
    while text.startswith("      ", end):
        end = text.index("\n", end) + 1
    return text[:at], text[end:]


def h100_with_map(entries: list[str], replace: tuple[str, str] | None = None) -> str:
    """hardware/h100.yaml with these entries as its choice map (a small spec file: the registry's
    7 MB map parsed cold costs a test a second), and ``replace``'s first string replaced by its
    second once elsewhere in it, where given."""
    head, tail = _h100_parts()
    text = head + "".join(f"      {e}\n" for e in entries) + tail
    if replace is not None:
        assert text.count(replace[0]) == 1, replace[0]
        text = text.replace(*replace)
    return text


@functools.lru_cache(maxsize=8)
def sweep_cases(path: Path) -> list[dict[str, Any]]:
    """A committed sweep's records (a .json.gz under validation/expected), read once a process."""
    import gzip

    cases: list[dict[str, Any]] = json.loads(gzip.decompress(path.read_bytes()))["cases"]
    return cases


def sweep_kernels(*paths: Path) -> dict[tuple[str, int, int, int], list[dict[str, Any]]]:
    """(dtype, m, n, k): the kernels these sweeps profiled."""
    return {(c["dtype"], c["m"], c["n"], c["k"]): c["kernels"] for path in paths for c in sweep_cases(path)}

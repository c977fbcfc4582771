"""Hostile input at the CLI's edge (issue 14): streams, terminals, encodings, output paths,
internal errors, empty names. The behaviour each test expects is written in its docstring.

Skipped unless ROOFCALC_HOSTILE_CLI=1 until the CLI refactor lands; then delete the
``pytestmark`` line below so that it runs in CI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from roofcalc.cli import cli

ROOT = Path(__file__).resolve().parent.parent
WRITE_ERROR_EXIT = 1  # output that cannot be written (README: a valid request that cannot be answered)
INTERNAL_EXIT = 70  # EX_SOFTWARE: a bug in roofcalc


def invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    base = {"NO_COLOR": "1", "ROOFCALC_DEBUG": "", "ROOFCALC_HW": None, "COLUMNS": "100"}
    return CliRunner().invoke(cli, list(args), env={**base, **(env or {})})  # type: ignore[dict-item]


def one_error_line(res: Any, code: int, *needles: str) -> str:
    assert res.exit_code == code, (res.exit_code, res.output[-500:])
    assert "Traceback" not in res.output
    assert code == INTERNAL_EXIT or "internal error" not in res.output.lower()
    lines = [ln for ln in res.stderr.splitlines() if ln.strip() and not ln.startswith(("Usage:", "Try "))]
    assert len(lines) == 1, res.stderr
    for n in needles:
        assert n in lines[0], (n, lines[0])
    assert len(lines[0]) < 400
    return lines[0]


# ------------------------------------------------------------------ real streams (subprocesses)

PY = [sys.executable, "-m", "roofcalc"]
# far more than a pipe buffer; these stream cases name parts without a choice map where the part does
# not matter (the H100's and H200's 7 MB maps, parsed cold in each of the processes at once, cost the
# fixture seconds)
BIG_JSON = ["sweep", "gemm", "--m", "1..1e18", "--hw", "a100,b200", "--json"]


def _stream_cases(tmp: Path) -> dict[str, dict[str, Any]]:
    return {
        # `roofcalc ... | head -1`: the reader goes away before roofcalc writes
        "broken-pipe-json": {"argv": [*PY, *BIG_JSON], "stdout": "closed-pipe"},
        "broken-pipe-text": {"argv": [*PY, "occupancy", "--hw", "a100", "--regs", "32"], "stdout": "closed-pipe"},
        # `roofcalc hw list >&-`
        "stdout-closed": {"argv": ["bash", "-c", 'exec "$@" >&-', "_", *PY, "hw", "list"], "stdout": "pipe"},
        # `roofcalc hw list > /dev/full` and the JSON document
        "dev-full-text": {"argv": [*PY, "hw", "list"], "stdout": "/dev/full"},
        # --help and --version write while the arguments are parsed (before the command runs)
        "dev-full-help": {"argv": [*PY, "--help"], "stdout": "/dev/full"},
        "dev-full-version": {"argv": [*PY, "--version"], "stdout": "/dev/full"},
        "dev-full-op-help": {"argv": [*PY, "op", "decode", "-h"], "stdout": "/dev/full"},
        "dev-full-json": {
            "argv": [*PY, "op", "decode", "--model", "llama-3.1-8b", "--hw", "a100", "--json"],
            "stdout": "/dev/full",
        },
        "dev-full-occupancy": {
            "argv": [*PY, "occupancy", "--hw", "a100", "--threads", "256", "--regs", "64"],
            "stdout": "/dev/full",
        },
        "stdout-closed-help": {"argv": ["bash", "-c", 'exec "$@" >&-', "_", *PY, "--help"], "stdout": "pipe"},
        # a usage error with --json and stderr closed: nothing may land on stdout
        "stderr-closed": {
            "argv": ["bash", "-c", 'exec "$@" 2>&-', "_", *PY, "op", "gemm", "--m", "abc", "--json"],
            "stdout": "pipe",
        },
        # an ASCII-only stream: box-drawing characters and bar glyphs must not crash the table
        "ascii-op": {
            "argv": [*PY, "op", "gemm", "--m", "8192", "--hw", "h100"],
            "stdout": "pipe",
            "env": {"PYTHONIOENCODING": "ascii"},
        },
        "ascii-occupancy": {
            "argv": [*PY, "occupancy", "--hw", "a100", "--threads", "256", "--regs", "64", "--smem", "96k"],
            "stdout": "pipe",
            "env": {"PYTHONIOENCODING": "ascii"},
        },
    }


@pytest.fixture(scope="module")
def streams(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, bytes, str]]:
    """Every stream case in its own process, all started together; (rc, stdout, stderr) each."""
    tmp = tmp_path_factory.mktemp("streams")
    base_env = {k: v for k, v in os.environ.items() if k not in ("ROOFCALC_DEBUG", "ROOFCALC_HW", "COLUMNS")}
    base_env |= {"NO_COLOR": "1"}
    procs: dict[str, Any] = {}
    for name, case in _stream_cases(tmp).items():
        out: Any = subprocess.PIPE
        if case["stdout"] == "/dev/full":
            if not Path("/dev/full").exists():
                continue
            out = open("/dev/full", "wb")  # noqa: SIM115
        p = subprocess.Popen(
            case["argv"], stdout=out, stderr=subprocess.PIPE, cwd=ROOT, env=base_env | case.get("env", {})
        )
        if case["stdout"] == "closed-pipe":
            assert p.stdout is not None
            p.stdout.close()  # the reader is gone before the first write
        procs[name] = (p, out)
    results = {}
    for name, (p, out) in procs.items():
        try:
            stdout = b""
            if p.stdout is not None and not p.stdout.closed:
                stdout, err = p.communicate(timeout=60)
            else:
                _, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            p.kill()
            stdout, err = b"", b"timed out"
        if out is not subprocess.PIPE:
            out.close()
        results[name] = (p.returncode, stdout, err.decode("utf-8", "replace"))
    return results


def test_broken_pipe_ends_quietly(streams: dict[str, tuple[int, bytes, str]]) -> None:
    """`| head`: exit 0, nothing at all on stderr (no traceback, no 'Exception ignored', no message)."""
    for name in ("broken-pipe-json", "broken-pipe-text"):
        rc, _, err = streams[name]
        assert rc == 0 and err == "", (name, rc, err)


@pytest.mark.parametrize("name", ["stdout-closed", "stdout-closed-help"])
def test_closed_stdout_is_one_line(streams: dict[str, tuple[int, bytes, str]], name: str) -> None:
    """stdout closed (`>&-`): exit WRITE_ERROR_EXIT, one line on stderr saying standard output is closed."""
    rc, _, err = streams[name]
    assert rc == WRITE_ERROR_EXIT, (rc, err)
    assert len(err.strip().splitlines()) == 1 and "standard output is closed" in err


@pytest.mark.parametrize(
    "name",
    ["dev-full-text", "dev-full-help", "dev-full-version", "dev-full-op-help", "dev-full-json", "dev-full-occupancy"],
)
def test_full_disk_is_one_line(streams: dict[str, tuple[int, bytes, str]], name: str) -> None:
    """`> /dev/full`: exit WRITE_ERROR_EXIT, one line 'cannot write the output: No space left on device'."""
    if name not in streams:
        pytest.skip("no /dev/full here")
    rc, _, err = streams[name]
    assert rc == WRITE_ERROR_EXIT, (rc, err)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "cannot write the output" in lines[0] and "No space left" in lines[0], err


def test_closed_stderr_keeps_stdout_clean(streams: dict[str, tuple[int, bytes, str]]) -> None:
    """A usage error with --json and stderr closed: exit 2, and stdout stays empty (no message moved there)."""
    rc, out, _ = streams["stderr-closed"]
    assert rc == 2 and out == b"", (rc, out[:300])


@pytest.mark.parametrize("name", ["ascii-op", "ascii-occupancy"])
def test_ascii_stream(streams: dict[str, tuple[int, bytes, str]], name: str) -> None:
    """PYTHONIOENCODING=ascii: exit 0, empty stderr, the table printed (symbols replaced, not a crash)."""
    rc, out, err = streams[name]
    assert rc == 0 and err == "", (rc, err)
    out.decode("ascii")
    assert len(out.splitlines()) > 5


# ------------------------------------------------------------------ internal errors


def _boom(*_: Any, **__: Any) -> Any:
    raise RuntimeError("boom " + "x" * 1000)


@pytest.mark.parametrize("extra", [(), ("--json",)])
def test_internal_error_exits_70(monkeypatch: pytest.MonkeyPatch, extra: tuple[str, ...]) -> None:
    """A bug (any unexpected exception): exit 70, one line with 'internal error', the exception type and
    'report', at most ~300 characters; stdout empty even with --json."""
    monkeypatch.setattr("roofcalc.hardware.Hardware.peak", _boom)
    res = invoke("op", "gemm", "--m", "64", "--hw", "h100", *extra)
    line = one_error_line(res, INTERNAL_EXIT, "internal error", "RuntimeError", "report")
    assert res.stdout == "" and len(line) < 400


def test_internal_error_with_debug_reraises(monkeypatch: pytest.MonkeyPatch) -> None:
    """ROOFCALC_DEBUG=1: the exception propagates (the traceback is shown)."""
    monkeypatch.setattr("roofcalc.hardware.Hardware.peak", _boom)
    res = invoke("op", "gemm", "--m", "64", "--hw", "h100", env={"ROOFCALC_DEBUG": "1"})
    assert isinstance(res.exception, RuntimeError)


# ------------------------------------------------------------------ terminal widths

COMMANDS = {  # a key-value table with notes, bar curves, a terminal chart
    "op": ("op", "gemm", "--m", "64", "--hw", "h100"),
    "occupancy": ("occupancy", "--hw", "h100", "--threads", "256", "--regs", "64", "--smem", "32k"),
    "sweep-chart": ("sweep", "gemm", "--m", "1..4096", "--hw", "h100"),
}


@pytest.mark.parametrize("columns", ["0", "-5", "abc", "1", "", "100000", "9" * 30, "٨٠"])
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_any_terminal_width(command: str, columns: str) -> None:
    """Any COLUMNS (zero, negative, junk, huge): exit 0 and the output printed (a sane width is used)."""
    res = invoke(*COMMANDS[command], env={"COLUMNS": columns})
    assert res.exit_code == 0, (res.exit_code, res.output[-400:])
    assert len(res.stdout.strip().splitlines()) >= 3 and res.stderr.strip() == "", res.output[-400:]


def test_json_stdout_holds_only_json() -> None:
    """--json: stdout is exactly one JSON document; 'skipped a100: ...' goes to stderr."""
    res = invoke("compare", "gemm", "--m", "64", "--dtype", "fp8", "--hw", "a100,h100", "--json")
    assert res.exit_code == 0, res.output
    json.loads(res.stdout)
    assert "skipped" in res.stderr and "skipped" not in res.stdout


# ------------------------------------------------------------------ empty names


@pytest.mark.parametrize(
    ("args", "env", "needle"),
    [
        (("op", "gemm", "--m", "64", "--hw", ""), {}, "--hw"),
        (("op", "gemm", "--m", "64", "--hw", "   "), {}, "--hw"),
        (("occupancy", "--threads", "128", "--regs", "32", "--hw", ""), {}, "--hw"),
        (("compare", "gemm", "--m", "64", "--hw", ","), {}, "--hw"),
        (("op", "gemm", "--m", "64"), {"ROOFCALC_HW": ""}, "ROOFCALC_HW"),
        (("op", "gemm", "--m", "64"), {"ROOFCALC_HW": "  "}, "ROOFCALC_HW"),
        (("hw", "show"), {"ROOFCALC_HW": ""}, "ROOFCALC_HW"),
    ],
)
def test_empty_hardware_names_are_refused(args: tuple[str, ...], env: dict[str, str], needle: str) -> None:
    """An empty hardware name (option or $ROOFCALC_HW set but empty) is a usage error (exit 2) naming where
    it came from, never a silent fall-back to h100."""
    one_error_line(invoke(*args, env=env), 2, needle)


# ------------------------------------------------------------------ special input paths

INPUT_LOADERS = {
    "hw-file": lambda f: ("op", "gemm", "--m", "64", "--hw-file", f),
    "hw-show-file": lambda f: ("hw", "show", "--hw-file", f),
    "calibration": lambda f: ("op", "gemm", "--m", "64", "--calibration", f),
    "op-file": lambda f: ("op", f),
}


def _special(kind: str, tmp_path: Path) -> tuple[str, str]:
    if kind == "fifo":
        if not hasattr(os, "mkfifo"):
            pytest.skip("no FIFOs here")
        f = tmp_path / "spec.yaml"
        os.mkfifo(f)
        return str(f), "not a regular file (a FIFO)"
    if kind == "dev-zero":
        if not Path("/dev/zero").exists():
            pytest.skip("no /dev/zero here")
        return "/dev/zero", "not a regular file (a character device)"
    return str(tmp_path / ("h" * 300 + ".yaml")), "File name too long"


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "long-name"])
@pytest.mark.parametrize("loader", sorted(INPUT_LOADERS))
def test_special_input_files(tmp_path: Path, loader: str, kind: str) -> None:
    """A FIFO or /dev/zero as a spec file: exit 2 'not a regular file (a FIFO / a character device)', at once
    (never 'no such file', never a hang); a 300-character name: exit 2 'File name too long', not an internal
    error. (specfile.read_text(path, what=...) gives these messages: call it instead of Path.is_file().)"""
    path, message = _special(kind, tmp_path)
    one_error_line(invoke(*INPUT_LOADERS[loader](path)), 2, message)


@pytest.mark.parametrize(
    ("args", "option"),
    [
        (("occupancy", "--hw", "h100", "--threads", "128", "--regs", "32", "--carveout", "٨٠"), "--carveout"),
        (("occupancy", "--hw", "h100", "--threads", "128", "--regs", "32", "--barriers", "١"), "--barriers"),
        (("sweep", "gemm", "--m", "1..64", "--hw", "h100", "--steps", "٨"), "--steps"),
        (("occupancy", "--hw", "h100", "--threads", "128", "--regs", "32", "--carveout", "9" * 5000), "--carveout"),
        (("sweep", "gemm", "--m", "1..64", "--hw", "h100", "--steps", "9" * 5000), "--steps"),
    ],
)
def test_plain_int_options_use_the_bounded_parser(args: tuple[str, ...], option: str) -> None:
    """--carveout, --barriers, --steps (click's int today: int('٨') is 8, and a 5,000-digit value gives
    Python's digit-limit message): exit 2 through units.parse_int(..., allow_suffix=False), one short line."""
    line = one_error_line(invoke(*args), 2, option)
    assert "ASCII" in line or "too long" in line


def test_range_messages_do_not_echo_huge_input() -> None:
    """A sweep range with a 5,000-digit end: exit 2 and a message under 300 characters (quote ~20)."""
    one_error_line(invoke("sweep", "gemm", "--m", "1.." + "9" * 5000, "--hw", "h100"), 2, "too long")


# ------------------------------------------------------------------ output paths


@pytest.fixture
def plotting() -> None:
    pytest.importorskip("matplotlib")


def _chart(path: str) -> Any:
    return invoke("roofline", "--hw", "h100", "--op", "gemm:m=64", "-o", path)


def test_output_onto_a_symlink_is_refused(tmp_path: Path, plotting: None) -> None:
    """-o onto a symbolic link: exit 2 naming the path and 'symbolic link'; the link and its target unchanged."""
    target = tmp_path / "real.svg"
    target.write_text("keep")
    link = tmp_path / "link.svg"
    link.symlink_to(target)
    one_error_line(_chart(str(link)), 2, str(link), "symbolic link")
    assert link.is_symlink() and target.read_text() == "keep"


def test_output_onto_a_read_only_file_is_refused(tmp_path: Path, plotting: None) -> None:
    """-o onto a file without write permission: exit 2 'read-only', file unchanged -- also when running as
    root, where os.access() says yes (check the mode bits: st_mode & 0o222 == 0)."""
    f = tmp_path / "ro.svg"
    f.write_text("keep")
    f.chmod(0o444)
    try:
        one_error_line(_chart(str(f)), 2, str(f), "read-only")
        assert f.read_text() == "keep"
    finally:
        f.chmod(0o644)


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("x" * 300 + ".svg", "too long"),
        ("missing-folder/x.svg", "does not exist"),
    ],
)
def test_bad_output_paths(tmp_path: Path, plotting: None, name: str, needle: str) -> None:
    """-o with a 300-character name or a missing folder: exit 2, one line, no internal error, no file."""
    one_error_line(_chart(str(tmp_path / name)), 2, needle)
    assert [p.name for p in tmp_path.iterdir()] in ([], ["missing-folder"])


def test_output_onto_a_folder(tmp_path: Path, plotting: None) -> None:
    """-o naming an existing folder (called x.svg): exit 2, one line naming it a folder or directory."""
    (tmp_path / "x.svg").mkdir()
    line = one_error_line(_chart(str(tmp_path / "x.svg")), 2, "x.svg")
    assert "folder" in line or "directory" in line


@pytest.mark.parametrize("option", ["--save-calibration", "--save-raw"])
@pytest.mark.parametrize("kind", ["symlink", "device", "read-only", "folder"])
def test_probe_outputs_get_the_chart_output_checks(tmp_path: Path, option: str, kind: str) -> None:
    """--save-calibration once replaced a symbolic link, a device node (as root, /dev/null) or a
    read-only file with a regular file: refused before any work, exit 2, nothing changed."""
    report = str(ROOT / "validation" / "probe" / "h100" / "probe.json")
    keep = tmp_path / "keep.yaml"
    keep.write_text("keep")
    target = {"symlink": tmp_path / "link.yaml", "device": Path("/dev/null"), "read-only": keep, "folder": tmp_path}
    if kind == "symlink":
        target["symlink"].symlink_to(keep)
    if kind == "read-only":
        keep.chmod(0o444)
    try:
        res = invoke("probe", "--report", report, option, str(target[kind]))
        one_error_line(res, 2, str(target[kind]))
        assert keep.read_text() == "keep" and sorted(p.name for p in tmp_path.iterdir()) == sorted(
            ["keep.yaml"] + (["link.yaml"] if kind == "symlink" else [])
        )
        assert Path("/dev/null").is_char_device()
    finally:
        keep.chmod(0o644)

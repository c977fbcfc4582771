"""The README's examples run, and the outputs it shows are what roofcalc prints."""

from __future__ import annotations

import os
import re
import shlex
import tempfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from roofcalc.cli import cli

from .conftest import VerifiedFor, example_files

README_PATH = Path(__file__).resolve().parent.parent / "README.md"
README = README_PATH.read_text()
BLOCKS = re.findall(r"```(\w*)\n(.*?)```", README, flags=re.S)


def _console_examples() -> list[tuple[str, str]]:
    out = []
    for lang, body in BLOCKS:
        if lang != "console":
            continue
        for chunk in re.split(r"^\$ ", body, flags=re.M)[1:]:
            cmd, _, expected = chunk.partition("\n")
            out.append((cmd.strip(), expected))
    return out


def _plain_examples() -> list[str]:
    cmds = []
    for lang, body in BLOCKS:
        if lang == "console":
            continue
        for line in body.splitlines():
            line = line.split("  #")[0].strip()
            if not line.startswith("roofcalc "):
                continue
            # placeholders, and what needs a GPU or a measurement made on one
            if any(s in line for s in ("path/to", "...", "probe", "h100-measured.yaml")):
                continue
            cmds.append(line)
    return cmds


def _run(cmd: str) -> object:
    args = shlex.split(cmd)
    assert args[0] == "roofcalc"
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        # run where files the examples write land in a scratch folder, with the repository's
        # data folders (validation/, tests/) reachable by the same relative paths
        root = Path(__file__).resolve().parent.parent
        for name in ("validation", "tests"):
            os.symlink(root / name, Path(tmp) / name)
        os.chdir(tmp)
        try:
            return CliRunner().invoke(
                cli, args[1:], env={"COLUMNS": "100", "NO_COLOR": "1", "ROOFCALC_HW": None}, catch_exceptions=False
            )
        finally:
            os.chdir(here)


def test_there_are_examples() -> None:
    assert len(_console_examples()) >= 5 and len(_plain_examples()) >= 1


def _matches(got: list[str], shown: list[str]) -> bool:
    """``shown`` is ``got`` with runs of lines replaced by a line "..." (each matching zero or more lines)."""
    if not shown:
        return not got
    if shown[0] == "...":
        return any(_matches(got[i:], shown[1:]) for i in range(len(got) + 1))
    return bool(got) and got[0] == shown[0] and _matches(got[1:], shown[1:])


def test_the_elision_matcher() -> None:
    assert _matches(["a", "b", "c"], ["a", "...", "c"]) and _matches(["a", "c"], ["a", "...", "c"])
    assert not _matches(["a", "b", "c"], ["a", "...", "b"]) and not _matches(["a", "x"], ["a", "b"])


@pytest.mark.parametrize(("cmd", "expected"), _console_examples(), ids=[c for c, _ in _console_examples()])
def test_shown_output_matches(cmd: str, expected: str, verified: VerifiedFor) -> None:
    """Once per the inputs it has (tests/conftest.py Verified), as every example check here."""
    shown = [ln.rstrip() for ln in expected.rstrip("\n").splitlines()]
    assert shown.count("...") < len(shown) / 2, "show more than you leave out"

    def check() -> None:
        res = _run(cmd)
        assert res.exit_code == 0  # type: ignore[attr-defined]
        got = [ln.rstrip() for ln in res.output.rstrip("\n").splitlines()]  # type: ignore[attr-defined]
        assert _matches(got, shown), "\n".join(got)

    verified.once(f"readme-shown:{cmd}", [README_PATH, *example_files(cmd)], check)


def test_the_readme_is_short_and_links_resolve() -> None:
    assert len(README.splitlines()) <= 250
    root = Path(__file__).resolve().parent.parent
    for link in re.findall(r"\]\(([^)#]+)\)", README):
        if not link.startswith("http"):
            assert (root / link).exists(), link


_DIGITS = re.compile(r"\d")


@pytest.mark.parametrize("cmd", [c for c, _ in _console_examples()] + _plain_examples()[:12])
@pytest.mark.parametrize("columns", ["80", "120"])
def test_no_number_is_cut_at_narrow_widths(cmd: str, columns: str, verified: VerifiedFor) -> None:
    """At 80 and 120 columns every number printed is whole: each number-like word of the narrow
    output is a word of the 200-column output (a number cut at a wrap, '1,099,51' + '1,627,776',
    is not), and nothing is elided with '…'. A table may drop a whole column when narrow."""
    args = shlex.split(cmd)[1:]
    if any(a.startswith("-o") or a in ("--plot", "--save-impl") or a.endswith((".png", ".svg", ".pdf")) for a in args):
        return

    def run(cols: str) -> str:
        res = CliRunner().invoke(cli, args, env={"COLUMNS": cols, "NO_COLOR": "1", "ROOFCALC_HW": None})
        assert res.exit_code in (0, 1), res.output
        return res.stdout

    def words(text: str) -> set[str]:
        return {w.strip("│┃()[],;:") for w in text.split()}

    def check() -> None:
        wide, narrow = run("200"), run(columns)
        wide_words = words(wide)
        cut = [w for w in words(narrow) if _DIGITS.search(w) and w not in wide_words]
        assert not cut, (cut[:5], columns)
        assert "…" not in narrow, narrow
        # and the numbers do not vanish: most of the wide output's numbers are still there
        numbers = [w for w in wide_words if _DIGITS.search(w)]
        assert sum(w in words(narrow) for w in numbers) >= 0.5 * len(numbers), columns

    verified.once(f"readme-narrow:{columns}:{cmd}", [README_PATH, *example_files(cmd)], check)


@pytest.mark.parametrize("cmd", _plain_examples())
def test_example_runs(cmd: str, verified: VerifiedFor) -> None:
    def check() -> None:
        res = _run(cmd)
        assert res.exit_code == 0, res.output  # type: ignore[attr-defined]

    verified.once(f"readme-example:{cmd}", [README_PATH, *example_files(cmd)], check)

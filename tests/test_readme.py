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

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()
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
    assert len(_console_examples()) >= 2 and len(_plain_examples()) >= 20


@pytest.mark.parametrize(("cmd", "expected"), _console_examples(), ids=[c for c, _ in _console_examples()])
def test_shown_output_matches(cmd: str, expected: str) -> None:
    res = _run(cmd)
    assert res.exit_code == 0  # type: ignore[attr-defined]
    got = [ln.rstrip() for ln in res.stdout.rstrip("\n").splitlines()]  # type: ignore[attr-defined]
    assert got == [ln.rstrip() for ln in expected.rstrip("\n").splitlines()]


@pytest.mark.parametrize("cmd", _plain_examples())
def test_example_runs(cmd: str) -> None:
    res = _run(cmd)
    assert res.exit_code == 0, res.output  # type: ignore[attr-defined]


def test_the_llm_totals_are_what_the_reports_say() -> None:
    """The README's totals over every committed LLM report are what
    validation/expected/llm_totals.py counts in them (the reports are what the code computes:
    tests/test_validation.py)."""
    import importlib.util

    path = Path(__file__).resolve().parent.parent / "validation" / "expected" / "llm_totals.py"
    spec = importlib.util.spec_from_file_location("llm_totals", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)

    def count(kind: str, step: str, *gpus: str) -> tuple[int, int]:
        t = mod.totals(kind)
        rows = [t[f"{step}, {g}"] for g in gpus]
        return sum(int(r[0]) for r in rows), sum(int(r[1]) for r in rows)

    text = " ".join(README.split())
    both = ("1 GPU", "TP")
    inside, n = count("registry", "decode, graphs", *both)
    assert inside == n and f"both engines, {n} of {n} steps within [0.85, 1.2]" in text
    inside, n = count("calibrated", "decode, graphs", *both)
    assert inside == n and f"and {n} of {n} with calibrations" in text
    inside, n = count("registry", "prefill, GPU-bound", *both)
    assert f"the GPU's work, {inside} of {n} within [0.8, 1.25]" in text
    inside, n = count("registry", "prefill, host-paced", *both)
    assert f"(small prompts without graphs), {inside} of {n} with the card's figures" in text
    inside, n = count("hostcase", "prefill, host-paced", "1 GPU")
    assert f"({inside} of {n} within the band, three machines)" in text
    inside, n = count("hostcase", "prefill, host-paced", "TP")
    assert f"({inside} of {n}, two pairs)" in text

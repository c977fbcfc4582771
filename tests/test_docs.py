"""The docs/ pages: the validation page is what its script generates from the committed reports,
every example command runs, the outputs shown are what roofcalc prints, and every relative link
resolves."""

from __future__ import annotations

import importlib.util
import os
import re
import shlex
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from roofcalc.cli import cli

from .conftest import VerifiedFor, example_files
from .test_readme import _matches

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(DOCS.glob("*.md"))
ENV = {"COLUMNS": "100", "NO_COLOR": "1", "ROOFCALC_HW": None}
README_TESTS = ROOT / "tests" / "test_readme.py"  # _matches, the elision rule these checks use


def _blocks(page: Path) -> list[tuple[str, str]]:
    return re.findall(r"```(\w*)\n(.*?)```", page.read_text(), flags=re.S)


def _runnable(line: str) -> bool:
    """Placeholders, and the probe's measuring runs (they need a GPU); `probe --report` runs anywhere."""
    if any(s in line for s in ("path/to", "...")):
        return False
    args = shlex.split(line)
    return not (args[1] == "probe" and "--report" not in args)


def _commands() -> list[tuple[str, str]]:
    """Every `roofcalc ...` line of a ```sh block and every `$ roofcalc ...` line of a ```console
    block, with its page."""
    out = []
    for page in PAGES:
        for lang, body in _blocks(page):
            if lang not in ("sh", "console"):
                continue
            for line in body.splitlines():
                if lang == "console":
                    if not line.startswith("$ "):
                        continue
                    line = line[2:]
                line = line.split("  #")[0].strip()
                if line.startswith("roofcalc ") and _runnable(line):
                    out.append((page.name, line))
    return out


def _console_examples() -> list[tuple[str, str, str]]:
    out = []
    for page in PAGES:
        for lang, body in _blocks(page):
            if lang != "console":
                continue
            for chunk in re.split(r"^\$ ", body, flags=re.M)[1:]:
                cmd, _, shown = chunk.partition("\n")
                out.append((page.name, cmd.strip(), shown))
    return out


@contextmanager
def _scratch() -> Iterator[None]:
    """Run in a scratch folder, so that files the examples write land there, with the
    repository's data folders reachable by the same relative paths."""
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:
        for name in ("validation", "tests", "ops", "hardware", "models"):
            os.symlink(ROOT / name, Path(tmp) / name)
        os.chdir(tmp)
        try:
            yield
        finally:
            os.chdir(here)


def _run(cmd: str) -> Result:
    args = shlex.split(cmd.split(" | ")[0].split(" > ")[0])
    assert args[0] == "roofcalc"
    with _scratch():
        return CliRunner().invoke(cli, args[1:], env=ENV, catch_exceptions=False)


def test_the_validation_page_is_what_the_script_writes() -> None:
    path = ROOT / "validation" / "expected" / "make_validation_doc.py"
    spec = importlib.util.spec_from_file_location("make_validation_doc", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    committed = (DOCS / "validation.md").read_text()
    assert committed == mod.render(), "docs/validation.md is stale: python3 validation/expected/make_validation_doc.py"


def test_there_are_examples() -> None:
    pages = {page for page, _ in _commands()}
    assert {"cli.md", "llm.md", "occupancy.md", "kernel-files.md", "probe.md", "model.md"} <= pages


@pytest.mark.parametrize(("page", "cmd"), _commands(), ids=[f"{p}: {c}" for p, c in _commands()])
def test_example_runs(page: str, cmd: str, verified: VerifiedFor) -> None:
    """Each example runs (once per the inputs it has: tests/conftest.py Verified)."""

    def check() -> None:
        res = _run(cmd)
        assert res.exit_code == 0, f"{page}: {cmd}\n{res.output}"

    verified.once(f"docs-example:{cmd}", [DOCS / page, README_TESTS, *example_files(cmd)], check)


@pytest.mark.parametrize(("page", "cmd", "shown"), _console_examples(), ids=[c for _, c, _ in _console_examples()])
def test_shown_output_matches(page: str, cmd: str, shown: str, verified: VerifiedFor) -> None:
    def check() -> None:
        res = _run(cmd)
        got = [ln.rstrip() for ln in res.output.rstrip("\n").splitlines()]
        want = [ln.rstrip() for ln in shown.rstrip("\n").splitlines()]
        assert _matches(got, want), f"{page}: {cmd}\n" + "\n".join(got)

    verified.once(f"docs-shown:{cmd}", [DOCS / page, README_TESTS, *example_files(cmd)], check)


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    return {_slug(h) for h in re.findall(r"^#+ (.+)$", text, flags=re.M)}


@pytest.mark.parametrize("page", PAGES, ids=[p.name for p in PAGES])
def test_relative_links_resolve(page: Path) -> None:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    for link in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", link):
            continue
        target, _, anchor = link.partition("#")
        path = (page.parent / target).resolve() if target else page
        assert path.exists(), f"{page.name}: {link}"
        if anchor and path.suffix == ".md":
            assert anchor in _anchors(path), f"{page.name}: {link}: no heading with that anchor"


def test_the_ablations_whole_model_row_is_the_committed_reports() -> None:
    """validation/expected/ablation.json's "model" row is the share of the fresh hold-outs' committed
    reports (roofcalc validate) within [0.8, 1.25]: the ablation evaluates what the reports do."""
    import json

    root = Path(__file__).resolve().parent.parent / "validation" / "expected"
    doc = json.loads((root / "ablation.json").read_text())
    ratios = []
    for src in doc["sets"]:
        card, name = src.split("/")
        rep = json.loads((root / card / f"report-{Path(name).stem}-registry.json").read_text())
        ratios += [c["ratio"] for c in rep["cases"] if isinstance(c.get("ratio"), (int, float))]
    assert len(ratios) == doc["cases"]
    assert doc["summary"]["model"]["within_band"] == sum(0.8 <= r <= 1.25 for r in ratios) / len(ratios)
    assert doc["summary"]["model"]["outside_0.5_2"] == sum(not 0.5 <= r <= 2 for r in ratios)

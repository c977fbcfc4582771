"""The edge between what the user types and the engines: the reproductions of the
architecture issue, each as a regression test, and every --help example runs."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import click
import pytest

from roofcalc import registry
from roofcalc.cli import cli
from roofcalc.errors import InputError, ParamError

from .conftest import VerifiedFor, example_files, run, run_json

AXPY = """\
name: axpy
summary: "y = a*x + y"
example: "roofcalc op ./axpy.yaml --n 64"
params:
  n: {type: int, default: 1024, help: "vector length", units: elements}
flops: "2*n"
bytes:
  x: {expr: "n*dtype_bytes", help: "read x"}
  y: {expr: "2*n*dtype_bytes", help: "read and write y"}
"""


@pytest.fixture
def axpy(tmp_path: Path) -> Path:
    p = tmp_path / "axpy.yaml"
    p.write_text(AXPY)
    return p


def test_sweep_takes_an_op_file(axpy: Path) -> None:
    d = run_json("sweep", str(axpy), "--n", "1..64")
    assert d["op"] == "axpy" and d["values"] == [1, 2, 4, 8, 16, 32, 64]


def test_sweep_of_a_file_named_like_a_builtin_sweeps_the_file(tmp_path: Path) -> None:
    p = tmp_path / "mine.yaml"
    p.write_text(AXPY.replace("name: axpy", "name: gemv"))
    d = run_json("sweep", str(p), "--n", "1..8")
    # the built-in gemv has m and n; this file's op has only n, and 3 bytes per element per n
    assert d["rows"][0]["result"]["bytes"] == 3 * 2 * 1


def test_roofline_takes_an_op_file(axpy: Path) -> None:
    d = run_json("roofline", "--op", f"{axpy}:n=64", "--hw", "h100")
    assert d["points"][0]["label"] == "axpy n=64"


def _help_examples() -> list[str]:
    """Every example line printed by every command's --help (op subcommands included)."""
    out: list[str] = []

    def walk(cmd: click.Command, path: list[str]) -> None:
        ctx = click.Context(cmd, info_name=" ".join(path))
        text = cmd.get_help(ctx)
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("roofcalc "):
                out.append(line)
        if isinstance(cmd, click.Group):
            for name in cmd.list_commands(ctx):
                sub = cmd.get_command(ctx, name)
                if sub is not None:
                    walk(sub, [*path, name])

    walk(cli, ["roofcalc"])
    return sorted(set(out))


EXAMPLES = _help_examples()


def test_there_are_help_examples() -> None:
    assert len(EXAMPLES) > 40
    assert any(e.startswith("roofcalc sweep decode") for e in EXAMPLES)


@pytest.mark.parametrize("example", EXAMPLES)
def test_every_help_example_runs(
    example: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, verified: VerifiedFor
) -> None:
    args = shlex.split(example)[1:]
    if args[0] == "probe" and "--report" not in args:
        pytest.skip("measures a GPU")
    if "--plot" in args or "-o" in args:
        pytest.skip("draws a chart file: the charts are drawn in test_charts and test_readme")
    if "h100-measured.yaml" in example:
        example = example.replace("h100-measured.yaml", "validation/probe/h100/calibration.yaml")
        args = shlex.split(example)[1:]
    root = Path(__file__).resolve().parent.parent
    for name in ("validation", "tests"):
        (tmp_path / name).symlink_to(root / name)
    if args[0] == "probe" and "--report" in args:  # the example's report file
        args[args.index("--report") + 1] = str(root / "validation" / "probe" / "h100" / "probe.json")
    if args[:1] == ["hw"] and "--hw-file" in args:
        (tmp_path / "my-gpu.yaml").write_text((root / "hardware" / "h100.yaml").read_text())
    monkeypatch.chdir(tmp_path)

    def check() -> None:
        res = run(*args)
        assert res.exit_code == 0, (example, res.output[-800:])

    # the help texts are the code's: once per the code and the files the example names
    verified.once(f"help-example:{example}", example_files(" ".join(map(shlex.quote, ["roofcalc", *args]))), check)


def test_crossover_starts_at_the_parameter_minimum(tmp_path: Path) -> None:
    p = tmp_path / "minop.yaml"
    p.write_text(
        AXPY.replace("name: axpy", "name: minop")
        .replace(
            'n: {type: int, default: 1024, help: "vector length", units: elements}',
            'n: {type: int, default: 1024, min: 16, help: "vector length", units: elements}',
        )
        .replace('flops: "2*n"', 'flops: "2*n*n"')
        + "crossover: n\n"
    )
    d = run_json("op", str(p), "--n", "64", "--hw", "h100")
    assert d["crossover"]["value"] is not None and d["crossover"]["value"] >= 16


@pytest.mark.parametrize("name", ["GPU [/x] odd", "GPU [blink]x[/blink]", "ctl\x1b[31mred", "GPU :fire: 9000"])
def test_user_text_is_not_rich_markup(tmp_path: Path, name: str) -> None:
    text = (Path(__file__).resolve().parent.parent / "hardware" / "h100.yaml").read_text()
    text = re.sub(r"^name: .*$", lambda _: "name: " + json.dumps(name), text, count=1, flags=re.M)
    p = tmp_path / "odd.yaml"
    p.write_text(text)
    for args in (("hw", "show", "--hw-file", str(p)), ("op", "gemm", "--m", "64", "--hw-file", str(p))):
        res = run(*args)
        assert res.exit_code == 0, res.output
        if "\x1b" not in name:
            assert name in res.stdout  # printed as written, not applied as a style
        assert "\x1b" not in res.stdout


def test_conflicting_hardware_options_are_usage_errors(tmp_path: Path) -> None:
    f = Path(__file__).resolve().parent.parent / "hardware" / "a100.yaml"
    cal = Path(__file__).resolve().parent.parent / "validation" / "probe" / "h100" / "calibration.yaml"
    res = run("op", "gemm", "--hw-file", str(f), "--calibration", str(cal))
    assert res.exit_code == 2 and "--hw-file and --calibration" in res.output
    res = run("hw", "show", "a100", "--hw-file", str(f))
    assert res.exit_code == 2 and "give one" in res.output


def test_probe_report_of_a_partial_file_is_a_usage_error(tmp_path: Path) -> None:
    p = tmp_path / "partial.json"
    p.write_text('{"raw": {}, "hardware": "h100"}')
    res = run("probe", "--report", str(p))
    assert res.exit_code == 2 and "Traceback" not in res.output


def test_a_new_preset_file_is_found_and_ops_still_list(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Copying a preset file beside the others (models/) adds presets; op --list and --help still work."""
    models = tmp_path / "models"
    models.mkdir()
    src = Path(__file__).resolve().parent.parent / "models" / "llm.yaml"
    (models / "llm.yaml").write_text(src.read_text())
    (models / "moe-models.yaml").write_text(
        "description: more\npresets:\n  tiny-moe:\n    source: test\n"
        "    params: {layers: 2, hidden: 256, heads: 4, kv_heads: 2, head_dim: 64, ffn: 512, vocab: 1000,"
        " experts: 4, experts_per_token: 2}\n"
    )
    real = registry.builtin_files

    def files(kind: registry.Kind) -> dict[str, object]:
        if kind == "model":
            return {p.stem: p for p in sorted(models.glob("*.yaml"))}
        return real(kind)

    from roofcalc import presets

    monkeypatch.setattr(registry, "builtin_files", files)
    presets.load_presets.cache_clear()
    try:
        assert run("op", "--list").exit_code == 0
        assert run("op", "decode", "--help").exit_code == 0
        d = run_json("op", "decode", "--model", "tiny-moe", "--batch", "2", "--hw", "h100")
        assert d["params"]["experts"] == 4
        (models / "dup.yaml").write_text(src.read_text())
        presets.load_presets.cache_clear()
        res = run("op", "decode", "--model", "llama-3.1-8b")
        assert res.exit_code == 2 and "already defined" in res.output
    finally:
        presets.load_presets.cache_clear()


def test_every_yaml_in_ops_is_an_op() -> None:
    from roofcalc.opdefs import load_op, op_names

    for name in op_names():
        assert load_op(name).name == name


def test_api_names_parameters_cli_names_options() -> None:
    import roofcalc

    with pytest.raises(ParamError) as e:
        roofcalc.analyze("attention", "h100", heads=32, kv_heads=5)
    assert "kv_heads must divide heads" in str(e.value) and "--" not in str(e.value)
    res = run("op", "attention", "--heads", "32", "--kv-heads", "5")
    assert res.exit_code == 2 and "--kv-heads must divide --heads" in res.output


def test_max_context_is_optional_not_a_huge_default() -> None:
    d = run_json(
        "op",
        "decode",
        "--layers",
        "2",
        "--hidden",
        "256",
        "--heads",
        "4",
        "--kv-heads",
        "2",
        "--head-dim",
        "64",
        "--ffn",
        "512",
        "--vocab",
        "1000",
    )
    assert d["params"]["max_context"] is None


def test_the_public_api_resolves_names_once() -> None:
    import roofcalc

    r = roofcalc.analyze("decode", "h100", model="llama-3.1-8b", batch=1, context=1024)
    assert r.crossover is None  # computed only when asked for
    assert r.params["layers"] == 32
    with pytest.raises(InputError):
        roofcalc.analyze("gemm", "h100", model="llama-3.1-8b")

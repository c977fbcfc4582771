"""Fuzzing every command: whatever the arguments, roofcalc exits 0, 1 or 2, never prints a
traceback, and with --json and exit 0 prints JSON whose every object carries 'version'.

Arguments are mostly plausible for each option (so runs reach the engines) with hostile
values mixed in: huge and negative numbers, unit suffixes, unicode, empty strings, stray
tokens. ROOFCALC_FUZZ_EXAMPLES sets the number of examples (CI: 300)."""

from __future__ import annotations

import json
import os
import tempfile
from typing import Any

import click
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from roofcalc.cli import cli
from roofcalc.opdefs import op_names

EXAMPLES = int(os.environ.get("ROOFCALC_FUZZ_EXAMPLES", "150"))

COMMANDS: list[list[str]] = (
    [["op", n] for n in op_names()]
    + [["compare", n] for n in op_names()]
    + [["sweep", "gemm"], ["sweep", "dot"]]
    + [
        ["occupancy"],
        ["hw", "list"],
        ["hw", "show"],
        ["model", "list"],
        ["roofline"],
        ["op"],
        ["probe", "--report"],
        ["probe"],
    ]
)

VALUES = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.sampled_from(
        [
            "0",
            "1",
            "-1",
            "8k",
            "96K",
            "96KiB",
            "0x18000",
            "1e6",
            "1e400",
            "1.5",
            "nan",
            "inf",
            "",
            " ",
            "1..8",
            "8..1",
            "1..1000000",
            "h100",
            "H100-SXM",
            "m3-max",
            "a100",
            "b200",
            "fp4",
            "fp8",
            "bf16",
            "flash",
            "naive",
            "llama-3.1-8b",
            "mixtral-8x7b",
            "gemm:m=64",
            "decode:model=llama-3.1-8b",
            "gemm:m=-1",
            "x.png",
            "x.jpg",
            "/nonexistent/x.yaml",
            "true",
            "false",
            "--json",
            "-1..5",
            "\\u00e9\\u00e8\\u4e2d",
            "\\x00",
            "9" * 40,
            "100000000000000000000k",
        ]
    ),
    st.text(max_size=12),
)

# plausible values per option, so that most runs get past parsing into the engines
PLAUSIBLE: dict[str, Any] = {
    "--hw": st.sampled_from(["h100", "h200", "a100", "b200", "m3-max", "h100-pcie", "h100,h200", "a100,b200"]),
    "--dtype": st.sampled_from(["bf16", "fp16", "fp32", "tf32", "fp8", "int8", "fp4", "fp64"]),
    "--kv-dtype": st.sampled_from(["bf16", "fp8"]),
    "--model": st.sampled_from(["llama-3.1-8b", "llama-3.1-70b", "mixtral-8x7b", "qwen2.5-7b", "llama-2-7b"]),
    "--impl": st.sampled_from(["flash", "naive"]),
    "--op": st.sampled_from(
        [
            "gemm:m=64",
            "gemv:m=4096,n=4096",
            "decode:model=llama-3.1-8b,batch=8",
            "attention:seq=1024,heads=8,head-dim=64",
            "softmax:cols=1000",
        ]
    ),
    "--threads": st.integers(1, 1100).map(str),
    "--regs": st.integers(0, 260).map(str),
    "--smem": st.sampled_from(["0", "1k", "48k", "96k", "100000", "227k", "300k"]),
    "--static-smem": st.sampled_from(["0", "2k", "48k"]),
    "--carveout": st.integers(-2, 101).map(str),
    "--grid": st.integers(-1, 100000).map(str),
    "--steps": st.integers(0, 300).map(str),
    "--gpus": st.sampled_from(["1", "2", "4", "8", "3"]),
    "--report": st.sampled_from(["validation/h100/probe.json", "/nonexistent.json", "README.md"]),
}
SMALL_INT = st.one_of(st.integers(1, 64), st.sampled_from([128, 512, 1024, 4096, 8192])).map(str)
RANGE = st.sampled_from(["1..64", "8..512", "1..16384", "3..7"])
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _options(path: list[str]) -> list[click.Option]:
    ctx = click.Context(cli)
    cmd: Any = cli
    for part in path:
        if not isinstance(cmd, click.Group):
            break
        sub = cmd.get_command(ctx, part)
        if sub is None:
            break
        cmd = sub
    return [p for p in cmd.params if isinstance(p, click.Option) and p.name not in ("as_json", "help")]


@st.composite
def invocations(draw: Any) -> list[str]:
    path = draw(st.sampled_from(COMMANDS))
    opts = _options(path)
    args = list(path)
    if path[-1] == "--report":
        args.append(os.path.join(ROOT, draw(PLAUSIBLE["--report"])))
    for _ in range(draw(st.integers(0, 5))):
        if not opts or draw(st.integers(0, 9)) == 0:
            args.append(draw(VALUES))  # a stray token
            continue
        opt = draw(st.sampled_from(opts))
        name = draw(st.sampled_from(opt.opts + opt.secondary_opts))
        args.append(name)
        if opt.is_flag or opt.count:
            continue
        if draw(st.integers(0, 3)) == 0:
            args.append(draw(VALUES))  # a hostile value
        elif name in PLAUSIBLE:
            args.append(draw(PLAUSIBLE[name]))
        elif path[0] == "sweep" and draw(st.booleans()):
            args.append(draw(RANGE))
        else:
            args.append(draw(SMALL_INT))
    if draw(st.booleans()):
        args.append("--json")
    return args


def _all_objects_versioned(doc: Any) -> bool:
    if isinstance(doc, dict):
        return "version" in doc
    if isinstance(doc, list):
        return all(isinstance(d, dict) and "version" in d for d in doc)
    return False


def invoke(args: list[str]) -> Any:
    runner = CliRunner()
    here = os.getcwd()
    with tempfile.TemporaryDirectory() as tmp:  # charts and calibration files land here, if any
        os.chdir(tmp)
        try:
            return runner.invoke(cli, args, env={"NO_COLOR": "1", "ROOFCALC_DEBUG": ""}, catch_exceptions=True)
        finally:
            os.chdir(here)


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(invocations())
def test_every_command_survives(args: list[str]) -> None:
    res = invoke(args)
    assert res.exit_code in (0, 1, 2), (args, res.output, res.exception)
    if res.exception is not None:
        assert isinstance(res.exception, SystemExit), (args, repr(res.exception))
    assert "Traceback" not in res.output, args
    if res.exit_code == 0 and "--json" in args and "--help" not in args:
        doc = json.loads(res.stdout)
        assert _all_objects_versioned(doc), args

"""The roofcalc command line: parse, call the library, render. No arithmetic here.

Exit codes: 0 ok, 1 a domain error (valid request that cannot be answered),
2 a usage error (unknown names, malformed values or files).
"""

from __future__ import annotations

import json
import os
from typing import Any

import click

from ._version import __version__
from .defaults import DEFAULT_HARDWARE as DEFAULT_HW


class InputClickError(click.ClickException):
    """A usage error printed as one line (no usage block), exit code 2."""

    exit_code = 2


class RoofcalcGroup(click.Group):
    """Maps library errors to click exceptions; no tracebacks unless ROOFCALC_DEBUG=1."""

    def invoke(self, ctx: click.Context) -> Any:
        from .errors import RoofcalcError

        try:
            return super().invoke(ctx)
        except RoofcalcError as e:
            if os.environ.get("ROOFCALC_DEBUG"):
                raise
            if e.exit_code == 2:
                raise InputClickError(str(e)) from None
            raise click.ClickException(str(e)) from None
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            raise click.Abort() from None
        except Exception as e:  # a bug: say so in one line, keep the traceback for debugging
            if os.environ.get("ROOFCALC_DEBUG"):
                raise
            raise click.ClickException(
                f"internal error: {type(e).__name__}: {e} (set ROOFCALC_DEBUG=1 for the traceback)"
            ) from None


class IntType(click.ParamType):  # type: ignore[type-arg]
    """Integers with optional binary suffixes (8k = 8192) and exponents (1e6)."""

    name = "integer"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        from .units import parse_int

        try:
            return parse_int(value)
        except ValueError as e:
            self.fail(str(e), param, ctx)


class SizeType(click.ParamType):  # type: ignore[type-arg]
    """Memory sizes: 98304, 96k, 96K, 96KB, 96KiB, 0x18000 (k = 1024 bytes)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 0:
                self.fail(f"size {value} is negative", param, ctx)
            return value
        from .units import parse_size

        try:
            return parse_size(value)
        except ValueError as e:
            self.fail(str(e), param, ctx)


class NameType(click.ParamType):  # type: ignore[type-arg]
    """A name from a fixed list, case-insensitive, with a did-you-mean on error."""

    def __init__(self, choices: list[str], what: str) -> None:
        self.choices = choices
        self.name = what

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from .errors import suggest

        s = str(value).strip().lower()
        if s not in self.choices:
            self.fail(f"unknown {self.name} {value!r}{suggest(s, self.choices)}; choose from "
                      f"{', '.join(self.choices)}", param, ctx)
        return s


def emit_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, allow_nan=False))


def finish_view(model: Any, output: str | None, save: Any, as_json: bool, render: Any) -> None:
    """The common end of the chart commands: the file (if -o), then JSON or the terminal view."""
    if output:
        save(model, output)
    if as_json:
        emit_json(model.model_dump(mode="json"))
        return
    from .render import console

    render(console(), model, output is None)
    if output:
        click.echo(f"chart written to {output}", err=True)


def resolve_hw(hw_name: str | None, hw_file: str | None, calibration: str | None = None) -> Any:
    from .defaults import default_hardware_name
    from .hardware import load_calibration, load_hardware, load_hardware_file

    if calibration:
        return load_calibration(calibration, hw_name or os.environ.get("ROOFCALC_HW"))
    if hw_file:
        return load_hardware_file(hw_file)
    return load_hardware(default_hardware_name(hw_name))


@click.group(cls=RoofcalcGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="roofcalc")
def cli() -> None:
    """Roofline and occupancy calculator for GPU kernels.

    \b
    Examples:
      roofcalc op gemm --m 8192 --hw h100
      roofcalc occupancy --hw h100 --threads 256 --regs 64 --smem 96k
      roofcalc hw show h100
    """


# ---------------------------------------------------------------- op


class RangeOrInt(click.ParamType):  # type: ignore[type-arg]
    """An integer, or a range A..B for the swept parameter."""

    name = "integer|A..B"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and ".." in value:
            return value
        return IntType().convert(value, param, ctx)


def _hw_list(values: tuple[str, ...]) -> list[Any]:
    from .defaults import default_hardware_name
    from .hardware import load_hardware

    names = [n.strip() for v in values for n in v.split(",") if n.strip()] or [default_hardware_name()]
    hws: list[Any] = []
    for n in names:
        hw = load_hardware(n)
        if hw.id not in [h.id for h in hws]:
            hws.append(hw)
    return hws


def _compare_callback(opdef: Any) -> Any:
    def callback(hw_names: tuple[str, ...], as_json: bool, **params: Any) -> None:
        from .errors import DomainError
        from .roofline import analyze

        results, errors = [], []
        for hw in _hw_list(hw_names):
            try:
                results.append(analyze(opdef, hw, **params))
            except DomainError as e:
                errors.append((hw.id, str(e)))
        for hw_id, msg in errors:
            click.echo(f"skipped {hw_id}: {msg}", err=True)
        if not results:
            raise click.ClickException("no hardware could run this op: " + "; ".join(m for _, m in errors))
        if as_json:
            emit_json([r.model_dump(mode="json") for r in results])
            return
        from .render import compare_table, console

        compare_table(console(), results, errors)

    return callback


def _sweep_callback(opdef: Any) -> Any:
    def callback(hw_names: tuple[str, ...], as_json: bool, steps: int | None, linear: bool, output: str | None,
                 **params: Any) -> None:
        from .views import parse_range, sweep

        ranged = {k: v for k, v in params.items() if isinstance(v, str) and ".." in v}
        if len(ranged) != 1:
            raise InputClickError("give exactly one parameter as a range A..B (e.g. --m 1..16384)"
                                  if not ranged else f"only one parameter can be swept (got {', '.join(ranged)})")
        (pname, text), = ranged.items()
        if output:
            from .plot import check_output

            check_output(output)
        values = parse_range(text, steps, linear)
        fixed = {k: v for k, v in params.items() if k != pname and v is not None}
        sw = sweep(opdef.name, _hw_list(hw_names), pname, values, fixed)
        from .plot import save_sweep
        from .render import sweep_view

        finish_view(sw, output, save_sweep, as_json, sweep_view)

    return callback


def _is_op_file(name: str) -> bool:
    return name.endswith((".yaml", ".yml")) or "/" in name


def _op_command(name: str, mode: str = "op") -> click.Command:
    from .dtypes import DTYPES
    from .opdefs import load_op, load_op_file

    opdef = load_op_file(name) if _is_op_file(name) else load_op(name)

    def callback(hw_name: str | None, hw_file: str | None, calibration: str | None,
                 as_json: bool, breakdown: bool = False, **params: Any) -> None:
        from .roofline import analyze

        hw = resolve_hw(hw_name, hw_file, calibration)
        result = analyze(opdef, hw, **params)
        if as_json:
            emit_json(result.model_dump(mode="json"))
            return
        from .render import console, op_result

        op_result(console(), result, breakdown=breakdown)

    params: list[click.Parameter] = []
    if opdef.presets is not None:
        from .presets import load_presets

        names = list(load_presets(opdef.presets.file).presets)
        params.append(click.Option([f"--{opdef.presets.option}"], type=NameType(names, "model"),
                                   default=None, help=f"{opdef.presets.help}: {', '.join(names)}"))
        params.append(click.Option([f"--{opdef.presets.option}-config"], type=click.Path(dir_okay=False),
                                   default=None, help="a Hugging Face config.json to read the dimensions from"))
    for pname, p in opdef.all_params.items():
        flag = "--" + pname.replace("_", "-")
        default_txt = (f"default: {p.default}" if p.default is not None and p.default != 2**63 - 1
                       else f"default: {p.default_from}" if p.default_from else "")
        units = f" [{p.units}]" if p.units else ""
        help_ = f"{p.help}{units}" + (f" ({default_txt})" if default_txt else "")
        if p.type == "bool":
            params.append(click.Option([f"{flag}/--no-{flag[2:]}", pname], default=None, help=help_))
        elif p.type == "int":
            params.append(click.Option([flag, pname], type=RangeOrInt() if mode == "sweep" else IntType(),
                                       default=None, help=help_))
        elif p.type == "float":
            params.append(click.Option([flag, pname], type=float, default=None, help=help_))
        elif p.type == "dtype":
            params.append(click.Option([flag, pname], type=NameType(DTYPES, "dtype"), default=None, help=help_))
        else:
            params.append(click.Option([flag, pname], type=NameType(p.choices or [], pname), default=None, help=help_))
    if mode == "op":
        params += [
            click.Option(["--hw", "hw_name"], default=None, metavar="NAME",
                         help=f"hardware id or alias (default: $ROOFCALC_HW or {DEFAULT_HW})"),
            click.Option(["--hw-file"], type=click.Path(dir_okay=False), default=None,
                         help="a hardware YAML file of your own"),
            click.Option(["--calibration"], type=click.Path(dir_okay=False), default=None,
                         help="use the ceilings measured by 'roofcalc probe --save-calibration'"),
            click.Option(["--json", "as_json"], is_flag=True, help="print one JSON object on stdout"),
        ]
        if opdef.breakdown:
            params.append(click.Option(["--breakdown"], is_flag=True,
                                       help="one row per layer kind: FLOPs, bytes, intensity, bound"))
    else:
        params += [
            click.Option(["--hw", "hw_names"], multiple=True, metavar="NAME[,NAME...]",
                         help=f"hardware ids, comma-separated or repeated (default: {DEFAULT_HW})"),
            click.Option(["--json", "as_json"], is_flag=True, help="print JSON on stdout"),
        ]
    if mode == "sweep":
        params += [
            click.Option(["--steps"], type=int, default=None, help="N log-spaced points (or linear with --linear)"),
            click.Option(["--linear"], is_flag=True, help="linear steps instead of powers of two"),
            click.Option(["-o", "--output"], type=click.Path(dir_okay=False), default=None,
                         help="write the chart to a .png, .svg or .pdf file (needs roofcalc[plot])"),
        ]
        callback = _sweep_callback(opdef)
    elif mode == "compare":
        callback = _compare_callback(opdef)
    doc = f"{opdef.summary}.\n\n" + (f"{opdef.description}\n\n" if opdef.description else "")
    example = opdef.example
    if mode != "op":
        example = example.replace("roofcalc op ", f"roofcalc {mode} ")
        example = example.split(" --hw ")[0] + " --hw h100,h200"
    doc += f"\b\nExample:\n  {example}"
    return click.Command(opdef.name, params=params, callback=callback, help=doc,
                         context_settings={"help_option_names": ["-h", "--help"]})


class OpGroup(click.Group):
    """`roofcalc op NAME`: one subcommand per ops/*.yaml, options from the file."""

    mode = "op"

    def list_commands(self, ctx: click.Context) -> list[str]:
        from .opdefs import op_names

        return op_names()

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        from .opdefs import op_names

        if _is_op_file(cmd_name):
            return _op_command(cmd_name, self.mode)
        if cmd_name.lower() not in op_names():
            return None
        return _op_command(cmd_name.lower(), self.mode)

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        from .errors import suggest
        from .opdefs import op_names

        name = args[0]
        cmd = self.get_command(ctx, name)
        if cmd is None:
            if name.startswith("-"):
                return super().resolve_command(ctx, args)
            names = op_names()
            raise InputClickError(f"unknown op {name!r}{suggest(name, names)}; known: {', '.join(names)}")
        return cmd.name, cmd, args[1:]


def _list_ops(as_json: bool) -> None:
    from .opdefs import load_op, op_names

    ops = [load_op(n) for n in op_names()]
    if as_json:
        emit_json([{"version": 1, "op": o.name, "summary": o.summary,
                    "params": {k: p.model_dump(exclude_none=True) for k, p in o.all_params.items()},
                    "presets": o.presets.option if o.presets else None} for o in ops])
        return
    from .render import console, op_list

    op_list(console(), ops)


@cli.group(cls=OpGroup, invoke_without_command=True)
@click.option("--list", "list_", is_flag=True, help="list the ops and their parameters")
@click.option("--json", "as_json", is_flag=True, help="with --list: print JSON")
@click.pass_context
def op(ctx: click.Context, list_: bool, as_json: bool) -> None:
    """FLOPs, bytes, intensity, bound and predicted time of an op on a GPU.

    \b
    Examples:
      roofcalc op gemm --m 8192 --hw h100
      roofcalc op attention --seq 8192 --heads 32 --kv-heads 8 --causal --impl flash
      roofcalc op decode --model llama-3.1-8b --batch 1 --context 1024
      roofcalc op --list
    """
    if ctx.invoked_subcommand is not None:
        return
    if list_:
        _list_ops(as_json)
        return
    click.echo(ctx.get_help())
    ctx.exit(2)


# ---------------------------------------------------------------- views


class CompareGroup(OpGroup):
    mode = "compare"


class SweepGroup(OpGroup):
    mode = "sweep"


@cli.group(cls=CompareGroup)
def compare() -> None:
    """One op on several GPUs side by side; the fastest is marked.

    \b
    Example:
      roofcalc compare gemm --m 8192 --hw h100,h200,a100,b200,m3-max
    """


@cli.group(cls=SweepGroup)
def sweep() -> None:
    """Sweep one parameter over a range; say where the op turns compute-bound.

    A..B means powers of two from A (B included); --steps N gives N log-spaced points,
    --linear linear ones.

    \b
    Examples:
      roofcalc sweep gemm --m 1..16384 --hw h100
      roofcalc sweep decode --model llama-3.1-8b --batch 1..512 --hw h100,h200
    """


@cli.command()
@click.option("--hw", "hw_names", multiple=True, metavar="NAME[,NAME...]",
              help=f"hardware ids, comma-separated or repeated (default: {DEFAULT_HW})")
@click.option("--op", "op_specs", multiple=True, required=True, metavar="NAME[:param=value,...]",
              help="an op to place on the chart, e.g. gemm:m=8192 or decode:model=llama-3.1-8b,batch=8")
@click.option("--calibration", multiple=True, type=click.Path(dir_okay=False),
              help="draw the measured roofs of a 'probe --save-calibration' file beside the datasheet ones")
@click.option("-o", "--output", type=click.Path(dir_okay=False), default=None,
              help="write a .png, .svg or .pdf (needs roofcalc[plot]); without it, a terminal chart")
@click.option("--json", "as_json", is_flag=True, help="print the chart's data as JSON")
def roofline(hw_names: tuple[str, ...], op_specs: tuple[str, ...], calibration: tuple[str, ...], output: str | None,
             as_json: bool) -> None:
    """A log-log roofline: roofs per hardware and dtype, each op a labelled point.

    \b
    Examples:
      roofcalc roofline --hw h100 --op gemm:m=8192 --op gemv:m=4096,n=4096 -o roofline.png
      roofcalc roofline --hw h100 --hw h200 --hw b200 --op attention:seq=8192,heads=32,head-dim=128 -o roofline.svg
      roofcalc roofline --hw h100 --op gemm:m=8192
    """
    from .hardware import load_calibration
    from .views import parse_op_spec, roofline_chart

    if output:
        from .plot import check_output

        check_output(output)
    ops = [parse_op_spec(s) for s in op_specs]
    cals = [load_calibration(c) for c in calibration]
    chart = roofline_chart(ops, _hw_list(hw_names), cals)
    from .plot import save_roofline
    from .render import roofline_view

    finish_view(chart, output, save_roofline, as_json, roofline_view)


# ---------------------------------------------------------------- hw


@cli.group()
def hw() -> None:
    """The hardware registry: list it, or show one device with every figure's source.

    \b
    Examples:
      roofcalc hw list
      roofcalc hw show h100
    """


@hw.command("list")
@click.option("--json", "as_json", is_flag=True, help="print JSON on stdout")
def hw_list(as_json: bool) -> None:
    """List the built-in hardware.

    \b
    Example:
      roofcalc hw list
    """
    from .hardware import all_hardware

    hws = all_hardware()
    if as_json:
        emit_json([h.model_dump(mode="json") | {"version": 1} for h in hws])
        return
    from .render import console
    from .render import hw_list as render

    render(console(), hws)


@hw.command("show")
@click.argument("name", required=False)
@click.option("--hw-file", type=click.Path(dir_okay=False), default=None, help="show a hardware YAML file of your own")
@click.option("--json", "as_json", is_flag=True, help="print JSON on stdout")
def hw_show(name: str | None, hw_file: str | None, as_json: bool) -> None:
    """Show every figure of one device, with its source and kind.

    \b
    Example:
      roofcalc hw show h100
    """
    hw = resolve_hw(name, hw_file)
    if as_json:
        emit_json(hw.model_dump(mode="json") | {"version": 1})
        return
    from .render import console
    from .render import hw_show as render

    render(console(), hw)


# ---------------------------------------------------------------- model


@cli.group()
def model() -> None:
    """Model presets for the decode and prefill ops.

    \b
    Example:
      roofcalc model list
    """


@model.command("list")
@click.option("--json", "as_json", is_flag=True, help="print JSON on stdout")
def model_list(as_json: bool) -> None:
    """List the model presets with their dimensions and sources.

    \b
    Example:
      roofcalc model list
    """
    from .presets import load_presets

    pf = load_presets("models.yaml")
    if as_json:
        emit_json([{"version": 1, "model": k, **p.model_dump(mode="json")} for k, p in pf.presets.items()])
        return
    from .render import console
    from .render import model_list as render

    render(console(), pf)


# ---------------------------------------------------------------- occupancy


@cli.command()
@click.option("--hw", "hw_name", default=None, metavar="NAME",
              help=f"hardware id or alias (default: $ROOFCALC_HW or {DEFAULT_HW})")
@click.option("--hw-file", type=click.Path(dir_okay=False), default=None, help="a hardware YAML file of your own")
@click.option("--threads", type=IntType(), default=None,
              help="threads per block (omit for a table over every block size)")
@click.option("--regs", type=IntType(), default=None, help="registers per thread (ptxas -v / cuobjdump --dump-resource-usage)")
@click.option("--smem", type=SizeType(), default="0", show_default=True,
              help="dynamic shared memory per block (96k = 96KiB = 98304 bytes)")
@click.option("--static-smem", type=SizeType(), default="0", show_default=True, help="static shared memory per block")
@click.option("--carveout", type=int, default=None,
              help="shared-memory carveout preference in percent (-1 or omitted: the default)")
@click.option("--barriers", type=int, default=1, show_default=True, help="block barriers used per block")
@click.option("--grid", type=IntType(), default=None, help="blocks in the grid: adds waves and the tail loss")
@click.option("--plot", type=click.Path(dir_okay=False), default=None,
              help="write occupancy against block size, registers and shared memory to .png/.svg/.pdf")
@click.option("--json", "as_json", is_flag=True, help="print JSON on stdout (a list without --threads)")
def occupancy(hw_name: str | None, hw_file: str | None, threads: int | None, regs: int | None, smem: int,
              static_smem: int, carveout: int | None, barriers: int, grid: int | None, plot: str | None,
              as_json: bool) -> None:
    """Blocks and warps per SM, occupancy, and the resource that limits it.

    \b
    Examples:
      roofcalc occupancy --regs 64 --smem 96k
      roofcalc occupancy --hw h100 --threads 256 --regs 64 --smem 96k
      roofcalc occupancy --hw a100 --threads 128 --regs 128 --smem 48k --static-smem 2k --carveout 50
      roofcalc occupancy --hw b200 --threads 384 --regs 168 --grid 1024 --json
      roofcalc occupancy --hw h100 --threads 256 --regs 64 --smem 32k --plot occupancy.png
    """
    from .occupancy_solver import occupancy as solve
    from .occupancy_solver import sweep_block_sizes

    hw = resolve_hw(hw_name, hw_file)
    if plot:
        from .plot import check_output

        check_output(plot)
        if threads is None or regs is None:
            raise InputClickError("--plot needs --threads and --regs (the configuration to mark)")
    if threads is None:
        results, best = sweep_block_sizes(hw, regs, smem, static_smem, carveout, barriers, grid)
        if as_json:
            emit_json([r.model_dump(mode="json") | {"chosen": r.threads == best} for r in results])
            return
        from .render import console, occupancy_sweep

        occupancy_sweep(console(), hw, results, best)
        return
    result = solve(hw, threads, regs, smem, static_smem, carveout, barriers, grid)
    curves = None
    if result.blocks_per_sm is not None and regs is not None:
        from .views import occupancy_curves

        curves = occupancy_curves(hw, threads, regs, smem, static_smem, carveout)
    if plot:
        if curves is None:
            raise click.ClickException(f"{hw.id}: occupancy curves need published residency rules")
        from .plot import save_occupancy

        save_occupancy(curves, plot)
    if as_json:
        emit_json(result.model_dump(mode="json"))
        return
    from .render import console, occupancy_curves_view, occupancy_result

    c = console()
    occupancy_result(c, hw, result)
    if curves is not None and not plot:
        occupancy_curves_view(c, curves)
    if plot:
        click.echo(f"chart written to {plot}", err=True)


# ---------------------------------------------------------------- probe


@cli.command()
@click.option("--quick", is_flag=True, help="the ceilings only (seconds)")
@click.option("--hw", "hw_name", default=None, metavar="NAME",
              help="registry part to compare with (default: matched from the GPU's name)")
@click.option("--save-calibration", type=click.Path(dir_okay=False), default=None,
              help="write the measured ceilings as a hardware file for --calibration")
@click.option("--report", "report_file", type=click.Path(dir_okay=False), default=None,
              help="re-check and show a saved 'probe --json' report instead of measuring (no GPU needed)")
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON on stdout")
def probe(quick: bool, hw_name: str | None, save_calibration: str | None, report_file: str | None,
          as_json: bool) -> None:
    """Measure this GPU and check roofcalc's predictions against it.

    Builds a CUDA probe with nvcc (cached), measures device-memory, L2, FMA and
    tensor-core ceilings, launch overhead, block residency and op timings, then
    compares them with the roofline and occupancy engines.

    \b
    Examples:
      roofcalc probe
      roofcalc probe --quick
      roofcalc probe --json > probe.json
      roofcalc probe --save-calibration h100-measured.yaml
      roofcalc op gemm --m 8192 --hw h100 --calibration h100-measured.yaml
    """
    from .probe.runner import calibration_yaml, report_from_file, run_probe, write_atomic

    if report_file:
        if save_calibration:
            raise InputClickError("--save-calibration needs a measurement, not --report")
        report = report_from_file(report_file)
        cal_doc = None
    else:
        import shlex
        import sys

        from .render import console, progress_steps

        command = " ".join(["roofcalc", *(shlex.quote(a) for a in sys.argv[1:])])
        with progress_steps(console(stderr=True)) as step:
            report, cal_doc = run_probe(quick, hw_name, command, step)
    if save_calibration and cal_doc is not None:
        write_atomic(save_calibration, calibration_yaml(cal_doc))
    if as_json:
        emit_json(report.model_dump(mode="json"))
        return
    from .render import console, probe_report

    probe_report(console(), report)
    if save_calibration:
        click.echo(f"calibration written to {save_calibration}", err=True)

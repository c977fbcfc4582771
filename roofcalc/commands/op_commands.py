"""`roofcalc op`, `compare` and `sweep`: one subcommand per op file, options from the file.

Three small builders share one function that turns an op's declared parameters into
click options; each builder adds its own options and callback.
"""

from __future__ import annotations

from typing import Any

import click

from ..impl.host_layer import paced
from ..opdefs import OpDef
from .common import (
    CheckedCommand,
    FileArg,
    InputClickError,
    IntType,
    NameType,
    RangeOrInt,
    SizeType,
    TimeType,
    emit_json,
    finish_view,
    one_chart_path,
    shared_option,
)

CONTEXT = {"help_option_names": ["-h", "--help"]}


def flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def param_options(opdef: OpDef, int_type: click.ParamType) -> list[click.Parameter]:  # type: ignore[type-arg,unused-ignore]
    """One option per declared parameter (and the preset options), help and defaults from the file."""
    from ..dtypes import DTYPES

    out: list[click.Parameter] = []
    if opdef.presets is not None:
        from ..presets import load_presets

        names = list(load_presets().presets)
        out.append(
            click.Option(
                [flag(opdef.presets.option)],
                type=NameType(names, "model"),
                default=None,
                help=f"{opdef.presets.help}: {', '.join(names)}",
            )
        )
        out.append(
            click.Option(
                [flag(opdef.presets.option) + "-config"],
                type=FileArg(),
                default=None,
                help="a Hugging Face config.json to read the dimensions from",
            )
        )
    for pname, p in opdef.all_params.items():
        default_txt = (
            f"default: {p.default}" if p.default is not None else f"default: {p.default_from}" if p.default_from else ""
        )
        units = f" [{p.units}]" if p.units else ""
        help_ = f"{p.help}{units}" + (f" ({default_txt})" if default_txt else "")
        if p.type == "bool":
            out.append(click.Option([f"{flag(pname)}/--no-{flag(pname)[2:]}", pname], default=None, help=help_))
            continue
        ptype: Any
        if p.type == "int":
            ptype = int_type
        elif p.type == "float":
            ptype = float
        elif p.type == "dtype":
            ptype = NameType(DTYPES, "dtype")
        else:
            ptype = NameType(p.choices or [], pname)
        out.append(click.Option([flag(pname), pname], type=ptype, default=None, help=help_))
    return out


def split_preset(opdef: OpDef, params: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """Take the preset options out of ``params`` and read the preset (the loading layer)."""
    from ..resolve import resolve_preset

    if opdef.presets is None:
        return params, None
    params = dict(params)
    option = opdef.presets.option
    preset = resolve_preset(opdef, params.pop(option, None), params.pop(f"{option}_config", None))
    return params, preset


def _doc(opdef: OpDef, example: str) -> str:
    return (
        f"{opdef.summary}.\n\n"
        + (f"{opdef.description}\n\n" if opdef.description else "")
        + f"\b\nExample:\n  {example}"
    )


def _example_args(opdef: OpDef) -> list[str]:
    """The op file's example, less 'roofcalc op NAME' and its --hw."""
    words = opdef.example.split()
    args = words[3:] if words[:2] == ["roofcalc", "op"] else []
    out: list[str] = []
    skip = False
    for w in args:
        if skip:
            skip = False
            continue
        if w == "--hw":
            skip = True
            continue
        out.append(w)
    return out


def _multi_hw_example(opdef: OpDef, mode: str) -> str:
    return " ".join(["roofcalc", mode, opdef.name, *_example_args(opdef), "--hw", "h100,h200"])


def _sweep_example(opdef: OpDef) -> str:
    """The op's example with one integer parameter turned into a range (the crossover one if declared)."""
    args = _example_args(opdef)
    ints = [n for n, p in opdef.params.items() if p.type == "int" and not p.optional]
    swept = opdef.crossover or next((n for n in ints if flag(n) in args), ints[0] if ints else None)
    if swept is None:
        return _multi_hw_example(opdef, "sweep")
    p = opdef.params[swept]
    lo = max(1, int(p.min)) if p.min is not None else 1
    value = None
    if flag(swept) in args:
        i = args.index(flag(swept))
        value = args[i + 1] if i + 1 < len(args) else None
        del args[i : i + 2]
    try:
        hi = int(value) if value is not None else int(p.default) if isinstance(p.default, int) else 0
    except ValueError:
        hi = 0
    if hi < 2 * lo:
        hi = lo * 1024
    if p.max is not None:
        hi = min(hi, int(p.max))
    return " ".join(["roofcalc", "sweep", opdef.name, *args, flag(swept), f"{lo}..{hi}", "--hw", "h100,h200"])


# ------------------------------------------------------------------ op


def build_op_command(opdef: OpDef) -> click.Command:
    def callback(
        hw_name: str | None,
        hw_file: str | None,
        calibration: str | None,
        as_json: bool,
        breakdown: bool = False,
        terms: bool = False,
        strict: bool = False,
        memory_reserve: int | None = None,
        impl_file: str | None = None,
        host_layer: float | None = None,
        **given: Any,
    ) -> None:
        from ..resolve import resolve_hardware
        from ..roofline import crossover, evaluate

        hw = resolve_hardware(hw_name, hw_file, calibration)
        impl = None
        if impl_file:
            from ..impl import load_impl

            if host_layer is not None:
                raise InputClickError(
                    "--host-layer: an --impl-file step takes its host's time from its trace; drop one"
                )

            if given.get("cudnn_plans_cached"):
                raise InputClickError(
                    "--cudnn-plans-cached: an --impl-file step's host work is what its trace timed; drop one"
                )
            chosen = [f"--{k}" for k in ("impl", "engine") if given.get(k) is not None]
            if chosen:
                raise InputClickError(
                    f"--impl-file: give it or {' and '.join(chosen)}, not both (each names the implementation)"
                )
            # the traced step fixes these: its kernels ran at its dtypes, from a graph or not
            fixed = [
                "--no-cuda-graphs" if k == "cuda_graphs" and given[k] is False else f"--{k.replace('_', '-')}"
                for k in ("cuda_graphs", "dtype", "kv_dtype")
                if given.get(k) is not None
            ]
            if fixed:
                raise InputClickError(
                    f"--impl-file: the traced step fixes {' and '.join(fixed)} (its kernels ran as traced); "
                    "drop the option, or trace the step you mean"
                )
            impl = load_impl(impl_file)
        params, preset = split_preset(opdef, given)
        if host_layer is not None:
            hw = paced(opdef, hw, params, preset, host_layer)
        result = evaluate(opdef, hw, params, preset, memory_reserve=memory_reserve)
        if impl is not None:
            from ..impl import with_implementation

            result = with_implementation(result, impl, hw, str(impl_file))
        if opdef.crossover:
            cross = crossover(opdef, hw, opdef.crossover, params, preset, label=flag(opdef.crossover))
            result = result.model_copy(update={"crossover": cross})
        if as_json:
            emit_json(result.model_dump(mode="json"))
            for w in result.warnings:  # stdout holds only JSON; the warnings are in it and on stderr
                click.echo(f"warning: {w}", err=True)
        else:
            from ..render import console, op_result

            op_result(console(), result, breakdown=breakdown, terms=terms)
        if strict and result.memory is not None and not result.memory.fits:
            raise click.ClickException("--strict: " + result.warnings[0])

    params = param_options(opdef, IntType()) + [shared_option(k) for k in ("hw", "hw_file", "calibration", "json")]
    params.append(
        click.Option(
            ["--terms"], is_flag=True, help="every term of the expected time, with its reason (default: the largest)"
        )
    )
    if opdef.memory:
        params.append(
            click.Option(
                ["--memory-reserve"],
                type=SizeType(),
                default=None,
                help="bytes per GPU the fit leaves free for the CUDA context, workspaces and fragmentation "
                "(default: 1 GiB + 5% of the device's memory), e.g. 4GiB or 0",
            )
        )
        params.append(click.Option(["--strict"], is_flag=True, help="exit 1 when the step does not fit in memory"))
    if opdef.presets is not None:
        params.append(
            click.Option(
                ["--impl-file"],
                type=FileArg(),
                default=None,
                metavar="FILE.yaml",
                help="the expected time of your own implementation, from 'roofcalc trace FILE --save-impl' "
                "(instead of a named one, --impl)",
            )
        )
        params.append(_host_layer_option())
    if opdef.breakdown:
        params.append(
            click.Option(["--breakdown"], is_flag=True, help="one row per layer kind: FLOPs, bytes, intensity, bound")
        )
    return CheckedCommand(
        opdef.name, params=params, callback=callback, help=_doc(opdef, opdef.example), context_settings=CONTEXT
    )


def _host_layer_option() -> click.Option:
    return click.Option(
        ["--host-layer"],
        type=TimeType(),
        default=None,
        metavar="TIME",
        help="a step issued from Python: your implementation's host time per decoder layer on your "
        "machine (e.g. 1.2ms; docs/implementations.md: how to time it), which paces the step's Python "
        "in place of the card's hot-loop op (native host work keeps the card's)",
    )


def _has_expected(opdef: OpDef, hw: Any, params: dict[str, Any], preset: dict[str, Any] | None) -> bool:
    """Whether the card gives this step an expected time (a sweep shows the others' bound alone)."""
    from ..roofline import evaluate

    return evaluate(opdef, hw, params, preset).expected_s is not None


# ------------------------------------------------------------------ compare


def build_compare_command(opdef: OpDef) -> click.Command:
    def callback(hw_names: tuple[str, ...], as_json: bool, host_layer: float | None = None, **given: Any) -> None:
        from ..errors import DomainError
        from ..resolve import resolve_hardware_list
        from ..roofline import evaluate

        params, preset = split_preset(opdef, given)
        results, errors = [], []
        for hw in resolve_hardware_list(hw_names):
            try:
                if host_layer is not None:  # the same implementation pace beside each card
                    hw = paced(opdef, hw, params, preset, host_layer)
                results.append(evaluate(opdef, hw, params, preset))
            except DomainError as e:
                errors.append((hw.id, str(e)))
        if not results:  # one line: each reason once, with the cards it stopped where they differ
            reasons = list(dict.fromkeys(m for _, m in errors))
            if len(reasons) == 1:
                raise click.ClickException("no hardware could run this op: " + reasons[0])
            raise click.ClickException("no hardware could run this op: " + "; ".join(f"{h}: {m}" for h, m in errors))
        for hw_id, msg in errors:
            click.echo(f"skipped {hw_id}: {msg}", err=True)
        if as_json:
            emit_json([r.model_dump(mode="json") for r in results])
            return
        from ..render import compare_table, console

        compare_table(console(), results, errors)

    params = param_options(opdef, IntType()) + _multi_hw_options()
    if opdef.presets is not None:
        params.append(_host_layer_option())
    return CheckedCommand(
        opdef.name,
        params=params,
        callback=callback,
        help=_doc(opdef, _multi_hw_example(opdef, "compare")),
        context_settings=CONTEXT,
    )


def _multi_hw_options() -> list[click.Parameter]:
    return [shared_option("hw_list"), shared_option("json")]


# ------------------------------------------------------------------ sweep


def build_sweep_command(opdef: OpDef) -> click.Command:
    def callback(
        hw_names: tuple[str, ...],
        as_json: bool,
        steps: int | None,
        linear: bool,
        output: str | None,
        output_alias: str | None = None,
        host_layer: float | None = None,
        **given: Any,
    ) -> None:
        from ..charts import parse_range, sweep
        from ..resolve import resolve_hardware_list

        output = one_chart_path(output, output_alias)
        ranged = {k: v for k, v in given.items() if isinstance(v, str) and ".." in v}
        if len(ranged) != 1:
            raise InputClickError(
                "give exactly one parameter as a range A..B (e.g. --m 1..16384)"
                if not ranged
                else f"only one parameter can be swept (got {', '.join(ranged)})"
            )
        ((pname, text),) = ranged.items()
        if output:
            from ..plot import check_output

            check_output(output)
        values = parse_range(text, steps, linear)
        fixed, preset = split_preset(opdef, {k: v for k, v in given.items() if k != pname})
        fixed = {k: v for k, v in fixed.items() if v is not None}
        hws = resolve_hardware_list(hw_names)
        if host_layer is not None:  # the host's pace, from the layer's count at the range's first point
            if pname in ("gpus", "experts"):
                raise InputClickError(
                    f"--host-layer: it is modelled on one GPU for dense models; do not sweep {flag(pname)}"
                )
            first = {**fixed, pname: values[0]}
            hws = [
                paced(opdef, hw, first, preset, host_layer) if _has_expected(opdef, hw, first, preset) else hw
                for hw in hws
            ]
        sw = sweep(opdef, hws, pname, values, fixed, preset, label=flag(pname))
        from ..plot import save_sweep
        from ..render import sweep_view

        finish_view(sw, output, save_sweep, as_json, sweep_view)

    params = (
        param_options(opdef, RangeOrInt())
        + _multi_hw_options()
        + [
            click.Option(
                ["--steps"],
                type=IntType(plain=True),
                default=None,
                help="N log-spaced points (or linear with --linear)",
            ),
            click.Option(["--linear"], is_flag=True, help="linear steps instead of powers of two"),
            click.Option(
                ["--plot", "output"],
                type=FileArg(),
                default=None,
                help="write the chart to a .png, .svg or .pdf file (needs roofcalc[plot])",
            ),
            click.Option(["-o", "--output", "output_alias"], type=FileArg(), default=None, hidden=True),
        ]
        + ([_host_layer_option()] if opdef.presets is not None else [])
    )
    return CheckedCommand(
        opdef.name, params=params, callback=callback, help=_doc(opdef, _sweep_example(opdef)), context_settings=CONTEXT
    )


# ------------------------------------------------------------------ the groups


class OpGroup(click.Group):
    """One subcommand per built-in op (ops/*.yaml), or an op file given by path."""

    @staticmethod
    def build(opdef: OpDef) -> click.Command:
        return build_op_command(opdef)

    def list_commands(self, ctx: click.Context) -> list[str]:
        from ..opdefs import op_names

        return op_names()

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        from ..opdefs import op_names
        from ..registry import is_path
        from ..resolve import resolve_op

        if not is_path(cmd_name) and cmd_name.lower() not in op_names():
            return None
        return self.build(resolve_op(cmd_name if is_path(cmd_name) else cmd_name.lower()))

    def resolve_command(self, ctx: click.Context, args: list[str]) -> Any:
        from ..errors import suggest
        from ..opdefs import op_names

        name = args[0]
        cmd = self.get_command(ctx, name)
        if cmd is None:
            if name.startswith("-"):
                return super().resolve_command(ctx, args)
            names = op_names()
            shown = name if len(name) <= 40 else name[:30] + "..."
            raise InputClickError(f"unknown op {shown!r}{suggest(name, names)}; known: {', '.join(names)}")
        return cmd.name, cmd, args[1:]


class CompareGroup(OpGroup):
    @staticmethod
    def build(opdef: OpDef) -> click.Command:
        return build_compare_command(opdef)


class SweepGroup(OpGroup):
    @staticmethod
    def build(opdef: OpDef) -> click.Command:
        return build_sweep_command(opdef)


def _list_ops(as_json: bool) -> None:
    from ..opdefs import load_op, op_names
    from ..output import SCHEMA_VERSION

    ops = [load_op(n) for n in op_names()]
    if as_json:
        emit_json(
            [
                {
                    "version": SCHEMA_VERSION,
                    "op": o.name,
                    "summary": o.summary,
                    "params": {
                        k: p.model_dump(exclude_none=True, exclude_defaults=True) | {"type": p.type}
                        for k, p in o.all_params.items()
                    },
                    "presets": o.presets.option if o.presets else None,
                }
                for o in ops
            ]
        )
        return
    from ..render import console, op_list

    op_list(console(), ops)


@click.group("op", cls=OpGroup, invoke_without_command=True)
@click.option("--list", "list_", is_flag=True, help="list the ops and their parameters")
@click.option("--json", "as_json", is_flag=True, help="with --list: print JSON")
@click.pass_context
def op_group(ctx: click.Context, list_: bool, as_json: bool) -> None:
    """FLOPs, bytes, intensity, the expected time and the bound of an op on a GPU.

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
    if as_json:
        raise InputClickError("--json needs --list (or an op: roofcalc op NAME ... --json)")
    click.echo(ctx.get_help())
    ctx.exit(2)


@click.group("compare", cls=CompareGroup)
def compare_group() -> None:
    """One op on several GPUs side by side; the fastest is marked.

    \b
    Example:
      roofcalc compare gemm --m 8192 --hw h100,h200,a100,b200,m3-max
    """


@click.group("sweep", cls=SweepGroup)
def sweep_group() -> None:
    """Sweep one parameter over a range; say where the op turns compute-bound.

    A..B means powers of two from A (B included); --steps N gives N log-spaced points,
    --linear linear ones.

    \b
    Examples:
      roofcalc sweep gemm --m 1..16384 --hw h100
      roofcalc sweep decode --model llama-3.1-8b --batch 1..512 --hw h100,h200
    """


__all__ = ["compare_group", "op_group", "sweep_group"]

"""What every command shares: parameter types, the shared options, JSON output."""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from typing import Any, TypeVar

import click

from ..defaults import DEFAULT_HARDWARE

F = TypeVar("F", bound=Callable[..., Any])


class InputClickError(click.ClickException):
    """A usage error printed as one line (no usage block), exit code 2."""

    exit_code = 2


class IntType(click.ParamType):  # type: ignore[type-arg,unused-ignore]
    """Integers with optional binary suffixes (8k = 8192) and exponents (1e6); ``plain``: only
    ASCII digits and a sign (counts and percentages)."""

    name = "integer"

    def __init__(self, plain: bool = False) -> None:
        self.plain = plain

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        from ..units import parse_int

        try:
            return parse_int(value, allow_suffix=not self.plain)
        except ValueError as e:
            self.fail(str(e), param, ctx)


class SizeType(click.ParamType):  # type: ignore[type-arg,unused-ignore]
    """Memory sizes: 98304, 96k, 96K, 96KB, 96KiB, 0x18000 (k = 1024 bytes)."""

    name = "size"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            if value < 0:
                self.fail(f"size {value} is negative", param, ctx)
            return value
        from ..units import parse_size

        try:
            return parse_size(value)
        except ValueError as e:
            self.fail(str(e), param, ctx)


class TimeType(click.ParamType):  # type: ignore[type-arg,unused-ignore]
    """Durations: 13.4ms, 250us, 0.0134 (seconds)."""

    name = "time"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> float:
        from ..units import parse_time

        try:
            return parse_time(value)
        except ValueError as e:
            self.fail(str(e), param, ctx)


class NameType(click.ParamType):  # type: ignore[type-arg,unused-ignore]
    """A name from a fixed list, case-insensitive, with a did-you-mean on error."""

    def __init__(self, choices: list[str], what: str) -> None:
        self.choices = choices
        self.name = what

    def get_metavar(self, param: click.Parameter, ctx: click.Context) -> str | None:
        """--help lists the choices where they are few (dtypes, engines), the kind of name otherwise."""
        if 0 < len(self.choices) <= 10:
            return "[" + "|".join(self.choices) + "]"
        return self.name.upper()

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        from ..errors import suggest

        s = str(value).strip().lower()
        if s not in self.choices:
            shown = str(value) if len(str(value)) <= 40 else str(value)[:30] + "..."
            self.fail(
                f"unknown {self.name} {shown!r}{suggest(s, self.choices)}; choose from {', '.join(self.choices)}",
                param,
                ctx,
            )
        return s


class FileArg(click.ParamType):  # type: ignore[type-arg,unused-ignore]
    """A file name, checked when it is opened (click.Path stats it at once and raises on a NUL
    byte, which would reach the user as an internal error)."""

    name = "file"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> str:
        text = str(value)
        if "\x00" in text:
            self.fail("the file name contains a NUL byte", param, ctx)
        if not text.strip():
            self.fail("the file name is empty", param, ctx)
        return text


class RangeOrInt(click.ParamType):  # type: ignore[type-arg,unused-ignore]
    """An integer, or a range A..B for the swept parameter."""

    name = "integer|A..B"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and ".." in value:
            return value
        return IntType().convert(value, param, ctx)


# ------------------------------------------------------------------ shared options


# Each shared option is declared once here; commands take them as decorators (@shared("hw"))
# and the op-file-driven builders as click.Option objects (shared_option("hw")).
SHARED: dict[str, tuple[list[str], dict[str, Any]]] = {
    "hw": (
        ["--hw", "hw_name"],
        {
            "default": None,
            "metavar": "NAME",
            "help": f"hardware id or alias (default: $ROOFCALC_HW or {DEFAULT_HARDWARE})",
        },
    ),
    "hw_list": (
        ["--hw", "hw_names"],
        {
            "multiple": True,
            "metavar": "NAME[,NAME...]",
            "help": f"hardware ids, comma-separated or repeated (default: {DEFAULT_HARDWARE})",
        },
    ),
    "hw_file": (
        ["--hw-file"],
        {"type": FileArg(), "default": None, "help": "a hardware YAML file of your own"},
    ),
    "calibration": (
        ["--calibration"],
        {
            "type": FileArg(),
            "default": None,
            "help": "use the figures measured by 'roofcalc probe --save-calibration'",
        },
    ),
    "json": (["--json", "as_json"], {"is_flag": True, "help": "print JSON on stdout (and nothing else)"}),
}


class CheckedCommand(click.Command):
    """A command whose options that take a value refuse one of its own option names as that
    value: ``--batch --json`` is a missing value, not a batch called '--json' (which a later
    ``--batch 1`` would silently replace, leaving --json unheeded)."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if ctx.resilient_parsing:  # shell completion parses half-typed lines
            return super().parse_args(ctx, args)
        names: set[str] = set()
        valued: set[str] = set()
        for p in self.get_params(ctx):
            if isinstance(p, click.Option):
                names.update(p.opts + p.secondary_opts)
                if not p.is_flag and not p.count:
                    valued.update(p.opts)
        options = args[: args.index("--")] if "--" in args else args  # after it, positional words
        for opt, value in itertools.pairwise(options):
            if opt in valued and value.split("=", 1)[0] in names:
                raise click.UsageError(f"{opt} needs a value, not the option {value.split('=', 1)[0]}", ctx)
        return super().parse_args(ctx, args)


def shared_option(key: str) -> click.Option:
    decls, attrs = SHARED[key]
    return click.Option(decls, **attrs)


def shared(*keys: str) -> Callable[[F], F]:
    """Decorator adding shared options, in the order given."""

    def deco(f: F) -> F:
        for key in reversed(keys):
            decls, attrs = SHARED[key]
            f = click.option(*decls, **attrs)(f)
        return f

    return deco


def emit_json(obj: Any) -> None:
    click.echo(json.dumps(obj, indent=2, allow_nan=False))


def finish_view(
    model: Any, output: str | None, save: Callable[[Any, str], None], as_json: bool, render: Callable[..., None]
) -> None:
    """The common end of the chart commands: the file (if -o), then JSON or the terminal view."""
    if output:
        save(model, output)
    if as_json:
        emit_json(model.model_dump(mode="json"))
        return
    from ..render import console

    render(console(), model, output is None)
    if output:
        click.echo(f"chart written to {output}", err=True)


__all__ = [
    "SHARED",
    "InputClickError",
    "IntType",
    "NameType",
    "RangeOrInt",
    "SizeType",
    "emit_json",
    "finish_view",
    "shared",
    "shared_option",
]


def one_chart_path(plot: str | None, old: str | None) -> str | None:
    """The chart file of `--plot FILE`, or of its old spelling `-o/--output FILE` (hidden, kept for
    scripts); both at once must agree."""
    import os

    if plot and old and os.path.abspath(plot) != os.path.abspath(old):
        raise InputClickError(f"--plot {plot} and -o/--output {old}: give the chart file once")
    return plot or old

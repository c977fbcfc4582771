"""The roofcalc command line: parse, call the library, render. No arithmetic here.

Exit codes: 0 ok; 1 a valid request that cannot be answered (or output that cannot be
written); 2 a usage error (unknown names, malformed values or files, conflicting
options); 70 an internal error, i.e. a bug in roofcalc (please report it).
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

import click

from ._version import __version__
from .commands.chart_commands import roofline_cmd
from .commands.common import InputClickError, IntType, SizeType
from .commands.info_commands import hw_group, impl_group, model_group
from .commands.occupancy_command import occupancy_cmd
from .commands.op_commands import compare_group, op_group, sweep_group
from .commands.trace_command import trace_cmd
from .commands.validate_command import validate_cmd

EXIT_INTERNAL = 70  # EX_SOFTWARE (sysexits.h): an internal software error


class InternalError(click.ClickException):
    """A bug: one line on stderr asking for a report, exit code 70."""

    exit_code = EXIT_INTERNAL


class OutputError(click.ClickException):
    """The output could not be written (disk full, closed stream): exit code 1."""

    exit_code = 1


class RoofcalcGroup(click.Group):
    """Maps library errors to click exceptions; no tracebacks unless ROOFCALC_DEBUG=1."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        _prepare_streams()
        try:
            return super().main(*args, **kwargs)
        except BrokenPipeError:
            _stdout_to_devnull()
            sys.exit(0)
        except OSError as e:
            # --help and --version write while the arguments are parsed, before invoke() maps
            # errors: a full or failing stdout there is the same one-line refusal (exit 1)
            if os.environ.get("ROOFCALC_DEBUG") or e.errno is None or e.filename is not None:
                raise
            _stdout_to_devnull()
            click.echo(f"Error: cannot write the output: {e.strerror or e}", err=True)
            sys.exit(OutputError.exit_code)

    def invoke(self, ctx: click.Context) -> Any:
        from .errors import ParamError, RoofcalcError

        try:
            result = super().invoke(ctx)
            if sys.stdout is not None:
                sys.stdout.flush()  # a closed pipe or a full disk is reported here, not at exit
            return result
        except RoofcalcError as e:
            if os.environ.get("ROOFCALC_DEBUG"):
                raise
            msg = e.as_flags() if isinstance(e, ParamError) else str(e)
            if e.exit_code == 2:
                raise InputClickError(msg) from None
            raise click.ClickException(msg) from None
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except KeyboardInterrupt:
            raise click.Abort() from None
        except BrokenPipeError:
            _stdout_to_devnull()
            raise click.exceptions.Exit(0) from None
        except OSError as e:
            if os.environ.get("ROOFCALC_DEBUG"):
                raise
            if e.errno is not None and e.filename is None:  # a write to stdout/stderr failed
                _stdout_to_devnull()
                raise OutputError(f"cannot write the output: {e.strerror or e}") from None
            raise InternalError(_internal(e)) from None
        except Exception as e:  # a bug: say so in one line, keep the traceback for debugging
            if os.environ.get("ROOFCALC_DEBUG"):
                raise
            raise InternalError(_internal(e)) from None


def _internal(e: BaseException) -> str:
    text = str(e).splitlines()[0] if str(e) else ""
    if len(text) > 200:
        text = text[:200] + "..."
    return (
        f"internal error (a bug in roofcalc; please report it with the command): {type(e).__name__}: {text} "
        "(ROOFCALC_DEBUG=1 shows the traceback)"
    )


def _prepare_streams() -> None:
    """Closed standard streams and narrow encodings must not lose or garble output silently."""
    if sys.stderr is None:  # stderr closed: diagnostics go nowhere, never onto stdout
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
    if sys.stdout is None:
        click.echo("Error: standard output is closed; nothing can be printed", err=True)
        sys.exit(1)
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            with contextlib.suppress(ValueError, OSError):
                reconfigure(errors="replace")  # an ascii terminal gets '?' for a symbol, not a crash


def _stdout_to_devnull() -> None:
    """Point stdout at /dev/null: after `roofcalc ... | head -1` (the reader left; end quietly, Python
    docs, 'Note on SIGPIPE'), and after a failed write was reported in one line, so that the
    interpreter's last flush at exit does not fail again ('Exception ignored ...', exit 120)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


@click.group(cls=RoofcalcGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="roofcalc")
def cli() -> None:
    """Roofline and occupancy calculator for GPU kernels.

    \b
    Examples:
      roofcalc op gemm --m 8192 --hw h100
      roofcalc occupancy --hw h100 --threads 256 --regs 64 --smem 96k
      roofcalc trace tests/data/traces/decode-eager.json --hw h100
      roofcalc hw show h100
    """


from .kernels_command import kernels  # noqa: E402
from .probe.command import probe as probe_cmd  # noqa: E402

for _command in (
    op_group,
    compare_group,
    sweep_group,
    roofline_cmd,
    hw_group,
    impl_group,
    model_group,
    occupancy_cmd,
    probe_cmd,
    kernels,
    trace_cmd,
    validate_cmd,
):
    cli.add_command(_command)

__all__ = ["IntType", "SizeType", "cli"]

"""The ``roofcalc probe`` command (registered by the CLI with ``cli.add_command(probe)``).

Also runnable on its own, e.g. on a GPU machine: ``python -m roofcalc.probe.command --json``.
Library errors become one-line messages (exit 1; exit 2 for bad input) here as well as under
the CLI's group, so the command behaves the same either way.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from typing import Any

import click

from ..commands.common import CheckedCommand, FileArg


class _InputClickError(click.ClickException):
    """A usage error printed as one line (no usage block), exit code 2."""

    exit_code = 2


def _command_line() -> str:
    args = sys.argv[1:]
    if "probe" in args:
        args = args[args.index("probe") + 1 :]
    return " ".join(["roofcalc", "probe", *(shlex.quote(a) for a in args)])


@click.command("probe", cls=CheckedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--quick", is_flag=True, help="ceilings and floors only (about 30 s once the probe is built)")
@click.option(
    "--hw",
    "hw_name",
    default=None,
    metavar="NAME",
    help="registry part to compare with (default: matched from the GPU's name)",
)
@click.option(
    "--save-calibration",
    type=FileArg(),
    default=None,
    help="write the measured ceilings and expected-time figures as a hardware file for --calibration",
)
@click.option(
    "--save-raw",
    type=FileArg(),
    default=None,
    help="write the raw measurements as soon as they are taken (--report rebuilds a report from them)",
)
@click.option(
    "--report",
    "report_file",
    type=FileArg(),
    default=None,
    help="re-check and show a saved 'probe --json' report instead of measuring (no GPU needed)",
)
@click.option(
    "--plot",
    type=FileArg(),
    default=None,
    help="draw the per-SM bandwidth curve to a .png, .svg or .pdf file (needs roofcalc[plot])",
)
@click.option("--json", "as_json", is_flag=True, help="print the report as JSON on stdout")
def probe(
    quick: bool,
    hw_name: str | None,
    save_calibration: str | None,
    save_raw: str | None,
    report_file: str | None,
    plot: str | None,
    as_json: bool,
) -> None:
    """Measure this GPU and check roofcalc's predictions against it.

    Builds a CUDA probe with nvcc (cached), measures device-memory, L2, FMA and tensor-core
    ceilings (wgmma on Hopper), kernel floors, per-SM bandwidth, memory latency, block
    residency, GEMM efficiency and op timings, and with two or more GPUs the NCCL all-reduce,
    then compares them with the roofline and occupancy engines.

    \b
    Examples:
      roofcalc probe
      roofcalc probe --quick
      roofcalc probe --json > probe.json
      roofcalc probe --save-calibration h100-measured.yaml
      roofcalc probe --report probe.json --plot per-sm.png
      roofcalc op gemm --m 8192 --hw h100 --calibration h100-measured.yaml
    """
    from ..errors import RoofcalcError

    try:
        _probe(quick, hw_name, save_calibration, save_raw, report_file, plot, as_json)
    except RoofcalcError as e:
        if os.environ.get("ROOFCALC_DEBUG"):
            raise
        if e.exit_code == 2:
            raise _InputClickError(str(e)) from None
        raise click.ClickException(str(e)) from None


def _probe(
    quick: bool,
    hw_name: str | None,
    save_calibration: str | None,
    save_raw: str | None,
    report_file: str | None,
    plot: str | None,
    as_json: bool,
) -> None:
    from ..errors import DomainError, InputError
    from .render import ProgressDisplay, console, probe_report, save_per_sm_plot
    from .runner import calibration_yaml, report_from_file, run_probe, write_atomic

    if plot:
        from importlib.util import find_spec

        from ..plot import check_output

        check_output(plot)
        if find_spec("matplotlib") is None:
            raise DomainError(
                "--plot needs matplotlib: pip install 'roofcalc[plot]' "
                "(without --plot the report shows the curve as a table)"
            )
    for out in (save_calibration, save_raw):
        if out:  # the same checks as chart outputs, before any work: no link, device, FIFO, folder, read-only file
            from ..output import check_output_path

            check_output_path(out)
    cal_doc: dict[str, Any] | None = None
    if report_file:
        if save_raw:
            raise InputError("--save-raw needs a measurement, not --report")
        if quick:
            raise InputError("--quick measures; it does not apply to --report")
        # with --save-calibration: the calibration re-derived from the saved raw measurements
        # by the current code (so a newer model's figures come from an older run)
        report, cal_doc = report_from_file(report_file, with_calibration=True)
    else:
        with ProgressDisplay() as progress:
            report, cal_doc = run_probe(quick, hw_name, _command_line(), progress, save_raw=save_raw)
    if save_calibration and cal_doc is not None:
        from ..specfile import MAX_SPEC_BYTES

        text = calibration_yaml(cal_doc)
        size = len(text.encode("utf-8"))
        if size > MAX_SPEC_BYTES:  # one --calibration could not read back: nothing written
            raise DomainError(
                f"--save-calibration: the calibration would be {size:,} bytes, over the {MAX_SPEC_BYTES:,} a "
                "spec file is read with (its GEMM choice map is too large); nothing written"
            )
        write_atomic(save_calibration, text)
    if as_json:
        click.echo(json.dumps(report.model_dump(mode="json"), indent=2, allow_nan=False))
    else:
        probe_report(console(), report)
    if save_calibration:
        click.echo(f"calibration written to {save_calibration}", err=True)
    if plot:
        save_per_sm_plot(report, plot)
        click.echo(f"chart written to {plot}", err=True)


if __name__ == "__main__":
    probe(prog_name="roofcalc probe")

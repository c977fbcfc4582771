"""`roofcalc roofline`: roofs per hardware and dtype, each op a labelled point."""

from __future__ import annotations

import click

from .common import CheckedCommand, FileArg, finish_view, one_chart_path, shared


@click.command("roofline", cls=CheckedCommand)
@shared("hw_list")
@click.option(
    "--op",
    "op_specs",
    multiple=True,
    required=True,
    metavar="NAME[:param=value,...]",
    help="an op (name or op file) to place on the chart, e.g. gemm:m=8192, ./axpy.yaml:n=64 "
    "or decode:model=llama-3.1-8b,batch=8",
)
@click.option(
    "--calibration",
    multiple=True,
    type=FileArg(),
    help="draw the measured roofs of a 'probe --save-calibration' file beside the datasheet ones",
)
@click.option(
    "--plot",
    "output",
    type=FileArg(),
    default=None,
    help="write the chart to a .png, .svg or .pdf (needs roofcalc[plot]); without it, a terminal chart",
)
@click.option("-o", "--output", "output_alias", type=FileArg(), default=None, hidden=True)  # the old spelling
@shared("json")
def roofline_cmd(
    hw_names: tuple[str, ...],
    op_specs: tuple[str, ...],
    calibration: tuple[str, ...],
    output: str | None,
    output_alias: str | None,
    as_json: bool,
) -> None:
    """A log-log roofline: roofs per hardware and dtype, each op a labelled point.

    \b
    Examples:
      roofcalc roofline --hw h100 --op gemm:m=8192 --op gemv:m=4096,n=4096 --plot roofline.png
      roofcalc roofline --hw h100 --hw h200 --hw b200 --op attention:seq=8192,heads=32,head-dim=128 --plot r.svg
      roofcalc roofline --hw h100 --op gemm:m=8192
    """
    from ..charts import roofline_chart
    from ..hardware import load_calibration
    from ..resolve import parse_op_spec, resolve_hardware_list

    output = one_chart_path(output, output_alias)
    if output:
        from ..plot import check_output

        check_output(output)
    ops = [parse_op_spec(s) for s in op_specs]
    cals = [load_calibration(c) for c in calibration]
    chart = roofline_chart(ops, resolve_hardware_list(hw_names), cals)
    from ..plot import save_roofline
    from ..render import roofline_view

    finish_view(chart, output, save_roofline, as_json, roofline_view)

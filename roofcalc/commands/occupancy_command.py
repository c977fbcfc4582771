"""`roofcalc occupancy`: blocks and warps per SM, and what limits them."""

from __future__ import annotations

import click

from .common import CheckedCommand, FileArg, InputClickError, IntType, SizeType, emit_json, shared


@click.command("occupancy", cls=CheckedCommand)
@shared("hw", "hw_file")
@click.option(
    "--threads", type=IntType(), default=None, help="threads per block (omit for a table over every block size)"
)
@click.option(
    "--regs", type=IntType(), default=None, help="registers per thread (ptxas -v / cuobjdump --dump-resource-usage)"
)
@click.option(
    "--smem",
    type=SizeType(),
    default="0",
    show_default=True,
    help="dynamic shared memory per block (96k = 96KiB = 98304 bytes)",
)
@click.option("--static-smem", type=SizeType(), default="0", show_default=True, help="static shared memory per block")
@click.option(
    "--carveout",
    type=IntType(plain=True),
    default=None,
    help="shared-memory carveout preference in percent (-1 or omitted: the default)",
)
@click.option(
    "--barriers", type=IntType(plain=True), default=1, show_default=True, help="block barriers used per block"
)
@click.option("--grid", type=IntType(), default=None, help="blocks in the grid: adds waves and the tail loss")
@click.option(
    "--plot",
    type=FileArg(),
    default=None,
    help="write occupancy against block size, registers and shared memory to .png/.svg/.pdf",
)
@shared("json")
def occupancy_cmd(
    hw_name: str | None,
    hw_file: str | None,
    threads: int | None,
    regs: int | None,
    smem: int,
    static_smem: int,
    carveout: int | None,
    barriers: int,
    grid: int | None,
    plot: str | None,
    as_json: bool,
) -> None:
    """Blocks and warps per SM, occupancy, and the resource that limits it.

    \b
    Examples:
      roofcalc occupancy --regs 64 --smem 96k
      roofcalc occupancy --hw h100 --threads 256 --regs 64 --smem 96k
      roofcalc occupancy --hw a100 --threads 128 --regs 128 --smem 48k --static-smem 2k --carveout 50
      roofcalc occupancy --hw b200 --threads 384 --regs 168 --grid 1024 --json
      roofcalc occupancy --hw h100 --threads 256 --regs 64 --smem 32k --plot occupancy.png
    """
    from ..occupancy_solver import occupancy as solve
    from ..occupancy_solver import sweep_block_sizes
    from ..resolve import resolve_hardware

    hw = resolve_hardware(hw_name, hw_file)
    if plot:
        from ..plot import check_output

        check_output(plot)
        if threads is None or regs is None:
            raise InputClickError("--plot needs --threads and --regs (the configuration to mark)")
    if threads is None:
        results, best = sweep_block_sizes(hw, regs, smem, static_smem, carveout, barriers, grid)
        if as_json:
            emit_json([r.model_dump(mode="json") | {"chosen": r.threads == best} for r in results])
            return
        from ..render import console, occupancy_sweep

        occupancy_sweep(console(), hw, results, best)
        return
    result = solve(hw, threads, regs, smem, static_smem, carveout, barriers, grid)
    curves = None
    if result.blocks_per_sm is not None and regs is not None:
        from ..charts import occupancy_curves

        curves = occupancy_curves(hw, threads, regs, smem, static_smem, carveout)
    if plot:
        if curves is None:
            raise click.ClickException(f"{hw.id}: occupancy curves need published residency rules")
        from ..plot import save_occupancy

        save_occupancy(curves, plot)
    if as_json:
        emit_json(result.model_dump(mode="json"))
        return
    from ..render import console, occupancy_curves_view, occupancy_result

    c = console()
    occupancy_result(c, hw, result)
    if curves is not None and not plot:
        occupancy_curves_view(c, curves)
    if plot:
        click.echo(f"chart written to {plot}", err=True)

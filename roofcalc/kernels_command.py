"""`roofcalc kernels FILE`: occupancy (and the measured roofline) of every kernel in a kernel file.

The command parses, calls roofcalc.kernelfiles and renders; the rendering lives here until it
moves next to the other views.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from .commands.common import CheckedCommand, FileArg, IntType, SizeType, emit_json, shared

if TYPE_CHECKING:
    from rich.console import Console

    from .hardware import Hardware
    from .kernelfiles import KernelResult, KernelsReport


@click.command("kernels", cls=CheckedCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("file", type=FileArg())
@click.option(
    "--kernel",
    "kernel_regex",
    default=None,
    metavar="REGEX",
    help="only kernels whose name (demangled or mangled) matches this regular expression",
)
@click.option(
    "--threads",
    type=IntType(),
    default=None,
    help="threads per block, for kernels whose file records no launch (ptxas, cuobjdump, cubin)",
)
@click.option("--smem", type=SizeType(), default=None, help="dynamic shared memory per block for those kernels (96k)")
@click.option("--grid", type=IntType(), default=None, help="blocks in the grid for those kernels: adds waves")
@shared("hw", "hw_file", "calibration")
@click.option(
    "--plot",
    type=FileArg(),
    default=None,
    help="draw the measured kernels on the roofline: a .png, .svg or .pdf file",
)
@shared("json")
def kernels(
    file: str,
    kernel_regex: str | None,
    threads: int | None,
    smem: int | None,
    grid: int | None,
    hw_name: str | None,
    hw_file: str | None,
    calibration: str | None,
    plot: str | None,
    as_json: bool,
) -> None:
    """Occupancy of every kernel in a kernel file, and for Nsight Compute exports the roofline.

    FILE is a ptxas -v log, cuobjdump -res-usage output, a cubin (or a fatbin or CUDA binary
    holding cubins), a Triton cache entry (its folder or NAME.json), or an ncu --csv --page raw
    export; the kind is read from the content.

    \b
    Examples:
      roofcalc kernels tests/data/kernels/h200/ptxas-sm90.log --threads 256 --hw h200
      roofcalc kernels tests/data/kernels/h200/cuobjdump-res-usage-program.txt --threads 128 --smem 48k
      roofcalc kernels tests/data/kernels/h200/triton-cache --hw h200
      roofcalc kernels tests/data/kernels/h200/ncu-torch.csv --hw h200 --plot roofline.png

    \b
    Making the files (nvcc, cuobjdump and ncu on the GPU machine):
      nvcc -arch=sm_90 -Xptxas -v -c k.cu 2> ptxas.log
      cuobjdump -res-usage app > res.txt
      ncu --csv --page raw --section SpeedOfLight --section LaunchStats --section Occupancy \\
          --metrics dram__bytes.sum python app.py > prof.csv
    """
    from .kernelfiles import Options, analyze_file, load_kernel_file
    from .resolve import resolve_hardware

    if plot:
        from .plot import check_output

        check_output(plot)
    hw = resolve_hardware(hw_name, hw_file, calibration)
    kf = load_kernel_file(file)
    report = analyze_file(
        kf, hw, Options(threads=threads, dynamic_smem_bytes=smem, grid=grid, kernel_regex=kernel_regex)
    )
    if plot:
        save_kernel_roofline(report, hw, plot)
    if as_json:
        emit_json([k.model_dump(mode="json") for k in report.kernels])
        for line in [*report.skipped, *report.notes]:
            click.echo(f"note: {line}", err=True)
    else:
        from .render import console

        render_kernels(console(), report)
    if plot:
        click.echo(f"chart written to {plot}", err=True)


# ---------------------------------------------------------------- chart


def save_kernel_roofline(report: KernelsReport, hw: Hardware, path: str) -> None:
    """The measured kernels as points under the hardware's roofs (the roofs of their FLOP dtypes)."""
    from .charts import Point, Roof, RooflineChart
    from .errors import DomainError
    from .plot import save_roofline

    points: list[Point] = []
    roofs: list[Roof] = []
    for k in report.kernels:
        r = k.roofline
        if r is None or r.intensity is None or r.achieved_flops_per_s is None or k.flops_dtype is None:
            continue
        roof = f"{hw.id} {k.flops_dtype}"  # one colour per roof: the points sit under their dtype's roof
        points.append(
            Point(
                label=_short(k.kernel, 40),
                hardware=roof,
                dtype=k.flops_dtype,
                intensity=r.intensity,
                attainable_flops_per_s=r.achieved_flops_per_s,
                bound=r.bound or "memory",
            )
        )
        if r.peak_flops_per_s and not any(x.hardware == roof for x in roofs):
            roofs.append(
                Roof(
                    hardware=roof,
                    dtype=r.peak_pipe or "",
                    peak_flops_per_s=r.peak_flops_per_s,
                    bandwidth_bytes_per_s=hw.bandwidth,
                    ridge=r.peak_flops_per_s / hw.bandwidth,
                    calibrated=hw.calibration is not None,
                )
            )
    if not points or not roofs:
        raise DomainError(
            "--plot: no kernel has both a FLOP count and DRAM bytes to place on the roofline "
            "(an ncu export with FLOP counters and dram__bytes.sum has)"
        )
    save_roofline(RooflineChart(roofs=roofs, points=points, results=[]), path)


# ---------------------------------------------------------------- tables


def _short(name: str, width: int = 56) -> str:
    """Long C++ names keep their start and their end (the parameters)."""
    if len(name) <= width:
        return name
    tail = width // 3
    return name[: width - tail - 1] + "…" + name[-tail:]


def _size(n: int | None) -> str:
    from .units import fmt_binary

    return "-" if n is None else ("0" if n == 0 else fmt_binary(n))


def _next(k: KernelResult) -> str:
    from .units import fmt_binary

    nb = k.next_block
    if nb is None or k.blocks_per_sm is None:
        return ""
    opts = []
    if nb.regs_at_most is not None:
        opts.append(f"regs≤{nb.regs_at_most}")
    if nb.smem_at_most is not None:
        opts.append(f"dyn≤{fmt_binary(nb.smem_at_most)}")
    if nb.threads_at_most is not None:
        opts.append(f"threads≤{nb.threads_at_most}")
    return " or ".join(opts) if opts else "none alone"


_SHORT = {"registers": "regs", "shared_memory": "smem", "warps": "warps", "blocks": "blocks", "barriers": "barriers"}


def _spills(k: KernelResult) -> tuple[str, bool]:
    """Spill stores/loads (ptxas), else the stack frame in parentheses (cubin, cuobjdump)."""
    if k.spill_store_bytes is not None:
        if not k.spill_store_bytes and not k.spill_load_bytes:
            return "0", False
        return f"{k.spill_store_bytes}/{k.spill_load_bytes or 0}", False
    if k.stack_frame_bytes:
        return f"({k.stack_frame_bytes})", True
    return "-", False


def render_kernels(c: Console, report: KernelsReport) -> None:
    """Numbers first, the kernel's name last (it takes what width is left and wraps)."""
    from rich.table import Table

    from .render import esc
    from .units import fmt_bytes, fmt_time, si

    cal = " \\[calibrated]" if report.calibrated else ""
    archs = sorted({k.arch or "?" for k in report.kernels})
    one_arch = len(archs) == 1
    c.print(
        f"[bold]kernels[/bold] in {esc(report.file)} ({report.format}{', ' + archs[0] if one_arch else ''}) "
        f"on [bold]{esc(report.hardware_name)}[/bold]{cal}"
    )
    t = Table(show_edge=False, pad_edge=False)
    width = len(str(len(report.kernels)))
    cols = [
        "#",
        *([] if one_arch else ["arch"]),
        "regs",
        "spills",
        "smem s+d",
        "threads",
        "blocks/SM",
        "occ",
        "limited by",
        "+1 block if",
        "kernel",
    ]
    for col in cols:
        t.add_column(
            col,
            justify="left" if col in ("arch", "limited by", "+1 block if", "kernel") else "right",
            no_wrap=col not in ("+1 block if", "kernel"),
            overflow="fold" if col == "kernel" else "ellipsis",
            min_width=width if col == "#" else None,
        )
    frames = False
    for i, k in enumerate(report.kernels, start=1):
        spills, frame = _spills(k)
        frames = frames or frame
        if k.launchable is False:
            blocks, occ, lim = str(k.blocks_per_sm or 0), "-", "[bold red]no launch[/bold red]"
        elif k.blocks_per_sm is None:
            blocks, occ, lim = "?", "?", "unknown"
        else:
            blocks, occ = str(k.blocks_per_sm), f"{k.occupancy:.0%}" if k.occupancy is not None else "?"
            lim = "+".join(_SHORT.get(x, x) for x in k.limiters)
        threads = "?" if k.threads is None else str(k.threads) + ("*" if k.threads_from == "__launch_bounds__" else "")
        t.add_row(
            str(i),
            *([] if one_arch else [k.arch or "?"]),
            "?" if k.registers is None else str(k.registers),
            spills,
            f"{_size(k.static_smem_bytes)}+{_size(k.dynamic_smem_bytes)}",
            threads,
            blocks,
            occ,
            lim,
            esc(_next(k)),
            esc(_short(k.kernel, 64)),
        )
    c.print(t)
    measured = [(i, k) for i, k in enumerate(report.kernels, start=1) if k.measured_s is not None]
    if measured:
        m = Table(
            title="measured by Nsight Compute (medians over identical launches)",
            title_justify="left",
            show_edge=False,
            pad_edge=False,
        )
        for col in ("#", "n", "time", "DRAM", "bandwidth", "FLOP/s", "FLOP/B", "bound", "ncu agrees"):
            m.add_column(
                col,
                justify="left" if col in ("bound", "ncu agrees") else "right",
                no_wrap=True,
                min_width=len(str(len(report.kernels))) if col == "#" else None,
            )
        for i, k in measured:
            r = k.roofline
            bw = fl = ai = "-"
            if r is not None and r.achieved_bandwidth_bytes_per_s is not None:
                bw = si(r.achieved_bandwidth_bytes_per_s, "B/s") + (
                    f" {r.bandwidth_fraction:.0%}" if r.bandwidth_fraction is not None else ""
                )
            if r is not None and r.achieved_flops_per_s is not None:
                fl = si(r.achieved_flops_per_s, "FLOP/s") + (
                    f" {r.fraction_of_roof:.0%}" if r.fraction_of_roof is not None else ""
                )
            if r is not None and r.intensity is not None:
                ai = f"{r.intensity:,.0f}" if r.intensity >= 100 else f"{r.intensity:.3g}"
            agree = "-" if k.ncu_agrees is None else ("yes" if k.ncu_agrees else "[bold red]no[/bold red]")
            m.add_row(
                str(i),
                str(k.launches or 1),
                fmt_time(k.measured_s or 0),
                "-" if k.dram_bytes is None else fmt_bytes(k.dram_bytes),
                bw,
                fl,
                ai,
                r.bound if r is not None and r.bound else "-",
                agree,
            )
        c.print(m)
        c.print(
            "[dim]n: launches; bandwidth: % of the device-memory roof; FLOP/s: % of the roof at the kernel's "
            "FLOP/B, min(peak, bandwidth x FLOP/B); ncu agrees: its occupancy limits and blocks per SM match "
            "roofcalc's[/dim]"
        )
    if frames:
        c.print("[dim]spills: bytes stored/loaded per thread (ptxas -v); (n): the stack frame, spills included[/dim]")
    if any(k.threads_from == "__launch_bounds__" for k in report.kernels):
        c.print("[dim]* threads from __launch_bounds__ (the most the kernel allows); --threads sets them[/dim]")
    for i, k in enumerate(report.kernels, start=1):
        name = f"#{i} " + esc(_short(k.kernel, 48))
        for d in k.ncu_disagreements:
            c.print(f"[bold yellow]ncu disagrees[/bold yellow] {name}: {esc(d)}")
        if k.reason and k.launchable is False:
            c.print(f"[red]no launch[/red] {name}: {esc(k.reason)}")
        for n in k.notes:
            c.print(f"[yellow]note[/yellow] {name}: {esc(n)}")
    for s in report.skipped:
        c.print(f"[yellow]skipped[/yellow] {esc(s)}")
    for n in report.notes:
        c.print(f"[yellow]note:[/yellow] {esc(n)}")

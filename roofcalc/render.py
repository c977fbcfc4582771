"""Rich rendering of result models. No arithmetic beyond formatting."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING, Any

from .units import fmt_binary, fmt_bytes, fmt_time, fmt_time_range, si

if TYPE_CHECKING:
    from rich.console import Console

    from .hardware import Hardware
    from .opdefs import OpDef
    from .roofline import RooflineResult


# how the expected time was timed (RooflineResult.expected_launch), in the terms table's title
LAUNCH_WORDS = {
    "event": "CUDA events",  # one op timed between two events
    "stream": "one stream",  # back to back on a stream
    "graph": "CUDA graph",  # replayed from a graph
    "eager": "from Python",  # each kernel issued from Python
}


def esc(value: object) -> str:
    """User-supplied text (names, notes, sources, messages) made safe for Rich: control
    characters replaced, markup escaped, so '[/x]' or '[blink]' in a name is printed as is."""
    from rich.markup import escape

    text = "".join(ch if ch.isprintable() else " " if ch in "\t\n\r" else "?" for ch in str(value))
    return escape(text)


def console(stderr: bool = False) -> Console:
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            """`roofcalc ... | head`: the reader left; end quietly with success (rich's own
            handler exits 1, which scripts would read as a refused request)."""
            devnull = os.open(os.devnull, os.O_WRONLY)
            with contextlib.suppress(OSError, ValueError):
                os.dup2(devnull, sys.stdout.fileno())
            raise SystemExit(0)

    # emoji=False: a name such as ":fire:" is printed as typed (esc() escapes markup, not emoji
    # codes), and rich's 3,600-entry emoji table is not loaded for nothing
    return _Console(stderr=stderr, width=terminal_width(), highlight=False, soft_wrap=False, emoji=False)


def terminal_width() -> int | None:
    """$COLUMNS when it is a sane number (clamped to 40..1000), else the terminal's own width,
    else 120 for pipes and files; never 0, negative or a crash on 'abc'."""
    text = os.environ.get("COLUMNS", "").strip()
    if text.isascii() and text.isdigit() and len(text) < 6:
        return min(max(int(text), 40), 1000)
    stream = sys.stdout
    try:
        tty = stream is not None and stream.isatty()
    except (ValueError, OSError):
        tty = False
    return None if tty else 120


def _kv_table(title: str | None = None) -> Any:
    from rich import box
    from rich.table import Table

    t = Table(title=title, box=box.SIMPLE_HEAD, show_header=False, title_justify="left", pad_edge=False)
    t.add_column("", style="bold", no_wrap=True)
    t.add_column("", justify="right", no_wrap=True)
    t.add_column("", style="dim")
    return t


def bound_text(bound: str) -> Any:
    from rich.text import Text

    if bound == "compute":
        return Text(" COMPUTE-BOUND ", style="bold white on dark_green")
    if bound == "interconnect":
        return Text(" INTERCONNECT-BOUND ", style="bold white on dark_blue")
    return Text(" MEMORY-BOUND ", style="bold white on dark_red")


def summary_lines(c: Console, r: RooflineResult) -> None:
    """The answer first: the summary line, what its band is, then every warning."""
    if r.summary is not None:
        c.print(f"[bold]{esc(r.summary.text)}[/bold]")
        what = "band" if r.summary.band is not None else "why"
        c.print(f"[dim]{what}: {esc(r.summary.band_note)}[/dim]")
    for w in r.warnings:
        c.print(f"[yellow]warning:[/yellow] {esc(w)}")


def op_result(c: Console, r: RooflineResult, breakdown: bool = False, terms: bool = False) -> None:
    from rich.table import Table

    summary_lines(c, r)
    params = esc("  ".join(f"{k}={v}" for k, v in r.params.items() if v is not None))
    cal = " \\[calibrated]" if r.calibrated else ""
    c.print(f"[bold]{esc(r.op)}[/bold] on [bold]{esc(r.hardware_name)}[/bold]{cal}, {r.dtype}   [dim]{params}[/dim]")
    t = _kv_table()
    t.add_row("FLOPs", si(r.flops, "FLOP"), f"{r.flops:,}" if isinstance(r.flops, int) else "")
    t.add_row("bytes moved", fmt_bytes(r.bytes), f"{r.bytes:,}" if isinstance(r.bytes, int) else "")
    t.add_row("intensity", f"{r.intensity:,.4g} FLOP/B", "")
    t.add_row(
        "ridge", f"{r.ridge:,.4g} FLOP/B", f"{si(r.peak_flops_per_s, 'FLOP/s')} / {si(r.bandwidth_bytes_per_s, 'B/s')}"
    )
    rel = r.intensity / r.ridge
    if r.bound == "interconnect":
        t.add_row("bound", bound_text(r.bound), "the all-reduces take longer than the GPU's own work")
    else:
        t.add_row("bound", bound_text(r.bound), f"intensity is {rel:.3g}x the ridge")
    t.add_row("time at peak compute", fmt_time(r.t_compute_s), "")
    t.add_row("time at peak bandwidth", fmt_time(r.t_memory_s), "")
    t.add_row(
        "launch overhead", fmt_time(r.t_overhead_s), f"{r.launches} launch(es)" if r.t_overhead_s else "none given"
    )
    how = "max(compute, memory) + overhead"
    if r.interconnect_bytes:
        t.add_row("interconnect", fmt_time(r.t_interconnect_s), f"{fmt_bytes(r.interconnect_bytes)} sent per GPU")
        how = "max(compute, memory) + interconnect + overhead"
    label = "bound: " + (r.time_label or "time")
    t.add_row(f"[bold]{label}[/bold]", f"[bold]{fmt_time(r.predicted_s)}[/bold]", how + " (speed of light)")
    if r.bound != "interconnect":
        t.add_row("attainable", si(r.attainable_flops_per_s, "FLOP/s"), f"{r.fraction_of_peak:.1%} of peak")
    if r.tokens_per_s is not None and r.tokens is not None:
        t.add_row(
            "bound: tokens/s", f"{r.tokens_per_s:,.0f}", f"{r.tokens:,} token{'s' if r.tokens != 1 else ''} per step"
        )
    c.print(t)
    expected_block(c, r, terms)

    b = Table(title="bytes by term", title_justify="left", show_edge=False, pad_edge=False)
    b.add_column("term", no_wrap=True)
    b.add_column("bytes", justify="right", no_wrap=True)
    b.add_column("share", justify="right")
    b.add_column("what", style="dim")
    for item in r.bytes_breakdown:
        if item.bytes == 0:
            continue
        b.add_row(esc(item.term), fmt_bytes(item.bytes), f"{item.bytes / r.bytes:.1%}", esc(item.help))
    c.print(b)
    if breakdown and r.breakdown:
        bt = _narrow_table(
            "by layer kind: the bound of each part as its own kernel, and the expected time of its kernels"
        )
        for col in ("part", "FLOPs", "bytes", "limit", "bound", "kernels", "expected"):
            bt.add_column(
                col,
                justify="left" if col in ("part", "limit") else "right",
                no_wrap=col != "part",
                overflow="fold",
                min_width=10 if col == "part" else None,
            )
        for p in r.breakdown:
            shown = p.flops or p.bytes
            bt.add_row(
                esc(p.part),
                si(p.flops, "FLOP") if shown else "-",
                si(p.bytes, "B") if shown else "-",
                p.bound if shown else "-",
                fmt_time(p.time_s) if shown else "-",
                f"{p.kernels:,}" if p.kernels else "-",
                fmt_time(p.expected_s) if p.expected_s is not None else "-",
            )
        c.print(bt)
    if r.memory is not None:
        m = r.memory
        parts = esc(" + ".join(f"{i.term} {fmt_bytes(i.bytes)}" for i in m.items))
        per = f", {fmt_bytes(m.per_gpu_bytes)} per GPU on {m.gpus}" if m.gpus > 1 else ""
        verdict = (
            "[green]fits[/green]"
            if m.fits
            else f"[bold red]does not fit[/bold red]: needs at least {m.gpus_needed} GPUs of this kind"
            if m.gpus_needed
            else "[bold red]does not fit[/bold red] on any count of these GPUs the model accepts"
        )
        c.print(
            f"[bold]memory[/bold] {fmt_bytes(m.needed_bytes)} ({parts}){per} against "
            f"{fmt_bytes(m.usable_bytes)} usable ({fmt_bytes(m.capacity_bytes)} less a "
            f"{fmt_bytes(m.reserve_bytes)} reserve, --memory-reserve): {verdict}"
        )
    if r.crossover is not None:
        c.print(f"[bold]crossover[/bold] {esc(r.op)} {esc(r.crossover.text)}")
    for i in r.info:
        val = (
            fmt_bytes(i.value) if i.name.endswith("bytes") else (si(i.value) if abs(i.value) >= 1e4 else f"{i.value:g}")
        )
        c.print(f"[cyan]{esc(i.name)}[/cyan] = {val}   [dim]{esc(i.help)}[/dim]")


TOP_TERMS = 8  # terms of the expected time shown without --terms


def expected_block(c: Console, r: RooflineResult, terms: bool = True) -> None:
    """The second block: the expected time on this card, its terms, and the headroom. Without
    ``terms``, the largest TOP_TERMS terms, one line each (no reasons) and the rest summed."""
    from rich.table import Table

    if r.expected_s is None:
        for n in r.expected_notes:
            c.print(f"[dim]expected time: {esc(n)}[/dim]")
        return
    where = "calibrated" if r.calibrated else "registry figures"
    if r.host_figure:
        where += f"; {r.host_figure}"
    t = Table(
        title=f"expected on this card ({esc(LAUNCH_WORDS.get(r.expected_launch or '', r.expected_launch or ''))}, "
        f"{where})",
        title_justify="left",
        show_edge=False,
        pad_edge=False,
    )
    t.add_column("term", no_wrap=True, overflow="fold")
    t.add_column("time", justify="right", no_wrap=True)
    t.add_column("why" if terms else "share", style="dim", justify="left" if terms else "right")
    shown = r.expected_terms if terms else sorted(r.expected_terms, key=lambda x: -x.seconds)[:TOP_TERMS]
    # a share of the step (terms that overlap, such as the host's issue beside the kernels it issues,
    # can add up to more than the step)
    total = r.expected_s or 1.0
    for term in shown:
        t.add_row(esc(term.name), fmt_time(term.seconds), esc(term.reason) if terms else f"{term.seconds / total:.0%}")
    rest = r.expected_terms[len(shown) :] if terms else [x for x in r.expected_terms if x not in shown]
    if rest:
        t.add_row(f"[dim]{len(rest)} more (--terms)[/dim]", fmt_time(sum(x.seconds for x in rest)), "")
    head = f"{r.headroom:.2f}x the bound" if r.headroom is not None else ""
    if r.expected_limiter:
        head += f"; mostly {r.expected_limiter}" + (
            " (all-reduce latency and bandwidth)"
            if r.expected_limiter == "interconnect"
            else " (Python issuing kernels; the GPU waits)"
            if r.expected_limiter == "host"
            else " (kernel launches)"
            if r.expected_limiter == "launch"
            else ""
        )
    t.add_row("[bold]expected time[/bold]", f"[bold]{fmt_time(r.expected_s)}[/bold]", head)
    c.print(t)
    for n in r.expected_notes:
        c.print(f"[yellow]note:[/yellow] {esc(n)}")


def op_list(c: Console, ops: list[OpDef]) -> None:
    from rich.table import Table

    t = Table(title="ops", title_justify="left", show_lines=False)
    t.add_column("op", style="bold", no_wrap=True)
    t.add_column("parameters (default)")
    t.add_column("what")
    for op in ops:
        parts = []
        for name, p in op.all_params.items():
            d = (
                p.default
                if p.default is not None
                else f"={p.default_from}"
                if p.default_from
                else "optional"
                if p.optional
                else "required"
            )
            parts.append(f"--{name.replace('_', '-')} ({d})")
        if op.presets:
            parts.insert(0, f"--{op.presets.option} PRESET")
        t.add_row(esc(op.name), esc(" ".join(parts)), esc(op.summary))
    c.print(t)


def _narrow_table(title: str) -> Any:
    """A table of numbers that keeps to the width it needs: a rule under the header, one space apart."""
    from rich import box
    from rich.table import Table

    return Table(
        title=title,
        title_justify="left",
        box=box.SIMPLE_HEAD,
        pad_edge=False,
        show_edge=False,
        collapse_padding=True,
        padding=(0, 1),
    )


def hw_list(c: Console, hws: list[Hardware]) -> None:
    # the names are in `hw show ID`; the table keeps to what fits 80 columns whole
    t = _narrow_table("hardware registry (dense peaks)")
    for col, j in (
        ("id", "left"),
        ("CC", "left"),
        ("SMs", "right"),
        ("bf16", "right"),
        ("fp32", "right"),
        ("bandwidth", "right"),
        ("memory", "right"),
        ("ridge", "right"),
    ):
        t.add_column(
            col,
            justify="left" if j == "left" else "right",
            no_wrap=col != "CC",
            overflow="fold",
            max_width=8 if col == "CC" else None,
        )
    for hw in hws:
        bf = hw.peak_flops_per_s.get("bf16") or hw.peak_flops_per_s.get("fp16")
        fp32 = hw.peak_flops_per_s.get("fp32")
        sms = hw.sm_value("sm_count")
        t.add_row(
            esc(hw.id),
            esc(hw.compute_capability or hw.gpu_family or ""),
            str(sms) if sms else "-",
            si(bf.value, "FLOP/s") if bf else "-",
            si(fp32.value, "FLOP/s") if fp32 else "-",
            si(hw.bandwidth, "B/s"),
            fmt_bytes(hw.memory.capacity_bytes.value),
            f"{bf.value / hw.bandwidth:.0f}" if bf else "-",
        )
    c.print(t)


def _fig_value(path: str, value: Any) -> str:
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) + " KiB"
    if "flops_per_s" in path:
        return si(value, "FLOP/s")
    if path.endswith("bytes_per_s"):
        return si(value, "B/s")
    if path.startswith("sm.") and path.endswith("_bytes"):
        return fmt_binary(int(value))
    if path.endswith("_bytes"):
        return fmt_bytes(value)
    if path.endswith("_mhz"):
        return f"{value:g} MHz"
    if path.endswith("_s") or path.rsplit(".", 1)[0].endswith("_s"):  # a time, or a table of times by key
        return fmt_time(value)
    return f"{value:g}"


def hw_show(c: Console, hw: Hardware) -> None:
    from rich.table import Table

    ident = (hw.compute_capability and f"compute capability {hw.compute_capability}") or f"GPU family {hw.gpu_family}"
    c.print(
        f"[bold]{esc(hw.name)}[/bold] ({esc(hw.id)}; {esc(hw.vendor)}; {esc(ident)}; "
        f"aliases: {esc(', '.join(hw.aliases) or '-')})"
    )
    if hw.calibration:
        cal = hw.calibration
        c.print(
            f"[cyan]calibrated[/cyan] from {esc(cal.base)} on {esc(cal.device_name)}, {esc(cal.date)}: "
            f"{esc(cal.command)}"
        )
    t = Table(show_edge=False, pad_edge=False)
    t.add_column("figure", overflow="fold", min_width=20, ratio=1)
    t.add_column("value", justify="right", no_wrap=True)
    t.add_column("kind", no_wrap=True)
    t.add_column("source", no_wrap=True)
    t.add_column("n", no_wrap=True, justify="right", style="dim")
    from .dtypes import PEAK_MEANING
    from .hardware import ChoiceMapFigure

    used: dict[str, None] = {}
    notes: list[str] = []
    for path, fig in hw.figures():
        used[fig.source] = None
        note = esc(fig.note) if fig.note else ""
        if path.startswith("peak_flops_per_s."):
            note = PEAK_MEANING[path.split(".")[1]] + ("; " + note if note else "")
        if isinstance(fig, ChoiceMapFigure):  # a map of measured kernel choices: its size, not its entries
            libs = ", ".join(f"{k} {v}" for k, v in fig.libraries.items())
            note = f"{len(fig.entries):,} shapes" + (f" on {libs}" if libs else "") + ("; " + note if note else "")
            notes.append(note)
            t.add_row(esc(path), f"{len(fig.entries):,} shapes", fig.kind, esc(fig.source), str(len(notes)))
            continue
        value = _fig_value(path, fig.value)
        if len(value) > 14:  # a list: its items go to the notes, the table keeps its width
            note = value + ("; " + note if note else "")
            value = "list"
        if note:
            notes.append(note)
        t.add_row(esc(path), value, fig.kind, esc(fig.source), str(len(notes)) if note else "")
    c.print(t)
    c.print("[bold]notes[/bold] (n)")
    for i, note in enumerate(notes, 1):
        c.print(f"  {i}. {note}")
    c.print("[bold]sources[/bold]")
    for key in used:
        c.print(f"  {esc(key)}: {esc(hw.sources[key].title)}")
    if hw.unknown:
        c.print("[bold]not published / unknown[/bold]")
        for k, why in hw.unknown.items():
            c.print(f"  {esc(k)}: {esc(why)}")
    urls = [f"  {esc(k)}: {esc(s.url)}" for k, s in hw.sources.items() if s.url]
    if urls:
        c.print("[bold]source addresses[/bold]")
        for u in urls:
            c.print(u)


def _limit_cell(value: int | None, binding: bool) -> str:
    text = "no limit" if value is None else f"{value}"
    return f"[bold red]{text} <- binds[/bold red]" if binding else text


def occupancy_result(c: Console, hw: Hardware, r: Any) -> None:
    from rich.table import Table

    cfg = f"{r.threads} threads, {r.regs if r.regs is not None else '?'} regs, {fmt_binary(r.smem)} dynamic"
    if r.static_smem:
        cfg += f" + {fmt_binary(r.static_smem)} static"
    cfg += " shared memory" + (f", carveout {r.carveout}%" if r.carveout != -1 else "")
    if r.blocks_per_sm is not None and r.launchable:  # the answer first
        limited = ", ".join(k.replace("_", " ") for k in r.limiters) or "nothing"
        c.print(
            f"[bold]{r.blocks_per_sm} blocks/SM · {r.warps_per_sm} of {r.max_warps_per_sm} warps "
            f"({r.occupancy:.1%} occupancy) · limited by {limited}[/bold]"
        )
    c.print(f"[bold]occupancy[/bold] on [bold]{esc(hw.name)}[/bold]: {cfg}")
    if not r.launchable:
        c.print(f"[bold red]cannot launch:[/bold red] {r.reason}")
    t = _kv_table()
    if r.blocks_per_sm is not None:
        t.add_row("blocks per SM", str(r.blocks_per_sm), "")
        t.add_row("warps per SM", f"{r.warps_per_sm} / {r.max_warps_per_sm}", f"{r.warps_per_block} per block")
        t.add_row("threads per SM", str(r.threads_per_sm), "")
        t.add_row("occupancy", f"{r.occupancy:.1%}", "active warps / max warps")
    else:
        t.add_row("blocks per SM", "unknown", "residency rules not published for this part")
        t.add_row("launchable", "yes" if r.launchable else "no", "")
    c.print(t)

    lim = Table(
        title="limit each resource sets on its own (blocks per SM)",
        title_justify="left",
        show_edge=False,
        pad_edge=False,
        min_width=56,
    )
    lim.add_column("resource", no_wrap=True)
    lim.add_column("blocks", justify="right", no_wrap=True)
    lim.add_column("", style="dim")
    for k in ("registers", "shared_memory", "warps", "blocks", "barriers"):
        note = r.limit_notes.get(k, "")
        value = r.limits.get(k)
        lim.add_row(
            k.replace("_", " "), _limit_cell(value, k in r.limiters) if value is not None or not note else "-", note
        )
    c.print(lim)

    if r.allocated_regs_per_warp is not None:
        a = _kv_table("allocated")
        a.add_row("registers per thread", str(r.allocated_regs_per_thread), f"asked {r.regs}; rounded per warp")
        a.add_row(
            "registers per warp",
            f"{r.allocated_regs_per_warp:,}",
            f"{r.regs} x 32 rounded up to {hw.sm_value('register_allocation_unit')}",
        )
        a.add_row(
            "registers per block", f"{r.allocated_regs_per_block:,}", f"limit {hw.sm_value('registers_per_block'):,}"
        )
        a.add_row(
            "shared memory per block",
            fmt_binary(r.allocated_smem_per_block),
            f"{r.allocated_smem_per_block:,} B: static + dynamic + reserved, rounded; limit {r.smem_per_block_limit:,} B",
        )
        a.add_row("shared-memory config", fmt_binary(r.smem_config_bytes or 0), "what the carveout resolves to")
        c.print(a)
    nb = r.next_block
    if nb is not None and r.blocks_per_sm is not None:
        want = r.blocks_per_sm + 1
        opts = []
        if nb.regs_at_most is not None:
            opts.append(f"registers at most {nb.regs_at_most}")
        if nb.smem_at_most is not None:
            opts.append(f"dynamic shared memory at most {nb.smem_at_most:,} B ({fmt_binary(nb.smem_at_most)})")
        if nb.static_smem_at_most is not None:
            opts.append(
                f"static shared memory at most {nb.static_smem_at_most:,} B ({fmt_binary(nb.static_smem_at_most)})"
            )
        if nb.threads_at_most is not None:
            opts.append(f"threads at most {nb.threads_at_most}")
        if opts:
            c.print(f"[bold]to fit {want} blocks per SM[/bold]: " + ", or ".join(opts))
        else:
            c.print(f"[bold]to fit {want} blocks per SM[/bold]: no single change does it")
    if r.waves is not None:
        w = r.waves
        c.print(
            f"[bold]grid {w.grid}[/bold]: {w.waves:.2f} waves of {w.blocks_per_wave} blocks; last wave "
            f"{w.tail_blocks or w.blocks_per_wave} blocks; {w.tail_efficiency_loss:.1%} of the SM time lost to the tail"
        )
    for n in r.notes:
        c.print(f"[yellow]note:[/yellow] {n}")


def occupancy_sweep(c: Console, hw: Hardware, results: list[Any], best: int | None) -> None:
    from rich.table import Table

    r0 = results[0]
    c.print(
        f"[bold]occupancy over block sizes[/bold] on [bold]{esc(hw.name)}[/bold]: "
        f"{r0.regs if r0.regs is not None else '?'} regs, {fmt_binary(r0.smem)} dynamic shared memory"
    )
    t = Table(show_edge=False, pad_edge=False)
    for col in ("threads", "blocks/SM", "warps/SM", "occupancy", "limited by", ""):
        # the numbers keep their width; the text columns wrap when the terminal is narrow
        text = col in ("limited by", "")
        t.add_column(
            col, justify="left" if text else "right", no_wrap=not text, overflow="fold" if text else "ellipsis"
        )
    top = max((r.threads_per_sm or 0) for r in results)
    for r in results:
        mark = ""
        if best is not None and r.threads == best:
            mark = "[bold green]<- cudaOccupancyMaxPotentialBlockSize[/bold green]"
        elif top and r.threads_per_sm == top:
            mark = "[green]best[/green]"
        if r.blocks_per_sm is None:
            t.add_row(str(r.threads), "?", "?", "?", "unknown", "launchable" if r.launchable else r.reason or "")
            continue
        t.add_row(
            str(r.threads),
            str(r.blocks_per_sm),
            str(r.warps_per_sm),
            f"{r.occupancy:.0%}",
            ", ".join(r.limiters) if r.launchable else "cannot launch",
            mark,
        )
    c.print(t)


def model_list(c: Console, pf: Any) -> None:
    t = _narrow_table("model presets")
    cols = ("layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "vocab", "experts", "max_context")
    short = {"layers": "L", "kv_heads": "kv", "head_dim": "hd", "max_context": "context"}
    t.add_column("model", style="bold", no_wrap=True)
    for col in cols:
        t.add_column(short.get(col, col), justify="right", no_wrap=True)
    for name, p in pf.presets.items():
        vals = p.params
        exp = (
            f"{vals.get('experts', 1)} (top {vals.get('experts_per_token', 1)})" if vals.get("experts", 1) > 1 else "-"
        )
        mc = vals.get("max_context")
        row = [esc(vals.get(k, "-")) for k in cols[:-2]] + [exp, f"{mc:,}" if isinstance(mc, int) else "-"]
        t.add_row(esc(name), *row)
    c.print(t)
    c.print("[bold]sources[/bold]")
    for name, p in pf.presets.items():
        c.print(f"  {esc(name)}: {esc(p.source)}" + (f" ({esc(p.note)})" if p.note else ""))


def impl_list(c: Console, impls: list[Any]) -> None:
    t = _narrow_table("implementations (--impl NAME on op decode and op prefill)")
    t.add_column("name", style="bold", no_wrap=True)
    t.add_column("steps", no_wrap=True)
    t.add_column("what it is")
    for i in impls:
        t.add_row(esc(i.name), ", ".join(i.phases), esc(i.summary))
    c.print(t)
    c.print("[dim]roofcalc impl show NAME: its kernels, settings and figures[/dim]")


def impl_show(c: Console, impl: Any, figures: dict[str, Any]) -> None:
    c.print(f"[bold]{esc(impl.name)}[/bold]: {esc(impl.summary)}")
    c.print(esc(" ".join(impl.description.split())))
    c.print(f"[dim]read from: {esc(impl.read_from)}[/dim]")
    if impl.versions:
        c.print("[dim]versions: " + esc(", ".join(f"{k} {v}" for k, v in impl.versions.items())) + "[/dim]")
    for phase, p in impl.phases.items():
        c.print(f"\n[bold]{phase}[/bold]")
        if p.sets:
            c.print("  fixes: " + esc(", ".join(f"{k}={v}" for k, v in p.sets.items())))
        if p.drop:
            c.print("  does not launch the reference's: " + esc(", ".join(p.drop)))
        for ins in p.add:
            where = f"after {ins.after}" if ins.after else "at the end"
            for k in ins.kernels:
                c.print(f"  launches {esc(k.name)} ({where}): {esc(k.help)}")
        if p.host_ops:
            c.print(f"  host work per step beyond issuing kernels: {esc(p.host_ops)} host-op times")
        if p.host_ops_native:
            c.print(f"  host work per step in native code: {esc(p.host_ops_native)} host-op times (a hot loop's)")
        for chk in p.checks:
            c.print(f"  refuses: not ({esc(chk.expr)})")
    if figures:
        t = _narrow_table("figures")
        for col in ("figure", "value", "kind", "source"):
            t.add_column(col, no_wrap=col != "source")
        for name, f in figures.items():
            kind = f.kind + (f" ({f.fit_set})" if f.fit_set else "")
            t.add_row(esc(name), f"{f.value:g}", esc(kind), esc(f.source))
        c.print(t)


def compare_table(c: Console, results: list[Any], errors: list[tuple[str, str]]) -> None:
    from rich.table import Table

    r0 = results[0]
    params = esc("  ".join(f"{k}={v}" for k, v in r0.params.items() if v is not None))
    # ranked by the expected time where every card has one, else by the bound (and it says so)
    by_expected = all(r.expected_s is not None for r in results)
    results = sorted(results, key=lambda r: r.expected_s if by_expected else r.predicted_s)
    rank = "expected time" if by_expected else "bound (not every card has measured figures)"
    c.print(f"[bold]{esc(r0.op)}[/bold], {r0.dtype}   [dim]{params}[/dim]   ranked by the {rank}")
    fastest = results[0]
    for w in dict.fromkeys(f"{r.hardware}: {w}" for r in results for w in r.warnings):
        c.print(f"[yellow]warning:[/yellow] {esc(w)}")
    t = Table(show_edge=False, pad_edge=False)
    t.add_column("", style="bold", no_wrap=True)
    for r in results:
        t.add_column(esc(r.hardware) + (" (fastest)" if r is fastest else ""), justify="right", no_wrap=True)
    from collections.abc import Callable

    def band(r: Any) -> str:
        s = r.summary
        return fmt_time_range(s.expected_low_s, s.expected_high_s) if s and s.expected_low_s else "-"

    first = "expected time" if by_expected else "bound time"
    rows: list[tuple[str, Callable[[Any], str]]] = [
        ("expected time", lambda r: fmt_time(r.expected_s) if r.expected_s is not None else "none"),
        ("expected band", band),
        ("bound time", lambda r: fmt_time(r.predicted_s)),
        ("bound", lambda r: r.bound),
        ("attainable", lambda r: si(r.attainable_flops_per_s, "FLOP/s")),
        ("fraction of peak", lambda r: f"{r.fraction_of_peak:.1%}"),
        ("intensity", lambda r: f"{r.intensity:,.4g}"),
        ("ridge", lambda r: f"{r.ridge:,.4g}"),
        ("peak", lambda r: si(r.peak_flops_per_s, "FLOP/s")),
        ("bandwidth", lambda r: si(r.bandwidth_bytes_per_s, "B/s")),
        ("time at peak compute", lambda r: fmt_time(r.t_compute_s)),
        ("time at peak bandwidth", lambda r: fmt_time(r.t_memory_s)),
    ]
    for label, f in rows:
        t.add_row(
            label,
            *[("[green]" + f(r) + "[/green]") if r is fastest and label == first else f(r) for r in results],
        )
    c.print(t)


def _roofline_series(chart: Any) -> tuple[list[Any], list[str]]:
    from .termplot import Series

    chars = "-=~*+:"
    series = []
    xs = [p.intensity for p in chart.points] + [r.ridge for r in chart.roofs]
    lo, hi = min([*xs, 1.0]) / 4, max([*xs, 1.0]) * 4
    for i, r in enumerate(chart.roofs):
        kind = "measured" if r.calibrated else "datasheet"
        series.append(
            Series(
                label=f"{r.hardware} {r.dtype} roof ({kind}), ridge (R) at {r.ridge:.0f} FLOP/B",
                points=[(lo, r.bandwidth_bytes_per_s * lo), (r.ridge, r.peak_flops_per_s), (hi, r.peak_flops_per_s)],
                char=chars[i % len(chars)],
            )
        )
        series.append(Series(label="ridge", points=[(r.ridge, r.peak_flops_per_s)], char="R", line=False))
    marks = "123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
    legend = []
    for i, p in enumerate(chart.points):
        m = marks[i % len(marks)]
        legend.append(
            f"  {m}  {p.label} on {p.hardware}: intensity {p.intensity:,.4g} FLOP/B, "
            f"{si(p.attainable_flops_per_s, 'FLOP/s')} ({p.bound}-bound)"
        )
        series.append(
            Series(label=p.label, points=[(p.intensity, p.attainable_flops_per_s)], char=m, line=False, labels=[m])
        )
    return series, legend


def roofline_view(c: Console, chart: Any, chart_in_terminal: bool = True) -> None:
    from rich.table import Table

    from .termplot import loglog

    if chart_in_terminal:
        series, legend = _roofline_series(chart)
        c.print(loglog(series, x_unit="FLOP/B", y_unit="FLOP/s"), markup=False, highlight=False)
        for line in legend:
            c.print(line, markup=False, highlight=False)
    t = Table(show_edge=False, pad_edge=False)
    several = len({p.hardware for p in chart.points}) > 1
    cols = ("op", "hw", "expected", "bound", "limit", "FLOP/B", "attainable")
    for col in cols if several else tuple(x for x in cols if x != "hw"):
        t.add_column(
            col,
            justify="left" if col in ("op", "hw", "limit") else "right",
            no_wrap=col != "op",
            min_width=14 if col == "op" else None,
            overflow="fold",
        )
    for p, r in zip(chart.points, chart.results, strict=True):
        t.add_row(
            esc(p.label),
            *([esc(p.hardware)] if several else []),
            fmt_time(r.expected_s) if r.expected_s is not None else "-",
            fmt_time(r.predicted_s),
            p.bound,
            f"{p.intensity:,.4g}",
            si(p.attainable_flops_per_s, "FLOP/s"),
        )
    c.print(t)


def sweep_view(c: Console, sw: Any, chart: bool = True) -> None:
    from rich.table import Table

    from .termplot import Series, loglog

    first = sw.rows[0].result if sw.rows else None
    impl = first.summary.implementation if first is not None and first.summary is not None else None
    if impl:
        c.print(f"implementation {esc(impl)} (the expected time's kernels; --impl)")
    t = Table(
        title=f"sweep of {esc(sw.op)} over {esc(sw.param)}", title_justify="left", show_edge=False, pad_edge=False
    )
    t.add_column(sw.param, justify="right", no_wrap=True)
    for hw in sw.hardware:
        for col in ("expected", "bound", "limit"):
            t.add_column(f"{esc(hw)} {col}", justify="right", no_wrap=True)
    by = {(r.hardware, r.value): r.result for r in sw.rows}
    for v in sw.values:
        cells = []
        for hw in sw.hardware:
            r = by[(hw, v)]
            exp = fmt_time(r.expected_s) if r.expected_s is not None else "-"
            cells += [exp, fmt_time(r.predicted_s), r.bound]
        t.add_row(f"{v:,}", *cells)
    c.print(t)
    if chart:
        chars = "*o+x#@"
        panels: list[tuple[str, Any, str]] = [
            ("bound time", lambda r: r.predicted_s, "s"),
            ("attainable", lambda r: r.attainable_flops_per_s, "FLOP/s"),
        ]
        for what, get, unit in panels:
            series = [
                Series(
                    label=f"{hw} {what}",
                    char=chars[i % len(chars)],
                    points=[(float(v), get(by[(hw, v)])) for v in sw.values],
                )
                for i, hw in enumerate(sw.hardware)
            ]
            c.print(loglog(series, height=12, x_unit=sw.param, y_unit=unit), markup=False, highlight=False)
    for hw in sw.hardware:
        c.print(f"[bold]{esc(hw)}[/bold]: {esc(sw.op)} {esc(sw.crossover[hw]['text'])}")


def occupancy_curves_view(c: Console, oc: Any) -> None:
    from .termplot import sparkline

    c.print("[bold]occupancy curves[/bold] (bar height = occupancy; ^ = this configuration)")
    for cv in oc.curves:
        line, idx = sparkline(cv.occupancy, width=64)
        pos = min(range(len(idx)), key=lambda i: abs(cv.x[idx[i]] - cv.current))
        lo = fmt_binary(cv.x[0]) if cv.unit == "bytes" else str(cv.x[0])
        hi = fmt_binary(cv.x[-1]) if cv.unit == "bytes" else str(cv.x[-1])
        c.print(f"  {cv.variable:<24} {lo:>7} |{line}| {hi}", markup=False, highlight=False)
        c.print(" " * 35 + " " * pos + "^", markup=False, highlight=False)


def validation_report(c: Console, rep: Any, show_all: bool = False) -> None:
    """Measured / expected over saved timings: the summary, the worst cases, optionally all."""
    from rich.table import Table

    s = rep.summary
    where = "calibrated" if rep.calibrated else "registry figures"
    if getattr(rep, "host_rate", None):
        where += f"; the host's figures from --host-rate: {rep.host_rate}"
    c.print(
        f"[bold]{esc(rep.kind)} timings[/bold] from {esc(rep.source)} on {esc(rep.device)} "
        f"(driver {esc(rep.driver or '?')}, {esc(rep.date or '?')}), against {esc(rep.hardware)} ({where})"
    )
    t = _kv_table()
    t.add_row("cases", f"{s.evaluated} of {s.cases}", "with an expected time")
    if s.median_ratio is not None:
        t.add_row("median measured / expected", f"{s.median_ratio:.3f}", "target 0.9 to 1.1 (registry: 0.85 to 1.2)")
    if s.share_in_band is not None:
        band = "the target band" if rep.kind == "llm" else f"[{s.band[0]}, {s.band[1]}]"
        note = "decode [0.85, 1.2], prefill [0.8, 1.25]: every case" if rep.kind == "llm" else "target >= 85%"
        t.add_row(f"within {band}", f"{s.share_in_band:.0%}", note)
    if s.share_in_registry_band is not None:
        t.add_row("within [0.67, 1.5]", f"{s.share_in_registry_band:.0%}", "registry target >= 70%")
    t.add_row("outside [0.5, 2]", str(s.outside_outer), "target none")
    if s.min_bound_ratio is not None:
        t.add_row("lowest measured / bound", f"{s.min_bound_ratio:.2f}", "the bound is never above a measurement")
    c.print(t)
    rows = rep.cases if show_all else rep.worst
    w = Table(
        title="all cases" if show_all else "the five furthest from 1",
        title_justify="left",
        show_edge=False,
        pad_edge=False,
    )
    for col in ("case", "measured", "expected", "ratio", "/bound", "largest term"):
        w.add_column(
            col,
            justify="left" if col in ("case", "largest term") else "right",
            no_wrap=col not in ("case", "largest term"),
            overflow="fold",
            ratio=1 if col in ("case", "largest term") else None,
            min_width=16 if col == "case" else 24 if col == "largest term" else None,
        )
    for r in rows:
        w.add_row(
            esc(r.label),
            fmt_time(r.measured_s),
            fmt_time(r.expected_s) if r.expected_s else "-",
            f"{r.ratio:.2f}" if r.ratio else "-",
            f"{r.bound_ratio:.2f}",
            esc(r.why),
        )
    c.print(w)
    for line in rep.refused:
        c.print(f"refused by the model, not counted: {esc(line)}")

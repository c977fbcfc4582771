"""What ``roofcalc probe`` shows: the progress display, the report's tables, the per-SM chart.

No arithmetic beyond formatting: every figure comes from the report model. Text that comes
from the device, the command line or a saved file is escaped before rich reads it as markup.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from ..units import fmt_binary, fmt_time, si

if TYPE_CHECKING:
    from rich.console import Console

    from .report import ProbeReport


def console(stderr: bool = False) -> Console:
    """The one console of roofcalc (sane widths for any $COLUMNS, quiet broken pipes)."""
    from ..render import console as shared_console

    return shared_console(stderr)


# ------------------------------------------------------------------ progress


class ProgressDisplay:
    """Which phase the probe is in and how far it has got, on stderr (never stdout).

    On a terminal: a rich progress bar (phases done of planned), the current phase and its
    detail, the time elapsed. Otherwise one plain line per phase, e.g. for a log file.
    """

    def __init__(self, tty: bool | None = None) -> None:
        self.tty = sys.stderr.isatty() if tty is None else tty
        self.total: int | None = None
        self.done = 0
        self.current: str | None = None
        self.t0 = time.monotonic()
        self._bar: Any = None
        self._task: Any = None

    def __enter__(self) -> ProgressDisplay:
        if self.tty:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self._bar = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console(stderr=True),
                transient=False,
            )
            self._bar.start()
            self._task = self._bar.add_task("starting", total=None)
        return self

    def plan(self, phases: int) -> None:
        self.total = max(phases, self.done + 1)
        if self._bar is not None:
            self._bar.update(self._task, total=self.total)

    def phase(self, name: str) -> None:
        if self.current is not None:
            self.done += 1
        self.current = name
        if self.total is not None and self.done >= self.total:
            self.total = self.done + 1
        if self._bar is not None:
            self._bar.update(self._task, completed=self.done, total=self.total, description=escape(name))
        else:
            of = f"{self.done + 1}/{self.total}" if self.total else f"{self.done + 1}"
            print(f"roofcalc probe [{of}] {name} ({time.monotonic() - self.t0:.0f} s)", file=sys.stderr, flush=True)

    def detail(self, text: str) -> None:
        if self._bar is not None and self.current is not None:
            self._bar.update(self._task, description=escape(f"{self.current}: {text}"))

    def __exit__(self, *exc: Any) -> None:
        took = time.monotonic() - self.t0
        if self._bar is not None:
            if exc[0] is None:
                self._bar.update(
                    self._task,
                    completed=self.total or self.done + 1,
                    total=self.total or self.done + 1,
                    description=f"done in {took:.0f} s",
                )
            self._bar.stop()
        elif exc[0] is None:
            print(f"roofcalc probe: done in {took:.0f} s", file=sys.stderr, flush=True)


# ------------------------------------------------------------------ tables


def _table(title: str, cols: list[str], left: tuple[str, ...] = ()) -> Any:
    from rich.table import Table

    t = Table(title=title, title_justify="left", show_edge=False, pad_edge=False)
    for col in cols:
        t.add_column(col, justify="left" if col in left else "right", no_wrap=True)
    return t


def _value(unit: str, v: float | None) -> str:
    if v is None:
        return "-"
    if unit == "s":
        return str(fmt_time(v))
    return str(si(v, unit))


def _pct(x: float | None) -> str:
    return f"{x:.1%}" if x is not None else "-"


def _spread(median: float | None, p10: float | None, p90: float | None) -> str:
    if median is None or p10 is None or p90 is None or median <= 0:
        return ""
    return f"±{(p90 - p10) / 2 / median:.1%}"


def _bar(frac: float | None, width: int = 24) -> str:
    if frac is None:
        return ""
    n = max(0, min(width, round(frac * width)))
    return "█" * n + "·" * (width - n)


def probe_report(c: Console, r: ProbeReport) -> None:
    d = r.device
    c.print(
        f"[bold]{escape(str(d.get('name')))}[/bold] (CC {escape(str(d.get('cc')))}, {d.get('sm_count')} SMs), "
        f"driver {escape(str(r.driver))}, compared with hardware/{escape(r.hardware)}.yaml; {escape(r.date)}"
    )
    _ceilings(c, r)
    _residency(c, r)
    _ops(c, r)
    _floors(c, r)
    _per_sm(c, r)
    _latency(c, r)
    _gemm(c, r)
    _interconnect(c, r)
    _expected(c, r)
    s = r.summary
    if s.get("median_ratio_large_ops") is not None:
        c.print(
            f"median measured/predicted over the {s['large_ops']} ops above 100 us: {s['median_ratio_large_ops']:.2f}"
        )
    if r.residency:
        c.print(
            f"residency: {s['residency_agree']} of {s['residency_configs']} configurations agree "
            "(solver = runtime = measured)"
        )
    for n in r.notes:
        c.print(f"[cyan]note[/cyan] {escape(n)}")
    for sk in r.skipped:
        c.print(f"[yellow]skipped[/yellow] {escape(sk)}")
    took = r.raw.get("phase_wall_s")
    if isinstance(took, dict) and took:
        slow = sorted(took.items(), key=lambda kv: -kv[1])[:4]
        c.print(
            f"[dim]measured in {sum(took.values()):.0f} s; longest: "
            + escape(", ".join(f"{k} {v:.0f} s" for k, v in slow))
            + "[/dim]"
        )


def _ceilings(c: Console, r: ProbeReport) -> None:
    t = _table(
        "ceilings",
        ["ceiling", "measured with", "datasheet", "measured", "% of datasheet", "spread", "SM clock"],
        left=("ceiling", "measured with"),
    )
    for row in r.ceilings:
        clock = f"{row.sm_clock_mhz:.0f} MHz" if row.sm_clock_mhz else ""
        t.add_row(
            escape(row.name),
            escape(row.instruction or ""),
            _value(row.unit, row.datasheet),
            _value(row.unit, row.measured),
            _pct(row.fraction),
            _spread(row.median_s, row.p10_s, row.p90_s),
            clock,
        )
    c.print(t)


def _residency(c: Console, r: ProbeReport) -> None:
    if not r.residency:
        return
    t = _table(
        "occupancy residency (blocks per SM)",
        ["configuration", "regs", "smem", "solver", "runtime", "measured", ""],
        left=("configuration", ""),
    )
    for row in r.residency:
        t.add_row(
            escape(row.name),
            str(row.regs),
            fmt_binary(row.dyn_smem + row.static_smem),
            f"{row.solver_blocks} ({', '.join(row.solver_limiters)})",
            str(row.runtime_blocks),
            str(row.measured_blocks),
            "[green]agree[/green]" if row.agree else "[bold red]DIFFER[/bold red]",
        )
    c.print(t)


def _ops(c: Console, r: ProbeReport) -> None:
    if not r.ops:
        return
    t = _table(
        "ops: predicted vs measured",
        [
            "op",
            "dtype",
            "bound",
            "predicted (datasheet)",
            "predicted (measured roofs)",
            "measured",
            "measured / predicted",
        ],
        left=("op", "dtype", "bound"),
    )
    for o in r.ops:
        t.add_row(
            escape(f"{o.op}: {o.label}"),
            o.dtype,
            o.bound,
            fmt_time(o.predicted_datasheet_s),
            fmt_time(o.predicted_calibrated_s),
            fmt_time(o.measured_s),
            f"{o.ratio:.2f}",
        )
    c.print(t)
    for o in r.ops:
        if o.note:
            c.print(f"[yellow]note[/yellow] {escape(f'{o.op} ({o.label}): {o.note}')}")
        elif o.phases_s:
            parts = ", ".join(f"{k} {fmt_time(v)}" for k, v in o.phases_s.items())
            c.print(f"[cyan]phases[/cyan] {escape(f'{o.op} ({o.label}): {parts}')}")


def _floors(c: Console, r: ProbeReport) -> None:
    if not r.floors:
        return
    t = _table("kernel floors (per kernel)", ["floor", "median", "p10", "p90", "samples", "how"], left=("floor", "how"))
    for f in r.floors:
        per = f" of {f.kernels_per_sample}" if f.kernels_per_sample > 1 else ""
        t.add_row(
            escape(f.name),
            fmt_time(f.median_s),
            fmt_time(f.p10_s),
            fmt_time(f.p90_s),
            f"{f.samples}{per}",
            escape(f.method),
        )
    c.print(t)


def _per_sm(c: Console, r: ProbeReport) -> None:
    p = r.per_sm
    if p is None:
        return
    t = _table(
        "read bandwidth against SMs busy (one block per SM, each streaming its own slice)",
        ["SMs", "read", "% of read ceiling", "", "copy", "read shape"],
        left=("", "read shape"),
    )
    for pt in p.curve:
        t.add_row(
            str(pt.sms),
            _value("B/s", pt.read_bytes_per_s),
            _pct(pt.read_fraction_of_ceiling),
            _bar(pt.read_fraction_of_ceiling),
            _value("B/s", pt.copy_bytes_per_s),
            escape(pt.read_config or ""),
        )
    c.print(t)
    for sms in sorted({q.sms for q in p.inflight}):
        pts = [q for q in p.inflight if q.sms == sms]
        unrolls = sorted({q.unroll for q in pts})
        t = _table(
            f"bytes in flight, {sms} SM{'s' if sms > 1 else ''} (read bandwidth; rows: threads per block, "
            "columns: 16-byte loads in flight per thread)",
            ["threads", *[f"x{u}" for u in unrolls]],
            left=("threads",),
        )
        for th in sorted({q.threads for q in pts}):
            cells = {q.unroll: q.bytes_per_s for q in pts if q.threads == th}
            t.add_row(str(th), *[_value("B/s", cells.get(u)) for u in unrolls])
        c.print(t)
    line = f"per-SM saturation bandwidth: {_value('B/s', p.per_sm_bytes_per_s)} ({escape(p.per_sm_config or '-')})"
    if p.read_ceiling_bytes_per_s:
        reach = f"{p.sms_for_90pct} SMs" if p.sms_for_90pct else "not reached with one block per SM"
        line += f"; 90% of the read ceiling ({_value('B/s', p.read_ceiling_bytes_per_s)}): {reach}"
    c.print(line)


def _latency(c: Console, r: ProbeReport) -> None:
    if not r.latency:
        return
    t = _table(
        "memory latency (one thread, dependent loads)",
        ["chase", "latency", "p10", "p90", "buffer", "stride", "steps per walk"],
        left=("chase",),
    )
    for row in r.latency:
        t.add_row(
            escape(row.name),
            fmt_time(row.latency_s),
            fmt_time(row.p10_s),
            fmt_time(row.p90_s),
            fmt_binary(row.buffer_bytes),
            f"{row.stride_bytes} B",
            str(row.steps),
        )
    c.print(t)


def _gemm(c: Console, r: ProbeReport) -> None:
    if not r.gemm or (all(g.label == "aligned" for g in r.gemm) and not r.raw.get("torch", {}).get("gemm")):
        return
    t = _table(
        "GEMM efficiency through PyTorch (fractions of this run's measured peak and of the datasheet)",
        ["shape (m x n x k)", "dtype", "case", "time", "rate", "% of peak", "% of datasheet", "spread"],
        left=("shape (m x n x k)", "dtype", "case"),
    )
    for g in r.gemm:
        shape = f"{g.m} x {g.n} x {g.k}"
        if g.error or not g.verified:
            t.add_row(
                shape, g.dtype, escape(g.label), "-", "-", "-", "-", escape((g.error or g.check or "check failed")[:60])
            )
            continue
        t.add_row(
            shape,
            g.dtype,
            escape(g.label),
            _value("s", g.median_s),
            _value("FLOP/s", g.flops_per_s),
            _pct(g.fraction),
            _pct(g.fraction_datasheet),
            _spread(g.median_s, g.p10_s, g.p90_s),
        )
    c.print(t)


def _interconnect(c: Console, r: ProbeReport) -> None:
    ic = r.interconnect
    if ic is None:
        return
    t = _table(
        f"all-reduce (sum) across {ic.gpus} GPUs, NCCL {escape(ic.nccl or '?')}",
        ["dtype", "message", "eager", "spread", "graph", "algorithm bw", "bus bw", ""],
        left=("dtype", ""),
    )
    for row in ic.allreduce:
        flag = "" if row.verified else "[bold red]check failed[/bold red]"
        if row.graph_note:
            flag += escape(f" graph: {row.graph_note[:50]}")
        t.add_row(
            row.dtype,
            fmt_binary(row.bytes),
            fmt_time(row.eager_s),
            _spread(row.eager_s, row.eager_p10_s, row.eager_p90_s),
            fmt_time(row.graph_s) if row.graph_s else "-",
            _value("B/s", row.algbw_bytes_per_s),
            _value("B/s", row.busbw_bytes_per_s),
            flag,
        )
    c.print(t)
    env = ", ".join(f"{k}={v if v is not None else '(unset)'}" for k, v in ic.env.items())
    c.print(f"environment as found (passed through unchanged): {escape(env)}")
    if ic.p2p_bytes_per_s is not None:
        c.print(f"peer-to-peer copy: {_value('B/s', ic.p2p_bytes_per_s)} ({escape(ic.p2p_note or '')})")
    if not ic.complete:
        c.print(
            "[yellow]the all-reduce run did not complete: the sizes above are those measured before it stopped[/yellow]"
        )


def _expected(c: Console, r: ProbeReport) -> None:
    if not r.expected:
        return
    t = _table("written to the calibration's expected: section", ["figure", "value", "how"], left=("figure", "how"))

    def show(name: str, fig: dict[str, Any], key: str | None = None) -> None:
        """One figure; ``key``: its key in a table of figures (per dtype, per path) named ``name``."""
        if isinstance(fig["value"], (str, list)):  # the GEMM choice map: its entries, counted
            entries = fig["value"].splitlines() if isinstance(fig["value"], str) else fig["value"]
            t.add_row(escape(name), f"{len(entries):,} shapes", escape(str(fig.get("note", ""))[:110]))
            return
        v = float(fig["value"])
        label = f"{name}.{key}" if key else name
        if "bytes_per_s" in name or name.startswith("read_bandwidth"):
            text = _value("B/s", v)
        elif name.endswith("_s"):
            text = str(fmt_time(v))
        elif name.endswith("_mhz"):
            text = f"{v:.0f} MHz"
        elif name.endswith("_per_sm") or name.startswith("sms_"):
            text = f"{v:.3g}"
        else:
            text = f"{v:.1%}"
        t.add_row(escape(label), text, escape(str(fig.get("note", ""))[:110]))

    for name, fig in r.expected.items():
        if "value" in fig:
            show(name, fig)
        elif name.startswith("gemm_choice_"):  # one per kernel family and tile: counted, not listed
            first: dict[str, Any] = next(iter(fig.values()), {})
            t.add_row(escape(name), f"{len(fig)} tiles", escape(str(first.get("note", ""))[:110]))
        else:
            for key, sub in fig.items():
                show(name, sub, key)
    c.print(t)


# ------------------------------------------------------------------ chart


def save_per_sm_plot(r: ProbeReport, path: str) -> None:
    """Read (and copy) bandwidth against SMs busy, and against bytes in flight on one SM."""
    from ..errors import DomainError, InputError
    from ..plot import check_output

    fmt = check_output(path)
    p = r.per_sm
    if p is None or not p.curve:
        raise DomainError(
            "this report has no per-SM bandwidth curve (it is measured by the full probe, "
            "not by --quick or by probes before schema 2)"
        )
    try:
        import matplotlib
    except ImportError:
        raise DomainError(
            "writing chart files needs matplotlib: pip install 'roofcalc[plot]' "
            "(without --plot the report shows the curve as a table)"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(12, 4.8))
    xs = [q.sms for q in p.curve if q.read_bytes_per_s]
    ax.plot(xs, [(q.read_bytes_per_s or 0) / 1e9 for q in p.curve if q.read_bytes_per_s], "o-", label="read")
    cp = [q for q in p.curve if q.copy_bytes_per_s]
    if cp:
        ax.plot([q.sms for q in cp], [(q.copy_bytes_per_s or 0) / 1e9 for q in cp], "s--", label="copy (read + write)")
    if p.read_ceiling_bytes_per_s:
        ax.axhline(p.read_ceiling_bytes_per_s / 1e9, color="gray", lw=1, ls=":", label="read ceiling (all blocks)")
        ax.axhline(0.9 * p.read_ceiling_bytes_per_s / 1e9, color="gray", lw=0.8, ls="-.", label="90% of it")
    if p.sms_for_90pct:
        ax.axvline(p.sms_for_90pct, color="tab:red", lw=0.8, ls="--", label=f"{p.sms_for_90pct} SMs reach 90%")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("SMs busy (one block each)")
    ax.set_ylabel("GB/s")
    ax.set_title(f"{r.device.get('name')}: bandwidth against SMs")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    for sms in sorted({q.sms for q in p.inflight}):
        pts = sorted((q for q in p.inflight if q.sms == sms), key=lambda q: q.bytes_in_flight_per_sm)
        best: dict[int, float] = {}
        for q in pts:
            best[q.bytes_in_flight_per_sm] = max(best.get(q.bytes_in_flight_per_sm, 0.0), q.bytes_per_s)
        ax2.plot(
            [b / 1024 for b in best], [v / 1e9 for v in best.values()], "o-", label=f"{sms} SM{'s' if sms > 1 else ''}"
        )
    ax2.set_xscale("log", base=2)
    ax2.set_yscale("log")
    ax2.set_xlabel("bytes in flight per SM (KiB): threads x loads x 16 B")
    ax2.set_ylabel("GB/s")
    ax2.set_title("read bandwidth against bytes in flight")
    ax2.grid(True, which="both", alpha=0.3)
    ax2.legend(fontsize=8)
    fig.tight_layout()
    import tempfile

    parent = Path(path).parent if str(Path(path).parent) else Path(".")
    fd, tmp = tempfile.mkstemp(dir=parent, prefix=".roofcalc-", suffix="." + fmt)
    os.close(fd)
    try:
        fig.savefig(tmp, format=fmt, dpi=120, bbox_inches="tight", metadata={"Date": None} if fmt == "svg" else None)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, path)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(f"{path}: cannot write: {e.strerror}") from None
    finally:
        Path(tmp).unlink(missing_ok=True)
        plt.close(fig)

"""Rich rendering of a TraceReport. No arithmetic beyond formatting."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from ..render import esc
from ..units import fmt_time

if TYPE_CHECKING:
    from rich.console import Console

    from .analysis import OpRow, TraceReport

_TEMPLATE = re.compile(r"[<(]")


def short_name(name: str) -> str:
    """A kernel's C++ name without its return type, template arguments and parameters
    ('void at::native::(anonymous namespace)::CatArrayBatchedCopy<...>(...)' -> 'at::native::CatArrayBatchedCopy');
    op names (aten::mm) are unchanged. Nothing is cut: a table wraps a long name."""
    n = name.removeprefix("void ").replace("(anonymous namespace)::", "")
    m = _TEMPLATE.search(n)
    if m and m.start() > 0:
        n = n[: m.start()].rstrip()
    return n


def _time(seconds: float | None) -> str:
    """fmt_time, down to picoseconds (the bound of a few-element op)."""
    if seconds is None:
        return "?"
    if 0 < abs(seconds) < 1e-9:
        return f"{seconds * 1e12:.3g} ps"
    return fmt_time(seconds) if seconds >= 0 else "-" + fmt_time(-seconds)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}" if x < 10 else ">999%"


def _lost(r: OpRow) -> str:
    if r.unknown_s > 0:
        return "≤ " + _time((r.lost_s or 0.0) + r.unknown_s)
    return _time(r.lost_s) if r.lost_s is not None else "-"


def summary_parts(r: TraceReport) -> list[str]:
    """The summary line, in parts (a line breaks only between them)."""
    s = r.summary
    what = "step" if s.steps == 1 else f"{s.steps} steps" if s.steps > 1 else "trace"
    parts = [f"{what} {fmt_time(s.wall_s)} wall"]
    if s.busy_fraction is not None:
        parts.append(f"GPU busy {fmt_time(s.gpu_busy_s)} ({_pct(s.busy_fraction)})")
    if s.modelled_s > 0:
        sol = f" ({_pct(s.speed_of_light_fraction)} of speed of light)" if s.speed_of_light_fraction is not None else ""
        parts.append(f"at the bound {_time(s.at_bound_s)}{sol}")
    else:
        parts.append("no op has a FLOP and byte model")
    if s.idle_s > s.gpu_busy_s:  # the GPUs waited longer than they worked: the host paces the run
        parts.append(f"most time lost: the GPU waits for the host {_time(s.idle_s)}")
        if s.most_lost is not None and s.most_lost_s is not None:
            parts.append(f"of the ops, {short_name(s.most_lost)} {_time(s.most_lost_s)}")
    elif s.most_lost is not None and s.most_lost_s is not None:
        parts.append(f"most time lost: {short_name(s.most_lost)} {_time(s.most_lost_s)}")
    return parts


def summary_line(r: TraceReport) -> str:
    return " · ".join(summary_parts(r))


def _lines(parts: list[str], width: int) -> list[str]:
    """Parts joined with ' · ', broken only between parts (never inside '23.1 ms')."""
    lines: list[str] = []
    for p in parts:
        if lines and len(lines[-1]) + 3 + len(p) <= width:
            lines[-1] += " · " + p
        else:
            lines.append(p)
    return lines


def _table(cols: dict[str, list[str]], width: int, name: str, drop: tuple[str, ...]) -> Any:
    """A table whose numbers are never cut: columns in ``drop`` are left out, in that order,
    while the numbers and a 12-character name column would not fit ``width``; the name column
    takes what is left and wraps."""
    from rich import box
    from rich.table import Table

    def need(keys: list[str]) -> int:
        return sum(2 + (12 if k == name else max(len(k), *(len(v) for v in cols[k]))) for k in keys)

    keys = list(cols)
    for k in drop:
        if need(keys) <= width:
            break
        keys.remove(k)
    t = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    for k in keys:
        if k == name:
            t.add_column(k, ratio=1, min_width=12, overflow="fold")
        else:
            t.add_column(k, justify="left" if k == "kind" else "right", no_wrap=True)
    for i in range(len(cols[name])):
        t.add_row(*(cols[k][i] for k in keys))
    return t


def render_report(c: Console, r: TraceReport, top: int = 20) -> None:
    s = r.summary
    width = c.width
    for line in _lines(summary_parts(r), width):
        c.print(f"[bold]{esc(line)}[/bold]", overflow="fold")
    detail = [f"{s.kernels:,} GPU activities in {s.calls:,} calls", f"{fmt_time(s.kernel_s)} of GPU time"]
    if s.modelled_s > 0:
        detail.append(f"if every op ran at its bound: {_time(s.at_bound_s)}")
    if s.unknown_s > 0:
        share = f" ({s.unknown_s / s.kernel_s:.0%})" if s.kernel_s > 0 else ""
        detail.append(f"no model: {fmt_time(s.unknown_s)}{share}")
    detail.append(f"idle {fmt_time(s.idle_s)}")
    if s.communication_s:
        detail.append(f"communication {fmt_time(s.communication_s)} ({fmt_time(s.communication_exposed_s)} exposed)")
    detail.append(f"on {r.hardware_name}")
    for line in _lines(detail, width):
        c.print(esc(line), overflow="fold")

    rows = r.ops if top <= 0 else r.ops[:top]
    cols: dict[str, list[str]] = {
        "op": [esc(short_name(o.name)) for o in rows],
        "kind": [o.kind for o in rows],
        "calls": [f"{o.calls:,}" for o in rows],
        "GPU": [fmt_time(o.gpu_s) for o in rows],
        "bound": [_time(o.bound_s) for o in rows],
        "SOL": [_pct(o.fraction) for o in rows],
        "lost": [_lost(o) for o in rows],
        "occ": [_pct(o.occupancy) for o in rows],
    }
    c.print(_table(cols, width, name="op", drop=("occ", "kind", "calls", "SOL", "bound")))
    rest = r.ops[len(rows) :]
    if rest:
        gpu = sum(o.gpu_s for o in rest)
        c.print(f"[dim]and {len(rest)} more ops, {esc(fmt_time(gpu))} of GPU time (--top 0 shows all)[/dim]")
    kinds: dict[str, list[str]] = {
        "kind": [k.kind for k in r.kinds],
        "calls": [f"{k.calls:,}" for k in r.kinds],
        "GPU": [fmt_time(k.gpu_s) for k in r.kinds],
        "bound": [_time(k.bound_s) for k in r.kinds],
        "SOL": [_pct(k.fraction) for k in r.kinds],
        "lost": [_time(k.lost_s) if k.lost_s is not None else "-" for k in r.kinds],
        "no model": [fmt_time(k.unknown_s) if k.unknown_s else "-" for k in r.kinds],
    }
    c.print(_table(kinds, width, name="kind", drop=("no model", "calls", "SOL", "bound")))
    c.print(
        "[dim]bound: max(FLOPs / peak, bytes / bandwidth) of each call, summed; SOL: bound / GPU time; "
        "lost: GPU time - bound (≤: calls with no model counted whole); occ: occupancy of the launches[/dim]"
    )
    for n in r.notes:
        c.print(f"[yellow]note:[/yellow] {esc(n)}")


__all__ = ["render_report", "short_name", "summary_line", "summary_parts"]

"""Charts drawn with characters, for terminals: log-log lines and points, and sparklines."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from .units import fmt_time, si


@dataclass
class Series:
    label: str
    points: list[tuple[float, float]]
    char: str
    line: bool = True
    labels: list[str] = field(default_factory=list)  # per point, for scatter series


def loglog(series: list[Series], width: int = 64, height: int = 18, x_unit: str = "", y_unit: str = "") -> str:
    pts = [(x, y) for s in series for x, y in s.points if x > 0 and y > 0 and math.isfinite(x) and math.isfinite(y)]
    if not pts:
        return "(nothing to draw)"
    lx = [math.log10(x) for x, _ in pts]
    ly = [math.log10(y) for _, y in pts]
    x0, x1 = math.floor(min(lx)), math.ceil(max(lx))
    y0, y1 = math.floor(min(ly)), math.ceil(max(ly))
    x1 = x1 if x1 > x0 else x0 + 1
    y1 = y1 if y1 > y0 else y0 + 1
    grid = [[" "] * width for _ in range(height)]

    def cell(x: float, y: float) -> tuple[int, int] | None:
        if x <= 0 or y <= 0:
            return None
        cx = round((math.log10(x) - x0) / (x1 - x0) * (width - 1))
        cy = round((math.log10(y) - y0) / (y1 - y0) * (height - 1))
        if 0 <= cx < width and 0 <= cy < height:
            return cx, height - 1 - cy
        return None

    for s in series:
        if s.line and len(s.points) > 1:
            for (xa, ya), (xb, yb) in zip(s.points, s.points[1:], strict=False):
                for i in range(4 * width + 1):
                    t = i / (4 * width)
                    x = 10 ** (math.log10(xa) + t * (math.log10(xb) - math.log10(xa)))
                    y = 10 ** (math.log10(ya) + t * (math.log10(yb) - math.log10(ya)))
                    c = cell(x, y)
                    if c and grid[c[1]][c[0]] == " ":
                        grid[c[1]][c[0]] = s.char
    for s in series:
        if not s.line:
            for i, (x, y) in enumerate(s.points):
                c = cell(x, y)
                if c:
                    grid[c[1]][c[0]] = s.labels[i] if i < len(s.labels) else s.char
    label_w = 11
    tick_rows = {round((y1 - d) / (y1 - y0) * (height - 1)): d for d in range(y0, y1 + 1)}
    lines = []
    for r, row in enumerate(grid):
        lab = ""
        if r in tick_rows:
            v = 10 ** tick_rows[r]
            lab = fmt_time(v) if y_unit == "s" else si(v, y_unit, digits=2)
        lines.append(f"{lab:>{label_w}} |" + "".join(row))
    lines.append(" " * label_w + " +" + "-" * width)
    ticks = [" "] * (width + 12)
    for d in range(x0, x1 + 1):
        pos = round((d - x0) / (x1 - x0) * (width - 1))
        text = si(10**d, "", digits=2).strip()
        for j, ch in enumerate(text):
            if pos + j < len(ticks):
                ticks[pos + j] = ch
    lines.append(" " * (label_w + 2) + "".join(ticks).rstrip() + (f"  {x_unit}" if x_unit else ""))
    for s in series:
        if s.line:
            lines.append(f"  {s.char * 3}  {s.label}")
    return "\n".join(lines)


SPARK = " ▁▂▃▄▅▆▇█"


def sparkline(values: list[float], width: int = 64) -> tuple[str, list[int]]:
    """Values in [0, 1] as block characters; returns the line and the source index of each column."""
    n = len(values)
    cols = min(width, n)
    idx = [min(n - 1, round(i * (n - 1) / max(cols - 1, 1))) for i in range(cols)]
    line = "".join(SPARK[min(8, max(0, round(values[i] * 8)))] for i in idx)
    return line, idx

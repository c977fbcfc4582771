"""Charts written to files with matplotlib (the optional 'plot' extra), imported only here."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .errors import DomainError, InputError
from .output import check_output_path, write_atomic
from .units import si

FORMATS = ("png", "svg", "pdf")
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#e377c2", "#17becf"]


def check_output(path: str) -> str:
    """Validate an output path before any work: known extension, writable folder. Returns the format."""
    ext = Path(path).suffix.lower().lstrip(".")
    if ext not in FORMATS:
        raise InputError(
            f"{path}: unknown chart format {('.' + ext) if ext else '(no extension)'}; use .png, .svg or .pdf"
        )
    check_output_path(path)
    return ext


def _pyplot() -> Any:
    try:
        import matplotlib
    except ImportError:
        raise DomainError(
            "writing chart files needs matplotlib: pip install 'roofcalc[plot]' "
            "(terminal charts need nothing: leave out -o/--plot)"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _save(fig: Any, path: str, fmt: str) -> None:
    write_atomic(
        path,
        lambda tmp: fig.savefig(
            tmp, format=fmt, dpi=120, bbox_inches="tight", metadata={"Date": None} if fmt == "svg" else None
        ),
    )


def _roofline_axes(plt: Any, ax: Any, lo: float, hi: float, ylabel: str) -> None:
    """Log-log axes of a roofline over intensities lo..hi, FLOP/s in SI units, a grid and the legend."""
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_xlabel("arithmetic intensity (FLOP/byte)")
    ax.set_ylabel(ylabel)
    ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: si(v, "FLOP/s", digits=2)))
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")


def save_roofline(chart: Any, path: str) -> None:
    fmt = check_output(path)
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 5.5))
    xs = [p.intensity for p in chart.points] + [r.ridge for r in chart.roofs]
    lo, hi = min([*xs, 1.0]) / 4, max([*xs, 1.0]) * 4
    hw_ids = list(dict.fromkeys(r.hardware.removesuffix("-measured") for r in chart.roofs))
    for r in chart.roofs:
        color = COLORS[hw_ids.index(r.hardware.removesuffix("-measured")) % len(COLORS)]
        style = "--" if r.calibrated else "-"
        x = [lo, r.ridge, hi]
        y = [r.bandwidth_bytes_per_s * lo, r.peak_flops_per_s, r.peak_flops_per_s]
        kind = "measured" if r.calibrated else "datasheet"
        ax.plot(x, y, style, color=color, lw=1.8, label=f"{r.hardware} {r.dtype} ({kind}), ridge {r.ridge:.0f} FLOP/B")
        ax.plot([r.ridge], [r.peak_flops_per_s], "o", color=color, ms=5)
    # points at the same place (e.g. one op on two parts with equal peaks) share one label
    spots: dict[tuple[float, float], list[Any]] = {}
    for p in chart.points:
        spots.setdefault((round(p.intensity, 9), round(p.attainable_flops_per_s, 3)), []).append(p)
    for (xv, yv), group in spots.items():
        color = COLORS[hw_ids.index(group[0].hardware) % len(COLORS)] if group[0].hardware in hw_ids else "black"
        ax.plot([xv], [yv], "s", color=color, ms=6, mec="black")
        label = group[0].label
        if len(hw_ids) > 1:
            label += " (" + ", ".join(p.hardware for p in group) + ")"
        ax.annotate(label, (xv, yv), textcoords="offset points", xytext=(-10, 10), fontsize=8, ha="right")
    # expected points: the FLOP/s the op achieves at its expected time, below its bound (hollow)
    expected = [p for p in chart.points if p.expected_flops_per_s]
    for i, p in enumerate(expected):
        color = COLORS[hw_ids.index(p.hardware) % len(COLORS)] if p.hardware in hw_ids else "black"
        ax.plot([p.intensity, p.intensity], [p.expected_flops_per_s, p.attainable_flops_per_s], ":", color=color, lw=1)
        ax.plot(
            [p.intensity],
            [p.expected_flops_per_s],
            "o",
            mfc="none",
            color=color,
            ms=6,
            label="expected (at the expected time)" if i == 0 else None,
        )
    _roofline_axes(plt, ax, lo, hi, "attainable FLOP/s")
    ax.set_ylim(top=max(r.peak_flops_per_s for r in chart.roofs) * 3)
    ax.set_title("roofline")
    _save(fig, path, fmt)
    plt.close(fig)


def save_sweep(sw: Any, path: str) -> None:
    fmt = check_output(path)
    plt = _pyplot()
    fig, (a1, a2) = plt.subplots(1, 2, figsize=(11, 4.5))
    for i, hw in enumerate(sw.hardware):
        rows = [r for r in sw.rows if r.hardware == hw]
        xs = [r.value for r in rows]
        color = COLORS[i % len(COLORS)]
        a1.plot(xs, [r.result.predicted_s for r in rows], "o-", color=color, ms=3, label=f"{hw} bound")
        exp = [(r.value, r.result.expected_s) for r in rows if r.result.expected_s is not None]
        if exp:
            a1.plot(*zip(*exp, strict=True), "s--", color=color, ms=3, label=f"{hw} expected")
        a2.plot(xs, [r.result.attainable_flops_per_s for r in rows], "o-", color=color, ms=3, label=hw)
        cross = sw.crossover[hw]["value"]
        if cross is not None:
            for a in (a1, a2):
                a.axvline(cross, color=color, ls=":", lw=1)
            a2.annotate(
                f"compute-bound from {sw.param}={cross}",
                (cross, rows[-1].result.attainable_flops_per_s),
                fontsize=8,
                color=color,
                rotation=90,
                va="top",
                ha="right",
            )
    for a, ylabel in ((a1, "time (s): bound and expected"), (a2, "attainable FLOP/s")):
        a.set_xscale("log", base=2)
        a.set_yscale("log")
        a.set_xlabel(sw.param)
        a.set_ylabel(ylabel)
        a.grid(True, alpha=0.3)
        a.legend(fontsize=8)
    a2.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: si(v, "FLOP/s", digits=2)))
    fig.suptitle(f"sweep of {sw.op} over {sw.param}")
    _save(fig, path, fmt)
    plt.close(fig)


def save_occupancy(oc: Any, path: str) -> None:
    fmt = check_output(path)
    plt = _pyplot()
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.8))
    for ax, cv in zip(axes, oc.curves, strict=True):
        xs = [x / 1024 for x in cv.x] if cv.unit == "bytes" else cv.x
        cur = cv.current / 1024 if cv.unit == "bytes" else cv.current
        ax.step(xs, [100 * o for o in cv.occupancy], where="post", color=COLORS[0])
        ax.axvline(cur, color=COLORS[1], ls="--", lw=1)
        ax.set_xlabel(cv.variable + (" (KiB)" if cv.unit == "bytes" else ""))
        ax.set_ylabel("occupancy (%)")
        ax.set_ylim(0, 105)
        ax.grid(True, alpha=0.3)
    fig.suptitle(f"occupancy on {oc.hardware} (dashed: this configuration)")
    _save(fig, path, fmt)
    plt.close(fig)


def save_trace_roofline(report: Any, hw: Any, path: str) -> None:
    """A traced run on the roofline: each op with a FLOP and byte model a point at its intensity and
    the FLOP/s it achieved over its GPU time, its area proportional to that time; the card's roof."""
    fmt = check_output(path)
    plt = _pyplot()
    ops = [o for o in report.ops if o.bytes > 0 and o.modelled_s > 0]
    fig, ax = plt.subplots(figsize=(8, 5.5))
    peak, bw = hw.peak("bf16"), hw.bandwidth
    xs = [o.flops / o.bytes for o in ops if o.flops > 0] or [1.0]
    lo, hi = min([*xs, peak / bw]) / 4, max([*xs, peak / bw]) * 4
    ax.plot(
        [lo, peak / bw, hi],
        [bw * lo, peak, peak],
        "-",
        color=COLORS[0],
        lw=1.8,
        label=f"{hw.id} bf16 roof, ridge {peak / bw:.0f} FLOP/B",
    )
    longest = max((o.modelled_s for o in ops), default=1.0)
    for i, o in enumerate(sorted(ops, key=lambda o: -o.modelled_s)):
        if o.flops <= 0:
            continue
        x, y = o.flops / o.bytes, o.flops / o.modelled_s
        ax.scatter(
            [x],
            [y],
            s=20 + 600 * o.modelled_s / longest,
            color=COLORS[(i + 1) % len(COLORS)],
            alpha=0.6,
            edgecolors="black",
            linewidths=0.5,
        )
        if i < 8:
            ax.annotate(o.name, (x, y), textcoords="offset points", xytext=(6, 4), fontsize=7)
    _roofline_axes(plt, ax, lo, hi, "achieved FLOP/s (area: GPU time)")
    ax.set_title("traced ops against the roofline")
    _save(fig, path, fmt)
    plt.close(fig)

"""Data behind the charts (roofline, sweep, occupancy curves): pure functions over the engines' results.

The charts (``plot.py`` for files, ``termplot.py`` for the terminal) draw only what these
models hold, so a chart's points are the numbers the tables print.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from .errors import InputError
from .hardware import Hardware
from .opdefs import OpDef
from .record import Record
from .roofline import RooflineResult, evaluate

MAX_SWEEP_POINTS = 200


@dataclass(frozen=True, kw_only=True)
class Roof(Record):
    hardware: str
    dtype: str
    peak_flops_per_s: float
    bandwidth_bytes_per_s: float
    ridge: float
    calibrated: bool


@dataclass(frozen=True, kw_only=True)
class Point(Record):
    label: str
    hardware: str
    dtype: str
    intensity: float
    attainable_flops_per_s: float
    bound: str
    # the FLOP/s achieved if the op takes its expected time (below the roof); None without one
    expected_flops_per_s: float | None = None


@dataclass(frozen=True, kw_only=True)
class RooflineChart(Record):
    version: int = 1
    roofs: list[Roof]
    points: list[Point]
    results: list[RooflineResult]


def _label(op: OpDef, params: dict[str, str]) -> str:
    return op.name + (" " + " ".join(f"{k}={v}" for k, v in params.items()) if params else "")


def _evaluate_spec(op: OpDef, hw: Hardware, params: dict[str, Any]) -> RooflineResult:
    from .resolve import resolve_preset

    params = dict(params)
    preset = None
    if op.presets is not None:
        preset = resolve_preset(
            op, params.pop(op.presets.option, None), params.pop(f"{op.presets.option}_config", None)
        )
    return evaluate(op, hw, params, preset)


def roofline_chart(
    ops: list[tuple[OpDef, dict[str, str]]], hws: list[Hardware], calibrations: list[Hardware] | None = None
) -> RooflineChart:
    results: list[RooflineResult] = []
    points: list[Point] = []
    for hw in hws:
        for op, params in ops:
            r = _evaluate_spec(op, hw, params)
            results.append(r)
            points.append(
                Point(
                    label=_label(op, params),
                    hardware=hw.id,
                    dtype=r.dtype,
                    intensity=r.intensity,
                    attainable_flops_per_s=r.attainable_flops_per_s,
                    bound=r.bound,
                    expected_flops_per_s=(float(r.flops) / r.expected_s) if r.expected_s else None,
                )
            )
    roofs: list[Roof] = []
    for hw in [*hws, *(calibrations or [])]:
        dtypes = sorted({p.dtype for p in points}) or ["bf16"]
        for dt in dtypes:
            if dt in hw.peak_flops_per_s:
                peak = hw.peak(dt)
                roofs.append(
                    Roof(
                        hardware=hw.id,
                        dtype=dt,
                        peak_flops_per_s=peak,
                        bandwidth_bytes_per_s=hw.bandwidth,
                        ridge=peak / hw.bandwidth,
                        calibrated=hw.calibration is not None,
                    )
                )
    return RooflineChart(roofs=roofs, points=points, results=results)


# ------------------------------------------------------------------ sweeps


def parse_range(text: str, steps: int | None = None, linear: bool = False) -> list[int]:
    """'1..16384': powers of two from 1 (the end included); --steps N: N log-spaced (or linear) integers."""
    from .units import parse_int

    shown = text if len(text) <= 40 else text[:30] + "..."
    lo_s, sep, hi_s = text.partition("..")
    if not sep:
        raise InputError(f"{shown!r} is not a range (write A..B, e.g. 1..16384)")
    try:
        lo, hi = parse_int(lo_s), parse_int(hi_s)
    except ValueError as e:
        raise InputError(f"range {shown!r}: {e}") from None
    if lo < 1:
        raise InputError(f"range {shown!r}: the start must be at least 1")
    if hi <= lo:
        raise InputError(f"range {shown!r} is empty or reversed")
    if steps is not None and not 2 <= steps <= MAX_SWEEP_POINTS:
        raise InputError(f"--steps must be 2..{MAX_SWEEP_POINTS} (got {steps})")
    if linear:  # whole numbers: exact at any size (a float step overshot the end past 2^53)
        n = steps or min(hi - lo + 1, 16)
        values = sorted({lo + ((hi - lo) * i + (n - 1) // 2) // (n - 1) for i in range(n)})
    elif steps is not None:  # the ends as given; between them, within the range
        ratio = math.log(hi / lo)
        inner = (round(lo * math.exp(ratio * i / (steps - 1))) for i in range(1, steps - 1))
        values = sorted({lo, hi, *(min(hi, max(lo, v)) for v in inner)})
    else:
        values = []
        v = lo
        while v <= hi:
            values.append(v)
            v *= 2
        if values[-1] != hi:
            values.append(hi)
    if len(values) > MAX_SWEEP_POINTS:
        raise InputError(f"range {shown!r} gives {len(values)} points; at most {MAX_SWEEP_POINTS} (use --steps)")
    return values


@dataclass(frozen=True, kw_only=True)
class SweepRow(Record):
    hardware: str
    value: int
    result: RooflineResult


@dataclass(frozen=True, kw_only=True)
class Sweep(Record):
    version: int = 1
    op: str
    param: str
    values: list[int]
    hardware: list[str]
    rows: list[SweepRow]
    crossover: dict[str, Any]


def sweep(
    op: OpDef,
    hws: list[Hardware],
    param: str,
    values: list[int],
    fixed: dict[str, Any],
    preset: dict[str, Any] | None = None,
    label: str | None = None,
) -> Sweep:
    """Evaluate ``op`` at each value of ``param``; the crossover once per device."""
    from .roofline import crossover

    rows = [
        SweepRow(hardware=hw.id, value=v, result=evaluate(op, hw, {**fixed, param: v}, preset))
        for hw in hws
        for v in values
    ]
    cross = {hw.id: crossover(op, hw, param, fixed, preset, label).model_dump(mode="json") for hw in hws}
    return Sweep(op=op.name, param=param, values=values, hardware=[h.id for h in hws], rows=rows, crossover=cross)


# ------------------------------------------------------------------ occupancy curves


@dataclass(frozen=True, kw_only=True)
class Curve(Record):
    variable: str
    unit: str
    x: list[int]
    occupancy: list[float]
    current: int


@dataclass(frozen=True, kw_only=True)
class OccupancyCurves(Record):
    version: int = 1
    hardware: str
    curves: list[Curve]


def occupancy_curves(
    hw: Hardware, threads: int, regs: int, smem: int, static_smem: int = 0, carveout: int | None = None
) -> OccupancyCurves:
    """The three graphs of NVIDIA's occupancy calculator, the current configuration marked."""
    from .occupancy_solver import blocks_per_sm, occupancy_fraction

    carve = -1 if carveout is None else carveout
    warp = hw.sm_value("warp_size") or 32
    top_threads = hw.sm_value("max_threads_per_block") or 1024
    top_regs = hw.sm_value("max_registers_per_thread") or 255
    top_smem = (hw.sm_value("shared_memory_per_block_optin_bytes") or 0) - static_smem

    def occ(t: int, r: int, s: int) -> float:
        return occupancy_fraction(hw, t, blocks_per_sm(hw, t, r, s, static_smem, carve)[0])

    xs_t = sorted({*range(warp, top_threads + 1, warp), threads})
    xs_r = list(range(1, top_regs + 1))
    step = max(1024, top_smem // 128 // 1024 * 1024)
    xs_s = sorted({*range(0, top_smem + 1, step), smem})
    return OccupancyCurves(
        hardware=hw.id,
        curves=[
            Curve(
                variable="threads per block",
                unit="threads",
                x=xs_t,
                occupancy=[occ(t, regs, smem) for t in xs_t],
                current=threads,
            ),
            Curve(
                variable="registers per thread",
                unit="registers",
                x=xs_r,
                occupancy=[occ(threads, r, smem) for r in xs_r],
                current=regs,
            ),
            Curve(
                variable="shared memory per block",
                unit="bytes",
                x=xs_s,
                occupancy=[occ(threads, regs, s) for s in xs_s],
                current=smem,
            ),
        ],
    )

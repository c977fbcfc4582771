"""Predict one step of a traced implementation (roofcalc.impl.spec) at other sizes.

Two mechanisms, each with figures read off the trace itself:

- **Each kernel** keeps its fixed cost (the shortest kernel of its kind in the trace) and scales
  the rest of its traced time with its op's speed-of-light time at the new shapes (FLOPs and
  compulsory bytes from the shapes, against the card's peaks):
  ``t = fixed + (traced - fixed) * bound(new) / bound(traced)``. An op with no FLOP and byte model
  keeps its traced time.
- **The timeline is replayed.** The host issues each kernel at its traced time (profiler cost and
  waits removed, times ``host_scale``); a kernel starts when it is issued and its stream is free;
  at each synchronisation the host waits for the GPU. The step ends when both are done. So a step
  the host paces stays at the host's time while a larger batch fits under it, and a step the GPU
  paces grows with its kernels.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..record import Record

if TYPE_CHECKING:
    from ..hardware import Hardware
    from .spec import ImplFile, ImplKernel


@dataclass(frozen=True, kw_only=True)
class ImplPrediction(Record):
    implementation: str
    sizes: dict[str, int]
    step_s: float
    gpu_busy_s: float
    host_s: float  # the host's own time for the step (its issue timeline, waits excluded)
    limiter: str  # host or gpu: whose own time is the larger
    kernels: int
    scaled_kernels: int  # kernels whose time follows their op's bound
    by_kind_s: dict[str, float]


def _bound_s(k: ImplKernel, dims: Any, hw: Hardware) -> float | None:
    """The op call's speed-of-light time at ``dims`` (None: no FLOP and byte model for it)."""
    from ..trace.opcost import Cost, op_cost

    if k.op is None:
        return None
    cost = op_cost(k.op, dims, k.types, k.concrete, (k.name,))
    if not isinstance(cost, Cost):
        return None
    t_mem = cost.bytes / hw.bandwidth
    t_flop = 0.0
    if cost.flops and cost.dtype is not None:
        try:
            t_flop = cost.flops / hw.peak(cost.dtype)
        except Exception:
            t_flop = 0.0
    return max(t_mem, t_flop)


MAX_SIZE = 2**48  # one tensor dimension (the trace reader's limit)


def _eval_dims(dims: Any, env: dict[str, int], cache: dict[str, Any]) -> Any:
    """Shapes with formulas evaluated at ``env`` (batch, context or seq); ValueError for a formula
    that fails there or gives no size (a fraction, a negative, a string, past MAX_SIZE)."""
    import math

    from ..formula import EvalError, Formula, FormulaError

    if isinstance(dims, list):
        return [_eval_dims(d, env, cache) for d in dims]
    if isinstance(dims, str):
        try:
            f = cache.get(dims)
            if f is None:
                f = cache[dims] = Formula(dims, names=env.keys())
            v = f.evaluate(env)
        except (EvalError, FormulaError, ArithmeticError, ValueError, TypeError) as e:
            raise ValueError(f"{dims!r:.60} fails at {env}: {e}") from None
        if not (isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)) or not (
            v == int(v) and 0 <= v <= MAX_SIZE
        ):
            raise ValueError(f"{dims!r:.60} is {v!r:.40} at {env}, not a size (a whole number from 0 to 2^48)")
        return int(v)
    return dims


def kernel_times(impl: ImplFile, hw: Hardware, env: dict[str, int], label: str = "") -> tuple[list[float], int]:
    """Each kernel's time (seconds) at ``env``, and how many followed their op's bound. A shape
    formula that fails at ``env`` is an InputError naming the file (``label``) and the kernel."""
    traced = impl.traced
    cache: dict[str, Any] = {}
    work: dict[int, tuple[float, float] | None] = {}  # per op call: bound as traced, and at env
    out: list[float] = []
    scaled = 0
    for i, k in enumerate(impl.kernels):
        if k.call not in work:
            work[k.call] = None
            if k.dims is not None:
                try:
                    dims_old, dims_new = _eval_dims(k.dims, traced, cache), _eval_dims(k.dims, env, cache)
                except ValueError as e:
                    raise InputError(f"{label or impl.name}: kernels.{i}.dims: {e}") from None
                old = _bound_s(k, dims_old, hw)
                new = _bound_s(k, dims_new, hw)
                if old is not None and new is not None and old > 0:
                    work[k.call] = (old, new)
        w = work[k.call]
        if w is None:
            out.append(k.measured_us * 1e-6)
            continue
        scaled += 1
        fixed = min(impl.fixed_us.get(k.kind, 0.0), k.measured_us) * 1e-6
        out.append(fixed + _variable_time(k.measured_us * 1e-6 - fixed, *w))
    return out, scaled


def _variable_time(t_old: float, x_old: float, x_new: float) -> float:
    """A kernel's time beyond its fixed cost at new work: its traced time, scaled with its op's
    speed-of-light time (the kernel keeps the rate it ran at). A latency-paced alternative, which
    keeps a slow kernel's time until the card's achievable rate binds (max(t_old, x_new /
    fraction)), was tried on the development set (validation/traces/h200/hf1) and did worse there
    (57 of 72 predictions in band against 66)."""
    return t_old * x_new / x_old


def replay(impl: ImplFile, times: list[float], host_scale: float) -> tuple[float, float, float]:
    """(step, GPU busy, host) seconds: the host issues at its traced times x host_scale, kernels
    run in issue order on their streams, and at each sync the host waits for the GPU."""
    syncs = sorted(s * 1e-6 * host_scale for s in impl.syncs_us)
    free: dict[int, float] = {}
    shift = 0.0  # how much later the host runs than traced, from waiting on a slower GPU
    si = 0
    busy = 0.0
    for k, t in zip(impl.kernels, times, strict=True):
        issue = k.issue_us * 1e-6 * host_scale
        while si < len(syncs) and syncs[si] <= issue:
            gpu_done = max(free.values(), default=0.0)
            shift = max(shift, gpu_done - syncs[si])
            si += 1
        start = max(issue + shift, free.get(k.stream, 0.0))
        free[k.stream] = start + t
        busy += t
    host = impl.host_end_us * 1e-6 * host_scale
    gpu_end = max(free.values(), default=0.0)
    for s in syncs[si:]:
        shift = max(shift, gpu_end - s)
    return max(host + shift, gpu_end), busy, host


def predict(impl: ImplFile, hw: Hardware, sizes: dict[str, int], label: str = "") -> ImplPrediction:
    """The step of ``impl`` at ``sizes`` (batch and context, or batch and seq) on ``hw``."""
    names = impl.names()
    missing = [n for n in names if n not in sizes]
    if missing:
        raise InputError(f"{impl.name}: give --{missing[0]} (the implementation's shapes follow it)")
    env = {n: int(sizes[n]) for n in names}
    times, scaled = kernel_times(impl, hw, env, label)
    step, busy, host = replay(impl, times, impl.host_scale)
    by_kind: dict[str, float] = {}
    for k, t in zip(impl.kernels, times, strict=True):
        by_kind[k.kind] = by_kind.get(k.kind, 0.0) + t
    return ImplPrediction(
        implementation=impl.name,
        sizes=env,
        step_s=step,
        gpu_busy_s=busy,
        host_s=host,
        limiter="host" if host >= busy else "gpu",  # the larger of the host's own time and the GPU's
        kernels=len(times),
        scaled_kernels=scaled,
        by_kind_s=dict(sorted(by_kind.items(), key=lambda kv: -kv[1])),
    )


def host_scale_for(impl: ImplFile, hw: Hardware, measured_step_s: float) -> float:
    """The factor on the host timeline that makes the replayed traced step last measured_step_s
    (the step timed without the profiler): the profiler's cost that the overhead figures miss.
    Where the GPU paces the traced step, the step time says only that the host took no longer:
    the factor is then at most 1 (it never stretches the host to fill the GPU's time)."""
    from ..units import fmt_time

    times, _ = kernel_times(impl, hw, dict(impl.traced))
    _, busy1, host1 = replay(impl, times, 1.0)
    lo, hi = SCALE_RANGE
    gpu_only = replay(impl, times, lo)[0]
    if gpu_only >= measured_step_s:
        # the traced kernels alone fill the step: the GPU paces it, and its time says nothing of the
        # host's but that it took no longer; the host keeps its traced time (profiler cost removed).
        # Far shorter than the kernels (by more than the profiler's own slowing of them) is another step.
        if measured_step_s >= GPU_PACED_TOLERANCE * gpu_only:
            return 1.0
        raise InputError(
            f"--step-time {fmt_time(measured_step_s)}: the traced step's kernels alone take "
            f"{fmt_time(replay(impl, times, lo)[0])}; give the time of this same step without the profiler"
        )
    if replay(impl, times, hi)[0] <= measured_step_s:
        raise InputError(
            f"--step-time {fmt_time(measured_step_s)}: over {hi:g}x what the trace shows "
            f"({fmt_time(replay(impl, times, 1.0)[0])}); give the time of this same step, in seconds or with a unit"
        )
    fitted = _solve_scale(impl, times, measured_step_s)
    return min(fitted, 1.0) if busy1 > host1 else fitted  # GPU-paced: the host took at most its traced time


SCALE_RANGE = (0.05, 20.0)  # the host's scale a step time may set: beyond, the time is not of this step
GPU_PACED_TOLERANCE = 0.8  # a step timed this much faster than its traced kernels is not the same step


def _solve_scale(impl: ImplFile, times: list[float], measured_step_s: float) -> float:
    lo, hi = SCALE_RANGE
    for _ in range(60):
        mid = (lo + hi) / 2
        if replay(impl, times, mid)[0] < measured_step_s:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2

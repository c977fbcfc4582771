"""Accuracy reports: saved GPU timings against the engines, recomputed with the current code.

A measurement file (validation/bench/ops_bench.py or llm_bench.py output) holds what ran and
how long it took; nothing in it depends on roofcalc. This module evaluates each case with
the current model (bound and expected time) and summarises measured / expected.
"""

from __future__ import annotations

import math
import statistics
from typing import Any, TypeGuard

from pydantic import BaseModel, ConfigDict, Field

from .errors import CheckError, InputError
from .hardware import Hardware, PositiveFigure
from .output import SCHEMA_VERSION

# the accuracy targets of the expected-time model
TARGET_BAND = (0.8, 1.25)
OUTER_BAND = (0.5, 2.0)
REGISTRY_BAND = (0.67, 1.5)
LLM_DECODE_BAND = (0.85, 1.2)
LLM_PREFILL_BAND = (0.8, 1.25)


class CaseResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    label: str
    op: str
    params: dict[str, Any]
    measured_s: float
    bound_s: float
    expected_s: float | None
    ratio: float | None  # measured / expected
    bound_ratio: float  # measured / bound
    why: str  # the largest expected term and its reason
    # what limits the expected time (the model's expected_limiter): "host" where the host's issue
    # paces the step, though its wait need not be the largest term (a GPU's kernels can be larger)
    limiter: str | None = None
    # a step issued from Python: its host paces it, or would at the slow end of the card's hosts
    # (RooflineResult.expected_host_exposed); the band such a step prints is the host-paced one's
    host_exposed: bool | None = None
    band: tuple[float, float] = TARGET_BAND  # the target band of this kind of case
    error: str | None = None


class Summary(BaseModel):
    model_config = ConfigDict(frozen=True)

    cases: int
    evaluated: int
    median_ratio: float | None
    share_in_band: float | None
    band: tuple[float, float]
    outside_outer: int
    min_bound_ratio: float | None
    share_in_registry_band: float | None = None


class Report(BaseModel):
    model_config = ConfigDict(frozen=True)

    version: int = SCHEMA_VERSION
    kind: str
    source: str
    device: str
    hardware: str
    calibrated: bool
    date: str | None
    command: str | None
    driver: str | None
    summary: Summary
    worst: list[CaseResult]
    cases: list[CaseResult]
    # measured cases the model refuses (e.g. a context beyond the model's maximum), with why
    refused: list[str] = Field(default_factory=list)
    # the host's figures taken from host_rate.py records of the same call (--host-rate), if any
    host_rate: str | None = None


# a measured GPU time outside these is no timing (a unit slip, a corrupt file): refused, not averaged
MIN_MEASURED_S = 1e-7  # a kernel plus its launch never takes under 100 ns
MAX_MEASURED_S = 86_400.0  # a day
MAX_OP_CASES = 20_000  # the largest committed set has 4,290
MAX_LLM_CASES = 1_000  # the largest committed LLM set has a few hundred


def _median(xs: list[float]) -> float | None:
    if not xs:
        return None
    s = sorted(xs)
    n = len(s)
    return s[n // 2] if n % 2 else math.sqrt(s[n // 2 - 1] * s[n // 2])


def summarize(cases: list[CaseResult], band: tuple[float, float] = TARGET_BAND) -> Summary:
    ratios = [c.ratio for c in cases if c.ratio is not None]
    inside = [c for c in cases if c.ratio is not None and c.band[0] <= c.ratio <= c.band[1]]
    outer = [r for r in ratios if not OUTER_BAND[0] <= r <= OUTER_BAND[1]]
    reg = [r for r in ratios if REGISTRY_BAND[0] <= r <= REGISTRY_BAND[1]]
    bounds = [c.bound_ratio for c in cases]
    return Summary(
        cases=len(cases),
        evaluated=len(ratios),
        median_ratio=_median(ratios),
        share_in_band=(len(inside) / len(ratios)) if ratios else None,
        band=band,
        outside_outer=len(outer),
        min_bound_ratio=min(bounds) if bounds else None,
        share_in_registry_band=(len(reg) / len(ratios)) if ratios else None,
    )


def _why(r: Any) -> str:
    if not r.expected_terms:
        return ""
    top = max(r.expected_terms, key=lambda t: t.seconds)
    return f"{top.name}: {top.reason}"


def ops_report(data: dict[str, Any], hw: Hardware, source: str) -> Report:
    """Each op case of an ops_bench.py file, evaluated as a single event-timed op."""

    results: list[CaseResult] = []
    for case in _cases(data, source):
        if case.get("error") or case.get("median_s") is None:
            continue
        label = str(case.get("label") or case.get("op"))
        if not isinstance(case.get("params"), dict):  # (a missing one would be the op's defaults)
            raise InputError(f"{source}: case {label[:80]}: 'params' must be an object of the op's parameters")
        params = dict(case["params"])
        params["dtype"] = case.get("dtype")
        results.append(_case_result(case, label, str(case.get("op")), hw, params, None, source))
    return _report("ops", data, hw, source, results, TARGET_BAND)


def llm_report(data: dict[str, Any], hw: Hardware, source: str, case_host: bool = False) -> Report:
    """Each decode/prefill case of an llm_bench.py file: the decode or prefill op with the
    model's preset, the batch, context or prompt length, engine, CUDA graphs and GPUs. With
    ``case_host``, each case that recorded its host's speed around its own timing is evaluated
    with that (``case_host_op``, ``with_host_op``)."""
    from .presets import get_preset

    results: list[CaseResult] = []
    refused: list[str] = []
    cases = [c for c in _cases(data, source) if not c.get("error") and c.get("median_s") is not None]
    if case_host and not any(HOST_KEYS & c.keys() for c in cases):
        raise InputError(
            f"{source}: no measured case records its host's speed (host_op_s, which "
            "validation/bench/llm_bench.py writes around each step it times without CUDA graphs)"
        )
    for case in cases:
        phase = str(case.get("phase"))
        label = (
            f"{case.get('model')}-{phase}-{case.get('engine')}{'+graphs' if case.get('cuda_graphs') else ''}"
            f"-b{case.get('batch')}-{'c' if phase == 'decode' else 's'}{case.get('context') or case.get('seq')}"
            f"-tp{case.get('gpus', 1)}"
        )
        where = f"{source}: case {label}"
        preset = dict(get_preset(str(_field(case, "model", where))).params)
        if case.get("layers"):
            preset["layers"] = _count(case["layers"], "layers", where)
        params: dict[str, Any] = {
            "batch": _field(case, "batch", where),
            "engine": _field(case, "engine", where),
            "cuda_graphs": bool(case.get("cuda_graphs")),
            "gpus": _count(case.get("gpus", 1), "gpus", where),
            "dtype": "bf16",
        }
        if phase == "decode":
            params["context"] = _field(case, "context", where)
        else:
            params["seq"] = _field(case, "seq", where)
        band = LLM_DECODE_BAND if phase == "decode" else LLM_PREFILL_BAND
        op = case_host_op(case, where) if case_host else None
        hw_case = with_host_op(hw, op, f"{label}'s own hot loop") if op is not None else hw
        try:
            results.append(_case_result(case, label, phase, hw_case, params, preset, source, band, refusable=True))
        except CheckError as e:  # a measured case the op refuses (a context beyond the model's): listed
            refused.append(f"{label}: {e}")
    return _report("llm", data, hw, source, results, LLM_DECODE_BAND, refused)


def _case_result(
    case: dict[str, Any],
    label: str,
    op: str,
    hw: Hardware,
    params: dict[str, Any],
    preset: dict[str, Any] | None,
    source: str,
    band: tuple[float, float] = TARGET_BAND,
    refusable: bool = False,
) -> CaseResult:
    """One measured case against the op's bound and expected time on ``hw``; with
    ``refusable``, a CheckError (the op's own checks refuse the case) reaches the caller."""
    from .opdefs import load_op
    from .roofline import evaluate

    try:
        r = evaluate(load_op(op), hw, params, preset)
    except (KeyError, InputError) as e:
        if refusable and isinstance(e, CheckError):  # the op's own checks refuse it: the caller lists it
            raise
        raise InputError(f"{source}: case {label}: {e}") from None
    measured = case.get("median_s")
    if not _real(measured) or not 0 < measured < math.inf:
        raise InputError(f"{source}: case {label}: median_s is not a positive number of seconds (got {measured!r:.40})")
    if not MIN_MEASURED_S <= measured <= MAX_MEASURED_S:
        raise InputError(
            f"{source}: case {label}: median_s {measured:.3g} s is not a GPU timing "
            f"(expected {MIN_MEASURED_S:g} to {MAX_MEASURED_S:g} s)"
        )
    return CaseResult(
        label=label,
        op=r.op,
        params=params,
        measured_s=measured,
        bound_s=r.predicted_s,
        expected_s=r.expected_s,
        ratio=measured / r.expected_s if r.expected_s else None,
        bound_ratio=measured / r.predicted_s,
        why=_why(r),
        limiter=r.expected_limiter,
        host_exposed=r.expected_host_exposed,
        band=band,
    )


def _cases(data: dict[str, Any], source: str) -> list[dict[str, Any]]:
    cases = data.get("cases")
    if not isinstance(cases, list):
        raise InputError(f"{source}: no 'cases' list: not a measurement file from validation/bench")
    # each case is evaluated by the full model (an LLM step: milliseconds): bounded, so that a small
    # file cannot ask for minutes of work (4,800 MoE steps in 724 kB took 31 s)
    limit = MAX_LLM_CASES if data.get("kind") == "llm" else MAX_OP_CASES
    if len(cases) > limit:
        raise InputError(f"{source}: {len(cases):,} cases; at most {limit:,} in one file (split it)")
    return [c for c in cases if isinstance(c, dict)]


# What a host figure can plausibly be (s): an eager op, a compiled kernel's launch or entry.
HOST_FIGURE_RANGE = (0.5e-6, 10e-3)


def with_host_rates(hw: Hardware, records: list[tuple[str, Any]], device: str | None = None) -> tuple[Hardware, str]:
    """``hw`` with the host's op floor measured by validation/bench/host_rate.py on the machine
    that took the timings: the mean over the records of each one's median. Host-paced steps follow
    their host, which differs between machines of one card by 1.8x (validation/expected/h100*/host*/).
    Compiled code's figures move with that op: the hardware file's own, scaled with its op floor,
    else the fixed multiples of the op (COMPILED_KERNEL_OPS, COMPILED_ENTRY_OPS). The records'
    compiled chains are read and their fit described, not used: it does not follow what compiled
    steps cost (roofcalc/expected/card.py COMPILED_KERNEL_OPS).

    A record that is malformed, implausible or from another device (``device``: the timings')
    is an InputError."""
    from .probe.torch_ops import compiled_floor_fit, positive_seconds

    lo, hi = HOST_FIGURE_RANGE
    ops: list[float] = []
    fits: list[tuple[float, float]] = []
    unfit: list[str] = []
    for path, rec in records:
        if not isinstance(rec, dict) or rec.get("kind") != "host-rate":
            raise InputError(f"{path}: not a record of validation/bench/host_rate.py (no 'kind': host-rate)")
        dev = rec.get("device")
        name = dev.get("name") if isinstance(dev, dict) else None
        if device and not name:
            raise InputError(f"{path}: the record names no device")
        if device and name != device:
            raise InputError(f"{path}: measured on {name!r}, not on the timings' device {device!r}")
        op_rec = rec.get("torch_op")
        try:
            if not isinstance(op_rec, dict):
                raise ValueError("torch_op is not an object")
            if op_rec.get("verified") is not True:
                raise ValueError("torch_op's loop did not verify (its 'verified' is not true)")
            op = statistics.median(positive_seconds(op_rec.get("samples_s"), "torch_op.samples_s"))
            compiled = rec.get("torch_compiled")
            fit, why = compiled_floor_fit(compiled) if compiled is not None else (None, "it has no torch_compiled")
        except ValueError as e:
            raise InputError(f"{path}: {e}") from None
        if not lo <= op <= hi:
            raise InputError(f"{path}: a host op of {op:.3g} s is outside {lo:g}-{hi:g} s: not a host's cost per op")
        ops.append(op)
        if fit is not None and not all(lo <= f <= hi for f in fit):  # described, never used: not a refusal
            why = f"its fit ({fit[0]:.3g} s a kernel, {fit[1]:.3g} s a call) is not a host's cost"
            fit = None
        if fit is None:
            unfit.append(f"{path}: {why}")
        else:
            fits.append(fit)
    names = ", ".join(path for path, _ in records)
    op = sum(ops) / len(ops)
    from .expected import COMPILED_ENTRY_OPS, COMPILED_KERNEL_OPS

    own = hw.expected.compiled_kernel_host_s is not None and hw.expected.compiled_entry_host_s is not None
    if not own:
        whose = f"{COMPILED_KERNEL_OPS:g}x and {COMPILED_ENTRY_OPS:g}x this host's op"
    elif hw.expected.torch_op_floor_s is not None:
        whose = "the hardware file's, scaled with its op floor to this host's"
    else:
        whose = "the hardware file's, as it gives them (it gives no op floor to scale them by)"
    parts = []
    if fits:
        kernel = sum(f[0] for f in fits) / len(fits)
        entry = sum(f[1] for f in fits) / len(fits)
        parts.append(f"the chains' {kernel * 1e6:.2f} us a kernel and {entry * 1e6:.1f} us a call not used")
    if unfit:  # named even beside a record whose chains gave a fit
        parts.append(f"no chain fit: {'; '.join(unfit)}")
    chains = "; ".join(parts)
    said = f"host op {op * 1e6:.2f} us; compiled figures {whose} ({chains}; {names})"
    # a host's speed moves its compiled figures with its op (with_host_op)
    return with_host_op(hw, op, f"mean over {names}"), said


# The fields of an llm_bench.py case that give its host's speed around its timing
HOST_KEYS = frozenset({"host_op_s", "host_op_s_per_rank"})


def _real(v: object) -> TypeGuard[float]:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _field(case: dict[str, Any], key: str, where: str) -> Any:
    if key not in case:
        raise InputError(f"{where}: no {key!r}")
    if case[key] is None:
        raise InputError(f"{where}: {key!r} is null")
    return case[key]


def _count(v: object, key: str, where: str) -> int:
    """A whole positive count of a case (gpus, layers)."""
    if not _real(v) or v != int(v) or v < 1:
        raise InputError(f"{where}: {key} is not a whole positive number (got {v!r:.40})")
    return int(v)


def case_host_op(case: dict[str, Any], where: str) -> float | None:
    """The host's cost per op while a case's steps ran: llm_bench.py's hot loop just before and
    just after its timing (``host_op_s``), their mean; under tensor parallelism the slowest
    rank's (``host_op_s_per_rank``, one record per rank), whose host the others wait for at each
    collective. None where the case recorded none (steps replayed from a CUDA graph) or where a
    hot loop failed its own check (a null figure): the card's figures stand. A malformed or
    implausible record is an InputError."""
    if not HOST_KEYS & case.keys():
        return None
    gpus = _count(case.get("gpus", 1), "gpus", where)
    if gpus > 1:
        ranks = case.get("host_op_s_per_rank")
        if not isinstance(ranks, list) or len(ranks) != gpus:
            raise InputError(
                f"{where}: a case on {gpus} GPUs needs host_op_s_per_rank, one record per rank (got {ranks!r:.60})"
            )
        key = "host_op_s_per_rank"
    else:
        ranks, key = [case.get("host_op_s")], "host_op_s"
    lo, hi = HOST_FIGURE_RANGE
    means: list[float] = []
    for rec in ranks:
        vals = [rec.get(k, "missing") for k in ("before", "after")] if isinstance(rec, dict) else []
        if len(vals) != 2 or not all(v is None or _real(v) for v in vals):
            raise InputError(f"{where}: a record of {key} is not {{before: seconds, after: seconds}} (got {rec!r:.80})")
        if None in vals:  # the hot loop's tensor did not hold its sum: no figure
            return None
        bad = [v for v in vals if not lo <= v <= hi]
        if bad:
            raise InputError(f"{where}: a host op of {bad[0]:.3g} s in {key} is outside {lo:g}-{hi:g} s")
        means.append(float(sum(vals)) / 2)
    return max(means)


def case_host_layer(case: dict[str, Any], where: str) -> float | None:
    """An implementation's own host time per decoder layer while a case's steps ran
    (impl_bench.py --host-layers: ``host_layer_s``, timed just before and just after them), their
    mean; None where the case recorded none. A malformed or implausible record is an InputError."""
    rec = case.get("host_layer_s")
    if rec is None:
        return None
    vals = [rec.get(k) for k in ("before", "after")] if isinstance(rec, dict) else []
    times = [float(v) for v in vals if _real(v) and 0 < v < 1]
    if len(times) != 2:
        raise InputError(
            f"{where}: host_layer_s is not {{before: seconds, after: seconds}} under 1 s (got {rec!r:.80})"
        )
    return sum(times) / 2


def with_host_op(hw: Hardware, op: float, whose: str) -> Hardware:
    """``hw`` with the host's cost per op ``op`` (s), a hot loop of one op; its compiled-call
    figures, where it gives them, scale with it (a host's speed moves both:
    validation/expected/h100/host/jitter1/)."""
    base = hw.expected.torch_op_floor_s
    update: dict[str, Any] = {
        "torch_op_floor_s": PositiveFigure(value=op, source="host-rate", kind="measured", note=whose),
        "impl_host_op_s": None,
    }
    for name in ("compiled_kernel_host_s", "compiled_entry_host_s"):
        fig = getattr(hw.expected, name)
        if fig is not None and base is not None:
            note = f"{fig.value:.3g} s x {op:.3g} / {base.value:.3g} ({whose})"
            update[name] = PositiveFigure(
                value=fig.value * op / base.value, source="host-rate", kind="measured", note=note
            )
    return hw.model_copy(update={"expected": hw.expected.model_copy(update=update)})


def with_impl_pace(hw: Hardware, op: float, whose: str) -> Hardware:
    """``hw`` with an implementation's own pace per op ``op`` (s): its host time per layer over the
    host-op times counted in one (roofcalc.impl.host_layer). Python's issue and the
    implementation's Python are paid at it, native host work at the hot loop's op it leaves."""
    fig = PositiveFigure(value=op, source="host-rate", kind="derived", note=whose)
    return hw.model_copy(update={"expected": hw.expected.model_copy(update={"impl_host_op_s": fig})})


def _report(
    kind: str,
    data: dict[str, Any],
    hw: Hardware,
    source: str,
    results: list[CaseResult],
    band: tuple[float, float],
    refused: list[str] | None = None,
) -> Report:
    dev = data.get("device") or {}
    worst = sorted((c for c in results if c.ratio is not None), key=lambda c: -abs(math.log(c.ratio or 1.0)))[:5]
    return Report(
        kind=kind,
        source=source,
        device=str(dev.get("name", "?")) if isinstance(dev, dict) else "?",
        hardware=hw.id,
        calibrated=hw.calibration is not None,
        date=data.get("date"),
        command=data.get("command"),
        driver=data.get("driver"),
        summary=summarize(results, band),
        worst=worst,
        cases=results,
        refused=refused or [],
    )


__all__ = ["CaseResult", "Report", "Summary", "llm_report", "ops_report", "summarize"]

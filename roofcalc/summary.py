"""The answer first: one summary of an op or LLM-step result (expected time with its band, tokens
per second where they apply, the bound named as the bound, whether it fits).

The band is data, not a guess: the spread of measured / expected over the committed validation
cases of the same kind (roofcalc/bands.json, written by validation/expected/make_bands.py from
the committed reports). Pure functions; the band file is read once, lazily, from the package.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .record import Record
from .units import fmt_time, fmt_time_range, si

if TYPE_CHECKING:
    from .roofline import RooflineResult

LLM_OPS = ("decode", "prefill")


@dataclass(frozen=True, kw_only=True)
class Band(Record):
    kind: str
    low: float  # measured / expected, p5 (or the minimum with few cases)
    high: float
    median: float
    cases: int
    spread: str  # "p5-p95" or "min-max"
    sample: str  # in-sample (the model was tuned on such cases) or hold-out
    cards: str  # the cards the cases ran on


@dataclass(frozen=True, kw_only=True)
class Summary(Record):
    """What `roofcalc op` answers, in one place: printed first, and first in the JSON."""

    text: str
    implementation: str | None
    expected_s: float | None
    expected_low_s: float | None
    expected_high_s: float | None
    band: Band | None
    band_note: str
    expected_tokens_per_s: float | None
    bound_s: float
    bound: str
    bound_tokens_per_s: float | None
    fits: bool | None
    memory_needed_bytes: float | None
    memory_usable_bytes: float | None


@functools.cache
def _bands() -> dict[str, Any]:
    from importlib.resources import files

    data: dict[str, Any] = json.loads(files("roofcalc").joinpath("bands.json").read_text(encoding="utf-8"))
    return data


def _impl_key(params: dict[str, Any]) -> str:
    """The named implementation (impls/) of an LLM step's parameters as bands.json names it: the
    reference model eager or compiled keeps its old name (reference-eager, reference-compiled)."""
    impl = params.get("impl")
    if not (isinstance(impl, str) and impl):  # --engine alone names reference or compiled
        impl = "compiled" if params.get("engine") == "compiled" else "reference"
    if impl in ("reference", "compiled"):
        return f"reference-{'compiled' if impl == 'compiled' else 'eager'}"
    # a step whose cuDNN plans are cached (--cudnn-plans-cached) builds none: its band apart
    return impl + ("-plans-cached" if params.get("cudnn_plans_cached") else "")


def implementation_of(op: str, params: dict[str, Any]) -> str | None:
    """The implementation whose kernels the expected time models (LLM steps only)."""
    if op not in LLM_OPS:
        return None
    return _impl_key(params) + ("+graphs" if params.get("cuda_graphs") else "")


def band_kind(op: str, params: dict[str, Any]) -> str:
    """The key of bands.json that a result belongs to (validation/expected/make_bands.py: kind_of)."""
    if op not in LLM_OPS:
        return op
    graphs = "graphs" if params.get("cuda_graphs") else "python"
    gpus = params.get("gpus")
    tp = "tp" if isinstance(gpus, int) and gpus > 1 else "1gpu"
    return f"{op}/{_impl_key(params)}/{graphs}/{tp}"


def pace(limiter: str | None, exposed: bool | None = None) -> str | None:
    """Whose own time paces a step in the model, as bands are kept: "host" where the host's is the
    larger, or would be with the host at the slow end of the card's hosts (``exposed``:
    RooflineResult.expected_host_exposed), "gpu" for any other limiter (compute, memory, latency,
    launch, interconnect)."""
    return None if not limiter else "host" if limiter == "host" or exposed else "gpu"


def band_for(
    op: str,
    params: dict[str, Any],
    limiter: str | None = None,
    host_layer: bool = False,
    exposed: bool | None = None,
    lookup: Callable[[str], Band | None] | None = None,
) -> Band | None:
    """The band of this kind of result; for a step issued from Python whose limiter the model
    gives, that of the steps paced the same way (pace) where bands.json has one, and for a step
    the host paces with ``host_layer`` (the host's pace from the implementation's own time per
    layer, --host-layer), that of such steps timed with that figure where it has one.
    ``lookup``: where the bands are looked up (band_named, bands.json's, by default;
    validation/expected/band_coverage.py passes bands made without the set it checks)."""
    named = lookup or band_named
    kind = band_kind(op, params)
    if not (limiter and "/python/" in kind):
        return named(kind)

    def enough(b: Band | None) -> Band | None:
        # a split band only where it has the cases for percentiles (a few cases' min-max is no
        # band: tensor parallelism's host-paced fused prefill had 2): else the kind's own
        return b if b is not None and b.spread == "p5-p95" else None

    # a step the GPU paces does not move with the host's figure: its band stays that of such steps
    layered = enough(named(f"{kind}/host/host-layer")) if host_layer and pace(limiter) == "host" else None
    return layered or enough(named(f"{kind}/{pace(limiter, exposed)}")) or named(kind)


def band_named(kind: str) -> Band | None:
    data = _bands()
    b = data["bands"].get(kind)
    if b is None:
        return None
    fields = dict(b)  # the cached file's dict stays as read
    sample = fields.pop("sample", None) or str(data.get("sample", "")).split(":")[0]
    return Band(kind=kind, sample=sample, **fields)


def _fmt_rate(x: float) -> str:
    return f"{x:,.0f}" if x >= 100 else f"{x:,.3g}"


def summarize(r: RooflineResult, implementation: str | None = None, band_kind: str = "traced") -> Summary:
    """The summary of a result: expected (with its band) first, then the bound, then the fit.
    ``implementation``: a traced implementation's name (roofcalc.impl), whose band is that of the
    traced-implementation predictions (``band_kind``: traced, or traced-nostep for a file saved
    without the step time) instead of the reference implementation's."""
    per = "/step" if r.tokens is not None else ""
    impl = implementation or implementation_of(r.op, r.params)
    kind = f"{r.op}/{band_kind}" if implementation else None
    band = (
        (
            band_named(kind)
            if kind
            else band_for(
                r.op,
                r.params,
                r.expected_limiter,
                r.host_figure is not None and "--host-layer" in r.host_figure,
                r.expected_host_exposed,
            )
        )
        if r.expected_s is not None
        else None
    )
    parts: list[str] = []
    lo = hi = None
    if r.expected_s is None:
        note = "no expected time: " + (r.expected_notes[0] if r.expected_notes else "none modelled for this op")
        parts.append("no expected time" + (" for this card" if "no measured figures" in note else ""))
    else:
        if band is None:
            note = "no committed measurements of this kind: the expected time has no measured band"
            parts.append(f"expected {fmt_time(r.expected_s)}{per} (no measured band)")
        else:
            lo, hi = r.expected_s * band.low, r.expected_s * band.high
            note = f"{band.spread} of measured/expected, {band.cases:,} {band.sample} {band.cards} cases ({band.kind})"
            parts.append(f"expected {fmt_time(r.expected_s)}{per} ({fmt_time_range(lo, hi)})")
    exp_tps = (float(r.tokens) / r.expected_s) if r.tokens is not None and r.expected_s else None
    if exp_tps is not None:
        parts.append(f"{_fmt_rate(exp_tps)} tok/s")
    parts.append(f"bound {fmt_time(r.predicted_s)} ({r.bound})")
    fits = needed = usable = None
    if r.memory is not None:
        m = r.memory
        fits, needed, usable = m.fits, float(m.per_gpu_bytes), float(m.usable_bytes)
        per_gpu = " per GPU" if m.gpus > 1 else ""
        verdict = "fits" if m.fits else "DOES NOT FIT:"
        parts.append(f"{verdict} {si(m.per_gpu_bytes, 'B')}{per_gpu} of {si(m.usable_bytes, 'B')} usable")
    if impl is not None:
        parts.append(impl)
    return Summary(
        text=" · ".join(parts),
        implementation=impl,
        expected_s=r.expected_s,
        expected_low_s=lo,
        expected_high_s=hi,
        band=band,
        band_note=note,
        expected_tokens_per_s=exp_tps,
        bound_s=r.predicted_s,
        bound=r.bound,
        bound_tokens_per_s=r.tokens_per_s,
        fits=fits,
        memory_needed_bytes=needed,
        memory_usable_bytes=usable,
    )

"""Implementations as data: a traced step's kernels and host timeline (roofcalc.impl.spec), made
from a profiler trace (roofcalc.impl.build) and predicted at other shapes (roofcalc.impl.predict).

    from roofcalc.impl import load_impl, save_impl, with_implementation
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DomainError, InputError

MAX_IMPL_BYTES = 64 * 2**20  # an implementation file (a 10,000-kernel step is a few MB)

if TYPE_CHECKING:
    from ..hardware import Hardware
    from ..roofline import RooflineResult
    from .spec import ImplFile, Overhead


def measured_overhead() -> Overhead:
    """The profiler's host cost per recorded CPU op and per kernel launch, measured on the lent H200
    machine with the captures' settings (validation/traces/h200/overhead1: 4,000 x.view and x.add_
    calls timed plain and under the profiler)."""
    from .spec import Overhead

    return Overhead(
        per_cpu_op_s=4.549e-07,
        per_launch_s=3.611e-06,
        kind="measured",
        source="validation/traces/h200/overhead1/times.json (H200 machine, torch 2.11)",
    )


def save_impl(impl: ImplFile, path: str) -> None:
    import yaml

    from ..output import write_atomic

    text = yaml.safe_dump(impl.model_dump(mode="json", by_alias=True), sort_keys=False, width=120)
    write_atomic(path, text)


def load_impl(path: str | Path) -> ImplFile:
    """An implementation file, read as hostile input (bounded size, strict schema, one-line errors)."""
    from ..specfile import parse_yaml, read_text, validate
    from .spec import ImplFile

    label = str(path)
    data = parse_yaml(read_text(path, "implementation file", MAX_IMPL_BYTES), label)
    impl = validate(ImplFile, data, label)
    _check_formulas(impl, label)
    return impl


def _check_formulas(impl: ImplFile, label: str) -> None:
    from ..formula import Formula, FormulaError

    names = impl.names()
    for i, k in enumerate(impl.kernels):
        for shape in k.dims or []:
            for d in _flat(shape):
                if isinstance(d, str):
                    try:
                        Formula(d, names=names)
                    except FormulaError as e:
                        raise InputError(f"{label}: kernels.{i}.dims: {e}") from None
                elif not isinstance(d, int) or isinstance(d, bool) or not 0 <= d < 2**48:
                    raise InputError(f"{label}: kernels.{i}.dims: {d!r} is not a size or a formula")


def _flat(x: Any) -> list[Any]:
    if isinstance(x, list):
        return [y for item in x for y in _flat(item)]
    return [x]


def with_implementation(r: RooflineResult, impl: ImplFile, hw: Hardware) -> RooflineResult:
    """``r`` (an LLM step's result) with its expected time from the traced implementation ``impl``
    at the step's batch and context (or prompt length) instead of the reference implementation."""
    from ..expected import Term
    from ..summary import summarize
    from .predict import predict

    if r.op != impl.phase:
        raise InputError(f"--impl-file: {impl.name} is a {impl.phase} step; this is {r.op}")
    base = hw.calibration.base if hw.calibration is not None else hw.id
    if impl.hardware not in (hw.id, base):
        raise DomainError(
            f"--impl-file: {impl.name} was traced on {impl.hardware}; predicting it on {hw.id} is not modelled "
            f"(trace it there)"
        )
    size_name = impl.names()[1]
    sizes = {"batch": int(r.params["batch"] or 1), size_name: int(r.params[size_name] or 1)}
    p = predict(impl, hw, sizes)
    terms = [
        Term(name=f"{kind} kernels", seconds=t, reason="traced kernels, each scaled with its op's bound")
        for kind, t in p.by_kind_s.items()
    ]
    terms.append(Term(name="host issue", seconds=p.host_s, reason="the traced host timeline, replayed"))
    notes = [
        f"implementation {impl.name}: traced on {impl.hardware} at "
        + ", ".join(f"{k} {v}" for k, v in impl.traced.items())
        + f" ({impl.source}); {p.scaled_kernels} of {p.kernels} kernels scaled with their op's bound, "
        f"the rest at their traced time; the step is paced by the {p.limiter}"
    ]
    out = r.model_copy(
        update={
            "expected_s": p.step_s,
            "expected_terms": terms,
            "expected_kernels": [],
            "expected_launch": "traced",
            "expected_limiter": "host" if p.limiter == "host" else "memory" if r.bound == "memory" else r.bound,
            "headroom": p.step_s / r.predicted_s if r.predicted_s > 0 else None,
            "expected_notes": notes,
        }
    )
    return out.model_copy(update={"summary": summarize(out, implementation=impl.name)})


__all__ = ["load_impl", "measured_overhead", "save_impl", "with_implementation"]

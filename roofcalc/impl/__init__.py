"""Implementations as data: a traced step's kernels and host timeline (roofcalc.impl.spec), made
from a profiler trace (roofcalc.impl.build) and predicted at other shapes (roofcalc.impl.predict).

    from roofcalc.impl import load_impl, save_impl, with_implementation
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import DomainError, InputError, SpecError

MAX_IMPL_BYTES = 32 * 2**20  # an implementation file (a 10,000-kernel step is about 4 MB)

if TYPE_CHECKING:
    from ..hardware import Hardware
    from ..roofline import RooflineResult
    from .spec import GraphReplay, ImplFile, Overhead


def measured_overhead() -> Overhead:
    """The profiler's host cost per recorded CPU op and per kernel launch, measured on the lent H200
    machine with the captures' settings (4,000 x.view and x.add_ calls timed plain and under the
    profiler, torch 2.11); the figures as that file records them (a test reads them there)."""
    from .spec import Overhead

    return Overhead(
        per_cpu_op_s=4.5487299999891207e-07,
        per_launch_s=3.611238500001335e-06,
        kind="measured",
        source="validation/traces/h200/overhead1/times.json",
    )


GRAPH_GAP_CARD = "h200"  # the card the graph gap was fitted on


def graph_replay(card: str = GRAPH_GAP_CARD) -> GraphReplay:
    """The gap a CUDA graph's replay leaves from one kernel node to the next, beyond the kernels'
    own traced times: fitted to the seven steps of validation/traces/h200/impl-dev1 traced at the
    shape they were timed at (replay time less the traced kernels, over their count: 0.33-0.49 us,
    median 0.37; a test derives it there). On another card (``card``, a registry id) the figure
    is the H200's, transferred (the H100 traces of h100/impl-trace5 show 0.20-0.34 us)."""
    from .spec import GraphReplay

    fitted = card == GRAPH_GAP_CARD
    return GraphReplay(
        per_kernel_s=3.7e-07,
        kind="fitted" if fitted else "transferred",
        source="validation/traces/h200/impl-dev1: seven graph decode steps at their traced shape, the median gap"
        + ("" if fitted else f"; the H200's figure, on {card}"),
    )


def save_impl(impl: ImplFile, path: str) -> None:
    """Written as JSON, which is YAML too: every string quoted (a recorded "1e-05" stays a string),
    and read back by the C JSON parser (a 50,000-kernel file in a second, not minutes)."""
    import json

    from ..output import write_atomic

    doc = impl.model_dump(mode="json", by_alias=True)
    kernels = doc.pop("kernels")
    head = json.dumps(doc, indent=1)[:-2]  # one kernel a line below the header fields
    body = ",\n".join("  " + json.dumps(k, separators=(",", ":")) for k in kernels)
    write_atomic(path, f'{head},\n "kernels": [\n{body}\n ]\n}}\n')


def load_impl(path: str | Path) -> ImplFile:
    """An implementation file, read as hostile input (bounded size, strict schema, one-line errors)."""
    from ..specfile import parse_json, parse_yaml, read_text, validate
    from .spec import ImplFile

    label = str(path)
    text = read_text(path, "implementation file", MAX_IMPL_BYTES)
    data = parse_json(text, label) if text.lstrip().startswith("{") else parse_yaml(text, label)
    if isinstance(data, dict) and "phases" in data and "kernels" not in data:
        # a named implementation's file (impls/*.yaml) is chosen by name, not read from a path
        raise SpecError(
            f"{label}: a named implementation's file (the form of roofcalc's impls/*.yaml, chosen with --impl NAME); "
            "--impl-file takes a file written by 'roofcalc trace FILE --save-impl'"
        )
    impl = validate(ImplFile, data, label)
    _check_formulas(impl, label)
    return impl


def _check_formulas(impl: ImplFile, label: str) -> None:
    from ..formula import Formula, FormulaError

    names = impl.names()
    for i, k in enumerate(impl.kernels):
        for shape in k.dims or []:
            for d in _sizes(shape, label, i):
                if isinstance(d, str):
                    if "'" in d or '"' in d:
                        raise InputError(f"{label}: kernels.{i}.dims: {d[:60]!r}: a size formula has no strings")
                    try:
                        Formula(d, names=names)
                    except FormulaError as e:
                        raise InputError(f"{label}: kernels.{i}.dims: {e}") from None
                elif not isinstance(d, int) or isinstance(d, bool) or not 0 <= d <= 2**48:
                    raise InputError(f"{label}: kernels.{i}.dims: {d!r:.60} is not a size or a formula")


def _sizes(shape: Any, label: str, i: int) -> list[Any]:
    """The sizes of one input: a shape [s, ...] or a tensor list [[s, ...], ...], nothing deeper."""
    if not isinstance(shape, list):
        raise InputError(f"{label}: kernels.{i}.dims: {shape!r:.60} is not a shape (a list of sizes)")
    out: list[Any] = []
    for d in shape:
        if isinstance(d, list):
            if any(isinstance(x, list) for x in d):
                raise InputError(f"{label}: kernels.{i}.dims: shapes nest at most two deep")
            out.extend(d)
        else:
            out.append(d)
    return out


def with_implementation(r: RooflineResult, impl: ImplFile, hw: Hardware, label: str = "") -> RooflineResult:
    """``r`` (an LLM step's result) with its expected time from the traced implementation ``impl``
    at the step's batch and context (or prompt length) instead of the reference implementation.
    ``label``: the file, as messages name it."""
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
    if impl.graph is not None and r.params.get("cuda_graphs") is False:
        raise InputError(
            f"--no-cuda-graphs: {impl.name} is a step replayed from a CUDA graph (trace one issued from Python)"
        )
    gpus = r.params.get("gpus")
    if isinstance(gpus, int) and gpus != impl.gpus:
        on = "one GPU" if impl.gpus == 1 else f"{impl.gpus} GPUs"
        raise DomainError(
            f"--impl-file: {impl.name} was traced on {on}; predicting it on {gpus} is not modelled "
            f"(its shapes are that GPU count's shards: trace a run on {gpus})"
        )
    if r.params.get("cache_len"):
        raise InputError(
            f"--cache-len: {impl.name}'s cache follows the traced context; a cache of another length is "
            "another implementation (trace a step with it)"
        )
    size_name = impl.names()[1]
    sizes = {n: r.params.get(n) for n in ("batch", size_name)}
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in sizes.values()):
        raise InputError(f"--impl-file: give --batch and --{size_name}")
    p = predict(impl, hw, sizes, label)  # type: ignore[arg-type]
    terms = [
        Term(
            name=f"{kind} kernels",
            seconds=t,
            reason="traced kernels, each with its share of its op's extra work at the card's achievable rates"
            if impl.graph is not None
            else "traced kernels, each scaled with its op's bound",
        )
        for kind, t in p.by_kind_s.items()
    ]
    if impl.graph is not None:
        terms.append(
            Term(
                name="graph gaps",
                seconds=p.step_s - p.gpu_busy_s,
                reason=f"replayed from a CUDA graph: {impl.graph.per_kernel_s * 1e6:.2f} us from one kernel to the next "
                f"({impl.graph.kind})",
            )
        )
    else:
        terms.append(Term(name="host issue", seconds=p.host_s, reason="the traced host timeline, replayed"))
    notes = []
    traced_w = _traced_weight_params(impl)
    model_w = next((i.value for i in r.info if i.name == "weight_params_read"), None) if r.info else None
    if traced_w and isinstance(model_w, (int, float)) and model_w > 0 and not 0.8 <= traced_w / model_w <= 1.25:
        notes.append(
            f"{impl.name}'s GEMMs read {traced_w:,.0f} weight parameters a step, this model {model_w:,.0f}: "
            "it was traced on another model than the one given"
        )
    elif p.step_s < r.predicted_s:
        notes.append(
            f"the implementation's kernels take less than this model's bound ({p.step_s * 1e3:.3g} ms against "
            f"{r.predicted_s * 1e3:.3g} ms): {impl.name} was traced on another model than the one given"
        )
    where = impl.hardware + (f" x{impl.gpus}" if impl.gpus > 1 else "")
    how = ", replayed from a CUDA graph" if impl.graph is not None else ""
    notes += [
        f"implementation {impl.name}: traced on {where}{how} at "
        + ", ".join(f"{k} {v}" for k, v in impl.traced.items())
        + f" ({impl.source}); {p.scaled_kernels} of {p.kernels} kernels scaled with their op's work"
        + (" (collectives at the card's graph all-reduce figures)" if impl.graph is not None and impl.gpus > 1 else "")
        + ", "
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
    kind = (
        "traced-graphs" if impl.graph is not None else "traced" if impl.measured_step_s is not None else "traced-nostep"
    )
    return out.model_copy(update={"summary": summarize(out, implementation=impl.name, band_kind=kind)})


def _traced_weight_params(impl: ImplFile) -> int:
    """The weight parameters the traced step's GEMMs read (each op call's weight inputs once)."""
    import math

    from .build import WEIGHT_INPUTS

    seen: set[int] = set()
    total = 0
    for k in impl.kernels:
        if k.call in seen or k.dims is None or k.op not in WEIGHT_INPUTS:
            continue
        seen.add(k.call)
        for i in WEIGHT_INPUTS[k.op]:
            shape = k.dims[i] if i < len(k.dims) else None
            if isinstance(shape, list) and len(shape) == 2 and all(isinstance(d, int) for d in shape):
                total += math.prod(shape)  # a weight's sizes are constants (formulas follow the batch)
    return total


__all__ = ["graph_replay", "load_impl", "measured_overhead", "save_impl", "with_implementation"]

"""Named implementations (``impls/*.yaml``): how one code base runs an LLM step, as data.

An op file (ops/decode.yaml, ops/prefill.yaml) declares the kernels of the reference
implementation. An implementation file says how another implementation differs from it, per
phase: the op parameters it fixes (``sets``: engine, CUDA graphs), the reference kernels it does
not launch (``drop``), the kernels it launches instead or as well (``add``, each after a named
kernel, in the op file's kernel schema), extra names its formulas use (``terms``), what its host
does per step beyond issuing kernels (``host_ops``, in host-op times), and the figures those formulas read
(``figures``, each with its kind and source). ``roofcalc op decode --impl NAME`` evaluates the op
with the kernels so patched; the bound does not change, the expected time does.

    impl = load_named("hf")
    opdef2 = apply(opdef, impl)
"""

from __future__ import annotations

import functools
import math
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..errors import InputError, SpecError, suggest
from ..opdefs import ByteTerm, Check, KernelDef, OpDef

# the op parameters an implementation may fix (it is the implementation that decides them)
SETTABLE = ("engine", "cuda_graphs")
# the op term that carries an implementation's host work per step (roofline._expected reads it)
HOST_TERM = "impl_host_ops"
HOST_NATIVE_TERM = "impl_host_ops_native"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class ImplFigure(_Strict):
    """A number an implementation's formulas read, with what it is."""

    value: float
    kind: Literal["datasheet", "measured", "fitted", "derived", "transferred"]
    source: str = Field(min_length=1)
    note: str | None = None
    fit_set: str | None = None  # a fitted figure: the cases it was fitted to

    @field_validator("value", mode="before")
    @classmethod
    def _count(cls, v: Any) -> Any:
        """Every figure here counts host work or a time: a finite number of at least 0 (not a
        boolean, which pydantic would read as 1)."""
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
            raise ValueError(f"{v!r:.40} is not a finite number of at least 0")
        return v

    @model_validator(mode="after")
    def _fitted_names_its_set(self) -> ImplFigure:
        if self.kind == "fitted" and not self.fit_set:
            raise ValueError("a fitted figure names its fit set (fit_set)")
        return self


class Insert(_Strict):
    after: str | None = None  # the op kernel (or an earlier added one) it follows; None: at the end
    kernels: list[KernelDef] = Field(min_length=1)


class Phase(_Strict):
    sets: dict[str, str | bool] = {}
    terms: dict[str, str | int] = {}
    drop: list[str] = []
    add: list[Insert] = []
    # the host's work per step beyond issuing kernels (eager launch only), in units of the host's
    # own time for one PyTorch op (torch_op_floor_s), so that it follows the host's speed
    host_ops: str | float = 0.0
    # beside it, the host's work in native code (a library building its plan for a new shape), in
    # the same unit: paid at the hot loop's op time even where the implementation's own Python
    # pace is given (--host-layer)
    host_ops_native: str | float = 0.0
    checks: list[Check] = []  # what the implementation cannot run (one GPU only, dense MLPs, ...)
    # memory the implementation holds beyond the op file's (copies it makes, logits it keeps)
    memory: dict[str, ByteTerm] = {}
    notes: list[str] = []

    @model_validator(mode="after")
    def _settable(self) -> Phase:
        for k in self.sets:
            if k not in SETTABLE:
                raise ValueError(f"sets: {k!r} is not an op parameter an implementation fixes ({', '.join(SETTABLE)})")
        for name in ("host_ops", "host_ops_native"):
            if getattr(self, name) not in (0, "0") and self.sets.get("cuda_graphs") is True:
                raise ValueError(f"{name}: a step replayed from a CUDA graph has no host work per step to count")
        # the implementation's pace is read off a layer's count (roofcalc.impl.host_layer), in which
        # native work per layer would count at that pace
        if isinstance(self.host_ops_native, str) and re.search(r"\blayers\b", self.host_ops_native):
            raise ValueError("host_ops_native: native host work per step only, not per layer (no 'layers')")
        return self


class NamedImpl(_Strict):
    name: str = Field(pattern=r"^[a-z][a-z0-9-]*$")
    summary: str
    description: str
    read_from: str  # how its kernels were read (traces, source), for the user
    versions: dict[str, str] = {}
    figures_from: list[str] = []  # other implementations whose figures its formulas also read
    figures: dict[str, ImplFigure] = {}
    phases: dict[Literal["decode", "prefill"], Phase] = Field(min_length=1)


def impl_names() -> list[str]:
    from ..registry import builtin_names

    return builtin_names("impl")


@functools.cache
def load_named(name: str) -> NamedImpl:
    """A built-in implementation by name; an unknown name is a one-line InputError."""
    from ..registry import builtin_label, load_builtin
    from ..specfile import parse_yaml, validate

    names = impl_names()
    if name not in names:
        raise InputError(f"unknown implementation {name!r}{suggest(name, names)}; known: {', '.join(names)}")
    label = builtin_label("impl", name)

    def build(text: str) -> NamedImpl:
        impl = validate(NamedImpl, parse_yaml(text, label, trusted=True), label)
        if impl.name != name:
            raise SpecError(f"{label}: name: {impl.name!r} is not the file's name {name!r}")
        return impl

    return load_builtin("impl", name, build, NamedImpl)


def figure_files(impl: NamedImpl) -> dict[str, str]:
    """Each figure ``impl``'s formulas read, and the implementation file that defines it."""
    out: dict[str, str] = {}
    for other in impl.figures_from:
        if other == impl.name:
            raise SpecError(f"impls/{impl.name}.yaml: figures_from: names itself")
        out.update(dict.fromkeys(load_named(other).figures, other))
    out.update(dict.fromkeys(impl.figures, impl.name))
    return out


def figures_read(impl: NamedImpl, phase: str) -> dict[str, str]:
    """The figures (name -> defining file) a phase of ``impl`` reads in its formulas."""
    import re

    # every evaluation of a named step asks this (the result's figures by kind): worked out once
    # per implementation object and phase; the entry holds the object, so that its id stays its own
    hit = _FIGURES_READ.get((id(impl), phase))
    if hit is not None and hit[0] is impl:
        return dict(hit[1])
    text = repr(impl.phases[phase].model_dump())  # type: ignore[index]
    out = {n: f for n, f in figure_files(impl).items() if re.search(rf"\b{re.escape(n)}\b", text)}
    if len(_FIGURES_READ) >= 256:
        _FIGURES_READ.clear()
    _FIGURES_READ[(id(impl), phase)] = (impl, out)
    return dict(out)


_FIGURES_READ: dict[tuple[int, str], tuple[NamedImpl, dict[str, str]]] = {}


def all_figures(impl: NamedImpl) -> dict[str, ImplFigure]:
    """The figures ``impl``'s formulas read: its own and those of the implementations it names."""
    return {name: load_named(owner).figures[name] for name, owner in figure_files(impl).items()}


# applied ops by the ids of the op and the implementation; each entry holds both, so that an id
# is never that of another object while its entry is here
_APPLIED: dict[tuple[int, int], tuple[OpDef, NamedImpl, OpDef]] = {}


def apply(opdef: OpDef, impl: NamedImpl) -> OpDef:
    """``opdef`` with the kernels, terms and host cost of ``impl`` (its phase of the op)."""
    key = (id(opdef), id(impl))
    hit = _APPLIED.get(key)
    if hit is not None and hit[0] is opdef and hit[1] is impl:
        return hit[2]
    phase = impl.phases.get(opdef.name)  # type: ignore[call-overload]
    if phase is None:
        raise InputError(f"implementation {impl.name} has no {opdef.name} step (it has {', '.join(impl.phases)})")
    from ..specfile import validate

    label = f"impls/{impl.name}.yaml: phases.{opdef.name}"
    kernels = [k for k in opdef.kernels if k.name not in phase.drop]
    unknown = sorted(set(phase.drop) - {k.name for k in opdef.kernels})
    if unknown:
        raise SpecError(f"{label}: drop: {opdef.source} has no kernel {unknown[0]!r}")
    for ins in phase.add:
        names = [k.name for k in kernels]
        if ins.after is None:
            at = len(kernels)
        elif ins.after in names:
            at = len(names) - names[::-1].index(ins.after)
        else:
            raise SpecError(f"{label}: add: after {ins.after!r}: no such kernel (left: {', '.join(names)})")
        kernels[at:at] = list(ins.kernels)
    terms: dict[str, str | int] = dict(opdef.terms)
    figures = all_figures(impl)
    for fname, fig in figures.items():
        terms[fname] = repr(fig.value)
    clash = sorted(
        (set(phase.terms) | set(figures) | {HOST_TERM, HOST_NATIVE_TERM}) & (set(opdef.terms) | set(opdef.all_params))
    )
    if clash:
        raise SpecError(f"{label}: terms: {clash[0]!r} is already a name of {opdef.source}")
    shadowed = sorted(set(phase.terms) & set(figures))
    if shadowed:
        raise SpecError(
            f"{label}: terms: {shadowed[0]!r} is already a figure of impls/{figure_files(impl)[shadowed[0]]}.yaml"
        )
    terms.update(phase.terms)
    terms[HOST_TERM] = str(phase.host_ops)
    terms[HOST_NATIVE_TERM] = str(phase.host_ops_native)
    data = opdef.model_dump(exclude_none=False)
    data.update(
        kernels=[k.model_dump() for k in kernels],
        terms=terms,
        checks=[c.model_dump() for c in [*opdef.checks, *phase.checks]],
        memory={
            **{k: v.model_dump() for k, v in opdef.memory.items()},
            **{k: v.model_dump() for k, v in phase.memory.items()},
        },
        notes=[*opdef.notes, *phase.notes],
    )
    out = validate(OpDef, data, label)
    out._source = f"{opdef.source} with impls/{impl.name}.yaml"
    if len(_APPLIED) >= 64:  # op files of one's own come and go (roofcalc.analyze in a loop)
        _APPLIED.clear()
    _APPLIED[key] = (opdef, impl, out)
    return out


def settle(opdef: OpDef, given: dict[str, Any]) -> tuple[OpDef, dict[str, Any]]:
    """The op with the implementation ``given`` names (``impl``; ``engine`` alone names reference
    or compiled), and the parameters with what that implementation fixes. An op without an
    ``impl`` parameter among its model-preset parameters (the LLM steps) is returned as it is
    (ops/attention.yaml's --impl naive|flash is its own choice of kernels)."""
    if "impl" not in opdef.params or opdef.presets is None:
        return opdef, given
    g = {k.replace("-", "_"): v for k, v in given.items()}
    name, engine = g.get("impl"), g.get("engine")
    if name is None:
        name = "compiled" if engine == "compiled" else str(opdef.params["impl"].default or "reference")
    impl = load_named(str(name))
    phase = impl.phases.get(opdef.name)  # type: ignore[call-overload]
    if phase is None:
        raise InputError(
            f"--impl {name}: implementation {name} has no {opdef.name} step (it models {', '.join(impl.phases)})"
        )
    for key, value in phase.sets.items():
        if g.get(key) is not None and g[key] != value:
            flag = "--" + key.replace("_", "-")
            shown = value if not isinstance(value, bool) else ("on" if value else "off")
            raise InputError(f"{flag}: implementation {name} fixes it ({shown}); leave it out or pick another --impl")
        g[key] = value
    g["impl"] = name
    return apply(opdef, impl), g


__all__ = ["NamedImpl", "all_figures", "apply", "figure_files", "figures_read", "impl_names", "load_named", "settle"]

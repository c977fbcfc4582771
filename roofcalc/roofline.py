"""The arithmetic-intensity engine: pure functions, no I/O, no printing.

``analyze(op, hardware, **params)`` evaluates an op definition's formulas for the
given parameters and places the result on the hardware's roofline:

    t_compute  = flops / peak(dtype)
    t_memory   = bytes / bandwidth
    predicted  = max(t_compute, t_memory) + launches * launch_overhead
    attainable = min(peak, bandwidth * intensity)        (the roofline itself)
"""

from __future__ import annotations

import dataclasses
import functools
import math
import operator
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Literal

from .dtypes import DTYPES, ELEMENT_BYTES
from .errors import CheckError, DomainError, InputError, ParamError, suggest
from .expected import KernelEstimate, Term
from .formula import EvalError, Value, as_exact
from .hardware import Hardware
from .opdefs import HARDWARE_NAMES, KERNEL_AMOUNTS, KERNEL_COUNTS, KERNEL_FORMULAS, MAX_INT_PARAM, OpDef, Param
from .output import SCHEMA_VERSION
from .record import Record
from .summary import Summary, summarize


@dataclass(frozen=True, kw_only=True)
class ByteItem(Record):
    term: str
    bytes: int | float
    help: str


@dataclass(frozen=True, kw_only=True)
class InfoItem(Record):
    name: str
    value: int | float
    help: str


@dataclass(frozen=True, kw_only=True)
class BreakdownItem(Record):
    part: str
    flops: int | float
    bytes: int | float
    intensity: float
    bound: Literal["memory", "compute"]
    time_s: float
    help: str
    expected_s: float | None = None  # the expected time of this kind's kernels (with their floors)
    kernels: int = 0


@dataclass(frozen=True, kw_only=True)
class MemoryFit(Record):
    items: list[ByteItem]
    needed_bytes: int | float
    gpus: int
    per_gpu_bytes: float
    capacity_bytes: float  # the device's memory: total_bytes where measured, else the datasheet's
    reserve_bytes: float  # left free for the context, workspaces and fragmentation
    usable_bytes: float  # capacity - reserve: what the fit is checked against
    fits: bool
    gpus_needed: int


@dataclass(frozen=True, kw_only=True)
class Crossover(Record):
    param: str
    value: int | None
    text: str


@dataclass(frozen=True, kw_only=True)
class RooflineResult(Record):
    """Everything ``roofcalc op`` prints; ``--json`` is ``model_dump(mode='json')``."""

    version: int = SCHEMA_VERSION
    op: str
    hardware: str
    hardware_name: str
    dtype: str
    params: dict[str, int | float | bool | str | None]
    flops: int | float
    bytes: int | float
    bytes_breakdown: list[ByteItem]
    intensity: float
    ridge: float
    bound: Literal["memory", "compute", "interconnect"]
    peak_flops_per_s: float
    bandwidth_bytes_per_s: float
    t_compute_s: float
    t_memory_s: float
    launches: int
    t_overhead_s: float
    predicted_s: float  # deprecated name of bound_s (kept for one release); the bound, never the expected
    attainable_flops_per_s: float
    fraction_of_peak: float
    calibrated: bool
    info: list[InfoItem]
    warnings: list[str]
    t_interconnect_s: float = 0.0
    interconnect_bytes: int | float = 0
    # where the host's op time was given for this call rather than read off the card (--host-layer)
    host_figure: str | None = None
    tokens: int | float | None = None
    tokens_per_s: float | None = None
    time_label: str | None = None
    memory: MemoryFit | None = None
    breakdown: list[BreakdownItem] = field(default_factory=list)
    crossover: Crossover | None = None
    # the expected time of the usual implementation (roofcalc/expected/), beside the bound above
    expected_s: float | None = None
    expected_terms: list[Term] = field(default_factory=list)
    expected_kernels: list[KernelEstimate] = field(default_factory=list)
    expected_launch: str | None = None
    expected_limiter: str | None = None  # memory, compute, latency, launch, host or interconnect
    # a step issued from Python: whether its host paces it at the card's host figure or would at
    # the slow end of the card's hosts (torch_op_slow_s); None for other launches or without it
    expected_host_exposed: bool | None = None
    headroom: float | None = None  # expected / bound (predicted_s)
    expected_notes: list[str] = field(default_factory=list)
    bound_s: float = 0.0  # the speed-of-light time (predicted_s's new name)
    # the card's figures the expected-time model reads (its file's `expected` section, or the
    # calibration's), by kind: measured, fitted, derived, transferred, ... (empty without one)
    expected_figures: dict[str, list[str]] = field(default_factory=dict)
    summary: Summary | None = None  # the answer first: printed first, and first in the JSON

    def model_dump(self, mode: Literal["python", "json"] = "python") -> dict[str, Any]:
        out = super().model_dump(mode)
        return {"summary": out.pop("summary"), **out}


# ------------------------------------------------------------ parameters

Params = dict[str, int | float | bool | str | None]


def _coerce(name: str, p: Param, value: Any) -> int | float | bool | str:
    if p.type == "int":
        if isinstance(value, bool) or not isinstance(value, int):
            if isinstance(value, float) and value.is_integer():
                value = int(value)
            elif isinstance(value, str):
                from .units import parse_int

                try:
                    value = parse_int(value)
                except ValueError as e:
                    raise ParamError(f"{{{name}}}: {e}") from None
            else:
                raise ParamError(f"{{{name}}}: {{got}} is not an integer", got=_short(value))
        lo = 1 if p.min is None else p.min
        if value < lo:
            raise ParamError(f"{{{name}}}: must be at least {lo:g} (got {{got}})", got=_short(value))
        hi = MAX_INT_PARAM if p.max is None else p.max
        if value > hi:
            raise ParamError(f"{{{name}}}: {{got}} is absurdly large (limit {hi:g})", got=_short(value))
        return int(value)
    if p.type == "float":
        try:
            f = float(value)
        except (TypeError, ValueError, OverflowError):
            raise ParamError(f"{{{name}}}: {{got}} is not a number", got=_short(value)) from None
        if f != f or f in (float("inf"), float("-inf")):
            raise ParamError(f"{{{name}}}: {{got}} is not a finite number", got=_short(value))
        if p.min is not None and f < p.min:
            raise ParamError(f"{{{name}}}: must be at least {p.min:g} (got {f:g})")
        if p.max is not None and f > p.max:
            raise ParamError(f"{{{name}}}: must be at most {p.max:g} (got {f:g})")
        return f
    if p.type == "bool":
        if isinstance(value, bool):
            return value
        s = str(value).strip().lower()
        if s in ("1", "true", "yes", "on"):
            return True
        if s in ("0", "false", "no", "off"):
            return False
        raise ParamError(f"{{{name}}}: {{got}} is not true or false", got=_short(value))
    s = str(value).strip().lower()
    choices = DTYPES if p.type == "dtype" else (p.choices or [])
    if s not in choices:
        what = "dtype" if p.type == "dtype" else "value"
        raise ParamError(
            f"{{{name}}}: unknown {what} {{got}}{suggest(s, choices)}; choose from {', '.join(choices)}",
            got=_short(value),
        )
    return s


def _short(value: Any) -> str:
    """A value for a message: repr, cut short (a 4,000-digit number is not echoed in full)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:30] + "..." + f" ({len(text)} characters)"


def resolve_params(op: OpDef, given: dict[str, Any], preset: dict[str, Any] | None = None) -> Params:
    """Fill in defaults, coerce and range-check every parameter of ``op``.

    ``given`` are the values the caller set (None = not set); ``preset`` are values from a
    model preset or config.json, already read by the loading layer, which ``given`` overrides.
    Pure: no file is read here. Errors are :class:`ParamError` naming the parameter.
    """
    given = {k.replace("-", "_"): v for k, v in given.items() if v is not None}
    preset = dict(preset or {})
    declared = op.all_params
    for source, values in (("", given), ("preset ", preset)):
        unknown = [k for k in values if k not in declared]
        if unknown:
            k = unknown[0]
            raise InputError(f"op {op.name} has no {source}parameter {k!r}{suggest(k, list(declared))}")
    out: Params = {}
    for name, p in declared.items():
        if name in given:
            raw = given[name]
        elif name in preset:
            raw = preset[name]
        elif p.default_from is not None:
            out[name] = out[p.default_from]
            continue
        elif p.default is not None:
            raw = p.default
        elif p.optional:
            out[name] = None
            continue
        else:
            hint = f" (or {{{op.presets.option}}})" if op.presets else ""
            raise ParamError(f"op {op.name} needs {{{name}}}{hint}")
        out[name] = _coerce(name, p, raw)
    return out


# ------------------------------------------------------------ evaluation


def _env(op: OpDef, params: Params, hw: Hardware) -> dict[str, Value]:
    env: dict[str, Value] = {}
    for name, p in op.all_params.items():
        v = params[name]
        if v is None:  # an optional parameter not given: only checks that need it read it
            continue
        env[name] = v
        if p.type == "dtype":
            size = ELEMENT_BYTES[str(params[name])]
            # a whole size as an int: the same numbers, and the formulas' cached results are
            # looked up by a key that is cheaper to hash than a Fraction
            env[f"{name}_bytes"] = int(size) if size.denominator == 1 else size
    hw_values = {
        "smem_per_sm_bytes": hw.sm_value("shared_memory_per_sm_bytes")
        or hw.sm_value("shared_memory_per_block_optin_bytes"),
        "l2_bytes": int(hw.l2_bytes.value) if hw.l2_bytes else None,
        "sm_count": hw.sm_value("sm_count"),
        "gemv_plane": int(hw.expected.gemm_choice_map is not None and hw.expected.gemm_choice_map.column_plane),
    }
    for k in HARDWARE_NAMES:
        v = hw_values[k]
        if v is not None:
            env[k] = v
    return env


def _checked_env(op: OpDef, values: Params, hw: Hardware) -> tuple[dict[str, Value], str | None]:
    """The names the op's formulas read: its parameters, the part's figures and its terms; or,
    where one of its checks refuses the parameters, that check's message (the terms unevaluated:
    they may divide by what the check guards)."""
    env = _env(op, values, hw)
    for i, check in enumerate(op.checks):
        if not any(values[n] is None for n in check.needs) and not _ev(op, f"checks.{i}.expr", env):
            return env, check.message
    for tname in op.terms:
        env[tname] = _ev(op, f"terms.{tname}", env)
    return env, None


def _ev(op: OpDef, key: str, env: dict[str, Value]) -> Value:
    f = op.formula(key)
    try:
        return f.evaluate(env)
    except KeyError:
        missing = sorted(n for n in f.names if n not in env)
        raise DomainError(f"{op.name}: {key} needs {missing[0]!r}, which this hardware file does not give") from None
    except EvalError as e:
        raise DomainError(f"{op.source}: {key}: {e}") from None


def _exact(op: OpDef, key: str, env: dict[str, Value]) -> int | Fraction | float:
    try:
        return as_exact(_ev(op, key, env))
    except EvalError as e:
        raise DomainError(f"{op.source}: {key}: {e}") from None


def _plain(v: int | Fraction | float) -> int | float:
    """Exact integers stay integers; a fractional count (fp4 odd sizes, MoE expectations) becomes a float."""
    if isinstance(v, Fraction):
        return int(v) if v.denominator == 1 else float(v)
    return v


def _num(op: OpDef, key: str, env: dict[str, Value]) -> int | float:
    # the engine's hot path: a formula that gives an int or a float is that number; anything
    # else (a bool, a Fraction, a string, an error) takes the checked path below
    try:
        v = op.formula(key).evaluate(env)
    except (KeyError, EvalError):
        v = None
    t = type(v)
    if t is int or t is float:
        return v  # type: ignore[return-value]
    return _plain(_exact(op, key, env))


def _ratio(a: int | float, b: int | float) -> float:
    try:
        if isinstance(a, int) and isinstance(b, int):
            return float(Fraction(a, b))
        return float(a) / float(b)
    except OverflowError:
        raise DomainError("numbers too large to express as a float time or rate") from None


def analyze(op: OpDef | str, hardware: Hardware | str, **params: Any) -> RooflineResult:
    """Place one op, with ``params``, on the roofline of ``hardware``.

    The public entry: ``op`` and ``hardware`` may be names or paths, and ``model=`` /
    ``model_config=`` name a preset or a config.json; they are resolved here, once, by the
    loading layer (roofcalc.resolve), then :func:`evaluate` does the arithmetic.
    """
    from .resolve import resolve_hardware, resolve_op, resolve_preset

    opdef = resolve_op(op)
    hw = resolve_hardware(hardware)
    preset = None
    if opdef.presets is not None:
        preset = resolve_preset(
            opdef, params.pop(opdef.presets.option, None), params.pop(f"{opdef.presets.option}_config", None)
        )
    return evaluate(opdef, hw, params, preset)


def _held_at_the_bound(exp: Any, bound: float) -> Any:
    """An expected time below the bound (measured figures, such as a choice map's kernel times,
    faster than the peaks of the same file: figures that contradict each other) held at the bound,
    the difference a term of its own and a note saying so."""
    gap = bound - exp.seconds
    why = (
        "the measured figures put this op below the bound of the file's own peaks and bandwidths, "
        "which contradict them; the expected time is held at the bound"
    )
    return dataclasses.replace(
        exp,
        seconds=bound,
        terms=[*exp.terms, Term(name="held at the bound", seconds=gap, reason=why)],
        notes=[*exp.notes, why],
    )


def _given_host(hw: Hardware) -> str | None:
    """The host op time given for this call (roofcalc.validation.with_host_op, with_impl_pace), as
    it says where it came from; None where the card's own figure stands."""
    fig = hw.expected.impl_host_op_s or hw.expected.torch_op_floor_s
    if fig is None or fig.source != "host-rate":
        return None
    return f"host {fig.value * 1e6:.2f} us an op ({fig.note})" if fig.note else f"host {fig.value * 1e6:.2f} us an op"


def evaluate(
    opdef: OpDef,
    hw: Hardware,
    params: dict[str, Any],
    preset: dict[str, Any] | None = None,
    launch: str | None = None,
    expected: bool = True,
    memory_reserve: float | None = None,
) -> RooflineResult:
    """The engine: pure arithmetic on resolved objects; reads no file, prints nothing.
    ``expected=False`` leaves out the expected time and the memory fit (the crossover search needs
    only the bound). ``memory_reserve``: bytes per GPU the fit leaves free (None: the default
    reserve, roofcalc.defaults)."""
    from .impl.named import settle

    opdef, params = settle(opdef, params)
    values = resolve_params(opdef, params, preset)
    dtype = str(values["dtype"])
    peak = hw.peak(dtype)
    bw = hw.bandwidth
    env, failed = _checked_env(opdef, values, hw)
    if failed is not None:
        raise CheckError(f"{opdef.name}: {failed}")

    flops = _num(opdef, "flops", env)
    exact = {name: _exact(opdef, f"bytes.{name}.expr", env) for name in opdef.bytes}
    breakdown = [ByteItem(term=name, bytes=_plain(exact[name]), help=bt.help) for name, bt in opdef.bytes.items()]
    total = _plain(sum((Fraction(v) for v in exact.values()), Fraction(0)))
    if flops < 0 or total < 0 or any(b.bytes < 0 for b in breakdown):
        raise DomainError(f"{opdef.source}: a FLOP or byte formula came out negative for these parameters")
    if total == 0:
        raise DomainError(f"{opdef.name}: moves no bytes for these parameters; intensity is undefined")

    launches = int(_num(opdef, "launches", env))
    intensity = _ratio(flops, total)
    ridge = peak / bw
    t_compute = _ratio(flops, 1) / peak if flops else 0.0
    t_memory = _ratio(total, 1) / bw
    overhead_each = float(hw.launch_overhead_s.value) if hw.launch_overhead_s else 0.0
    t_overhead = launches * overhead_each
    roof_time = max(t_compute, t_memory)
    bound: Literal["memory", "compute", "interconnect"] = "compute" if t_compute >= t_memory else "memory"
    attainable = min(peak, bw * intensity)

    info: list[InfoItem] = []
    for iname, inf in opdef.info.items():
        if inf.when is not None and not _ev(opdef, f"info.{iname}.when", env):
            continue
        info.append(InfoItem(name=iname, value=_num(opdef, f"info.{iname}.expr", env), help=inf.help))

    warnings = [w.message for i, w in enumerate(opdef.warnings) if _ev(opdef, f"warnings.{i}.when", env)]
    warnings += _engine_warnings(hw, dtype, total, t_overhead, roof_time)

    t_ic = 0.0
    ic_bytes: int | float = 0
    if opdef.interconnect is not None:
        ic_bytes = _num(opdef, "interconnect.expr", env)
        if ic_bytes:
            if hw.interconnect_bytes_per_s is None:
                raise DomainError(f"{hw.id} gives no interconnect bandwidth, needed for more than one GPU")
            # the file's figure is bidirectional; a ring all-reduce sends at the one-way rate
            t_ic = float(ic_bytes) / (float(hw.interconnect_bytes_per_s.value) / 2)
    predicted = roof_time + t_ic + t_overhead
    if t_ic > roof_time:  # the all-reduces take longer than the GPU's own work
        bound = "interconnect"
    tokens = _num(opdef, "tokens", env) if opdef.tokens is not None else None
    parts = []
    for rname, row in opdef.breakdown.items():
        bf = _num(opdef, f"breakdown.{rname}.flops", env)
        bb = _num(opdef, f"breakdown.{rname}.bytes", env)
        tc, tm = (_ratio(bf, 1) / peak if bf else 0.0), _ratio(bb, 1) / bw
        parts.append(
            BreakdownItem(
                part=rname,
                flops=bf,
                bytes=bb,
                intensity=_ratio(bf, bb) if bb else 0.0,
                bound="compute" if tc >= tm else "memory",
                time_s=max(tc, tm),
                help=row.help,
            )
        )
    memory = _memory_fit(opdef, env, values, hw, memory_reserve) if opdef.memory and expected else None
    if memory is not None and not memory.fits:
        warnings.insert(0, _no_fit_warning(memory))
    exp = _expected(opdef, env, hw, dtype, launch, warnings) if expected and _measured(hw) else None
    if exp is not None and exp.seconds < predicted:
        exp = _held_at_the_bound(exp, predicted)
    if exp is not None and parts:
        parts = _expected_by_part(parts, exp)

    exposed = _host_exposed(hw, exp) if exp else None
    result = RooflineResult(
        op=opdef.name,
        hardware=hw.id,
        hardware_name=hw.name,
        dtype=dtype,
        params={k: v for k, v in values.items() if k != "dtype"},
        flops=flops,
        bytes=total,
        bytes_breakdown=breakdown,
        intensity=intensity,
        ridge=ridge,
        bound=bound,
        peak_flops_per_s=peak,
        bandwidth_bytes_per_s=bw,
        t_compute_s=t_compute,
        t_memory_s=t_memory,
        launches=launches,
        t_overhead_s=t_overhead,
        predicted_s=predicted,
        attainable_flops_per_s=attainable,
        fraction_of_peak=attainable / peak,
        calibrated=hw.calibration is not None,
        host_figure=_given_host(hw),
        info=info,
        warnings=warnings,
        t_interconnect_s=t_ic,
        interconnect_bytes=ic_bytes,
        tokens=tokens,
        time_label=opdef.time_label,
        tokens_per_s=(float(tokens) / predicted) if tokens is not None else None,
        memory=memory,
        breakdown=parts,
        expected_s=exp.seconds if exp else None,
        expected_terms=exp.terms if exp else [],
        expected_kernels=exp.kernels if exp else [],
        expected_launch=exp.launch if exp else None,
        expected_limiter=exp.limiter if exp else None,
        expected_host_exposed=exposed,
        headroom=(exp.seconds / predicted) if exp and predicted > 0 else None,
        expected_notes=[*exp.notes, *_exposed_note(hw, exp, exposed)]
        if exp
        else []
        if _measured(hw) or not expected
        else [_no_figures_note(hw)],
        bound_s=predicted,
        expected_figures=_figures_by_kind(hw, (values.get("impl"), opdef.name) if opdef.presets else None)
        if exp is not None
        else {},
    )
    return result.model_copy(update={"summary": summarize(result)}) if expected else result


def _figures_by_kind(hw: Hardware, impl: tuple[Any, str] | None = None) -> dict[str, list[str]]:
    """The expected-time model's figures on this card, grouped by what they are (issue: a result
    says which of its figures are fitted or transferred, not only measured), and those the named
    implementation's step reads (``impl``: its name and the op), as ``impls/NAME.yaml:figure``."""
    from .hardware import derived

    memo = derived(hw)
    if ("figures_by_kind",) not in memo:  # the same for every op on this card: walked once
        base: dict[str, list[str]] = {}
        for path, fig in hw.figures():
            if path.startswith("expected."):
                base.setdefault(fig.kind, []).append(path.removeprefix("expected."))
        memo[("figures_by_kind",)] = base
    out = {kind: list(paths) for kind, paths in memo[("figures_by_kind",)].items()}
    if impl is not None and isinstance(impl[0], str):
        from .impl.named import figures_read, load_named

        named = load_named(impl[0])
        if impl[1] in named.phases:
            for name, owner in figures_read(named, impl[1]).items():
                out.setdefault(load_named(owner).figures[name].kind, []).append(f"impls/{owner}.yaml:{name}")
    return dict(sorted(out.items()))


def _measured(hw: Hardware) -> bool:
    """Whether the card has measured figures for the expected-time model (its file's `expected`
    section, from a probe run); without them the model would fall back to the peaks, i.e. print the
    bound again under another name, so it gives no expected time at all."""
    return any(
        getattr(hw.expected, name) not in (None, {}, [])
        for name in type(hw.expected).model_fields
        if name != "impl_host_op_s"  # given for one call, no figure of the card
    )


def _no_figures_note(hw: Hardware) -> str:
    return (
        f"{hw.id} has no measured figures for the expected-time model; run `roofcalc probe` on the card "
        "and pass its --save-calibration file with --calibration"
    )


def _no_fit_warning(m: MemoryFit) -> str:
    per = f" per GPU on {m.gpus}" if m.gpus > 1 else ""
    return (
        f"does not fit: needs {m.per_gpu_bytes / 1e9:,.1f} GB{per} against {m.usable_bytes / 1e9:,.1f} GB usable "
        f"({m.capacity_bytes / 1e9:,.1f} GB less a {m.reserve_bytes / 1e9:,.1f} GB reserve); "
        + (
            f"at least {m.gpus_needed} GPUs of this kind"
            if m.gpus_needed
            else f"no count of these GPUs the model accepts (up to {MAX_GPUS_SEARCHED:,}) holds it"
        )
    )


@functools.cache
def _kernel_keys(i: int) -> tuple[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]]:
    """The formula keys of kernel ``i``'s counts and amounts, built once."""
    return (
        tuple((key, f"kernels.{i}.{key}") for key in KERNEL_COUNTS),
        tuple((key, f"kernels.{i}.{key}") for key in KERNEL_AMOUNTS),
    )


def _launcher(opdef: OpDef, i: int, env: dict[str, Value]) -> str:
    """Who issues kernel ``i`` from Python: its own launcher formula, else the op's, else aten."""
    kd = opdef.kernels[i]
    key = f"kernels.{i}.launcher" if kd.launcher is not None else "launcher" if opdef.launcher is not None else None
    if key is None:
        return "aten"
    who = _ev(opdef, key, env)
    if who not in ("aten", "inductor"):
        raise DomainError(f"{opdef.source}: {key}: {who!r} is not aten or inductor")
    return str(who)


def _kernels(opdef: OpDef, env: dict[str, Value], dtype: str) -> list[Any]:
    """Each kernel whose `when` holds, evaluated, marked with who issues it from Python."""
    out = []

    def add(i: int, k: Any) -> None:
        if k is not None:
            who = _launcher(opdef, i, env)
            out.append(k if who == "aten" else dataclasses.replace(k, launcher=who))

    for i, kd in enumerate(opdef.kernels):
        get = _kernel_names(opdef, i)
        try:
            vals = get(env) if get is not None else ()
        except KeyError:  # a name this case lacks (an optional parameter): evaluated as it goes
            add(i, _kernel(opdef, i, kd, env, dtype))
            continue
        key = (id(opdef), i, dtype, vals, *map(type, vals))
        hit = _KERNEL_MEMO.get(key)
        if hit is not None and hit[0] is opdef:
            k = hit[1]
        else:
            k = _kernel(opdef, i, kd, env, dtype)
            if len(_KERNEL_MEMO) >= _KERNEL_MEMO_SIZE:
                _KERNEL_MEMO.clear()
            _KERNEL_MEMO[key] = (opdef, k)
        add(i, k)
    return out


# Each kernel of an op, evaluated (a frozen Kernel, or None where its `when` is false): a pure
# function of the op, the dtype and the values of the names its formulas use, and the cases of
# a report share most of them (decode at several contexts runs the same GEMMs and norms). The
# entries hold the op itself, so that an id is never that of another op while its entry is here.
_KERNEL_MEMO: dict[tuple[Any, ...], tuple[OpDef, Any]] = {}
_KERNEL_MEMO_SIZE = 8192
_KERNEL_NAMES: dict[tuple[int, int], tuple[OpDef, Any]] = {}


def _kernel_names(opdef: OpDef, i: int) -> Any:
    """A getter of the values of every name kernel ``i``'s formulas use (None: no names)."""
    hit = _KERNEL_NAMES.get((id(opdef), i))
    if hit is not None and hit[0] is opdef:
        return hit[1]
    names: set[str] = set()
    prefix = f"kernels.{i}."
    for key in ("when", *KERNEL_FORMULAS):
        if key != "when" or opdef.kernels[i].when is not None:
            names |= opdef.formula(prefix + key).names
    order = sorted(names)
    get = operator.itemgetter(*order, *order[:1]) if order else None
    if len(_KERNEL_NAMES) >= _KERNEL_MEMO_SIZE:
        _KERNEL_NAMES.clear()
    _KERNEL_NAMES[(id(opdef), i)] = (opdef, get)
    return get


def _kernel(opdef: OpDef, i: int, kd: Any, env: dict[str, Value], dtype: str) -> Any:
    from .expected import Kernel

    if kd.when is not None and not _ev(opdef, f"kernels.{i}.when", env):
        return None
    vals: dict[str, Any] = {}
    counts, amounts = _kernel_keys(i)
    for key, fkey in counts:
        vals[key] = max(0, math.ceil(_num(opdef, fkey, env)))
    for key, fkey in amounts:
        vals[key] = float(_num(opdef, fkey, env))
        if vals[key] < 0:
            raise DomainError(f"{opdef.source}: kernels.{i}.{key} came out negative for these parameters")
    vals["causal"] = bool(_ev(opdef, f"kernels.{i}.causal", env))
    vals["c_read"] = bool(_ev(opdef, f"kernels.{i}.c_read", env))
    if vals["threads"] < 1:
        raise DomainError(f"{opdef.source}: kernels.{i}.threads: no threads for these parameters")
    if kd.model in ("flash", "cudnn_flash") and vals["repeat"]:
        sizes = {key: vals[key] for key in ("batch", "heads", "seq", "kv_seq", "head_dim")}
        if min(sizes.values()) < 1:
            raise DomainError(
                f"{opdef.source}: kernels.{i} ({kd.name}): an attention kernel needs batch, heads, seq, kv_seq and "
                f"head_dim of at least 1 (got {', '.join(f'{k} {v}' for k, v in sizes.items())})"
            )
    if kd.model == "gemm" and vals["repeat"] and min(vals["m"], vals["n"], vals["k"], vals["batch"]) < 1:
        raise DomainError(
            f"{opdef.source}: kernels.{i} ({kd.name}): a GEMM needs m, n, k and batch of at least 1 "
            f"(got {vals['m']} x {vals['n']} x {vals['k']}, batch {vals['batch']})"
        )
    return Kernel(
        name=kd.name,
        model=kd.model,
        help=kd.help,
        dtype=dtype,
        pipe=kd.pipe,
        in_order=kd.in_order,
        closes_step=kd.closes_step,
        linear=kd.linear,
        transposed=kd.transposed,
        part=kd.part,
        **vals,
    )


def _exposed_note(hw: Hardware, exp: Any, exposed: bool | None) -> list[str]:
    """A step the GPU paces at the card's host figure that a slow host would pace: why its band is
    the host-paced steps' (the terms show the GPU's kernels)."""
    slow = hw.expected.torch_op_slow_s if hw.expected is not None else None
    if not exposed or exp.limiter == "host" or slow is None:
        return []
    return [
        "at the card's host figure the host does not pace this step in the model (its wait, if any, under a "
        f"tenth of the step), but a host at the slow end of the card's hosts ({slow.value * 1e6:.1f} us an op, "
        "torch_op_slow_s) would: lenders' hosts move between a fast and a slow state within seconds, so it "
        "spreads as the steps the host paces do (the band line names the cases it counts)"
    ]


def _host_exposed(hw: Hardware, exp: Any) -> bool | None:
    """Whether the host's speed can pace a step issued from Python: its host paces it in the model,
    or would with the host at the slow end of the card's hosts (torch_op_slow_s). A lender's host
    runs in a fast or a slow state and moves between them within seconds, so a step whose GPU only
    just outlasts the host's issue spreads as the host-paced ones do (validation/expected/host_slow.py).
    The host's issue is in proportion to its op (compose: every host cost is so many ops, a hardware
    file's compiled figures scaled with it as validation.with_host_op scales them), so the slow
    host's step is max(busy, issue x slow / op + after), host-paced as compose reads it: its wait
    over a tenth of the step. None for a step not issued from Python, where the card gives no slow
    end, or where the host's pace is the implementation's own (--host-layer)."""
    if exp.launch != "eager" or exp.host_side is None:
        return None
    if exp.limiter == "host":
        return True
    e = hw.expected
    if e is None or e.torch_op_slow_s is None or e.torch_op_floor_s is None or e.impl_host_op_s is not None:
        return None
    if e.torch_op_slow_s.value <= e.torch_op_floor_s.value:
        return False
    issue, after, busy = exp.host_side
    step = max(busy, issue * e.torch_op_slow_s.value / e.torch_op_floor_s.value + after)
    return bool(step - busy > 0.1 * step)


def _expected(
    opdef: OpDef, env: dict[str, Value], hw: Hardware, dtype: str, launch: str | None, warnings: list[str]
) -> Any:
    """The expected time, or None where the op declares no kernels or the part lacks the figures
    (a part the occupancy solver cannot run on adds a warning that names the figure)."""
    from .expected import compose
    from .occupancy_solver import missing_fields

    if not opdef.kernels or not hw.sm_value("sm_count") or hw.cc is None:
        return None
    lacks = missing_fields(hw)
    if lacks:
        warnings.append(
            f"no expected time: {hw.id} gives no sm.{lacks[0]}, which the occupancy solver (and so the "
            "expected-time model) needs; the bound above stands"
        )
        return None
    if launch is None:
        launch = str(_ev(opdef, "launch", env)) if opdef.launch is not None else "event"
        if launch not in ("event", "stream", "graph", "eager"):
            raise DomainError(f"{opdef.source}: launch: {launch!r} is not event, stream, graph or eager")
    kernels = _kernels(opdef, env, dtype)
    if not kernels:
        return None
    raw_entries = _num(opdef, "host_entries", env)
    if isinstance(raw_entries, bool) or not float(raw_entries).is_integer() or not 0 <= raw_entries <= 1e6:
        raise DomainError(
            f"{opdef.source}: host_entries: {raw_entries!r} is not a whole number of calls from 0 to 1,000,000"
        )
    entries = int(raw_entries)
    from .impl.named import HOST_NATIVE_TERM, HOST_TERM

    # an implementation's own host work per step, and the part of it in native code
    host_ops = float(env.get(HOST_TERM, 0) or 0)
    native = float(env.get(HOST_NATIVE_TERM, 0) or 0)
    for name, v in (("host_ops", host_ops), ("host_ops_native", native)):
        if not 0 <= v <= 1e9:
            raise DomainError(f"{opdef.source}: {name}: {v!r} is not a count of host-op times from 0 to 10^9")
    return compose(hw, kernels, ELEMENT_BYTES[dtype], launch, entries, host_ops, native)  # type: ignore[arg-type]


def _expected_by_part(parts: list[BreakdownItem], exp: Any) -> list[BreakdownItem]:
    """The expected time and kernel count of each layer kind (kernels tagged with `part`)."""
    by: dict[str, tuple[float, int]] = {}
    for k in exp.kernels:
        t, n = by.get(k.part or "other", (0.0, 0))
        by[k.part or "other"] = (t + k.launched_s * k.count, n + k.count)
    out = [
        p.model_copy(update={"expected_s": by.get(p.part, (None, 0))[0], "kernels": by.get(p.part, (0.0, 0))[1]})
        for p in parts
    ]
    for name, (t, n) in by.items():
        if name not in {p.part for p in parts}:
            out.append(
                BreakdownItem(
                    part=name,
                    flops=0,
                    bytes=0,
                    intensity=0.0,
                    bound="memory",
                    time_s=0.0,
                    help="kernels outside the layer kinds above",
                    expected_s=t,
                    kernels=n,
                )
            )
    return out


def _memory_fit(
    opdef: OpDef, env: dict[str, Value], values: dict[str, Any], hw: Hardware, reserve: float | None = None
) -> MemoryFit:

    from .defaults import MEMORY_RESERVE_FIXED_BYTES, MEMORY_RESERVE_FRACTION

    items = [ByteItem(term=n, bytes=_num(opdef, f"memory.{n}.expr", env), help=m.help) for n, m in opdef.memory.items()]
    needed = sum(i.bytes for i in items)
    gpus = int(values[opdef.gpus_param]) if opdef.gpus_param else 1
    total = hw.memory.total_bytes or hw.memory.capacity_bytes
    cap = float(total.value)
    if reserve is None:
        reserve = MEMORY_RESERVE_FIXED_BYTES + MEMORY_RESERVE_FRACTION * cap
    if not 0 <= reserve < cap:
        raise InputError(f"--memory-reserve: {reserve:,.0f} bytes leaves nothing of {hw.id}'s {cap:,.0f}")
    usable = cap - reserve
    per_gpu = float(needed) / gpus
    return MemoryFit(
        items=items,
        needed_bytes=needed,
        gpus=gpus,
        per_gpu_bytes=per_gpu,
        capacity_bytes=cap,
        reserve_bytes=reserve,
        usable_bytes=usable,
        fits=per_gpu <= usable,
        gpus_needed=_gpus_needed(opdef, values, hw, usable),
    )


MAX_GPUS_SEARCHED = 4096


def _gpus_needed(opdef: OpDef, values: dict[str, Any], hw: Hardware, usable: float) -> int:
    """The fewest GPUs, up to MAX_GPUS_SEARCHED, that the op's checks accept (heads and the MLP
    split evenly, and an implementation's own, such as transformers' KV heads) and whose per-GPU
    share of the memory, its terms evaluated at that count, fits ``usable``; 0 where none does.
    The KV cache is copied once GPUs outnumber its heads, so the memory never shrinks below one
    GPU's over the count: the search starts there."""
    import math

    name = opdef.gpus_param

    def memory_at(g: int) -> float | None:
        env, failed = _checked_env(opdef, {**values, name: g} if name else values, hw)
        return None if failed is not None else sum(float(_num(opdef, f"memory.{n}.expr", env)) for n in opdef.memory)

    one = memory_at(1)
    if name is None or one is None:
        return 1 if one is not None and one <= usable else 0
    for g in range(max(1, math.ceil(one / usable)), MAX_GPUS_SEARCHED + 1):
        total = memory_at(g)
        if total is not None and total / g <= usable:
            return g
    return 0


def crossover(
    opdef: OpDef,
    hw: Hardware,
    name: str,
    params: dict[str, Any],
    preset: dict[str, Any] | None = None,
    label: str | None = None,
) -> Crossover:
    """The smallest value of the int parameter ``name`` at which the op turns compute-bound.

    A derived answer, computed only when asked for; the search stays inside the
    parameter's declared min and max.
    """
    p = opdef.params.get(name)
    if p is None or p.type != "int":
        raise InputError(f"{opdef.name} has no integer parameter {name!r}")
    bottom = max(1, int(p.min)) if p.min is not None else 1
    top = int(min(p.max or 1 << 20, 1 << 20))
    if top < bottom:
        top = bottom

    def compute_bound(v: int) -> bool:
        return evaluate(opdef, hw, {**params, name: v}, preset, expected=False).bound == "compute"

    def allowed(v: int) -> bool:
        """Whether the op's own checks accept this value with the other parameters (a prompt
        no longer than the model's context)."""
        try:
            compute_bound(v)
        except CheckError:
            return False
        return True

    if not allowed(top) and allowed(bottom):  # the largest value the checks accept, by bisection
        ok, bad = bottom, top
        while bad - ok > 1:
            mid = (ok + bad) // 2
            ok, bad = (mid, bad) if allowed(mid) else (ok, mid)
        top = ok

    shown = label or name  # how the text names the parameter (the CLI passes its option)
    if not compute_bound(top):
        return Crossover(
            param=name,
            value=None,
            text=f"stays memory-bound for any {shown} up to {top:,} with the other parameters as given",
        )
    if compute_bound(bottom):
        return Crossover(param=name, value=bottom, text=f"compute-bound from the smallest {shown} ({bottom:,})")
    lo, hi = bottom, top  # compute_bound(hi) holds; compute_bound(lo) does not
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if compute_bound(mid):
            hi = mid
        else:
            lo = mid
    return Crossover(param=name, value=hi, text=f"turns compute-bound at {shown} {hi:,} (memory-bound below)")


def _engine_warnings(hw: Hardware, dtype: str, total: int | float, t_overhead: float, roof_time: float) -> list[str]:
    out: list[str] = []
    from .units import fmt_bytes, fmt_time

    if hw.l2_bytes is not None and total <= hw.l2_bytes.value:
        out.append(
            f"the {fmt_bytes(total)} moved fit in the {fmt_bytes(hw.l2_bytes.value)} L2: back-to-back "
            "runs on warm data can beat the device-memory roof"
        )
    if t_overhead > roof_time:
        out.append(
            f"launch overhead ({fmt_time(t_overhead)}) exceeds the roofline time ({fmt_time(roof_time)}): "
            "this op is too small to reach either roof alone; fuse it or batch it"
        )
    fig = hw.peak_flops_per_s[dtype]
    if fig.kind == "estimate":
        out.append(f"the {dtype} peak of {hw.id} is an estimate ({hw.sources[fig.source].title})")
    if hw.memory.bandwidth_bytes_per_s.kind == "estimate":
        out.append(f"the memory bandwidth of {hw.id} is an estimate")
    if dtype == "fp32" and "tf32" in hw.peak_flops_per_s:
        out.append("fp32 uses the CUDA-core FP32 peak; use --dtype tf32 for tensor-core TF32")
    return out


__all__ = ["ByteItem", "RooflineResult", "analyze", "crossover", "evaluate", "resolve_params"]

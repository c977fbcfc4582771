"""A profiled run against the roofline: every op call's GPU time beside its bound.

Pure: a :class:`~roofcalc.trace.model.Trace` and a :class:`~roofcalc.hardware.Hardware` in, a
:class:`TraceReport` out. Per call (one op and the kernels it launched):

    bound    = max(flops / peak(dtype), bytes / bandwidth, sent / (interconnect / 2))
    fraction = bound / measured            (of the speed of light)
    lost     = measured - bound

with the peaks and the bandwidth read from the hardware file exactly as ``roofcalc op`` reads
them (``Hardware.peak``, ``Hardware.bandwidth``; a collective's bytes at the one-way link rate,
as roofline.py sends an all-reduce). A call with no model (an op roofcalc does not know, a
kernel no op launched, a CUDA-graph replay) keeps its GPU time, counted at that time where
totals ask for "at the bound": every kernel is accounted for, so the rows' GPU times add up to
the trace's total GPU time.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import DomainError, RoofcalcError
from ..hardware import Hardware
from ..output import SCHEMA_VERSION
from ..record import Record
from .link import Call, Linked, link
from .model import Kernel, Trace
from .opcost import TORCH_DTYPES, Cost, Unknown, collective_of, comm_cost, op_cost

US = 1e-6


# ------------------------------------------------------------------ records


@dataclass(frozen=True, kw_only=True)
class KernelRecord(Record):
    """One GPU activity with the op that launched it (see :func:`kernel_inventory`)."""

    name: str
    category: str  # kernel, gpu_memcpy or gpu_memset
    device: int | None
    stream: int | None
    start_us: float
    duration_us: float
    grid: list[int] | None
    block: list[int] | None
    registers_per_thread: int | None
    shared_memory_bytes: int | None  # static + dynamic, as the profiler reports it
    op: str | None  # the innermost op that launched it (aten::addmm), None for graph replays
    op_kind: str  # matmul, attention, softmax, norm, elementwise, copy, reduction, communication, graph, unknown
    call: int  # kernels of one op call share this number
    link: str  # launch, external id, graph or none
    input_dims: list[Any] | None
    input_types: list[str] | None
    concrete_inputs: list[str] | None
    dtype: str | None  # the op's first tensor dtype (bf16; the profiler's name where roofcalc has none)
    collective: str | None  # NCCL kernels: allreduce, allgather...
    blocks_per_sm: int | None = None  # resident blocks per SM (occupancy solver), with a hardware
    occupancy: float | None = None  # resident warps / the SM's warp slots
    waves: float | None = None  # grid blocks / (blocks per SM * SMs)


@dataclass(frozen=True, kw_only=True)
class OpRow(Record):
    """All calls of one op name (or of one kernel name where no op launched it)."""

    name: str
    kind: str
    calls: int
    kernels: int
    gpu_s: float
    modelled_s: float  # GPU time of the calls with a model
    unknown_s: float  # GPU time of the calls without one
    bound_s: float | None
    lost_s: float | None  # modelled_s - bound_s
    fraction: float | None  # bound_s / modelled_s: the fraction of the speed of light
    flops: int
    bytes: int
    interconnect_bytes: int
    achieved_flops_per_s: float | None
    achieved_bytes_per_s: float | None
    limiter: str | None  # compute, memory or interconnect: the largest part of the summed bound
    occupancy: float | None  # GPU-time-weighted occupancy of its kernels (occupancy solver)
    example: str | None  # the formula of its longest call, with the values
    reason: str | None  # why calls have no model (the first reason)


@dataclass(frozen=True, kw_only=True)
class KindRow(Record):
    kind: str
    calls: int
    gpu_s: float
    modelled_s: float
    unknown_s: float
    bound_s: float | None
    lost_s: float | None
    fraction: float | None


@dataclass(frozen=True, kw_only=True)
class CallRow(Record):
    """One op call, for the list of calls that lost the most time."""

    op: str
    kind: str
    start_us: float
    gpu_s: float
    bound_s: float
    lost_s: float
    fraction: float
    flops: int
    bytes: int
    dtype: str | None
    limiter: str
    formula: str
    kernels: list[str]


@dataclass(frozen=True, kw_only=True)
class TraceSummary(Record):
    wall_s: float  # first event's start to last event's end
    devices: int
    steps: int  # ProfilerStep#N annotations
    kernels: int
    calls: int
    kernel_s: float  # sum of every GPU activity's duration
    accounted_s: float  # sum of the rows' GPU time: equals kernel_s
    gpu_busy_s: float  # union of the GPU activities, per device, summed
    busy_fraction: float | None  # gpu_busy_s / (wall_s * devices)
    idle_s: float  # wall_s * devices - gpu_busy_s: time the GPUs waited (host-bound gaps)
    modelled_s: float  # GPU time of calls with a model
    bound_s: float  # their bound
    lost_s: float  # modelled_s - bound_s
    unknown_s: float  # GPU time of calls with no model
    at_bound_s: float  # GPU time if every op ran at its bound (calls with no model at their time)
    speed_of_light_fraction: float | None  # at_bound_s / (wall_s * devices)
    communication_s: float  # NCCL kernels' time
    communication_exposed_s: float  # ... of it, with no other kernel running on that device
    most_lost: str | None
    most_lost_s: float | None


@dataclass(frozen=True, kw_only=True)
class TraceReport(Record):
    version: int = SCHEMA_VERSION
    file: str
    hardware: str
    hardware_name: str
    trace_devices: list[str]
    summary: TraceSummary
    ops: list[OpRow]
    kinds: list[KindRow]
    top_calls: list[CallRow]
    notes: list[str] = field(default_factory=list)


# ------------------------------------------------------------------ per call


@dataclass
class _Bound:
    seconds: float
    compute_s: float
    memory_s: float
    interconnect_s: float

    @property
    def limiter(self) -> str:
        parts = {"compute": self.compute_s, "memory": self.memory_s, "interconnect": self.interconnect_s}
        return max(parts, key=lambda k: parts[k])


class _Ctx:
    """What the pass over the calls collects besides the rows."""

    def __init__(self, hw: Hardware | None) -> None:
        self.hw = hw
        self.missing_peaks: set[str] = set()
        self.no_link = False
        self.occ: dict[tuple[int, int, int], tuple[int, float] | None] = {}

    def bound(self, cost: Cost) -> _Bound | Unknown:
        hw = self.hw
        if hw is None:
            return Unknown(cost.kind, "no hardware")
        t_c = 0.0
        if cost.flops and cost.dtype is not None:
            if cost.dtype in hw.peak_flops_per_s:
                t_c = float(cost.flops) / hw.peak(cost.dtype)
            else:
                self.missing_peaks.add(cost.dtype)
        t_m = float(cost.bytes) / hw.bandwidth
        t_i = 0.0
        if cost.interconnect_bytes:
            if hw.interconnect_bytes_per_s is None:
                self.no_link = True
                return Unknown(cost.kind, f"{hw.id} gives no interconnect bandwidth")
            # the file's figure is bidirectional; a ring sends at the one-way rate (as roofline.py)
            t_i = float(cost.interconnect_bytes) / (float(hw.interconnect_bytes_per_s.value) / 2)
        return _Bound(max(t_c, t_m, t_i), t_c, t_m, t_i)

    def occupancy(self, k: Kernel) -> tuple[int, float] | None:
        """Resident blocks per SM and occupancy of the launch, from the occupancy solver."""
        if self.hw is None or k.cat != "kernel" or k.block is None or not k.regs:
            return None
        threads = k.block[0] * k.block[1] * k.block[2]
        key = (threads, k.regs, k.smem or 0)
        if key not in self.occ:
            from ..occupancy_solver import occupancy

            got: tuple[int, float] | None = None
            try:
                r = occupancy(self.hw, threads, k.regs, smem=k.smem or 0)
                if r.blocks_per_sm is not None and r.occupancy is not None:
                    got = (r.blocks_per_sm, r.occupancy)
            except RoofcalcError:  # a launch the hardware file's limits refuse, or no residency rules
                pass
            self.occ[key] = got
        return self.occ[key]


def _host_copy(trace: Trace, call: Call) -> bool:
    for i in call.kernels:
        k = trace.kernels[i]
        if k.cat == "gpu_memcpy" and "DtoD" not in k.name:
            return True
    return False


def call_name(trace: Trace, call: Call) -> str:
    """The row a call is counted in: its op's name; a collective's name; else its kernel's name."""
    if call.is_comm and call.comm is not None:
        return "nccl:" + (collective_of(call.comm.collective) or call.comm.collective)
    if call.op is not None and not call.is_comm:
        return call.op.name
    return trace.kernels[call.kernels[0]].name


def call_cost(trace: Trace, call: Call) -> Cost | Unknown:
    """The FLOPs and bytes of a call, or why there are none."""
    if call.is_comm:
        if call.comm is None:
            return Unknown("communication", "no collective record (record_param_comms) for this NCCL kernel")
        return comm_cost(call.comm)
    if call.graph:
        return Unknown("graph", "replayed by a CUDA graph: no op recorded its shapes")
    if call.op is None:
        return Unknown("unknown", "no op launched it (no launch with its correlation id, no op around the launch)")
    names = [trace.kernels[i].name for i in call.kernels]
    cost = op_cost(call.op.name, call.op.dims, call.op.types, call.op.concrete, names, call.op.strides)
    if isinstance(cost, Cost) and _host_copy(trace, call):
        return Unknown(
            cost.kind, "a copy between host and device: its ceiling is the host link, not in the hardware file"
        )
    return cost


def _dtype_of(types: list[str] | None) -> str | None:
    for t in types or ():
        if t in TORCH_DTYPES:
            return TORCH_DTYPES[t][0] or t
    return None


# ------------------------------------------------------------------ the inventory


def kernel_inventory(
    trace: Trace, hardware: Hardware | None = None, linked: Linked | None = None
) -> list[KernelRecord]:
    """Every GPU activity of the trace, in time order, with the op that launched it (name, kind,
    shapes, dtypes), its launch (grid, block, registers, shared memory) and its duration; with a
    hardware, its blocks per SM, occupancy and waves from the occupancy solver."""
    linked = linked or link(trace)
    ctx = _Ctx(hardware)
    sm_count = hardware.sm_value("sm_count") if hardware is not None else None
    kinds: dict[int, str] = {}
    out: list[KernelRecord] = []
    for ki, k in enumerate(trace.kernels):
        ci = linked.call_of[ki]
        call = linked.calls[ci]
        if ci not in kinds:
            cost = call_cost(trace, call)
            kinds[ci] = cost.kind
        occ = ctx.occupancy(k)
        waves = None
        if occ is not None and sm_count and k.grid is not None and occ[0] > 0:
            waves = k.grid[0] * k.grid[1] * k.grid[2] / (occ[0] * sm_count)
        out.append(
            KernelRecord(
                name=k.name,
                category=k.cat,
                device=k.device,
                stream=k.stream,
                start_us=k.ts,
                duration_us=k.dur,
                grid=list(k.grid) if k.grid is not None else None,
                block=list(k.block) if k.block is not None else None,
                registers_per_thread=k.regs,
                shared_memory_bytes=k.smem,
                op=call.op.name if call.op is not None else None,
                op_kind=kinds[ci],
                call=ci,
                link=call.link,
                input_dims=call.op.dims if call.op is not None else None,
                input_types=call.op.types if call.op is not None else None,
                concrete_inputs=call.op.concrete if call.op is not None else None,
                dtype=_dtype_of(call.op.types) if call.op is not None else None,
                collective=(collective_of(call.comm.collective) or call.comm.collective)
                if call.is_comm and call.comm is not None
                else None,
                blocks_per_sm=occ[0] if occ is not None else None,
                occupancy=occ[1] if occ is not None else None,
                waves=waves,
            )
        )
    out.sort(key=lambda r: (r.start_us, r.device if r.device is not None else -1))
    return out


# ------------------------------------------------------------------ time on the GPU


def _union(intervals: Iterable[tuple[float, float]]) -> float:
    total, cur_s, cur_e = 0.0, None, 0.0
    for s, e in sorted(intervals):
        if cur_s is None or s > cur_e:
            if cur_s is not None:
                total += cur_e - cur_s
            cur_s, cur_e = s, e
        elif e > cur_e:
            cur_e = e
    if cur_s is not None:
        total += cur_e - cur_s
    return total


# ------------------------------------------------------------------ the report


@dataclass
class _Acc:
    name: str
    kind: str
    calls: int = 0
    kernels: int = 0
    gpu_us: list[float] = field(default_factory=list)
    modelled_us: list[float] = field(default_factory=list)
    unknown_us: list[float] = field(default_factory=list)
    bound_s: list[float] = field(default_factory=list)
    compute_s: float = 0.0
    memory_s: float = 0.0
    interconnect_s: float = 0.0
    flops: int = 0
    bytes: int = 0
    ic_bytes: int = 0
    occ_weighted: float = 0.0
    occ_us: float = 0.0
    example: tuple[float, str] | None = None
    reason: str | None = None

    def modelled(self) -> bool:
        return bool(self.modelled_us)


def _ratio(a: float, b: float) -> float | None:
    return a / b if b > 0 else None


def analyze_trace(trace: Trace, hardware: Hardware, top: int = 20) -> TraceReport:
    """The report of ``roofcalc trace``: per op and per kind, the step's totals, the ``top``
    calls that lost the most time (0: all)."""
    if not trace.kernels:
        raise DomainError(
            f"{trace.label}: no GPU kernels in the trace; profile with "
            "activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]"
        )
    hw = hardware
    linked = link(trace)
    ctx = _Ctx(hw)
    rows: dict[str, _Acc] = {}
    kinds: dict[str, _Acc] = {}
    heap: list[tuple[float, int, CallRow]] = []  # the calls that lost the most, smallest first
    faster: list[str] = []
    graph_us: list[float] = []
    for ci, call in enumerate(linked.calls):
        durs = [trace.kernels[i].dur for i in call.kernels]
        measured_us = math.fsum(durs)
        cost = call_cost(trace, call)
        bound = ctx.bound(cost) if isinstance(cost, Cost) else cost
        name = call_name(trace, call)
        kind = cost.kind
        for acc in (rows.setdefault(name, _Acc(name, kind)), kinds.setdefault(kind, _Acc(kind, kind))):
            acc.calls += 1
            acc.kernels += len(call.kernels)
            acc.gpu_us.append(measured_us)
            if isinstance(bound, _Bound) and isinstance(cost, Cost):
                acc.modelled_us.append(measured_us)
                acc.bound_s.append(bound.seconds)
                acc.compute_s += bound.compute_s
                acc.memory_s += bound.memory_s
                acc.interconnect_s += bound.interconnect_s
                acc.flops += cost.flops
                acc.bytes += cost.bytes
                acc.ic_bytes += cost.interconnect_bytes
                if acc.example is None or measured_us > acc.example[0]:
                    acc.example = (measured_us, cost.formula)
            else:
                acc.unknown_us.append(measured_us)
                if acc.reason is None and isinstance(bound, Unknown):
                    acc.reason = bound.reason
            for i in call.kernels:
                occ = ctx.occupancy(trace.kernels[i])
                if occ is not None:
                    acc.occ_weighted += occ[1] * trace.kernels[i].dur
                    acc.occ_us += trace.kernels[i].dur
        if call.graph:
            graph_us.append(measured_us)
        if isinstance(bound, _Bound) and isinstance(cost, Cost):
            measured = measured_us * US
            lost = measured - bound.seconds
            if measured < bound.seconds * (1 - 1e-9):
                faster.append(name)
            if top > 0 and len(heap) >= top and (lost, -ci) <= heap[0][:2]:
                continue
            row = CallRow(
                op=name,
                kind=kind,
                start_us=min(trace.kernels[i].ts for i in call.kernels),
                gpu_s=measured,
                bound_s=bound.seconds,
                lost_s=lost,
                fraction=bound.seconds / measured if measured > 0 else math.inf,
                flops=cost.flops,
                bytes=cost.bytes + cost.interconnect_bytes,
                dtype=cost.dtype,
                limiter=bound.limiter,
                formula=cost.formula,
                kernels=[trace.kernels[i].name for i in call.kernels],
            )
            # ties: the earlier call ranks first (the later one leaves the heap first)
            if top > 0 and len(heap) >= top:
                heapq.heapreplace(heap, (lost, -ci, row))
            else:
                heapq.heappush(heap, (lost, -ci, row))
    op_rows = sorted((_op_row(a) for a in rows.values()), key=_rank, reverse=True)
    kind_rows = sorted((_kind_row(a) for a in kinds.values()), key=lambda r: r.gpu_s, reverse=True)
    top_calls = [r for _, _, r in sorted(heap, key=lambda x: (x[0], x[1]), reverse=True)]
    summary = _summary(trace, linked, op_rows)
    notes = _notes(trace, hw, ctx, linked, summary, faster, graph_us)
    return TraceReport(
        file=trace.label,
        hardware=hw.id,
        hardware_name=hw.name,
        trace_devices=trace.device_names,
        summary=summary,
        ops=op_rows,
        kinds=kind_rows,
        top_calls=top_calls,
        notes=notes,
    )


def _rank(r: OpRow) -> float:
    """Rows by time lost; a row without a model by its GPU time (all of it could be lost)."""
    return (r.lost_s or 0.0) + r.unknown_s


def _op_row(a: _Acc) -> OpRow:
    gpu = math.fsum(a.gpu_us) * US
    modelled = math.fsum(a.modelled_us) * US
    bound = math.fsum(a.bound_s) if a.modelled() else None
    parts = {"compute": a.compute_s, "memory": a.memory_s, "interconnect": a.interconnect_s}
    return OpRow(
        name=a.name,
        kind=a.kind,
        calls=a.calls,
        kernels=a.kernels,
        gpu_s=gpu,
        modelled_s=modelled,
        unknown_s=math.fsum(a.unknown_us) * US,
        bound_s=bound,
        lost_s=modelled - bound if bound is not None else None,
        fraction=_ratio(bound, modelled) if bound is not None else None,
        flops=a.flops,
        bytes=a.bytes,
        interconnect_bytes=a.ic_bytes,
        achieved_flops_per_s=_ratio(a.flops, modelled) if a.modelled() and a.flops else None,
        achieved_bytes_per_s=_ratio(a.bytes + a.ic_bytes, modelled) if a.modelled() else None,
        limiter=max(parts, key=lambda k: parts[k]) if a.modelled() else None,
        occupancy=a.occ_weighted / a.occ_us if a.occ_us > 0 else None,
        example=a.example[1] if a.example else None,
        reason=a.reason,
    )


def _kind_row(a: _Acc) -> KindRow:
    modelled = math.fsum(a.modelled_us) * US
    bound = math.fsum(a.bound_s) if a.modelled() else None
    return KindRow(
        kind=a.kind,
        calls=a.calls,
        gpu_s=math.fsum(a.gpu_us) * US,
        modelled_s=modelled,
        unknown_s=math.fsum(a.unknown_us) * US,
        bound_s=bound,
        lost_s=modelled - bound if bound is not None else None,
        fraction=_ratio(bound, modelled) if bound is not None else None,
    )


def _summary(trace: Trace, linked: Linked, rows: list[OpRow]) -> TraceSummary:
    by_device: dict[int | None, list[tuple[float, float]]] = {}
    other: dict[int | None, list[tuple[float, float]]] = {}
    comm_us: list[float] = []
    comm_dev: dict[int | None, bool] = {}
    for ki, k in enumerate(trace.kernels):
        iv = (k.ts, k.ts + k.dur)
        by_device.setdefault(k.device, []).append(iv)
        if linked.calls[linked.call_of[ki]].is_comm:
            comm_us.append(k.dur)
            comm_dev[k.device] = True
        else:
            other.setdefault(k.device, []).append(iv)
    busy = math.fsum(_union(v) for v in by_device.values()) * US
    exposed = math.fsum(_union(by_device[d]) - _union(other.get(d, [])) for d in comm_dev) * US
    devices = len(by_device)
    first, last = trace.first_us, trace.last_us
    wall = (last - first) * US if first is not None and last is not None else 0.0
    kernel_s = math.fsum(k.dur for k in trace.kernels) * US
    modelled = math.fsum(r.modelled_s for r in rows)
    bound = math.fsum(r.bound_s for r in rows if r.bound_s is not None)
    unknown = math.fsum(r.unknown_s for r in rows)
    at_bound = bound + unknown
    known = [r for r in rows if r.lost_s is not None]
    most = max(known, key=lambda r: r.lost_s or 0.0) if known else None
    return TraceSummary(
        wall_s=wall,
        devices=devices,
        steps=trace.steps,
        kernels=len(trace.kernels),
        calls=len(linked.calls),
        kernel_s=kernel_s,
        accounted_s=math.fsum(r.gpu_s for r in rows),
        gpu_busy_s=busy,
        busy_fraction=_ratio(busy, wall * devices),
        idle_s=max(0.0, wall * devices - busy),
        modelled_s=modelled,
        bound_s=bound,
        lost_s=modelled - bound,
        unknown_s=unknown,
        at_bound_s=at_bound,
        speed_of_light_fraction=_ratio(at_bound, wall * devices),
        communication_s=math.fsum(comm_us) * US,
        communication_exposed_s=max(0.0, exposed),
        most_lost=most.name if most is not None else None,
        most_lost_s=most.lost_s if most is not None else None,
    )


def _notes(
    trace: Trace,
    hw: Hardware,
    ctx: _Ctx,
    linked: Linked,
    s: TraceSummary,
    faster: list[str],
    graph_us: list[float],
) -> list[str]:
    from ..units import fmt_time

    notes = []
    if s.unknown_s > 0:
        share = s.unknown_s / s.kernel_s if s.kernel_s else 0.0
        notes.append(
            f"{fmt_time(s.unknown_s)} of GPU time ({share:.0%}) is in calls with no FLOP and byte model; "
            "'at the bound' counts them at their measured time"
        )
    if graph_us:
        notes.append(
            f"{len(graph_us)} kernels ({fmt_time(math.fsum(graph_us) * US)}) were replayed by CUDA graphs: "
            "no op recorded their shapes"
        )
    if linked.unlinked:
        many = linked.unlinked > 1
        notes.append(
            f"{linked.unlinked} GPU {'activities have' if many else 'activity has'} no launch and no op in the trace"
        )
    if faster:
        names = ", ".join(sorted(set(faster))[:3])
        notes.append(
            f"{len(faster)} call{'s' if len(faster) > 1 else ''} ran faster than the bound ({names}): data served from the L2 cache, "
            "or fp32 matmuls on TF32 tensor cores (bounded here at the fp32 peak)"
        )
    for dt in sorted(ctx.missing_peaks):
        notes.append(f"{hw.id} gives no {dt} peak: {dt} ops are bounded by their bytes only")
    if ctx.no_link:
        notes.append(f"{hw.id} gives no interconnect bandwidth: collectives have no bound")
    if trace.duplicate_correlations:
        notes.append(
            f"{trace.duplicate_correlations} launches repeat a correlation id (merged traces?): the first was kept"
        )
    if s.devices > 1:
        notes.append(f"{s.devices} devices in one trace: busy, idle and speed of light are summed over them")
    return notes


__all__ = [
    "CallRow",
    "KernelRecord",
    "KindRow",
    "OpRow",
    "TraceReport",
    "TraceSummary",
    "analyze_trace",
    "call_cost",
    "call_name",
    "kernel_inventory",
]

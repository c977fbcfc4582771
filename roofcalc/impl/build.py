"""A profiler trace of one step -> an implementation file (roofcalc.impl.spec).

What is kept of the trace, and how:

- **The host timeline.** Each kernel's launch time on the thread that launched most of them,
  less what recording cost the host up to that point (``overhead``: per recorded CPU op and per
  launch, measured by validation/bench/trace_capture.py --overhead) and less the time the host
  spent waiting in synchronisations before it; the synchronisations themselves, which the
  prediction replays against the new GPU timeline.
- **Each kernel's shapes as formulas.** A size within CONTEXT_SLACK above the traced context
  (decode) is ``context + d``; a size equal to the traced prompt (prefill) is ``seq``; the first
  size of a tensor that is the traced batch times 1, the prompt length or a head count seen in a
  [batch, heads, ...] tensor is ``batch`` (times that factor). Everything else is a constant. A
  traced context or prompt equal to a weight's size would be ambiguous: refused.
- **The fixed cost of a kernel**, per kind of op: the shortest kernel of that kind in the trace.
"""

from __future__ import annotations

import bisect
from collections import Counter
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from .spec import MAX_KERNELS, SCHEMA, ImplFile, ImplKernel, Overhead

if TYPE_CHECKING:
    from ..hardware import Hardware
    from ..trace.model import Trace

CONTEXT_SLACK = 64  # decode: sizes from context to context + this are the cache's length
SYNC_CALLS = ("cudaStreamSynchronize", "cudaDeviceSynchronize", "cudaEventSynchronize", "cudaMemcpy")
NO_OVERHEAD = Overhead(per_cpu_op_s=0.0, per_launch_s=0.0, kind="none", source="not corrected")


class _Symbols:
    """Turns the traced sizes of one step into formulas over batch and context (or seq)."""

    def __init__(self, phase: str, batch: int, size: int, heads: set[int], weight_sizes: set[int]) -> None:
        self.phase, self.batch, self.size = phase, batch, size
        self.factors = {1, *heads} | ({size} if phase == "prefill" else set())
        self.weight_sizes = weight_sizes  # sizes of the model's weights: never the context

    def size_of(self, d: int, first: bool) -> int | str:
        if (
            self.phase == "decode"
            and self.size <= d <= self.size + CONTEXT_SLACK
            and self.size >= 16
            and d not in self.weight_sizes
        ):
            return "context" if d == self.size else f"context + {d - self.size}"
        if self.phase == "prefill" and first and d == self.batch * self.size and self.size >= 16:
            return "batch*seq"  # the tokens of the batch, flattened (with batch 1, also the prompt)
        if self.phase == "prefill" and d == self.size and self.size >= 16:
            return "seq"
        if first and d > 0 and d % self.batch == 0 and d // self.batch in self.factors:
            k = d // self.batch
            return "batch" if k == 1 else "batch*seq" if self.phase == "prefill" and k == self.size else f"batch*{k}"
        return d

    def shape(self, dims: Any) -> Any:
        if isinstance(dims, list) and dims and all(isinstance(x, list) for x in dims):
            return [self.shape(x) for x in dims]  # a tensor list
        if isinstance(dims, list) and all(isinstance(x, int) for x in dims):
            return [self.size_of(d, i == 0) for i, d in enumerate(dims)]
        return dims


def _heads(records: list[Any], batch: int) -> set[int]:
    """Head counts: the second size of 4-D tensors whose first is the batch ([batch, heads, t, d])."""
    out: set[int] = set()
    for r in records:
        for shape in r.input_dims or []:
            if isinstance(shape, list) and len(shape) == 4 and shape[0] == batch and isinstance(shape[1], int):
                out.add(shape[1])
    return out


WEIGHT_INPUTS = {"aten::mm": (1,), "aten::addmm": (0, 2), "aten::linear": (1, 2)}  # which inputs are weights


def _weight_sizes(records: list[Any]) -> set[int]:
    out: set[int] = set()
    for r in records:
        for i, shape in enumerate(r.input_dims or []):
            if i in WEIGHT_INPUTS.get(r.op or "", ()) and isinstance(shape, list) and len(shape) in (1, 2):
                out.update(d for d in shape if isinstance(d, int))
    return out


def _ambiguous(sym: _Symbols) -> None:
    """A traced context or prompt that is also a weight's size cannot be told apart: refuse."""
    clash = {sym.size, sym.size + 1} & sym.weight_sizes if sym.phase == "decode" else {sym.size} & sym.weight_sizes
    if clash:
        what = "context" if sym.phase == "decode" else "prompt length"
        raise InputError(
            f"--{'context' if sym.phase == 'decode' else 'seq'} {sym.size}: the traced {what} is also a size of "
            f"the model's weights ({min(clash)}); trace a step at another {what}"
        )


def _comm_bytes(comm: Any) -> int | None:
    """A collective's bytes sent per GPU, from its record (None: not a collective, or unknown)."""
    from ..trace.opcost import Cost, comm_cost

    if comm is None:
        return None
    cost = comm_cost(comm)
    return cost.interconnect_bytes if isinstance(cost, Cost) else None


class _HostClock:
    """Host time of a traced instant, with the profiler's recording cost and waits removed."""

    def __init__(self, trace: Trace, thread: Any, overhead: Overhead) -> None:
        ops = trace.cpu_ops.get(thread, [])
        self.op_starts = sorted(op.ts for op in ops)
        launches = sorted((ln.ts, ln.name) for ln in trace.launches.values() if ln.thread == thread)
        self.launch_ts = [t for t, _ in launches]
        self.t0 = min([*self.op_starts[:1], *self.launch_ts[:1]])
        self.overhead = overhead
        # each sync waits until the host's next event on this thread
        events = sorted([*self.op_starts, *self.launch_ts])
        self.syncs: list[tuple[float, float]] = []
        for ts, name in launches:
            if name.startswith(SYNC_CALLS) and not name.startswith("cudaMemcpyAsync"):
                i = bisect.bisect_right(events, ts)
                nxt = events[i] if i < len(events) else ts
                self.syncs.append((ts, max(0.0, nxt - ts)))
        self.wait_ends = [ts + w for ts, w in self.syncs]
        self.wait_cum = [0.0]
        for _, w in self.syncs:
            self.wait_cum.append(self.wait_cum[-1] + w)

    def at(self, ts: float) -> float:
        n_ops = bisect.bisect_left(self.op_starts, ts)
        n_launch = bisect.bisect_left(self.launch_ts, ts)
        waited = self.wait_cum[bisect.bisect_right(self.wait_ends, ts)]
        cost = (n_ops * self.overhead.per_cpu_op_s + n_launch * self.overhead.per_launch_s) * 1e6
        return max(0.0, ts - self.t0 - cost - waited)


def _main_thread(trace: Trace) -> Any:
    counts = Counter(ln.thread for ln in trace.launches.values())
    if not counts:
        raise InputError(f"{trace.label}: no kernel launches in the trace: nothing to make an implementation of")
    return counts.most_common(1)[0][0]


def build_impl(
    trace: Trace,
    hw: Hardware,
    *,
    name: str,
    phase: str,
    batch: int,
    size: int,
    overhead: Overhead | None = None,
    measured_step_s: float | None = None,
    cuda_graphs: bool = False,
) -> ImplFile:
    """The implementation of the one step in ``trace``, traced at ``batch`` and ``size`` (the
    context for decode, the prompt length for prefill). ``cuda_graphs``: the step runs replayed
    from a CUDA graph (traced from an eager run of the same code): its kernels one after another,
    the host's timeline unused."""
    from pydantic import ValidationError

    from ..trace import kernel_inventory

    if trace.steps > 1:
        raise InputError(f"{trace.label}: {trace.steps} profiler steps; an implementation is one step (trace one)")
    if len(trace.kernels) > MAX_KERNELS:
        raise InputError(
            f"{trace.label}: {len(trace.kernels):,} GPU kernels; an implementation holds at most {MAX_KERNELS:,}"
        )
    from ..trace.link import link

    linked = link(trace)
    records = kernel_inventory(trace, hw, linked)
    # a collective's details (group, message size), from the kernel's own record or, as the
    # trace reader links them, from the record_param_comms op that launched it
    comms = [linked.calls[r.call].comm if linked.calls[r.call].is_comm else None for r in records]
    lost = next(
        (
            r
            for r, c in zip(records, comms, strict=True)
            if r.op_kind == "communication" and (c is None or not c.group_size)
        ),
        None,
    )
    groups = {c.group_size for c in comms if c is not None and c.group_size}
    if len(groups) > 1:
        raise InputError(
            f"{trace.label}: its collectives record groups of {', '.join(map(str, sorted(groups)))} GPUs; an "
            "implementation's shapes are the shards of one GPU count"
        )
    if lost is not None:
        raise InputError(
            f"{trace.label}: the collective {lost.name[:60]} has no recorded group size, so the GPU count the "
            "trace's shapes are shards for is unknown (record it with torch.profiler's record_shapes=True)"
        )
    if not records:
        raise InputError(f"{trace.label}: no GPU kernels in the trace")
    try:
        return _build(
            trace,
            hw,
            records,
            comms,
            name=name,
            phase=phase,
            batch=batch,
            size=size,
            overhead=overhead,
            measured_step_s=measured_step_s,
            cuda_graphs=cuda_graphs,
        )
    except ValidationError as e:
        err = e.errors()[0]
        where = ".".join(str(x) for x in err["loc"])
        raise InputError(f"{trace.label}: cannot be kept as an implementation: {where}: {err['msg']}") from None


def _build(
    trace: Trace,
    hw: Hardware,
    records: list[Any],
    comms: list[Any],
    *,
    name: str,
    phase: str,
    batch: int,
    size: int,
    overhead: Overhead | None,
    measured_step_s: float | None,
    cuda_graphs: bool,
) -> ImplFile:
    from . import graph_replay

    sym = _Symbols(phase, batch, size, _heads(records, batch), _weight_sizes(records))
    _ambiguous(sym)
    overhead = overhead or NO_OVERHEAD
    clock = _HostClock(trace, _main_thread(trace), overhead)
    kernels: list[ImplKernel] = []
    issue = 0.0
    # the inventory lists the kernels in time order (a stable sort on start and device): the
    # trace's kernels in the same order, so that each record meets its own kernel
    ordered = sorted(trace.kernels, key=lambda k: (k.ts, k.device if k.device is not None else -1))
    for k, r, comm in zip(ordered, records, comms, strict=True):
        launch = trace.launches.get(k.corr) if k.corr is not None else None
        issue = clock.at(launch.ts) if launch is not None else issue  # graph nodes: with the one before
        kernels.append(
            ImplKernel(
                name=r.name[:120],  # enough to recognise it; the full name is in the trace
                op=r.op,
                kind=r.op_kind,
                call=r.call,
                stream=k.stream if k.stream is not None else 0,
                issue_us=issue,
                measured_us=max(0.0, r.duration_us),
                dims=sym.shape(r.input_dims) if r.input_dims is not None else None,
                types=r.input_types,
                concrete=r.concrete_inputs,
                comm_bytes=_comm_bytes(comm),
            )
        )
    kernels.sort(key=lambda kn: kn.issue_us)  # the replay walks the host's issue order (streams may interleave)
    last_host = max([*clock.op_starts, *clock.launch_ts])
    fixed: dict[str, float] = {}
    for kn in kernels:
        fixed[kn.kind] = min(fixed.get(kn.kind, kn.measured_us), kn.measured_us)
    impl = ImplFile.model_validate(
        {
            "schema": SCHEMA,
            "name": name[:200],
            "phase": phase,
            "traced": {"batch": batch, ("context" if phase == "decode" else "seq"): size},
            "hardware": hw.id,
            "device": trace.device_names[0] if trace.device_names else None,
            "source": trace.label,
            "made_by": "roofcalc trace --save-impl",
            "measured_step_s": measured_step_s,
            "host_scale": 1.0,
            "overhead": overhead,
            "host_end_us": clock.at(last_host),
            "syncs_us": [clock.at(ts) for ts, _ in clock.syncs],
            "fixed_us": fixed,
            # the collectives' group: the GPU count the trace's shapes are shards for
            "gpus": max((c.group_size or 1 for c in comms if c is not None), default=1),
            "graph": graph_replay(hw.calibration.base if hw.calibration is not None else hw.id)
            if cuda_graphs
            else None,
            "kernels": kernels,
        }
    )
    if measured_step_s is not None and not cuda_graphs:
        from .predict import host_scale_for

        impl = impl.model_copy(update={"host_scale": host_scale_for(impl, hw, measured_step_s)})
    return impl

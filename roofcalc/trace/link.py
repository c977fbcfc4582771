"""From each GPU activity back to the op that launched it.

A kernel carries the correlation id of the runtime call that launched it (cudaLaunchKernel,
cuLaunchKernel, cudaMemcpyAsync, cudaGraphLaunch...); that call ran on a CPU thread inside a
stack of ops, and the innermost op enclosing it in time (on the same thread) is the op whose
shapes the kernel computed. Where no op encloses the launch, or the launch is missing, the
"External id" the profiler gave the kernel (or its launch) names the op instead. Kernels that a
CUDA graph replays have only the cudaGraphLaunch: they belong to no op. NCCL kernels take their
message from the collective's record (record_param_comms, nccl:*) above their launch, or from
their own args where the profiler copied it there.

The unit of the analysis is a *call*: one op call and all the GPU activities it launched (a GEMM
and its split-K reduction, a memset of cuBLAS's workspace), or one kernel that no op launched.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .model import Comm, CpuOp, ThreadKey, Trace

GRAPH_LAUNCH_WORDS = ("GraphLaunch",)  # cudaGraphLaunch, cuGraphLaunch, hipGraphLaunch
NCCL_PREFIXES = ("nccl", "void nccl", "ncclDevKernel", "ncclKernel")
COMM_LOOKBACK = 64  # earlier ops searched for a collective's record that does not enclose the launch


def is_comm_kernel(name: str) -> bool:
    return name.startswith(NCCL_PREFIXES)


@dataclass
class Call:
    """One op call and the GPU activities it launched, or one activity no op launched."""

    op: CpuOp | None
    thread: ThreadKey | None
    kernels: list[int] = field(default_factory=list)  # indices into Trace.kernels
    link: str = "none"  # "launch" (correlation id, then time), "external id", "graph" or "none"
    comm: Comm | None = None  # the collective's record, for NCCL kernels
    is_comm: bool = False

    @property
    def graph(self) -> bool:
        return self.link == "graph"


@dataclass
class Linked:
    calls: list[Call]
    call_of: list[int]  # per kernel, the index of its call
    unlinked: int  # kernels whose launch and op were not found (outside graphs)


def _innermost(trace: Trace) -> tuple[dict[int, tuple[ThreadKey, int]], dict[ThreadKey, list[int]]]:
    """Sort each thread's ops by start (outer first on ties) and find, for every launch, the
    innermost op enclosing its start; also each op's parent (-1: none)."""
    by_thread: dict[ThreadKey, list[tuple[float, int]]] = {}
    for corr, la in trace.launches.items():
        by_thread.setdefault(la.thread, []).append((la.ts, corr))
    where: dict[int, tuple[ThreadKey, int]] = {}
    parents: dict[ThreadKey, list[int]] = {}
    for thread, ops in trace.cpu_ops.items():
        ops.sort(key=lambda o: (o.ts, -o.end))
        parent = [-1] * len(ops)
        launches = sorted(by_thread.get(thread, ()))
        stack: list[int] = []
        j = 0
        for t, corr in [*launches, (float("inf"), -1)]:
            while j < len(ops) and ops[j].ts <= t:
                start = ops[j].ts
                while stack and ops[stack[-1]].end < start:
                    stack.pop()
                parent[j] = stack[-1] if stack else -1
                stack.append(j)
                j += 1
            if corr < 0:
                break
            while stack and ops[stack[-1]].end < t:
                stack.pop()
            if stack:
                where[corr] = (thread, stack[-1])
        parents[thread] = parent
    return where, parents


def _comm_record(trace: Trace, parents: dict[ThreadKey, list[int]], thread: ThreadKey, i: int) -> Comm | None:
    ops = trace.cpu_ops[thread]
    parent = parents[thread]
    j, outer = i, i
    while j >= 0:  # the op itself and the ops around it
        if ops[j].comm is not None:
            return ops[j].comm
        outer = j
        j = parent[j]
    lo = ops[outer].ts  # else the latest earlier record inside the same outermost op
    for j in range(i - 1, max(-1, i - 1 - COMM_LOOKBACK), -1):
        if ops[j].ts < lo:
            break
        if ops[j].comm is not None:
            return ops[j].comm
    return None


def link(trace: Trace) -> Linked:
    """Group the trace's GPU activities into calls (see the module's docstring)."""
    where, parents = _innermost(trace)
    by_ext: dict[int, tuple[ThreadKey, int]] = {}
    for thread, ops in trace.cpu_ops.items():
        for i, op in enumerate(ops):
            if op.ext is not None and op.ext not in by_ext:
                by_ext[op.ext] = (thread, i)
    calls: list[Call] = []
    index: dict[tuple[object, ...], int] = {}
    call_of: list[int] = []
    unlinked = 0
    comm_names: dict[str, bool] = {}
    for ki, k in enumerate(trace.kernels):
        la = trace.launches.get(k.corr) if k.corr is not None else None
        comm = comm_names.get(k.name)
        if comm is None:
            comm = comm_names[k.name] = is_comm_kernel(k.name)
        loc: tuple[ThreadKey, int] | None = None
        how = "none"
        if la is not None and any(w in la.name for w in GRAPH_LAUNCH_WORDS):
            how = "graph"
        else:
            if la is not None and k.corr is not None:
                loc = where.get(k.corr)
                how = "launch" if loc is not None else how
            if loc is None:
                ext = la.ext if la is not None and la.ext else k.ext
                loc = by_ext.get(ext) if ext else None
                how = "external id" if loc is not None else how
        if loc is None:
            unlinked += how == "none"
            call = Call(op=None, thread=None, kernels=[ki], link=how, comm=k.comm, is_comm=comm)
            call_of.append(len(calls))
            calls.append(call)
            continue
        key = (loc, comm)
        ci = index.get(key)
        if ci is None:
            thread, i = loc
            ci = index[key] = len(calls)
            record = k.comm
            if comm and record is None:
                record = _comm_record(trace, parents, thread, i)
            calls.append(Call(op=trace.cpu_ops[thread][i], thread=thread, link=how, comm=record, is_comm=comm))
        calls[ci].kernels.append(ki)
        call_of.append(ci)
    return Linked(calls=calls, call_of=call_of, unlinked=unlinked)


__all__ = ["Call", "Linked", "is_comm_kernel", "link"]

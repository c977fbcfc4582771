"""What the trace reader keeps of each event: only the fields the analysis reads.

A 200 MB trace holds about a million events; each kept one is a small tuple (names are
interned by the reader, so a kernel name repeated 10,000 times is stored once).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

# "Input Dims" of one op: per input, a shape (list of ints), a list of shapes (a TensorList)
# or [] (a scalar, None, or a zero-dimensional tensor)
Dims = list[list[int] | list[list[int]]]
ThreadKey = tuple[int | str, int | str]  # (pid, tid)


class Comm(NamedTuple):
    """The collective's record (record_param_comms and nccl:* ops, or the NCCL kernel's args)."""

    collective: str
    in_nelems: int | None
    out_nelems: int | None
    dtype: str | None
    group_size: int | None


class CpuOp(NamedTuple):
    ts: float  # us
    end: float  # us
    name: str
    ext: int | None  # "External id"
    dims: Dims | None
    types: list[str] | None
    concrete: list[str] | None
    comm: Comm | None
    strides: Dims | None = None  # "Input Strides", shaped as dims (an expanded input reads less than its size)


class Launch(NamedTuple):
    """A runtime call with a correlation id (cudaLaunchKernel, cuLaunchKernel, cudaGraphLaunch...)."""

    thread: ThreadKey
    ts: float
    name: str
    ext: int | None


class Kernel(NamedTuple):
    """One GPU activity: a kernel, a memcpy or a memset."""

    ts: float  # us
    dur: float  # us
    name: str
    cat: str  # kernel, gpu_memcpy or gpu_memset
    device: int | None
    stream: int | None
    corr: int | None
    ext: int | None
    grid: tuple[int, int, int] | None
    block: tuple[int, int, int] | None
    regs: int | None
    smem: int | None
    comm: Comm | None


@dataclass
class Trace:
    """A PyTorch profiler trace, reduced to what roofcalc reads. Built by :func:`read_trace`."""

    label: str  # the file, as messages name it
    layout: str  # "object" ({"traceEvents": [...]}) or "array" (a bare list of events)
    compressed: bool
    text_chars: int  # characters of JSON read (after decompression)
    events: int = 0  # entries of traceEvents
    cpu_ops: dict[ThreadKey, list[CpuOp]] = field(default_factory=dict)
    launches: dict[int, Launch] = field(default_factory=dict)
    kernels: list[Kernel] = field(default_factory=list)
    first_us: float | None = None  # the earliest start of a complete ("X") event
    last_us: float | None = None  # the latest end of one
    steps: int = 0  # ProfilerStep#N annotations
    device_names: list[str] = field(default_factory=list)  # deviceProperties[].name
    duplicate_correlations: int = 0

"""The records of the expected-time model: the kernels an op declares (Kernel, its figures
evaluated) and the results (KernelEstimate per kernel, Term per contribution, Expected per op).
No mechanism and no hardware figure: the other modules of the package fill them in."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from ..record import Record

Launch = Literal["event", "stream", "graph", "eager"]


@dataclass(frozen=True, kw_only=True)
class Term(Record):
    """One named contribution to the expected time, with its reason."""

    name: str
    seconds: float
    reason: str


@dataclass(frozen=True, kw_only=True)
class KernelEstimate(Record):
    name: str
    model: str
    seconds: float  # one run of the kernel
    count: int = 1  # how many times it runs
    part: str | None = None  # the layer kind it belongs to (decode/prefill breakdown)
    launched_s: float = 0.0  # one run with its share of the launch floor
    # issued by a framework call; False: launched by a library within one (a split-K
    # reduction, FA-2's combine), which costs the host no call of its own
    issued: bool = True
    # who issues it from Python: "aten" = an eager PyTorch op; "inductor" = the generated code of
    # a torch.compile'd function (its launches cost the host more: compiled_kernel_host_s)
    launcher: Literal["aten", "inductor"] = "aten"
    # its time is a measured one taken with the L2 full of other data's dirty lines (the choice
    # map's shallow plane): the write-back a writing flush leaves is in it already
    dirty_held: bool = False
    # issued after every layer's kernels (the logits, their argmax): a step issued from Python
    # ends no sooner than the host's last issue plus these kernels' time
    closes_step: bool = False
    grid: int
    blocks_per_sm: int | None
    waves: float
    bound: Literal["memory", "compute", "latency"]
    reason: str


@dataclass(frozen=True, kw_only=True)
class Expected(Record):
    seconds: float
    # what most of the expected time goes to: memory, compute, latency, launch or interconnect
    limiter: str = "memory"
    terms: list[Term]
    kernels: list[KernelEstimate]
    launch: Launch
    calibrated: bool
    notes: list[str] = field(default_factory=list)
    # a step issued from Python (launch "eager"): the host's issue, the kernels run after its last
    # issue, and the GPU's busy time (s); the step takes max(busy, issue + after). The host's issue
    # is in proportion to its op (torch_op_floor_s) where no implementation pace is given
    host_side: tuple[float, float, float] | None = None


@dataclass(frozen=True)
class Kernel:
    """One kernel with its figures evaluated (the op file's ``kernels:`` entries)."""

    name: str
    model: Literal["stream", "gemm", "flash", "cudnn_flash", "reduce", "allreduce", "allgather"]
    help: str
    dtype: str
    grid: int = 1
    threads: int = 256
    regs: int = 32
    smem: int = 0
    dram_bytes: float = 0.0
    reread_bytes: float = 0.0
    footprint_bytes: float = 0.0
    prior_bytes: float = 0.0  # reads of what the kernel before just wrote
    flops: float = 0.0
    pipe: Literal["cuda", "tensor", "mma"] = "cuda"
    in_order: bool = False  # a thread's items one after another: issue and memory add
    linear: bool = False  # a GEMM as F.linear runs it: x (m x k) times a weight stored n x k
    transposed: bool = False  # a GEMM whose second operand is used transposed (q @ k^T)
    passes: int = 1
    inflight_bytes: int = 16
    write_bytes: float = 0.0  # the part of dram_bytes that is written
    sfu_ops: float = 0.0  # special-function operations (exp, rsqrt, reciprocal)
    instructions: float = 0.0  # warp instructions the kernel executes (measured with Nsight Compute)
    warps: int = 0  # warps that each work through their own serial piece (a warp per row)
    repeat: int = 1  # how many times the kernel runs (e.g. once per layer)
    part: str | None = None  # the layer kind (decode/prefill breakdown)
    # gemm
    m: int = 0
    n: int = 0
    k: int = 0
    batch: int = 1
    c_read: bool = False  # a GEMM that reads C too (beta != 0: C = alpha A B + beta C)
    # flash attention
    heads: int = 0
    kv_heads: int = 0
    seq: int = 0
    kv_seq: int = 0
    head_dim: int = 0
    causal: bool = False
    ranks: int = 1  # collectives: GPUs taking part
    # who issues it from Python (KernelEstimate.launcher): no part of its time, so not of its identity
    launcher: Literal["aten", "inductor"] = field(default="aten", compare=False)
    # issued after every layer's kernels (KernelEstimate.closes_step): no part of its time either
    closes_step: bool = field(default=False, compare=False)

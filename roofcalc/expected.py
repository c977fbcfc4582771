"""The expected-time engine: how long the usual implementation of an op really takes.

Beside the speed-of-light bound (roofline.py), an op declares the kernels its usual
implementation launches (``kernels:`` in its op file). Each kernel's time is modelled
from mechanisms, every constant a hardware-file figure or a probe measurement:

* floors: a single op timed as a benchmark times it (events right after an L2 flush) pays
  the flushed-op floor once, each further kernel at least a small kernel queued on a busy
  stream, and the write-back of the dirty lines the flush left; kernels of a CUDA graph pay
  the graph floor each and no less than a small PyTorch kernel's node; an eager step takes
  the longer of the GPU's work and the host's issue of its ops;
* power: GEMMs in steps timed back to back run at the board's power-limited tensor rate;
* parallelism: the grid over the SMs (blocks per SM from the occupancy solver); with few
  blocks in flight, memory time is set by per-SM bandwidth, not the card's;
* GEMM: the tile shape a library would choose (tile and wave quantization), split-K for
  few tiles and a long k, a library kernel's fixed cost, the element-at-a-time path for
  leading dimensions that are not a multiple of 16 bytes, FP32 on CUDA cores;
* implementation traffic: the bytes the kernels really move, re-reads served by L2 when
  the data in flight fits there;
* achievable fractions of the peaks (measured by the probe).

Pure functions: no I/O, no printing.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Literal

from .dtypes import ELEMENT_BYTES
from .errors import DomainError
from .hardware import Expected as Figures
from .hardware import Hardware, bf16_tensor_fraction
from .record import Record

Launch = Literal["event", "stream", "graph", "eager"]

# GEMM tiles a Hopper/Ampere-class library chooses between (m x n per thread block); the
# split-K slices keep at least this many k per slice.
# The tile shapes (m x n per thread block) each cuBLAS path was seen to run on Hopper
# (validation/expected/h100/kernel-shapes.json): nvjet TMA kernels in 16-bit, the unaligned
# fallback cutlass_75 s1688gemm, FP32 SIMT/xmma kernels, TF32 xmma kernels.
GEMM_TILES: dict[str, tuple[tuple[int, int], ...]] = {
    "tma": (
        (256, 128),
        (128, 256),
        (192, 128),
        (128, 192),
        (192, 192),
        (128, 128),
        (128, 64),
        (64, 128),
        (64, 64),
        (128, 32),
        (64, 32),
        (128, 16),
        (64, 16),
        (64, 8),
    ),
    "unaligned": ((256, 128), (128, 128), (128, 64), (64, 64)),
    # cutlass_80 s16816 "align2" kernels (256x128_64x3, 128x256_32x3, 128x64_64x3) and, for
    # small problems, the wmma 32x32 one (validation/expected/h200/kernels/kshapes-rand*.json)
    "word": ((256, 128), (128, 256), (128, 64), (32, 32)),
    "simt": ((256, 128), (128, 64), (32, 64)),
    "tf32": ((128, 256), (128, 128), (64, 128)),
}
# The least k one split-K slice keeps, per library path. The TMA kernels keep long slices; the
# unaligned fallback (cutlass_75 s1688gemm, 32 k per step) splits down to about two k-steps
# when its tiles are few (the bf16 kernels of validation/expected/h200/kernels/kshapes-rand*.json:
# 64x64 tiles, 5 to 33 splits of 30 to 300 k each, where few tiles would leave SMs idle).
# The FP32 SIMT kernels (cutlass_80_simt_sgemm 128x32 and 64x64, then cublasLt's
# splitKreduce) do the same: with few tiles they cut k into slices of about 64 (k 920 into
# 16, 1,728 into 27, 2,008 into 32, 1,024 into 16: validation/expected/h100/kernels/
# skinny-fp32.json).
MIN_K_PER_SPLIT = {"tma": 512, "unaligned": 64, "word": 64, "simt": 64, "tf32": 512}
# a GEMM with at most this many rows (or columns) is the weight-streaming kind cuBLAS runs with
# its narrow-tile kernels (the 8- to 64-wide tiles in GEMM_TILES), like the probe's 16-row case
SKINNY_ROWS = 64
# one cuBLAS tile of an F.linear with few rows: weight rows on the wgmma M side, rows of x on
# its narrow side (nvjet "64x8" to "128x32" kernels, validation/expected/h100/kernels/graph-decode/)
LINEAR_TILE_N = 64
LINEAR_TILE_M = 32
# Where the part gives the narrow-tile kernels' own figures (expected.linear_gemm_*), a 16-bit
# F.linear runs them up to this many rows of x (nvjet "tst_64x8" to "tst_64x96" at batch 1-96
# in decode steps on H100s, validation/expected/h100x2/kernels/tp2-decode/; 48x64 to 128x64
# tiles at batch 128, kernels/linear-holdout/): each tile spans 64 weight rows and up to
# LINEAR_X_ROWS rows of x (cuBLAS widens its tiles with the batch, 8 to 96 rows, more than it
# adds tiles of x; of 32, 48, 64, 96 and all rows, 32 fits the 119 fitted kernels a little
# better, 96% within 15% against 94%, but jumps at 97 rows and fits the batch-128 hold-out worse,
# 91% against 93%: validation/bench/fit_linear_gemm.py, linear-holdout/README.md). cuBLAS cuts
# k into ceil(k / LINEAR_SPLIT_K) slices (at most that deep) while the tiles times the slices
# stay within LINEAR_MAX_CTAS: of 15 (tiles, k) pairs seen there, k of 2,048
# never split, 3,584 and most of 4,096 in two, 8,192 in four; four pairs took one slice more or
# fewer than this rule. Past LINEAR_ROWS rows the general tile search stands (not measured):
# its tiles come out faster than these, so a decode step's expected time drops by up to 10% from
# 128 rows to 129 (a boundary of what was measured, not of cuBLAS). At 65 rows the tiles of x
# double, the tiles outnumber LINEAR_MAX_CTAS / 2 and k stops being split: a step's expected
# time drops by up to 3% from 64 rows to 65 (cuBLAS did not split q and o at 64 rows either:
# tests/test_expected.py SPLIT_MISSES).
LINEAR_ROWS = 128
LINEAR_X_ROWS = 64
LINEAR_SPLIT_K = 2048
LINEAR_MAX_CTAS = 128
# The k-loop of each library path: k per pipeline step and steps in flight, read off the
# kernels cuBLAS runs (validation/expected/h100/kernel-shapes.json): nvjet TMA kernels
# "..._64x4" (k 64, 4 stages), the unaligned fallback cutlass_75_tensorop_s1688gemm
# (k 32, 2 stages), the word-aligned cutlass_80 s16816 "..._64x3" (k 64, 3 stages), FP32 SIMT/xmma kernels "...x8_stage3" (k 8, 3 stages). With few tiles
# per SM a tile cannot finish faster than its k-steps arrive: steps x latency / stages.
GEMM_PIPELINE = {"tma": (64, 4), "unaligned": (32, 2), "word": (64, 3), "simt": (8, 3), "tf32": (32, 4)}
# Clocks between two dependent instructions of one warp: "most arithmetic instructions have a
# latency of 4 clock cycles" on compute capability 7.x and later (CUDA C++ Programming Guide,
# arithmetic instructions). A warp that works alone on its share cannot go faster than that.
DEPENDENT_ISSUE_CLK = 4


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


@dataclass(frozen=True)
class Kernel:
    """One kernel with its figures evaluated (the op file's ``kernels:`` entries)."""

    name: str
    model: Literal["stream", "gemm", "flash", "allreduce", "allgather"]
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


# ------------------------------------------------------------------ hardware figures


@dataclass(frozen=True)
class Card:
    """The figures the model reads, resolved once from a hardware (or calibration) file."""

    sms: int
    dram_bw: float  # achievable streaming read bandwidth (B/s)
    copy_bw: float  # achievable when a kernel reads and writes as much (B/s)
    skinny_bw: float  # what a skinny GEMM streams its weights at (B/s)
    unaligned_gemv_bw: float  # what cuBLAS's gemv kernels stream a 16-bit matrix at (B/s; else skinny_bw)
    gemm_floor: float  # a library GEMM kernel's fixed cost over an empty kernel (s)
    gemm_floor_extra: tuple[tuple[str, float], ...]  # what a pre-Hopper kernel adds, per path (s)
    queued_floor: float  # a small PyTorch kernel queued on a busy stream (s)
    torch_node: float  # a small PyTorch kernel as a CUDA-graph node (s)
    l2_total: float  # the whole L2 (bytes)
    writeback: float  # cost of evicting a dirty L2 line, as a fraction of reading one
    l2_bw: float  # achievable L2 bandwidth for re-reads (B/s)
    l2_bytes: float
    per_sm_bw: float  # one SM's saturation bandwidth (B/s)
    latency: float  # DRAM load latency (s): dependent round trips
    loaded_latency: float  # Little's-law latency of streaming loads (s)
    l2_latency: float  # L2 hit latency (s)
    event_floor: float
    stream_floor: float
    graph_floor: float
    torch_floor: float
    compiled_kernel: float  # the host's cost per kernel launched from a compiled function (s)
    compiled_entry: float  # the host's cost per entry into a compiled function (s)
    clock_hz: float  # SM clock under load
    sfu_per_clk: float  # special-function results per clock per SM
    fp32_per_clk: float  # FP32 lanes per SM (FMA results per clock)
    issue_per_clk: float  # warp instructions an SM issues per clock (one per scheduler)
    sn_k_step: float  # cuBLAS gemmSN: seconds per step of k of each block (0: not modelled)
    serial_split_step: tuple[tuple[str, float], ...]  # cuBLAS serial split-K: seconds per slice, per tile
    # cuBLAS's tiling of F.linear with few rows, as seen on a Hopper part (wgmma); applied where
    # one SM's streaming rate is measured, since its tiles can leave SMs idle
    linear_tiles: bool
    # cuBLAS's narrow-tile F.linear kernels: fixed cost and seconds per 64-deep step of a tile's
    # k-loop (0: not measured for the part; the tile search stands in)
    linear_floor: float
    linear_k_step: float
    boost_hz: float  # the SM clock of issue-bound (non-tensor) work
    # tensor rate of GEMMs in steps timed back to back (the board at its power limit) over
    # the short-loop rate tensor_fraction gives; 1 where the part has no figure
    power_ratio: float
    calibrated: bool
    missing: tuple[str, ...]
    # floors the part does not state, taken as its launch_overhead_s (the bound's figure)
    standins: tuple[str, ...] = ()
    # figures given without the one they go with (not used): "given without absent: effect"
    unpaired: tuple[str, ...] = ()
    launch_overhead: float = 0.0


_last_card: tuple[Hardware, Card] | None = None


def card(hw: Hardware) -> Card:
    """The figures of ``hw`` (a frozen model): the last one asked for is kept, since a report
    or a sweep asks for the same hardware's figures once per case."""
    global _last_card
    last = _last_card
    if last is not None and last[0] is hw:
        return last[1]
    c = _card(hw)
    _last_card = (hw, c)
    return c


def _card(hw: Hardware) -> Card:
    e = hw.expected
    missing: list[str] = []
    standins: list[str] = []
    launch = float(hw.launch_overhead_s.value) if hw.launch_overhead_s else 0.0

    def fig(name: str, needed: bool = True) -> float:
        """A figure of the file, 0 where it gives none (named in the notes where the model needs it)."""
        f = getattr(e, name)
        if f is None:
            if needed:
                missing.append(name)
            return 0.0
        return float(f.value)

    def floor(name: str) -> float:
        """A launch floor the part states, else the launch overhead its bound charges per
        launch: without it the expected time of a small op would fall below the bound."""
        f = getattr(e, name)
        if f is not None:
            return float(f.value)
        if launch:
            standins.append(name)
            return launch
        missing.append(name)
        return 0.0

    sms = hw.sm_value("sm_count")
    if not sms:
        raise DomainError(f"{hw.id}: no sm_count, which the expected-time model needs")
    read_frac = fig("dram_read_fraction") or 1.0
    dram_bw = hw.bandwidth * read_frac
    copy_bw = hw.bandwidth * (fig("dram_copy_fraction") or read_frac)
    l2 = float(hw.l2_bytes.value) if hw.l2_bytes else 0.0
    l2 /= float(e.l2_partitions.value) if e.l2_partitions else 1.0  # what re-reads can count on
    l2_bw = fig("l2_bandwidth_bytes_per_s") or 2.0 * dram_bw
    per_sm = fig("per_sm_bandwidth_bytes_per_s") or dram_bw / sms
    clock = fig("sustained_sm_clock_mhz") or (float(hw.clocks.boost_mhz.value) if hw.clocks.boost_mhz else 0.0)
    fp32 = hw.cuda_core_flops_per_s.get("fp32") or hw.peak_flops_per_s.get("fp32")
    boost = float(hw.clocks.boost_mhz.value) * 1e6 if hw.clocks.boost_mhz else 0.0
    skinny_bw = dram_bw * (fig("skinny_gemm_bandwidth_fraction") or 1.0)
    # optional: without it, such GEMVs stream like the other skinny products
    gemv_frac = float(e.unaligned_gemv_bandwidth_fraction.value) if e.unaligned_gemv_bandwidth_fraction else 0.0
    lanes = float(fp32.value) / (2 * sms * boost) if fp32 is not None and boost else 128.0
    power = _power_ratio(hw)
    if power is None and e.tensor_fraction:  # a part that states the GEMM rates should state this too
        missing.append("power_limited_tensor_fraction")
    return Card(
        sms=sms,
        dram_bw=dram_bw,
        copy_bw=copy_bw,
        skinny_bw=skinny_bw,
        unaligned_gemv_bw=dram_bw * gemv_frac if gemv_frac else skinny_bw,
        gemm_floor=fig("gemm_kernel_floor_s"),
        gemm_floor_extra=tuple((p, float(f.value)) for p, f in sorted(e.gemm_kernel_floor_extra_s.items())),
        queued_floor=fig("queued_kernel_floor_s"),
        torch_node=fig("torch_graph_node_s"),
        l2_total=float(hw.l2_bytes.value) if hw.l2_bytes else 0.0,
        writeback=fig("l2_dirty_writeback_fraction"),
        l2_bw=l2_bw,
        l2_bytes=l2,
        per_sm_bw=per_sm,
        latency=fig("dram_latency_s"),
        loaded_latency=fig("loaded_latency_s") or fig("dram_latency_s"),
        l2_latency=fig("l2_latency_s"),
        event_floor=(float(e.flushed_op_floor_s.value) if e.flushed_op_floor_s else 0.0) or floor("event_floor_s"),
        stream_floor=floor("stream_floor_s"),
        graph_floor=fig("graph_floor_s"),
        torch_floor=fig("torch_op_floor_s"),  # the host's cost per op: no GPU figure stands in for it
        # a compiled function's launches and entry, else in proportion to the op floor (same host)
        compiled_kernel=fig("compiled_kernel_host_s", False) or COMPILED_KERNEL_OPS * fig("torch_op_floor_s", False),
        compiled_entry=fig("compiled_entry_host_s", False) or COMPILED_ENTRY_OPS * fig("torch_op_floor_s", False),
        clock_hz=clock * 1e6,
        sfu_per_clk=fig("sfu_ops_per_clk_per_sm"),
        fp32_per_clk=lanes,
        issue_per_clk=float(hw.sm_value("sub_partitions") or 4),
        sn_k_step=fig("gemm_sn_k_step_s", False),
        serial_split_step=tuple((t, float(f.value)) for t, f in sorted(e.gemm_serial_split_step_s.items())),
        linear_tiles=hw.cc is not None and hw.cc[0] == 9 and bool(fig("per_sm_bandwidth_bytes_per_s")),
        linear_floor=fig("linear_gemm_floor_s", False),
        linear_k_step=fig("linear_gemm_k_step_s", False),
        boost_hz=boost or clock * 1e6,
        power_ratio=power if power is not None else 1.0,
        calibrated=hw.calibration is not None,
        missing=tuple(dict.fromkeys(missing)),  # each figure named once
        standins=tuple(standins),
        unpaired=_unpaired(e),
        launch_overhead=launch,
    )


def _unpaired(e: Figures) -> tuple[str, ...]:
    """The narrow-tile figures go together (a fixed cost without its k-step is no model of the
    kernel): one given without the other is named, and neither is used."""
    pair = ("linear_gemm_floor_s", "linear_gemm_k_step_s")
    given = [name for name in pair if getattr(e, name) is not None]
    if len(given) != 1:
        return ()
    absent = pair[1 - pair.index(given[0])]
    return (f"{given[0]} without {absent}: the two go together, so F.linear keeps the general tile search",)


def _power_ratio(hw: Hardware) -> float | None:
    """power_limited_tensor_fraction over tensor_fraction.bf16 (fp16 where bf16 is not given);
    None where the file lacks either (the model then keeps the short-run rate). A calibration
    file takes its part's ratio whenever it is loaded, by any route (hardware._completed)."""
    plf, tf = hw.expected.power_limited_tensor_fraction, bf16_tensor_fraction(hw)
    if plf is None or tf is None:
        return None
    return min(1.0, float(plf.value) / tf)


def tensor_rate(hw: Hardware, dtype: str, aligned: bool = True, word: bool = False) -> float:
    """What a library GEMM achieves on the tensor cores (FP32: CUDA cores), FLOP/s. ``word``:
    not aligned to 16 bytes, but to 4 (its figure, else the unaligned one)."""
    e = hw.expected
    if dtype in ("fp32", "fp64"):
        frac = float(e.cuda_core_gemm_fraction.value) if e.cuda_core_gemm_fraction else 1.0
        return hw.peak(dtype) * frac
    word = word and not aligned
    table = e.word_aligned_tensor_fraction if word else e.tensor_fraction if aligned else e.unaligned_tensor_fraction
    f = table.get(dtype) or table.get("bf16" if dtype == "fp16" else "fp16" if dtype == "bf16" else dtype)
    if f is None and not aligned:  # word-aligned falls back to unaligned, unaligned to aligned
        return tensor_rate(hw, dtype, not word)
    return hw.peak(dtype) * (float(f.value) if f is not None else 1.0)


def mma_rate(hw: Hardware, dtype: str) -> float:
    """Tensor rate through warp-level mma.sync (FlashAttention-2's instruction), FLOP/s."""
    f = hw.expected.mma_sync_fraction.get(dtype) or hw.expected.mma_sync_fraction.get("bf16")
    return hw.peak(dtype) * (float(f.value) if f is not None else 1.0)


# ------------------------------------------------------------------ kernels


def _occupancy(hw: Hardware, k: Kernel) -> int:
    from .occupancy_solver import blocks_per_sm

    bps, _ = blocks_per_sm(hw, k.threads, k.regs, k.smem)
    return max(bps, 1)


def _prior_read(c: Card, k: Kernel, reads: float) -> float:
    """The bytes of its reads that the kernel before it has just written (prior_bytes, at most
    what the kernel reads), where that tensor fits the L2 share re-reads can count on; else 0."""
    prior = min(k.prior_bytes, max(reads, 0.0))
    return prior if 0 < prior <= c.l2_bytes and c.l2_bw else 0.0


def _prior_time(c: Card, prior: float, traffic: float, dram_bw: float, l2_rate: float) -> float:
    """The memory time of a kernel that reads ``prior`` bytes from the L2 (_prior_read): the
    rest of its traffic streams from DRAM beside them, and the L2 carries all of it."""
    return max((traffic - prior) / dram_bw, traffic / min(c.l2_bw, l2_rate))


def _stream(hw: Hardware, c: Card, k: Kernel) -> KernelEstimate:
    """A memory or elementwise/reduction kernel. Bandwidth follows Little's law: what each SM
    keeps in flight (resident blocks x threads x bytes per thread) over the memory latency,
    capped by one SM's saturation bandwidth and by the card's; plus the chain of dependent
    memory round trips of each block (load, reduce, store), wave after wave."""
    bps = _occupancy(hw, k)
    grid = max(k.grid, 1)
    active = min(c.sms, grid)
    resident = min(bps, math.ceil(grid / c.sms))
    waves = grid / (bps * c.sms)
    in_flight = resident * k.threads * k.inflight_bytes
    sm_bw = min(c.per_sm_bw, in_flight / c.loaded_latency) if c.loaded_latency else c.per_sm_bw

    def streams(traffic: float) -> float:
        """The card's rate for this traffic (its share of writes) on the SMs the grid uses."""
        return min(mixed_bandwidth(c, traffic, k.write_bytes), active * c.per_sm_bw)

    streaming = streams(k.dram_bytes)
    # Little's law binds on the busiest SM: ceil(grid / sms) blocks' bytes at its in-flight rate
    # (133 blocks on 132 SMs take as long as 132, not half as long for the second block resident)
    bw = min(streaming, sm_bw * grid / math.ceil(grid / c.sms))
    t_mem = k.dram_bytes / bw if k.dram_bytes else 0.0
    reason = f"{grid:,} block(s) of {k.threads} threads, {bps}/SM, on {active} of {c.sms} SMs"
    l2_sm = min(c.per_sm_bw * c.l2_bw / c.dram_bw, in_flight / c.l2_latency) if c.l2_latency else sm_bw
    prior = _prior_read(c, k, k.dram_bytes - k.write_bytes)
    if prior:
        t_mem = _prior_time(c, prior, k.dram_bytes, bw, active * l2_sm)
        reason += "; its input, just written by the kernel before, is read from L2"
    if k.reread_bytes:
        working = min(grid, bps * c.sms) * k.footprint_bytes
        miss = reread_miss(c, working)
        # the L2 serves the re-reads that hit while DRAM streams the first reads (and the
        # re-reads that miss) of the other blocks: the two overlap, and the L2 carries it all.
        # DRAM then carries more reads per write: the read/write mix of its traffic sets its rate
        from_dram = k.dram_bytes + miss * k.reread_bytes
        t_mem = max(
            t_mem,
            from_dram / min(streams(from_dram), active * sm_bw),
            (k.dram_bytes + k.reread_bytes) / min(c.l2_bw, active * l2_sm),
        )
        if not c.l2_total:
            reason += "; re-reads from DRAM (the part gives no L2 size)"
        elif miss <= 0:
            reason += "; re-reads hit L2"
        else:
            reason += f"; {miss:.0%} of the re-reads miss L2 ({working / 1e6:.0f} MB in flight)"
    rate = hw.peak(k.dtype) if k.pipe == "tensor" else _cuda_rate(hw, k.dtype)
    t_comp = k.flops / (rate * active / c.sms) if k.flops else 0.0
    if k.sfu_ops and c.sfu_per_clk and c.clock_hz:
        t_comp += k.sfu_ops / (c.sfu_per_clk * c.clock_hz * active)
    serial = ""
    if k.instructions and c.boost_hz:
        # every warp instruction takes an issue slot of one of the SM's schedulers
        t_comp = max(t_comp, k.instructions / (c.issue_per_clk * c.boost_hz * active))
    if k.warps and k.instructions and c.boost_hz:
        # a kernel that gives each warp its own serial piece (a warp per row, reduced with
        # shuffles) also waits on each warp: one dependent instruction per DEPENDENT_ISSUE_CLK
        per_warp = k.instructions / k.warps
        warp_waves = math.ceil(k.warps / (bps * math.ceil(k.threads / 32) * c.sms))
        t_warp = per_warp * DEPENDENT_ISSUE_CLK * warp_waves / c.boost_hz
        if t_warp > t_comp:
            t_comp = t_warp
            serial = (
                f"; {k.warps:,} warp(s), each issuing its {per_warp:,.0f} instructions one dependent step at a time"
            )
    t_lat = math.ceil(waves) * k.passes * c.latency
    if k.in_order:
        # each thread computes an item's offsets, loads it, stores it, then starts the next:
        # the SM's other warps do not hide one warp's arithmetic behind its memory traffic,
        # which streams while no warp issues (Little's law still bounds it)
        body = max(k.dram_bytes / streaming + t_comp, t_mem, t_lat)
        reason += "; offsets, load and store of each item in order: issue adds to memory"
        if body > t_mem:  # Little's law does not bind: the reason names the streaming rate
            bw, in_flight = streaming, 0
    else:
        # an SM's resident blocks overlap one's memory traffic with another's arithmetic:
        # with few of them, part of the shorter phase stays exposed
        body = max(t_mem, t_comp, t_lat) + min(t_mem, t_comp) / max(resident, 1)
    bound: Literal["memory", "compute", "latency"] = (
        "latency" if t_lat >= max(t_mem, t_comp) else "compute" if t_comp > t_mem else "memory"
    )
    if bound == "compute":
        reason += serial
    if bound == "latency":
        reason += f"; {math.ceil(waves)} wave(s) x {k.passes} dependent memory round trip(s)"
    elif bw < c.dram_bw:
        reason += f"; {bw / 1e9:,.0f} GB/s" + (f" ({in_flight / 1024:.0f} KiB in flight per SM)" if in_flight else "")
    return KernelEstimate(
        name=k.name, model="stream", seconds=body, grid=grid, blocks_per_sm=bps, waves=waves, bound=bound, reason=reason
    )


def reread_miss(c: Card, working: float) -> float:
    """The share of a kernel's re-reads that miss the L2, with ``working`` bytes of rows in
    flight between a row's passes: none while they fit one L2 partition (c.l2_bytes), all once
    they fill the whole L2, in proportion between (Nsight Compute on an H100: the DRAM reads of
    three-pass softmax rise from 0 to 0.8-0.9 of the re-reads between 23 and 51 MB in flight,
    validation/expected/h100/kernels/l2/)."""
    if working <= c.l2_bytes or not c.l2_bw:
        return 0.0
    if c.l2_total <= c.l2_bytes:
        return 1.0
    return min((working - c.l2_bytes) / (c.l2_total - c.l2_bytes), 1.0)


def mixed_bandwidth(c: Card, total: float, written: float) -> float:
    """The card's streaming bandwidth for a kernel whose bytes are partly writes: the read
    ceiling when it only reads, the copy ceiling when it writes as much as it reads
    (read/write turnarounds on the bus), in between in proportion."""
    if total <= 0 or written <= 0:
        return c.dram_bw
    w = min(written / total, 0.5) * 2  # 0: reads only, 1: half writes
    return 1.0 / ((1 - w) / c.dram_bw + w / c.copy_bw)


def _cuda_rate(hw: Hardware, dtype: str) -> float:
    fig = hw.cuda_core_flops_per_s.get(dtype) or hw.cuda_core_flops_per_s.get("fp32")
    return float(fig.value) if fig is not None else hw.peak("fp32")


def ld_alignment(n: int, k: int, dtype_bytes: float) -> int:
    """The largest power of two, up to 16, that divides both leading dimensions in bytes (row-
    major A: k, B and C: n): the widest load a kernel can make of every row."""
    a = 16
    while a > 1 and ((k * dtype_bytes) % a or (n * dtype_bytes) % a):
        a //= 2
    return a


def gemm_aligned(m: int, n: int, k: int, dtype_bytes: float) -> bool:
    """Row-major A (m x k), B (k x n), C (m x n): TMA needs the leading dimensions (k, n) in
    multiples of 16 bytes; m only sets how many rows there are. A matrix-vector product
    (n = 1) is no tiled GEMM: it streams the matrix whatever its leading dimension (see
    gemv_unaligned for the rate)."""
    return n == 1 or ld_alignment(n, k, dtype_bytes) == 16


def gemv_unaligned(m: int, n: int, k: int, dtype_bytes: float) -> bool:
    """A 16-bit matrix-vector product (n = 1) whose m or k is not a multiple of 16 bytes: cuBLAS
    leaves its GEMM kernels for its gemv kernels (gemv2T, gemvx; kernel shapes in
    validation/expected/h200/kernels/kshapes-gemv-seed*.json)."""
    return n == 1 and dtype_bytes == 2 and (m % 8 != 0 or k % 8 != 0)


def _alignment(dtype: str, m: int, n: int, k: int, dtype_bytes: float) -> tuple[bool, bool]:
    """(aligned: every leading dimension a multiple of 16 bytes, or FP32/FP64, whose kernels
    do not need it; word: 16-bit operands whose rows start on 4-byte boundaries, loaded two
    elements at a time)."""
    aligned = gemm_aligned(m, n, k, dtype_bytes) or dtype in ("fp32", "fp64")
    return aligned, not aligned and dtype_bytes == 2 and ld_alignment(n, k, dtype_bytes) >= 4


def gemm_path(dtype: str, aligned: bool, word: bool) -> str:
    """Which of cuBLAS's kernel families a GEMM runs on Hopper, as the model names them: the
    TMA kernels, or a pre-Hopper one (GEMM_PATHS of hardware.py)."""
    if dtype in ("fp32", "fp64"):
        return "simt"
    if word:
        return "word"
    if not aligned:
        return "unaligned"
    return "tf32" if dtype == "tf32" else "tma"


def gemm_floor_residue(hw: Hardware, dtype: str, m: int, n: int, k: int, node_s: float) -> tuple[str, float]:
    """A GEMM timed per CUDA-graph node: its path, and what the model leaves unexplained in it
    (the node less graph_floor_s and less the kernels' modelled time without any path's extra
    fixed cost). Of two such GEMMs, one on a pre-Hopper path and one on the TMA path, the
    difference of residues is that path's gemm_kernel_floor_extra_s."""
    size: float = ELEMENT_BYTES[dtype]  # type: ignore[assignment]  # exact (a Fraction), as roofline passes it
    aligned, word = _alignment(dtype, m, n, k, size)
    c = replace(card(hw), gemm_floor_extra=())
    g = Kernel(name="gemm", model="gemm", help="", dtype=dtype, m=m, n=n, k=k)
    modelled = 0.0
    for e in _gemm(hw, c, g, size):
        modelled += e.seconds
    return gemm_path(dtype, aligned, word), node_s - c.graph_floor - modelled


# Which FP32 products (TF32 off) cuBLAS runs with its gemmSN kernel on Hopper: those of 2 to 16
# rows whose depth k is at most a limit that grows with the width n, read off the 1,408 shapes of
# validation/expected/h100/kernels/fp32-choice/fp32-grid.json (torch.matmul of row-major
# operands, rows 2-32, widths 256-8192, depths 128-8192; cuBLAS of torch 2.11+cu130 on an H100).
# gemmSN comes in variants by rows, and the limit differs between them, so it is kept per band of
# rows (at most 2, 4, 8, 12, 16): per measured width (GEMM_SN_WIDTHS), counting up from the
# shallowest measured k (which may run another kernel), the geometric mean of the last k of that
# first run of gemmSN and the next measured k (0: no run; 8192: all ran it). A width between
# takes the limit of the nearest measured one (in ratio). Outside the map, no gemmSN: wider than
# 8192 (the two 14,336-wide products of validation/expected/h100/kernels/skinny-fp32.json ran
# other kernels), one row (not measured), F.linear and a transposed operand (other layouts: an
# H100 ran q @ k^T of 16 x 66 x 706 on SIMT kernels, a @ b of it on the serial split-K one) and
# batched products (not measured). tests/test_expected.py derives this table again from the
# committed sweep.
GEMM_SN_WIDTHS = (256, 512, 1024, 1536, 2048, 2304, 2560, 2816, 3002, 3072, 3584, 4096, 4352, 5120, 6144, 8192)
GEMM_SN_K_LIMIT: dict[int, tuple[int, ...]] = {
    2: (0, 0, 724, 724, 362, 724, 724, 724, 724, 724, 1254, 1254, 2480, 3547, 3547, 5017),
    4: (0, 0, 362, 362, 362, 724, 724, 724, 724, 724, 1254, 1254, 1774, 3037, 3547, 7094),
    8: (0, 0, 362, 362, 362, 724, 724, 724, 724, 724, 724, 1254, 1254, 1774, 3547, 5017),
    12: (0, 0, 362, 362, 362, 724, 724, 724, 724, 724, 1254, 1254, 1254, 3547, 8192, 8192),
    16: (0, 362, 362, 724, 362, 724, 724, 724, 1254, 1254, 5017, 5017, 7094, 5017, 7094, 5017),
}
# gemmSN tiles: 64 columns of the output per block; the rows are split over 1, 2 or 4 rows of
# blocks (up to 5 rows, up to 14, up to 16: 2-7 rows a block), as the kernels of the sweeps ran
# (grid [ceil(n / 64), 1 | 2 | 4, 1])
SN_BLOCK_COLS = 64
SN_BLOCK_ROWS = ((5, 1), (14, 2), (16, 4))


def cublas_runs_gemm_sn(m: int, n: int, k: int) -> bool:
    """Whether cuBLAS runs gemmSN for an FP32 product of m rows, n columns and depth k (the
    measured map GEMM_SN_K_LIMIT; outside it, no)."""
    if not 2 <= m <= 16 or not 256 <= n <= 8192:
        return False
    band = min(b for b in GEMM_SN_K_LIMIT if b >= m)
    nearest = min(range(len(GEMM_SN_WIDTHS)), key=lambda i: abs(math.log(GEMM_SN_WIDTHS[i] / n)))
    return k <= GEMM_SN_K_LIMIT[band][nearest]


def _kernel_floor(c: Card, path: str) -> tuple[float, float]:
    """A library GEMM kernel's fixed cost on ``path`` and the part of it a pre-Hopper family
    adds (gemm_kernel_floor_s + gemm_kernel_floor_extra_s of the path)."""
    extra = dict(c.gemm_floor_extra).get(path, 0.0)
    return c.gemm_floor + extra, extra


def _fixed_cost(floor: float, extra: float) -> str:
    """A GEMM kernel's fixed cost as its reasons state it, with the pre-Hopper part if any (both
    to the same precision, so that the part never reads larger than the whole)."""
    if extra:
        return f"{floor * 1e6:.2f} us fixed per kernel ({extra * 1e6:.2f} us of it for a pre-Hopper kernel)"
    return f"{floor * 1e6:.1f} us fixed per kernel"


def _gemm_sn(c: Card, k: Kernel) -> KernelEstimate:
    """cuBLAS's gemmSN: every block walks the whole k, a step every gemm_sn_k_step_s, and all its
    blocks are resident at once (on the sweep's shapes the time hardly moved from 16 blocks to
    512), so the kernel takes its fixed cost and one walk, unless streaming its operands takes
    longer (not within the map on an H100 or H200: that needs widths past 13,000)."""
    floor, extra = _kernel_floor(c, "simt")
    walk = k.k * c.sn_k_step
    io = (k.m * k.k + k.k * k.n + k.m * k.n) * 4
    stream = io / c.skinny_bw
    block_rows = next(r for most, r in SN_BLOCK_ROWS if k.m <= most)
    blocks = math.ceil(k.n / SN_BLOCK_COLS) * block_rows
    why = (
        f"cuBLAS's gemmSN (FP32 of 2-16 rows where the map measured on an H100 with torch 2.11 names it): "
        f"{blocks:,} blocks, all resident, each walking k = {k.k:,} one step every {c.sn_k_step * 1e9:.2f} ns"
    )
    if stream > walk:
        why += f"; streaming its {io / 1e6:,.1f} MB takes longer"
    if floor:
        why += "; " + _fixed_cost(floor, extra)
    return KernelEstimate(
        name=k.name,
        model="gemm",
        seconds=floor + max(walk, stream),
        grid=blocks,
        blocks_per_sm=math.ceil(blocks / c.sms),
        waves=1.0,
        bound="latency" if walk >= stream else "memory",
        reason=why,
    )


# Which FP32 products (TF32 off) cuBLAS runs with an sm80 xmma FFMA kernel whose split-K is in
# the kernel and serial: those of 2 to 16 rows, 65-192 columns and a depth from 95 whose work
# m x n x k is under 2^21, read off 4,095 shapes (every row count 2-16, widths 64-200, depths
# 64-4096; cuBLAS of torch 2.11+cu130 on an H100) in validation/expected/h100/kernels/
# fp32-choice/fp32-narrow-rows.json: every shape of those widths with m x n x k up to 2,088,960
# ran it and none from 2,097,152 did. Up to 90 columns it tiles the output 32 x 32 and cuts k
# into 176 slices; from 96, 32 x 128 and 264 slices, and only from 7 rows (fewer rows ran the
# SIMT kernels there), up to 192 (193-195 ran other kernels in fp32-narrow-rand1.json, a
# hold-out of a first map). Two bounds are taken half way: the tiles' between 94 (32 x 32 in the
# second hold-out, fp32-narrow-rand2.json) and 96; the least depth between 91 (another kernel,
# in that hold-out) and 99 (this one; the grid has 64 and 128). tests/test_expected.py reads
# these bounds off the sweep again.
SERIAL_SPLIT_MAX_WORK = 2**21
SERIAL_SPLIT_K_MIN = 95
# (widest output, rows at least, tile, tile columns, slices)
SERIAL_SPLIT_VARIANTS = ((95, 2, "32x32", 32, 176), (192, 7, "32x128", 128, 264))


def _serial_split_variant(m: int, n: int, k: int) -> tuple[str, int, int] | None:
    """The tile, its columns and the slices of the serial split-K kernel cuBLAS runs for an FP32
    product, or None where it runs another kernel."""
    if not 2 <= m <= 16 or n < 65 or k < SERIAL_SPLIT_K_MIN or m * n * k >= SERIAL_SPLIT_MAX_WORK:
        return None
    for widest, rows, tile, cols, slices in SERIAL_SPLIT_VARIANTS:
        if n <= widest:
            return (tile, cols, slices) if m >= rows else None
    return None


def cublas_runs_serial_split(m: int, n: int, k: int) -> bool:
    """Whether cuBLAS runs its serial in-kernel split-K FP32 kernel for this product."""
    return _serial_split_variant(m, n, k) is not None


def _gemm_serial_split(c: Card, k: Kernel, variant: tuple[str, int, int]) -> KernelEstimate | None:
    """The serial split-K kernel (tile, tile columns, slices): its slices add into each output
    tile one after another, a step each (gemm_serial_split_step_s of its tile shape, the kernel's
    time less its fixed cost over its slices), the tiles side by side; k only sets how little
    each slice computes. None where the part has no step for this tile shape."""
    tile, cols, slices = variant
    step = dict(c.serial_split_step).get(tile)
    if not step:
        return None
    floor, extra = _kernel_floor(c, "simt")
    tiles = math.ceil(k.n / cols)
    why = (
        f"cuBLAS's FP32 xmma kernel with a serial split-K (2-16 rows, 65-95 columns or 96-192 from 7 "
        f"rows, k from 95, m x n x k under 2^21: seen on an H100 with torch 2.11): {tiles} tile(s) of {tile}, "
        f"each summing {slices} slices of k one after another at {step * 1e9:.1f} ns a step, whatever k"
    )
    if floor:
        why += "; " + _fixed_cost(floor, extra)
    return KernelEstimate(
        name=k.name,
        model="gemm",
        seconds=floor + slices * step,
        grid=tiles * slices,
        blocks_per_sm=None,
        waves=tiles * slices / c.sms,
        bound="latency",
        reason=why,
    )


def _gemm(hw: Hardware, c: Card, k: Kernel, dtype_bytes: float, sustained: bool = False) -> list[KernelEstimate]:
    """A library GEMM: the tile shape with the least modelled time (a library's heuristic picks
    among such shapes), wave quantization over the SMs, split-K with its reduction kernel.
    sustained: part of a step timed back to back, where tensor-core GEMMs run at the board's
    power-limited rate (Card.power_ratio)."""
    aligned, word = _alignment(k.dtype, k.m, k.n, k.k, dtype_bytes)
    # a @ b of row-major operands, as the maps were measured (F.linear, a transposed operand and
    # batched products run other kernels or were not measured)
    plain = k.dtype == "fp32" and k.batch == 1 and not k.linear and not k.transposed
    sn = plain and cublas_runs_gemm_sn(k.m, k.n, k.k)
    if sn and c.sn_k_step:
        return [_gemm_sn(c, k)]
    serial = _serial_split_variant(k.m, k.n, k.k) if plain else None
    if serial is not None and (est := _gemm_serial_split(c, k, serial)) is not None:
        return [est]
    gemv_off = gemv_unaligned(k.m, k.n, k.k, dtype_bytes)
    # the alignments above need the exact size (an fp4 element is a Fraction, 1/2); the byte
    # counts below are times and rates, in floating point (a Fraction would carry the whole
    # tile search in rational arithmetic)
    dtype_bytes = float(dtype_bytes)
    rate = tensor_rate(hw, k.dtype, aligned, word)
    path = gemm_path(k.dtype, aligned, word)
    bk, stages = GEMM_PIPELINE[path]
    # a kernel of cuBLAS's pre-Hopper families costs more than a TMA kernel's fixed cost
    floor, extra = _kernel_floor(c, path)
    # in a loop, the power limit lowers the clock of tensor-core GEMMs (SIMT FP32 not measured)
    power = c.power_ratio if sustained and path != "simt" else 1.0
    per_sm = rate * power / c.sms
    # The unaligned fallback loads its operands an element at a time (a leading dimension not a
    # multiple of 16 bytes rules out vector loads): its tiles are bound by the elements an SM
    # loads per second, (tm + tn) per k, padded rows included, not by the MMAs. That rate is
    # read off the measured unaligned GEMM rate (the probe's large odd GEMMs, which run
    # 256x128 tiles): FLOP/s per SM / (2 tm tn / (tm + tn)).
    # An element load costs the same whatever its width, so the 16-bit measurement serves
    # every dtype on this path (TF32 and FP16 included).
    # The word-aligned kernels load two elements at a time: their element rate is read off their
    # own measurement the same way (the probe's bf16 GEMMs with k or n even, not a multiple of 8).
    big_m, big_n = GEMM_TILES["word" if path == "word" else "unaligned"][0]
    if path == "word":
        unaligned_rate = rate
    else:
        unaligned_rate = tensor_rate(hw, "bf16", False) if "bf16" in hw.expected.unaligned_tensor_fraction else rate
    elems_per_s = unaligned_rate * power / c.sms * (big_m + big_n) / (2 * big_m * big_n)
    out_bytes = 4 if k.dtype in ("fp32", "tf32") else dtype_bytes
    # the operands it reads: the part the kernel before has just written may come from L2
    prior = _prior_read(c, k, (k.m * k.k + k.k * k.n) * dtype_bytes * k.batch)
    best: tuple[float, float, str, int, int, Literal["memory", "compute", "latency"]] | None = None
    # the product's own arithmetic at the tensor rate, before any tile's padding: a GEMM whose
    # operands take longer to stream than this is a weight stream whatever tile runs it
    mma_s = 2 * k.m * k.n * k.k * k.batch / (rate * power)
    # F.linear with few rows (decode's projections): cuBLAS puts the weight's rows on the MMA's
    # 64-row side and up to 32 rows of x on its narrow side, so a projection of n weight rows has
    # ceil(n / 64) x ceil(m / 32) tiles; when they fill less than half the SMs it cuts k into
    # slices and sums them in cublasLt's splitKreduce kernel. Inside CUDA-graph-replayed decode
    # steps on an H100 (validation/expected/h100/kernels/graph-decode/) the q, k, v, o and down
    # projections of llama-3.1-8b split at batch 1 and 16 (16-64 tiles), its gate and up (224)
    # never, its q and o at batch 64 (128 tiles) not; two misses: its down at batch 64 (cuBLAS
    # took 64-row tiles of x there, 64 of them, and split) and qwen2.5-7b's q and o (56 tiles,
    # not split). Seen on Hopper only, and its tiles can leave SMs idle: parts without a
    # measured per-SM streaming rate, or of another generation, keep the tile search.
    # where the part gives the narrow-tile kernels' own figures, F.linear up to LINEAR_ROWS rows
    # runs them: their fixed cost, cuBLAS's k slices, and each tile's k-loop a step at a time
    # (validation/bench/fit_linear_gemm.py)
    narrow = (
        k.linear
        and path == "tma"
        and k.dtype in ("bf16", "fp16")  # fitted on bf16; fp16 runs the same kernels (not measured)
        and k.m <= LINEAR_ROWS
        and c.linear_tiles
        and c.linear_k_step > 0
        and c.linear_floor > 0
    )
    linear = narrow or (k.linear and path == "tma" and k.m <= SKINNY_ROWS and c.linear_tiles)
    tile_menu: tuple[tuple[int, int], ...] = GEMM_TILES[path]
    if narrow:
        floor, extra = c.linear_floor, 0.0
        tile_menu = ((min(k.m, LINEAR_X_ROWS), LINEAR_TILE_N),)
    elif linear:
        tile_menu = ((LINEAR_TILE_M, LINEAR_TILE_N),)
    split_below = c.sms / 2 if linear else c.sms
    for tm, tn in tile_menu:
        tiles = math.ceil(k.m / tm) * math.ceil(k.n / tn) * k.batch
        split = 1
        min_k = MIN_K_PER_SPLIT[path]
        if narrow:
            if k.k > LINEAR_SPLIT_K:
                split = max(1, min(math.ceil(k.k / LINEAR_SPLIT_K), LINEAR_MAX_CTAS // tiles))
        elif tiles < split_below and k.k >= 2 * min_k:
            split = max(1, min(c.sms // tiles, k.k // min_k))
        units = tiles * split
        waves = math.ceil(units / c.sms)
        k_split = math.ceil(k.k / split)
        t_tile = (tm + tn) * k_split / elems_per_s if path in ("unaligned", "word") else 2 * tm * tn * k_split / per_sm
        t_comp = waves * t_tile
        active = min(c.sms, units)
        io = (k.m * k.k + k.k * k.n) * dtype_bytes * k.batch + k.m * k.n * out_bytes * k.batch
        # few rows (or columns): the kernel streams the other operand, as decode's projections
        # do; so does any GEMM whose operands take longer to stream than its MMAs take
        # (decode at batch 128: its projections streamed their weights at 2.4-2.7 TB/s on an
        # H100, validation/expected/h100/kernels/decode-batch/, not at the read ceiling)
        streaming = min(k.m, k.n) <= SKINNY_ROWS or (path == "tma" and mma_s < io / c.dram_bw)
        card_bw = c.skinny_bw if streaming else c.dram_bw
        if gemv_off:
            card_bw = c.unaligned_gemv_bw
        bw = min(card_bw, active * c.per_sm_bw)
        t_mem = io / bw
        if prior:
            t_mem = _prior_time(c, prior, io, bw, active * c.per_sm_bw * c.l2_bw / c.dram_bw)
        # each wave of tiles: the k-loop (its compute, or the k-steps as fast as the pipeline
        # brings them), then the store of the results, after the first operands arrived
        if narrow:  # one 64-deep step after another, or its weight rows and rows of x through one SM
            t_steps = max(math.ceil(k_split / bk) * c.linear_k_step, (tn + tm) * k_split * dtype_bytes / c.per_sm_bw)
        else:
            t_steps = math.ceil(k_split / bk) / stages * c.latency
        # the first wave's operands arriving and its results stored are the kernel's fixed
        # cost (gemm_floor, measured); later waves pay their own round trips
        t_wave = max(t_tile, t_steps)
        if floor:
            t = floor + max(waves * t_wave + (waves - 1) * 2 * c.latency, t_mem)
        else:
            t = max(waves * (t_wave + 2 * c.latency), t_mem)
        t_red = 0.0
        if split > 1:  # fp32 partial tiles written, then read back by a reduction kernel
            part = k.m * k.n * 4 * split * k.batch
            t_red = c.stream_floor + (part + k.m * k.n * out_bytes * k.batch) / c.dram_bw
            t += part / bw
        if best is None or t + t_red < best[0] + best[1]:
            why = (
                f"{tm}x{tn} tiles: {tiles:,}"
                + (f" x {split} k-splits" if split > 1 else "")
                + f" = {waves} wave(s) over {c.sms} SMs"
            )
            best = (t, t_red, why, units, split, "compute" if t_comp >= t_mem else "memory")
    assert best is not None
    t, t_red, why, units, split, bound = best
    if linear:
        if narrow:
            why += (
                f"; as F.linear with few rows: cuBLAS's narrow tiles span 64 weight rows and up to {LINEAR_X_ROWS} of x"
                + (f", k in {split} slices" if split > 1 else "")
                + f", each tile's k-loop one 64-deep step every {c.linear_k_step * 1e9:.0f} ns"
            )
        else:
            why += "; as F.linear with few rows: cuBLAS's tiles span 64 weight rows" + (
                ", k split to fill the SMs" if split > 1 else ""
            )
    if prior:
        why += "; its input, just written by the kernel before, is read from L2"
    if gemv_off and c.unaligned_gemv_bw != c.skinny_bw:
        why += f"; m or k not a multiple of 16 bytes: cuBLAS's gemv kernels, {c.unaligned_gemv_bw / 1e12:.2f} TB/s"
    if word:
        why += "; leading dimensions in multiples of 4 bytes, not 16: no TMA, two elements per load"
    elif not aligned:
        why += "; a leading dimension is not a multiple of 16 bytes: no TMA fast path"
    elif k.dtype in ("fp32", "fp64"):
        why += f"; {k.dtype} on CUDA cores"
    if sn:  # the map names gemmSN here, but this part has no figure for it
        why += (
            "; on an H100 cuBLAS runs gemmSN for this shape, up to twice as slow at a deep k; "
            "not modelled here: no expected.gemm_sn_k_step_s"
        )
    if serial is not None:  # cuBLAS runs the serial split-K kernel here, but this part has no step for it
        why += (
            "; on an H100 cuBLAS runs a serial split-K kernel for this shape (27-52 us whatever k); "
            f"not modelled here: no expected.gemm_serial_split_step_s.{serial[0]}"
        )
    why += f"; {rate * power / 1e12:,.0f} TFLOP/s achievable"
    if power < 1:
        why += f" (at the power limit, in a loop: {power:.2f} of a short run's)"
    if floor:
        why += "; " + _fixed_cost(floor, extra)
    out = [
        KernelEstimate(
            name=k.name,
            model="gemm",
            seconds=t,
            grid=units,
            blocks_per_sm=1,
            waves=units / c.sms,
            bound=bound,
            reason=why,
        )
    ]
    if split > 1:
        out.append(
            KernelEstimate(
                name=f"{k.name} split-K reduce",
                model="stream",
                seconds=t_red - c.stream_floor,
                grid=math.ceil(k.m * k.n / 512),
                blocks_per_sm=None,
                waves=0.0,
                bound="memory",
                reason=f"sums the {split} fp32 partial tiles",
                issued=False,
            )
        )
    return out


# A real eager step costs its host more per op than a hot loop of one op (torch_op_floor_s,
# x.add_(1) back to back): dozens of different ops, views and Python frames per layer, cold
# in the host's caches. Per kernel, host-bound eager decode and prefill steps of 7-8B models
# (the GPU's modelled work under 0.7 of the step) took 1.8x and 2.0x the hot-loop op measured
# in the same call on two H100 machines (validation/expected/h100/host/: medians of 11 and 20
# steps) and 2.5x on a 2 x H200 machine (validation/expected/h200x2/host/, one step); the
# middle one is taken (a later H100 call, validation/expected/h100/host/run3/, gave 2.3 and
# was not taken in). Tried as a probe measurement instead: a tiny eager step
# (validation/bench/host_rate.py) cost its host 1.3x the real steps' rate on both H100s.
EAGER_STEP_HOST_FACTOR = 2.0

# A torch.compile'd function costs its host more per kernel than an eager op: Inductor's
# generated Python calls each Triton kernel's launcher or cuBLAS, after the function's entry
# (Dynamo's guards, the AOT and Inductor wrappers). In hot loops on fourteen machines
# (roofcalc/probe/torch_ops.py torch_compiled_floor via validation/bench/host_rate.py, in
# validation/expected/h100/host/run3-run8/ and h100x2/host/, host2/-host8/) a kernel cost
# 1.05-2.48x the same call's hot-loop op (a machine's records averaged) and an entry 5.5-10.4x;
# where no probe measured a card's compiled figures, they are the medians over the machines,
# 1.79x and 6.81x its op floor (the host's speed scales both, if not exactly alike).
COMPILED_KERNEL_OPS = 1.79
COMPILED_ENTRY_OPS = 6.81
# A compiled step costs its host more than the hot loop of one compiled function, as an eager
# step does (EAGER_STEP_HOST_FACTOR), but less: the generated code is one straight Python
# function per region, where an eager layer walks dozens of ops, views and frames. The 13
# host-bound compiled steps of run3 (llama-3.2-1b/3b, llama-3.1-8b, qwen2.5-7b: decode at batch
# 1 and 8, prefill of 256 tokens and llama-3.2-1b's of 1,024; the GPU's modelled work under 0.7
# of the step) took 1.14-2.05x, median 1.55x, the hot-loop costs of their kernels and entries
# measured in the same call.
COMPILED_STEP_HOST_FACTOR = 1.55

# An eager collective (torch.distributed's all-reduce, all-gather) costs its host many ops:
# ProcessGroupNCCL's work object, events and stream waits around the NCCL launch, and in a
# tensor-parallel step the other rank's pace. Measured as the host issue time of the same eager
# decode step (llama-3.1-8b, batch 1) at TP=2 less at one GPU, over its 65 collectives: 121 us
# on a 2 x H200 machine whose hot-loop op took 7.34 us (validation/expected/h200x2/host/) and
# 140 us on a 2 x H100 one at 6.27 us (validation/expected/h100x2/host3/): 16.6 and 22.3 ops,
# 19.5 taken (a step's own factor included). In hot loops (validation/bench/tp_host.py,
# h100x2/host2/) a 4 KB all-reduce alone cost 4.4-5.3 ops and one between 20 or 60 ops 9.
COLLECTIVE_STEP_HOST_OPS = 19.5
COLLECTIVES = ("allreduce", "allgather")

# What a step paced by its host can be expected to do: the committed one-GPU steps whose largest
# term is the host's issue measured 0.62-1.70x of the model with the card's figures (162 steps
# on H100 and H200 machines, 49% within their band; the registry reports,
# validation/expected/*/report-llm*-registry.json), the host's speed differing 1.8x between
# machines of one card, and 0.68-1.67x with the figures of their own host measured in the same
# call (149 steps, 74% within their band; the -hostrate reports): the rest is the host's speed
# from one second to the next, the least stable thing measured here (one H100 machine's hot loop
# ran 6.3-10.3 us, and a 3B prefill 12.9-28.0 ms, in five minutes: validation/expected/h100/host/
# jitter1/). With the host's speed timed just before and after each step (llm_bench.py's
# host_op_s, roofcalc validate --host-per-case), 38 host-paced steps on three machines read
# 0.61-1.32x, 35 within their band (validation/expected/h100/report-llm-host-run7-*-hostcase.json,
# -run8-prefill-hostcase.json, h100x2/report-llm-host8-llm-prefill-holdout-hostcase.json).
HOST_PACED_COMPILED_NOTE = (
    "the host paces this step (Python issues kernels slower than the GPU runs them): its time "
    "follows the host's speed, which moves from one second to the next, and such steps measured "
    "0.6x to 1.7x of this on different machines (0.7x to 1.7x with each host's own figures: "
    "roofcalc probe --save-calibration; 0.6x to 1.3x with the host's speed timed around each "
    "step); a CUDA graph (--cuda-graphs) takes the host out"
)
HOST_PACED_NOTE = HOST_PACED_COMPILED_NOTE + ", torch.compile (--engine compiled) issues fewer kernels"
# Under tensor parallelism the ranks' hosts also wait for each other at every all-reduce, at a
# cost that varies with the two hosts' jitter (COLLECTIVE_STEP_HOST_OPS is its mean on two
# machines): the committed host-paced TP=2 steps measured 0.62-1.82x of the model with their
# own host's figures (82 steps on five pairs of H100s, 52% within their band; validation/
# expected/h100x2/report-llm-host*-hostrate.json) and 0.58-1.84x with the card's (109 steps,
# with those of a 2 x H200 and the prefills of h100x2/llm_tp2-h100-grid7b, -holdout8b and
# -holdout9b.json). With each rank's host speed timed around each step (the slowest rank's
# taken), 36 steps on two pairs read 0.74-1.30x, 33 within their band (validation/expected/
# h100x2/report-llm-host7-tp2-prefill-hostcase.json, -host8-tp2-prefill-holdout-hostcase.json);
# on host7 a step slowed 1.9x when the slower rank's hot loop slowed 1.31-1.37x, more than the model's
# proportion.
HOST_PACED_TP_NOTE = (
    "the host paces this tensor-parallel step (Python issues kernels and collectives slower than "
    "the GPUs run them), and at each all-reduce the ranks' hosts wait for each other: such steps "
    "measured 0.6x to 1.8x of this with each host's own figures (0.6x to 1.8x with the card's; "
    "0.7x to 1.3x with the ranks' speed timed around each step); a CUDA graph (--cuda-graphs) "
    "takes the host out"
)

# FlashAttention-2's softmax, per score (flash_fwd_kernel, softmax.h): one exp2 on the
# special-function unit, and on the FP32 pipes three operations (scale-and-subtract FFMA, the
# row max, the row sum) and half a conversion to 16 bits (two scores per pack). Nsight Compute
# puts the SFU (xu) pipe at 26-33% busy at head_dim 64 and 16-20% at 128
# (validation/expected/h100/kernels/flash-pipes-ncu.csv), what one SFU operation per score
# gives at the kernel's 0.204 and 0.344 clocks per score; the conversion is not an SFU one.
FLASH_SFU_PER_SCORE = 1.0
FLASH_FP32_PER_SCORE = 3.5
# Each of a block's 4 warps reads the whole K and V tile from shared memory (ldmatrix) for its
# own query rows: 4 x 2 x head_dim x 2 bytes per 128 scores, head_dim / 8 bytes per score, at
# 32 banks x 4 bytes per clock per SM (CUDA C++ Programming Guide, shared memory). The split-KV
# kernel's 64-row blocks are charged the same: twice as much per score moved its committed
# decode sweep (validation/expected/*/kernels/decode-split.json) from 0.99-1.11 of the model
# to 0.80-1.06 on the H200, so its reads are not what bounds it.
FLASH_SMEM_BYTES_PER_SCORE_PER_DIM = 1 / 8
SMEM_BYTES_PER_CLK = 128
FLASH_BLOCK_Q = 128  # query rows per block (forward kernel, head_dim <= 128)
FLASH_DECODE_BLOCK_M = 64
# Warp instructions of an FA-2 block outside its K/V tiles (prologue: indices, the Q tile;
# epilogue: the output and log-sum-exp stores), per (kernel, head_dim): Nsight Compute's
# instructions per warp less the part that grows with the tiles, from blocks of 1 to 64 tiles
# (validation/expected/h100/kernels/flash-ncu.csv; per tile 1,135 (split kernel, head_dim 128),
# 1,192 and 1,671 (forward kernel, 128 and 64)). The split kernel at head_dim 64 was measured
# with one tile per block only (2,860 in all), so it takes head_dim 128's figure.
FLASH_WARP_FIXED_INSTRUCTIONS = {("fwd", 64): 1044, ("fwd", 128): 1234, ("split", 64): 835, ("split", 128): 835}
# FA-2's combine kernel, per warp: a fixed part (log-sum-exp reduction, scales, output store)
# and a part per split; the same at head_dim 64 and 128 (619 to 971 instructions for 4 to 32
# splits, validation/expected/h100/kernels/flash-ncu.csv and decode-ncu.csv)
FLASH_COMBINE_INSTRUCTIONS = (570, 12.2)


def _flash_splits(blocks: int, slots: int, n_blocks: int, max_splits: int = 128) -> int:
    """FlashAttention-2's num_splits_heuristic (flash_api.cpp), with PyTorch's slots = 2 x SMs."""
    if blocks >= 0.8 * slots:
        return 1
    max_splits = min(max_splits, slots, n_blocks)
    eff: list[float] = []
    best = 0.0

    def eligible(s: int) -> bool:
        return s == 1 or math.ceil(n_blocks / s) != math.ceil(n_blocks / (s - 1))

    for s in range(1, max_splits + 1):
        if not eligible(s):
            eff.append(0.0)
            continue
        w = blocks * s / slots
        e = w / math.ceil(w)
        best = max(best, e)
        eff.append(e)
    for s in range(1, max_splits + 1):
        if eligible(s) and eff[s - 1] >= 0.85 * best:
            return s
    return 1


def _flash(hw: Hardware, c: Card, k: Kernel, dtype_bytes: float) -> list[KernelEstimate]:
    """FlashAttention-2 forward (PyTorch's flash backend): mma.sync, 128-query blocks, one
    block per (batch, head, query block); the softmax of each score runs between the two
    GEMMs. With one query (decode) the query heads of a KV head are packed into one block
    and the keys are split over blocks to fill the SMs (split-KV, then a combine kernel)."""
    bps = _occupancy(hw, k)
    rate_sm = mma_rate(hw, k.dtype) / c.sms
    t_score = t_alone = 4 * k.head_dim / rate_sm
    if c.clock_hz and c.sfu_per_clk:
        # the tensor work, then the softmax or the shared-memory reads, whichever is longer:
        # the two warps of a scheduler overlap one's ldmatrix with the other's exponentials, not
        # with the mma.sync chain (Nsight Compute's 0.204 and 0.344 clocks per score at head_dim
        # 64 and 128 against 0.19 and 0.33 so modelled at its clock; summing all three gives
        # 0.25 and 0.42)
        soft = FLASH_SFU_PER_SCORE / c.sfu_per_clk + FLASH_FP32_PER_SCORE / c.fp32_per_clk
        smem = k.head_dim * FLASH_SMEM_BYTES_PER_SCORE_PER_DIM / SMEM_BYTES_PER_CLK
        t_score += max(soft, smem) / c.clock_hz
        # A block alone on its SM has one warp per scheduler and no other block's warps to
        # issue while its own wait: its tile runs its phases one after another (the sum, 0.25
        # and 0.42 clocks per score). The 128 lone blocks of a 1,024-token prefill took 0.65-0.68
        # of what two side by side took (validation/expected/h100/kernels/flash-rounds.json),
        # not the half that sharing the SM's pipes would give.
        t_alone += (soft + smem) / c.clock_hz
    kv_heads = max(1, min(k.heads, k.kv_heads or k.heads))
    decode = k.seq == 1
    if decode:
        group = k.heads // kv_heads
        split_blocks = k.batch * kv_heads * math.ceil(group / FLASH_DECODE_BLOCK_M)
        block_n = _flash_block_n(k.head_dim, split=True)
        split = _flash_splits(split_blocks, bps * c.sms, math.ceil(k.kv_seq / block_n))
        # unsplit, FA-2 runs its forward kernel, whose blocks hold 128 query rows
        # (flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>>, kernel-shapes.json)
        block_m = FLASH_DECODE_BLOCK_M if split > 1 else FLASH_BLOCK_Q
        mblocks = math.ceil(group / block_m)
        blocks = k.batch * kv_heads * mblocks
    else:
        mblocks = math.ceil(k.seq / FLASH_BLOCK_Q)
        blocks = k.batch * k.heads * mblocks
        split = 1
    units = blocks * split
    active = min(c.sms, units)
    slots = bps * c.sms
    # scores: causal blocks compute their diagonal tile in full
    if decode:
        # the query heads of a KV head fill (and are padded to) the block's rows: the padded
        # rows are computed too
        scores = float(k.batch * kv_heads * mblocks * block_m * k.kv_seq)
        longest = scores / max(units, 1)
    elif k.causal:
        offset = k.kv_seq - k.seq
        block_sum, longest_block = _causal_block_scores(mblocks, offset, k.kv_seq)
        scores = float(block_sum) * k.batch * k.heads
        longest = float(longest_block)
    else:
        scores = float(blocks * FLASH_BLOCK_Q * k.kv_seq)
        longest = float(FLASH_BLOCK_Q * k.kv_seq)
    if k.causal and not decode:
        heads_all = k.batch * k.heads
        if mblocks * heads_all > 16 * c.sms * bps:  # many waves: the SMs even out (no per-block list)
            per_sm_scores = float(block_sum) * heads_all / c.sms + longest
        else:
            per_block = [FLASH_BLOCK_Q * min(k.kv_seq, offset + (i + 1) * FLASH_BLOCK_Q) for i in range(mblocks)]
            per_sm_scores = _busiest_sm(per_block, units, longest, c.sms, bps, heads_all)
        # however the blocks fall, the longest one's own walk is a floor
        t_comp = max(per_sm_scores * t_score, longest * t_alone)
    else:
        # equal blocks: the busiest SM runs ceil(units / SMs) of them, bps at a time sharing its
        # pipes, the ones left over in its last round fewer, or alone
        full, rest = divmod(math.ceil(units / c.sms), bps)
        t_comp = longest * (full * max(bps * t_score, t_alone) + (max(rest * t_score, t_alone) if rest else 0.0))
    # Each block's prologue and epilogue (index arithmetic, the Q tile, the output and
    # log-sum-exp stores) run with each of its 4 warps on its own scheduler and little else to
    # issue: one dependent instruction per DEPENDENT_ISSUE_CLK. Blocks resident together
    # overlap theirs; blocks doing few tiles each (decode, short prompts) are dominated by it.
    fixed_part = ""
    if c.boost_hz:
        fixed = FLASH_WARP_FIXED_INSTRUCTIONS[("split" if split > 1 else "fwd", 64 if k.head_dim <= 64 else 128)]
        blocks_sm = math.ceil(units / c.sms)
        resident = max(1, min(bps, blocks_sm))
        t_fixed = math.ceil(blocks_sm / resident) * fixed * DEPENDENT_ISSUE_CLK / c.boost_hz
        t_comp += t_fixed
        fixed_part = f"; {fixed:,} instructions per warp around the tiles, one dependent step at a time"
    bw = min(c.dram_bw, active * c.per_sm_bw)
    t_mem = k.dram_bytes / bw
    # a block issues the load of its next K/V tile before it computes on the current one
    # (cp.async, flash_fwd_kernel.h), so only its first load and its last tile's compute stay
    # exposed, and the SM's other resident blocks cover part of that: 1/(bps x tiles) of the
    # shorter part
    keys = math.ceil(k.kv_seq / split)
    tiles = max(1, math.ceil(keys / _flash_block_n(k.head_dim, split > 1)))
    t = max(t_comp, t_mem) + min(t_comp, t_mem) / (bps * tiles) + 2 * c.latency
    bound: Literal["memory", "compute", "latency"] = "compute" if t_comp >= t_mem else "memory"
    why = (
        f"{blocks:,} blocks" + (f" x {split} key splits" if split > 1 else "") + f", {bps}/SM on {active} SMs; "
        f"mma.sync at {mma_rate(hw, k.dtype) / 1e12:,.0f} TFLOP/s + softmax (exp on the SFU) per score" + fixed_part
    )
    out = [
        KernelEstimate(
            name=k.name,
            model="flash",
            seconds=t,
            grid=units,
            blocks_per_sm=bps,
            waves=units / slots,
            bound=bound,
            reason=why,
        )
    ]
    if split > 1:
        # FA-2's combine kernel (flash_fwd_splitkv_combine_kernel): blocks of 4 query rows
        # (head_dim 128; 8 for 64) load every split's log-sum-exp, reduce them, then walk the
        # splits one after another: each split's partial output is loaded into the same
        # registers and accumulated before the next load can issue, one L2 round trip per split
        # (the split kernel has just written them). Its few blocks leave each warp alone on its
        # scheduler: the instructions issue one dependent step at a time, beside the round
        # trips (durations in validation/expected/h100/kernels/decode-split.json).
        part = k.batch * k.heads * split * (k.head_dim + 1) * 4
        rows = 4 if k.head_dim % 128 == 0 else 8 if k.head_dim % 64 == 0 else 16
        l2_trip = c.l2_latency or c.latency
        t_chain = (split + 1) * l2_trip + c.latency
        if c.boost_hz:
            fixed, per_split = FLASH_COMBINE_INSTRUCTIONS
            t_chain += (fixed + per_split * split) * DEPENDENT_ISSUE_CLK / c.boost_hz
        out.append(
            KernelEstimate(
                name=f"{k.name} combine",
                model="stream",
                seconds=max(t_chain, part / c.l2_bw + c.latency),
                grid=math.ceil(k.batch * k.heads / rows),
                blocks_per_sm=None,
                waves=0.0,
                bound="latency",
                reason=f"combines the {split} partial outputs per head, one L2 round trip per split",
                issued=False,
            )
        )
    return out


def _flash_block_n(head_dim: int, split: bool) -> int:
    """Keys per K/V tile (n in Flash_fwd_kernel_traits<d, m, n, 4>, PyTorch's sm90 choices, read
    off the kernel names in validation/expected/h100/kernels/flash-ncu.csv): the split-KV
    kernel's (m = 64) or the forward kernel's (m = 128)."""
    if split:
        return 256 if head_dim <= 64 else 128 if head_dim <= 128 else 64
    return 128 if head_dim <= 64 else 64


def _causal_block_scores(mblocks: int, offset: int, kv_seq: int) -> tuple[int, int]:
    """Sum and largest of the scores a causal query block computes, block i covering keys up to
    min(kv_seq, offset + (i + 1) * FLASH_BLOCK_Q), FLASH_BLOCK_Q rows each: closed form, so the
    cost does not grow with the sequence (the list of blocks was 1.7 GB at 2^32 tokens)."""
    b = FLASH_BLOCK_Q
    # blocks before the clip: offset + (i + 1) * b < kv_seq, i.e. i + 1 <= (kv_seq - offset - 1) // b
    n_free = max(0, min(mblocks, (kv_seq - offset - 1) // b)) if kv_seq > offset else 0
    ramp = b * (n_free * offset + b * n_free * (n_free + 1) // 2)
    clipped = (mblocks - n_free) * b * kv_seq
    longest = b * min(kv_seq, offset + mblocks * b) if mblocks else 0
    return ramp + clipped, longest


def _busiest_sm(per_mblock: list[int] | None, units: int, longest: float, sms: int, bps: int, heads: int) -> float:
    """The work (in scores) of the busiest SM. The block scheduler fills each SM's slots in
    launch order (block j to SM j mod SMs, bps deep), then gives each further block to the
    SM that frees first; the resident blocks of an SM share its pipes."""
    import heapq

    if per_mblock is None:
        # equal blocks: the ones left over after the first sms x bps go one each to the SMs
        # that free first, so no SM does more than ceil(units / sms) of them
        # (validation/expected/h100/kernels/flash-rounds.json: 320 blocks cost 1.55x what 256 do)
        return math.ceil(units / sms) * longest
    if len(per_mblock) * heads > 16 * sms * bps:
        # many waves: the dynamic fill evens the SMs out; the busiest is about the average
        # plus one longest block
        return sum(per_mblock) * heads / sms + max(per_mblock)
    # FlashAttention-2 launches the query blocks of each head longest first
    order = list(reversed(per_mblock)) * heads
    loads = [0.0] * sms
    first = min(len(order), sms * bps)
    for j in range(first):
        loads[j % sms] += order[j]
    heap = [(load, i) for i, load in enumerate(loads)]
    heapq.heapify(heap)
    for w in order[first:]:
        load, i = heap[0]
        heapq.heapreplace(heap, (load + w, i))
    return max(load for load, _ in heap)


def _collective(hw: Hardware, c: Card, k: Kernel, graph: bool) -> KernelEstimate:
    """NCCL all-reduce (ring: each GPU sends and receives 2(n-1)/n of the message) or
    all-gather ((n-1)/n): a latency per call (graph-captured or eager), then bus bandwidth."""
    e = hw.expected
    lat_fig = (e.allreduce_graph_latency_s if graph else None) or e.allreduce_latency_s
    bus_fig = e.allreduce_bus_bytes_per_s
    if lat_fig is None or bus_fig is None:
        raise DomainError(
            f"{hw.id} gives no all-reduce latency and bus bandwidth (expected.allreduce_*), "
            "which tensor parallelism needs"
        )
    n = max(k.ranks, 2)
    factor = 2 * (n - 1) / n if k.model == "allreduce" else (n - 1) / n
    t = float(lat_fig.value) + k.dram_bytes * factor / float(bus_fig.value)
    why = (
        f"NCCL {k.model.replace('all', 'all-')} of {k.dram_bytes / 1e3:,.1f} KB over {n} GPUs: "
        f"{float(lat_fig.value) * 1e6:.1f} us {'graph-captured' if graph else 'eager'} latency + bytes at "
        f"{float(bus_fig.value) / 1e9:,.0f} GB/s bus bandwidth"
    )
    return KernelEstimate(
        name=k.name,
        model=k.model,
        seconds=t,
        grid=0,
        blocks_per_sm=None,
        waves=0.0,
        bound="latency" if t < 2 * float(lat_fig.value) else "memory",
        reason=why,
    )


# kernel_time's results by (hardware, card, kernel, element size, graph, sustained): a pure function of
# frozen inputs, and a report's cases share most of their kernels (decode at several contexts
# runs the same GEMMs). The entries hold the hardware and card themselves, so that an id is
# never that of another object while its entry is here.
_KERNEL_MEMO: dict[tuple[int, int, Kernel, float, bool, bool], tuple[Hardware, Card, list[KernelEstimate]]] = {}
_KERNEL_MEMO_SIZE = 4096


def kernel_time(
    hw: Hardware, c: Card, k: Kernel, dtype_bytes: float, graph: bool = False, sustained: bool = False
) -> list[KernelEstimate]:
    """The kernel's estimate(s); graph: a CUDA-graph node; sustained: in a step timed back to
    back (the power-limited tensor rate)."""
    key = (id(hw), id(c), k, dtype_bytes, graph, sustained)
    hit = _KERNEL_MEMO.get(key)
    if hit is not None and hit[0] is hw and hit[1] is c:
        return list(hit[2])
    out = _kernel_time(hw, c, k, dtype_bytes, graph, sustained)
    if len(_KERNEL_MEMO) >= _KERNEL_MEMO_SIZE:
        _KERNEL_MEMO.clear()
    _KERNEL_MEMO[key] = (hw, c, out)
    return list(out)


def _kernel_time(
    hw: Hardware, c: Card, k: Kernel, dtype_bytes: float, graph: bool, sustained: bool
) -> list[KernelEstimate]:
    if k.model in COLLECTIVES:
        return [_collective(hw, c, k, graph)]
    if k.model == "gemm":
        return _gemm(hw, c, k, dtype_bytes, sustained)
    if k.model == "flash":
        return _flash(hw, c, k, dtype_bytes)
    return [_stream(hw, c, k)]


# ------------------------------------------------------------------ composing kernels


def _traffic(kernels: list[Kernel], dtype_bytes: float) -> float:
    """The bytes an op's kernels move to and from DRAM (GEMM operands and result once)."""
    total = 0.0
    for k in kernels:
        if k.model == "gemm":
            total += (k.m * k.k + k.k * k.n + k.m * k.n) * dtype_bytes * k.batch * k.repeat
        elif k.model in ("stream", "flash"):
            total += k.dram_bytes * k.repeat
    return total


def _dirty_writeback(hw: Hardware, c: Card, kernels: list[Kernel], dtype_bytes: float) -> float:
    """After a flush that writes, each line the op brings into the L2 first evicts a dirty one:
    up to an L2's worth of write-back traffic on the DRAM bus beside the op's own."""
    if not c.writeback or not c.l2_total:
        return 0.0
    return c.writeback * min(_traffic(kernels, dtype_bytes), c.l2_total) / c.dram_bw


def compose(
    hw: Hardware, kernels: list[Kernel], dtype_bytes: float, launch: Launch = "event", entries: int = 0
) -> Expected:
    """The expected time of kernels run one after another.

    launch: "event" = one op timed between two CUDA events after the benchmark's L2 flush (the
    first kernel pays the event floor, the others are queued behind it); "stream" = kernels
    launched back to back from C++;
    "graph" = replayed from a CUDA graph; "eager" = PyTorch ops issued from Python, so no
    kernel goes faster than the host issues it. entries: calls into torch.compile'd functions
    the host makes (eager launch only), each with its entry cost beside its kernels' launches.
    """
    c = card(hw)
    ests = [
        e.model_copy(update={"count": k.repeat, "part": k.part, "launcher": k.launcher})
        for k in kernels
        if k.repeat > 0
        for e in kernel_time(hw, c, k, dtype_bytes, graph=launch == "graph", sustained=launch in ("graph", "eager"))
    ]

    def queued(e: KernelEstimate) -> float:
        """A kernel queued on a stream the GPU is busy with: at least a small kernel's cost."""
        if c.queued_floor:
            # the gap before a queued kernel is the queued small kernel less its own body
            # (a small PyTorch kernel's graph node less the graph floor)
            gap = c.queued_floor - max(c.torch_node - c.graph_floor, 0.0) if c.torch_node else c.graph_floor
            return max(gap + e.seconds, c.queued_floor)
        return e.seconds + c.stream_floor

    def launched(e: KernelEstimate) -> float:
        """One run of the kernel with its share of the launch cost, in this launch mode."""
        if launch == "graph":  # no PyTorch kernel node finishes sooner than a small one
            return max(c.graph_floor + e.seconds, c.torch_node)
        if launch in ("event", "eager"):  # queued on a busy stream (eager: the host's issue is added below)
            return queued(e)
        return e.seconds + c.stream_floor

    ests = [e.model_copy(update={"launched_s": launched(e)}) for e in ests]
    body = sum(e.seconds * e.count for e in ests)
    host_wait = 0.0
    n_compiled = 0  # kernels launched from compiled functions (eager launch)
    terms: list[Term] = []
    n = sum(e.count for e in ests)
    for e in ests:
        label = e.name if e.count == 1 else f"{e.name} (x{e.count:,})"
        terms.append(Term(name=label, seconds=e.seconds * e.count, reason=e.reason))
    if launch == "event":
        # the first kernel pays the event floor; the benchmark's L2 flush keeps the GPU busy
        # while the host issues the op, so the op's other kernels are queued before the GPU
        # reaches them: each costs at least a small PyTorch kernel queued on a busy stream
        # (queued_kernel_floor_s)
        end = max(c.event_floor - c.graph_floor, 0.0)
        first = True
        for e in ests:
            for _ in range(e.count):
                end += c.graph_floor + e.seconds if first else e.launched_s
                first = False
        floor = end - body
        wb = _dirty_writeback(hw, c, kernels, dtype_bytes)
        if wb:
            terms.append(
                Term(
                    name="L2 write-back",
                    seconds=wb,
                    reason="the L2 flush before the op (a write, as benchmarks flush) left its lines dirty: "
                    f"the op's first {min(_traffic(kernels, dtype_bytes), c.l2_total) / 1e6:,.1f} MB evict them "
                    f"(each costs {c.writeback:.2f} of a line read, measured)",
                )
            )
            end += wb
            floor = end - body - wb
        terms.append(
            Term(
                name="launch floor",
                seconds=floor,
                reason=f"one op timed by CUDA events ({c.event_floor * 1e6:.1f} us for a tiny kernel)"
                + (
                    f"; {n - 1} more kernel(s) queued behind it, each at least "
                    f"{(max(c.queued_floor, c.graph_floor) if c.queued_floor else c.stream_floor) * 1e6:.2f} us"
                    if n > 1
                    else ""
                ),
            )
        )
        total = end
    elif launch == "stream":
        floor = n * c.stream_floor
        terms.append(Term(name="launch floor", seconds=floor, reason=f"{n} kernel(s) at {c.stream_floor * 1e6:.1f} us"))
        total = body + floor
    elif launch == "graph":
        total = sum(e.launched_s * e.count for e in ests)
        floor = total - body
        if not c.graph_floor and not c.torch_node and c.launch_overhead:
            # no measured cost per node: the graph's replay is one launch, as the bound counts it
            floor = c.launch_overhead
            total = body + floor
            why = f"{n} kernel(s) in a CUDA graph, launched once ({c.launch_overhead * 1e6:.2f} us, launch_overhead_s; no cost per node measured)"
        else:
            why = f"{n} kernel(s) in a CUDA graph at {c.graph_floor * 1e6:.2f} us each" + (
                f", none shorter than a small PyTorch kernel ({c.torch_node * 1e6:.2f} us)" if c.torch_node else ""
            )
        terms.append(Term(name="launch floor", seconds=floor, reason=why))
    else:
        # Python issues the ops one after another while the GPU works through the queue: the
        # host runs ahead during long kernels and the GPU waits for it during short ones, so
        # the step takes the longer of the two (validation/expected/h200x2/host/: back to
        # back, steps took the longer of the host's issue and the GPU's busy time, within 0.2-1.4
        # ms of 17-30 ms)
        gpu_total = sum(queued(e) * e.count for e in ests)
        host_op = EAGER_STEP_HOST_FACTOR * c.torch_floor
        host_compiled = COMPILED_STEP_HOST_FACTOR * c.compiled_kernel
        host_entry = COMPILED_STEP_HOST_FACTOR * c.compiled_entry
        # Python issues the ops; a library's own second kernel (cuBLAS's split-K reduction, FA-2's
        # combine) comes with the call that launched it
        n_host = sum(e.count for e in ests if e.issued and e.launcher == "aten" and e.model not in COLLECTIVES)
        n_coll = sum(e.count for e in ests if e.issued and e.model in COLLECTIVES)
        n_compiled = sum(e.count for e in ests if e.issued and e.launcher == "inductor" and e.model not in COLLECTIVES)
        host_total = (
            n_host * host_op
            + n_coll * COLLECTIVE_STEP_HOST_OPS * c.torch_floor
            + n_compiled * host_compiled
            + entries * host_entry
        )
        total = max(gpu_total, host_total)
        host_wait = total - gpu_total
        if host_wait and n:  # each kernel's share, so that the layer kinds add up to the step
            ests = [e.model_copy(update={"launched_s": e.launched_s + host_wait / n}) for e in ests]
        terms.append(
            Term(
                name="launch floor",
                seconds=gpu_total - body,
                reason=f"{n} kernel(s) queued on a stream, each at least {c.queued_floor * 1e6:.1f} us"
                if c.queued_floor
                else f"{n} kernel(s) at {c.stream_floor * 1e6:.1f} us",
            )
        )
        if host_wait:

            def count(n: int, what: str) -> str:
                return f"{n:,} {what}{'s' if n != 1 else ''}"

            issued = []
            if n_host:
                issued.append(
                    f"{count(n_host, 'PyTorch op')} at {host_op * 1e6:.1f} us ({EAGER_STEP_HOST_FACTOR:g} x the "
                    f"{c.torch_floor * 1e6:.1f} us of a hot loop of one op)"
                )
            if n_coll:
                issued.append(
                    f"{count(n_coll, 'collective')} at {COLLECTIVE_STEP_HOST_OPS * c.torch_floor * 1e6:.0f} us"
                )
            if n_compiled or entries:
                parts = []
                if entries:
                    parts.append(f"{count(entries, 'call')} of compiled functions at {host_entry * 1e6:.0f} us a call")
                if n_compiled:
                    parts.append(f"{count(n_compiled, 'compiled kernel')} at {host_compiled * 1e6:.1f} us a kernel")
                issued.append(
                    " launching ".join(parts) + f" ({COMPILED_STEP_HOST_FACTOR:g} x a hot loop's "
                    f"{c.compiled_entry * 1e6:.0f} us a call and {c.compiled_kernel * 1e6:.1f} us a kernel)"
                )
            listed = issued[0] if len(issued) == 1 else ", ".join(issued[:-1]) + " and " + issued[-1]
            terms.append(
                Term(
                    name="host issue",
                    seconds=host_wait,
                    reason=f"Python issues {listed}: {host_total * 1e3:.2f} ms, {host_wait * 1e3:.2f} ms more than "
                    "the GPU's work, which waits for them",
                )
            )
    # the host's wait (eager steps the host cannot issue fast enough) is its own share, apart
    # from the kernels' launch floors
    share: dict[str, float] = {"launch": total - body - host_wait, "host": host_wait}
    for e in ests:
        kind = "interconnect" if e.model in COLLECTIVES else e.bound
        share[kind] = share.get(kind, 0.0) + e.seconds * e.count
    # a step the host paces takes the host's time, whatever the GPU's largest share
    host_paced = host_wait > 0.1 * total
    limiter = "host" if host_paced else max(share, key=lambda key: share[key])
    notes = []
    if c.missing:
        notes.append(f"{hw.id} gives no {', '.join(c.missing)}: the model leaves those terms out")
    notes.extend(f"{hw.id} gives {u}" for u in c.unpaired)
    if c.standins:
        notes.append(
            f"{hw.id} gives no {', '.join(c.standins)}: the model takes its launch overhead "
            f"({c.launch_overhead * 1e6:.2f} us, launch_overhead_s) for each"
        )
    if host_paced:
        tp = any(e.model in COLLECTIVES for e in ests)
        notes.append(HOST_PACED_TP_NOTE if tp else HOST_PACED_COMPILED_NOTE if n_compiled else HOST_PACED_NOTE)
    return Expected(
        seconds=total, limiter=limiter, terms=terms, kernels=ests, launch=launch, calibrated=c.calibrated, notes=notes
    )


__all__ = ["Card", "Expected", "Kernel", "KernelEstimate", "Term", "card", "compose", "gemm_aligned", "kernel_time"]

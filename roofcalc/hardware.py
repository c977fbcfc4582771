"""Hardware specs: pydantic models, the built-in registry and user files.

Each figure in a hardware file carries its value, the key of its source (listed
under ``sources:`` in the same file) and what kind of figure it is (datasheet,
measured, estimate...). Figures nobody publishes are left out and explained
under ``unknown:``; the models make every such field optional.
"""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from .dtypes import DTYPES
from .errors import DomainError, InputError, RoofcalcError, SpecError, suggest
from .specfile import parse_yaml, read_text, validate

# datasheet: a vendor's published figure; documented: a programming-guide rule; measured: read off
# a measurement on the card; fitted: chosen to make the model match a set of measured cases (it
# names that set and how many cases, and its accuracy on them is in-sample); derived: computed from
# other figures; transferred: another card's figure, taken over by a stated mechanism; estimate: a
# reasoned guess, overridable
FigureKind = Literal["datasheet", "measured", "fitted", "estimate", "derived", "transferred", "documented"]
# cuBLAS's GEMM paths other than its Hopper TMA kernels, as the expected-time model names them
GEMM_PATHS = ("simt", "tf32", "unaligned", "word")
# the tile shapes (rows x columns) of cuBLAS's FP32 kernels with an in-kernel serial split-K
SERIAL_SPLIT_TILES = ("32x32", "32x128")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Source(_Strict):
    title: str
    url: str | None = None


# Bounds on every figure: no device figure comes near either (peaks are ~1e16 FLOP/s,
# capacities ~1e12 bytes, the shortest times ~1e-7 s); past them the arithmetic downstream
# (ridges, times, exact counts) would overflow or divide by almost nothing.
MAX_FIGURE = 1e30
MIN_FIGURE = 1e-15


def _clip(v: object, width: int = 24) -> str:
    s = str(v)
    return s if len(s) <= width else s[:width] + "..."


def _number(v: Any) -> Any:
    """A figure's value as written: a number, never a boolean or a string (no "3.35e12" -> 3.35e12)."""
    if isinstance(v, bool):
        raise ValueError(f"expected a number, got {str(v).lower()} (a boolean)")
    if isinstance(v, str):
        if not v.isascii():
            raise ValueError(f"expected a number, got the string {_clip(v)!r} (numbers use the ASCII digits 0-9)")
        try:
            float(v)
        except ValueError:
            raise ValueError("Input should be a valid number, unable to parse string as a number") from None
        raise ValueError(f"expected a number, got the string {_clip(v)!r}; write the number without quotes")
    return v


def _whole(v: float | int) -> bool:
    return isinstance(v, int) or v.is_integer()


class Figure(_Strict):
    """One number with where it came from: finite, non-negative, within [MIN_FIGURE, MAX_FIGURE] unless 0."""

    value: float | int
    source: str
    kind: FigureKind
    note: str | None = None
    fit_set: str | None = None  # kind fitted: the cases it was fitted to
    fit_cases: int | None = None  # kind fitted: how many

    @model_validator(mode="after")
    def _fit_named(self) -> Figure:
        if self.kind == "fitted" and (not self.fit_set or not self.fit_cases or self.fit_cases < 1):
            raise ValueError("a fitted figure names its fit_set and fit_cases (how many cases it was fitted to)")
        if self.kind != "fitted" and (self.fit_set is not None or self.fit_cases is not None):
            raise ValueError("fit_set and fit_cases belong to kind: fitted")
        return self

    @field_validator("value", mode="before")
    @classmethod
    def _is_number(cls, v: Any) -> Any:
        return _number(v)

    @model_validator(mode="after")
    def _non_negative(self) -> Figure:
        v = self.value
        if isinstance(v, float) and not math.isfinite(v):
            raise ValueError(f"value must be a finite number (got {v})")
        if v < 0:
            raise ValueError(f"value must not be negative (got {_clip(v)})")
        if v > MAX_FIGURE:
            raise ValueError(f"value {_clip(v)} is absurdly large (at most {MAX_FIGURE:g})")
        if 0 < v < MIN_FIGURE:
            raise ValueError(f"value {v:g} is absurdly small (a non-zero figure is at least {MIN_FIGURE:g})")
        return self


MAX_LIST_FIGURE = 64  # entries of a list figure (shared-memory configurations: 10 on Hopper)


class ListFigure(_Strict):
    """A list of whole numbers (shared-memory configurations in KiB)."""

    value: list[int] = Field(min_length=1, max_length=MAX_LIST_FIGURE)
    source: str
    kind: FigureKind
    note: str | None = None

    @field_validator("value", mode="before")
    @classmethod
    def _whole_numbers(cls, v: Any) -> Any:
        if not isinstance(v, list):
            return v  # pydantic says "Input should be a valid list"
        out: list[Any] = []
        for i, x in enumerate(v):
            try:
                x = _number(x)
            except ValueError as e:
                raise ValueError(f"entry {i}: {e}") from None
            if isinstance(x, float) and not math.isfinite(x):
                raise ValueError(f"entry {i}: must be a finite number (got {x})")
            if isinstance(x, (int, float)):
                if not _whole(x):
                    raise ValueError(f"entry {i}: must be a whole number (got {_clip(x)})")
                if x < 0:
                    raise ValueError(f"entry {i}: must not be negative (got {_clip(x)})")
                if x > MAX_FIGURE:
                    raise ValueError(f"entry {i}: {_clip(x)} is absurdly large")
                x = int(x)
            out.append(x)
        return out


class ChoiceMapFigure(_Strict):
    """cuBLAS's measured kernel choices over a grid of GEMM shapes (roofcalc/expected/choice.py
    says what an entry holds): the probe's sweep on one card, on the libraries it names."""

    # the entries, one a line (a block of text: one YAML scalar, quick to read back and to copy)
    value: str
    source: str
    kind: Literal["measured", "transferred"]
    note: str | None = None
    # the libraries the choices were measured on (torch's version and its CUDA): another
    # version may choose otherwise
    libraries: dict[str, str] = {}

    @field_validator("value", mode="before")
    @classmethod
    def _block(cls, v: Any) -> Any:
        """A block of text, one entry a line, or a list of entries: checked (choice.check_block)
        and kept as one block."""
        from .expected.choice import check_block

        if isinstance(v, list):
            if not all(isinstance(x, str) for x in v):
                raise ValueError("entries must be strings, one entry each")
            v = "\n".join(v)
        if not isinstance(v, str):
            raise ValueError(f"expected a block of text, one entry a line (got {type(v).__name__})")
        return check_block(v)

    @property
    def entries(self) -> list[str]:
        return self.value.splitlines()

    @property
    def planes_readable(self) -> bool:
        """Whether the model reads the map's planes by their measured times (the vector planes' vec
        entries, the shallow plane): only on the card that measured them, their times holding that
        card's memory (not on a transferred map)."""
        return self.kind == "measured"

    @property
    def column_plane(self) -> bool:
        """Whether the model reads one-column GEMV kernels off this map (readable fp32 vec entries
        Mx1xK: choice.VEC_DTYPE)."""
        return self.planes_readable and _has_column_plane(self.value)


@functools.lru_cache(maxsize=8)
def _has_column_plane(text: str) -> bool:
    return re.search(r"^\s*fp32 [0-9]+x1x[0-9]+ vec ", text, re.M) is not None


class PositiveFigure(Figure):
    @model_validator(mode="after")
    def _positive(self) -> PositiveFigure:
        if self.value <= 0:
            raise ValueError(f"value must be positive (got {self.value})")
        return self


def _whole_figure(fig: Figure | None, limit: float = MAX_FIGURE) -> Figure | None:
    """A count or a size in bytes: a whole number (132 or 80.0e9, not 0.001), at most ``limit``."""
    if fig is None:
        return fig
    if not _whole(fig.value):
        raise ValueError(f"value must be a whole number (got {_clip(fig.value)})")
    if fig.value > limit:
        raise ValueError(
            f"value {_clip(fig.value)} is absurdly large (at most {limit:,})"
            if isinstance(limit, int)
            else f"value {_clip(fig.value)} is absurdly large (at most {limit:g})"
        )
    return fig


class Memory(_Strict):
    type: str
    capacity_bytes: PositiveFigure
    bandwidth_bytes_per_s: PositiveFigure
    bus_width_bits: Figure | None = None
    # what the runtime reports as the device's memory (cudaDeviceProp.totalGlobalMem): the fit
    # starts from it where measured, else from capacity_bytes
    total_bytes: PositiveFigure | None = None

    @field_validator("capacity_bytes", "bus_width_bits", "total_bytes")
    @classmethod
    def _whole(cls, fig: Figure | None) -> Figure | None:
        return _whole_figure(fig)


class Clocks(_Strict):
    boost_mhz: PositiveFigure | None = None
    memory_mhz: PositiveFigure | None = None


class SMResources(_Strict):
    """Per-SM resources the occupancy solver needs. All optional: Apple publishes few."""

    sm_count: PositiveFigure | None = None
    warp_size: PositiveFigure | None = None
    max_threads_per_block: PositiveFigure | None = None
    max_threads_per_sm: PositiveFigure | None = None
    max_blocks_per_sm: PositiveFigure | None = None
    registers_per_sm: PositiveFigure | None = None
    registers_per_block: PositiveFigure | None = None
    max_registers_per_thread: PositiveFigure | None = None
    register_allocation_unit: PositiveFigure | None = None
    sub_partitions: PositiveFigure | None = None
    shared_memory_per_sm_bytes: PositiveFigure | None = None
    shared_memory_per_block_bytes: PositiveFigure | None = None
    shared_memory_per_block_optin_bytes: PositiveFigure | None = None
    reserved_shared_memory_per_block_bytes: Figure | None = None
    shared_memory_allocation_unit_bytes: PositiveFigure | None = None
    shared_memory_configs_kib: ListFigure | None = None
    block_barriers_per_sm: PositiveFigure | None = None

    @field_validator("*")
    @classmethod
    def _counts(cls, fig: Any, info: ValidationInfo) -> Any:
        """Every SM resource is a count or a size in bytes: whole, and within what any GPU could have
        (the bounds also keep the occupancy tables and curves, which step through these ranges, small)."""
        if isinstance(fig, Figure):
            return _whole_figure(fig, SM_LIMITS[str(info.field_name)])
        if isinstance(fig, ListFigure) and max(fig.value) > SM_LIMITS[str(info.field_name)]:
            raise ValueError(
                f"value {max(fig.value):,} is absurdly large (at most {SM_LIMITS[str(info.field_name)]:,})"
            )
        return fig

    @model_validator(mode="after")
    def _consistent(self) -> SMResources:
        """Related figures checked against each other, so that no later reason contradicts itself."""

        def v(name: str) -> int | None:
            fig = getattr(self, name)
            return None if fig is None else int(fig.value)

        def need(ok: bool, field: str, message: str) -> None:
            if not ok:
                raise ValueError(f"{field}: {message}")

        warp, tpb, tpsm = v("warp_size"), v("max_threads_per_block"), v("max_threads_per_sm")
        if warp is not None:
            need(warp & (warp - 1) == 0, "warp_size", f"{warp} is not a power of two")
        if warp is not None and tpb is not None:
            need(tpb % warp == 0, "max_threads_per_block", f"{tpb:,} is not a multiple of warp_size ({warp})")
        if warp is not None and tpsm is not None:
            need(tpsm % warp == 0, "max_threads_per_sm", f"{tpsm:,} is not a multiple of warp_size ({warp})")
        if tpb is not None and tpsm is not None:
            need(tpb <= tpsm, "max_threads_per_block", f"{tpb:,} is more than max_threads_per_sm ({tpsm:,})")
        regs_sm, regs_block = v("registers_per_sm"), v("registers_per_block")
        unit, max_regs = v("register_allocation_unit"), v("max_registers_per_thread")
        if regs_sm is not None and unit is not None:
            need(
                unit <= regs_sm,
                "registers_per_sm",
                f"{regs_sm:,} is smaller than one warp's allocation (register_allocation_unit {unit:,})",
            )
        if regs_sm is not None and regs_block is not None:
            need(
                regs_block <= regs_sm,
                "registers_per_block",
                f"{regs_block:,} is more than registers_per_sm ({regs_sm:,})",
            )
        file_ = regs_block if regs_block is not None else regs_sm
        if file_ is not None and max_regs is not None and warp is not None:
            need(
                max_regs * warp <= file_,
                "max_registers_per_thread",
                f"one warp at {max_regs} registers a thread needs {max_regs * warp:,}, more than the "
                f"{'block' if regs_block is not None else 'SM'}'s {file_:,}",
            )
        per_sm, per_block = v("shared_memory_per_sm_bytes"), v("shared_memory_per_block_bytes")
        optin, reserved = v("shared_memory_per_block_optin_bytes"), v("reserved_shared_memory_per_block_bytes")
        smem_unit = v("shared_memory_allocation_unit_bytes")
        if per_block is not None and optin is not None:
            need(
                per_block <= optin,
                "shared_memory_per_block_bytes",
                f"{per_block:,} is more than shared_memory_per_block_optin_bytes ({optin:,})",
            )
        block_limit = optin if optin is not None else per_block
        if per_sm is not None and block_limit is not None:
            name = "shared_memory_per_block_optin_bytes" if optin is not None else "shared_memory_per_block_bytes"
            need(
                block_limit + (reserved or 0) <= per_sm,
                name,
                f"{block_limit:,}"
                + (f" + {reserved:,} reserved" if reserved else "")
                + f" is more than shared_memory_per_sm_bytes ({per_sm:,})",
            )
        if reserved is not None and block_limit is not None:
            need(
                reserved < block_limit,
                "reserved_shared_memory_per_block_bytes",
                f"{reserved:,} leaves nothing of the per-block limit ({block_limit:,})",
            )
        if smem_unit is not None and block_limit is not None:
            need(
                smem_unit <= block_limit,
                "shared_memory_allocation_unit_bytes",
                f"{smem_unit:,} is more than the per-block limit ({block_limit:,})",
            )
        if self.shared_memory_configs_kib is not None:
            configs = self.shared_memory_configs_kib.value
            from itertools import pairwise

            need(
                all(a < b for a, b in pairwise(configs)),
                "shared_memory_configs_kib",
                "the configurations must be in increasing order",
            )
            if per_sm is not None:
                need(
                    configs[-1] * 1024 <= per_sm,
                    "shared_memory_configs_kib",
                    f"the largest configuration ({configs[-1]:,} KiB) is more than shared_memory_per_sm_bytes "
                    f"({per_sm:,} B)",
                )
        return self


# The most any GPU could have of each SM resource, about 10-100x today's: past these a file
# is wrong (a unit slip, a typo), and the occupancy solver would step through absurd ranges.
SM_LIMITS: dict[str, int] = {
    "sm_count": 100_000,
    "warp_size": 1024,
    "max_threads_per_block": 8192,
    "max_threads_per_sm": 65536,
    "max_blocks_per_sm": 1024,
    "registers_per_sm": 2**22,
    "registers_per_block": 2**22,
    "max_registers_per_thread": 4096,
    "register_allocation_unit": 2**16,
    "sub_partitions": 64,
    "shared_memory_per_sm_bytes": 2**30,
    "shared_memory_per_block_bytes": 2**30,
    "shared_memory_per_block_optin_bytes": 2**30,
    "reserved_shared_memory_per_block_bytes": 2**30,
    "shared_memory_allocation_unit_bytes": 2**20,
    "shared_memory_configs_kib": 2**20,
    "block_barriers_per_sm": 4096,
}


def _keys_among(v: dict[str, PositiveFigure], known: Sequence[str], what: str) -> dict[str, PositiveFigure]:
    """A per-key table of figures whose keys must be among ``known``."""
    for key in v:
        if key not in known:
            raise ValueError(f"unknown {what} {_clip(key)!r}; known: {', '.join(known)}")
    return v


class Expected(_Strict):
    """Figures the expected-time model uses (what real kernels achieve), beside the peaks.

    Fractions are of the peak figure in the same file: in a registry file the datasheet
    peak, in a calibration file the measured one. Floors are per kernel.
    """

    # launch-to-completion of one tiny kernel timed alone between two CUDA events
    event_floor_s: PositiveFigure | None = None
    # per kernel when tiny kernels are launched back to back on one stream from C++
    stream_floor_s: PositiveFigure | None = None
    # per kernel node when a CUDA graph of tiny kernels is replayed
    graph_floor_s: PositiveFigure | None = None
    # per op when tiny PyTorch ops are issued back to back from Python (host-bound)
    torch_op_floor_s: PositiveFigure | None = None
    # the same hot loop at the slow end of the card's hosts (their 95th percentile around steps):
    # not a time of any step, only which steps the host's speed can pace (their band: summary.py)
    torch_op_slow_s: PositiveFigure | None = None
    # an implementation's own pace per op: its host time per decoder layer over the host-op times
    # counted in one (roofcalc.impl.host_layer, --host-layer); where given, Python's issue and the
    # implementation's Python are paid at it, native host work (a library's plan) still at
    # torch_op_floor_s. Never in a registry file: set for one call
    impl_host_op_s: PositiveFigure | None = None
    # per kernel launched from a torch.compile'd function (Inductor's generated code calling a
    # Triton kernel or cuBLAS), and per entry into such a function, in a hot loop (host-bound)
    compiled_kernel_host_s: PositiveFigure | None = None
    compiled_entry_host_s: PositiveFigure | None = None
    # a small PyTorch kernel (one of eager RMSNorm's seven on a 4096-element row) queued on a
    # stream the GPU is busy with: what one more small kernel costs when the host is ahead
    queued_kernel_floor_s: PositiveFigure | None = None
    # the smallest PyTorch kernel (x.add_ on one element) timed as a benchmark times one op:
    # between two events right after an L2 flush (the data cold, the host's dispatch hidden)
    flushed_op_floor_s: PositiveFigure | None = None
    # the same small kernels as nodes of a CUDA graph: no PyTorch kernel node finishes sooner
    torch_graph_node_s: PositiveFigure | None = None
    # a dependent load that misses L2 (pointer chase over a buffer far larger than L2)
    dram_latency_s: PositiveFigure | None = None
    # Little's law latency of streaming loads: bytes in flight per SM / the bandwidth they give
    loaded_latency_s: PositiveFigure | None = None
    # a dependent load that hits L2 (pointer chase over a buffer that fits in L2)
    l2_latency_s: PositiveFigure | None = None
    # read bandwidth one SM reaches on its own with enough bytes in flight
    per_sm_bandwidth_bytes_per_s: PositiveFigure | None = None
    # the card's read bandwidth with k SMs busy (keys: k), and the SMs it takes to reach 90%
    read_bandwidth_by_sms: dict[str, PositiveFigure] = {}
    sms_to_saturate_read: PositiveFigure | None = None
    # streaming read, copy: achieved / memory.bandwidth_bytes_per_s of this file
    dram_read_fraction: PositiveFigure | None = None
    dram_copy_fraction: PositiveFigure | None = None
    # the L2 is split into this many partitions (H100: whitepaper, two): a kernel's re-reads
    # all find their lines again while its rows in flight fit one, none once they fill the
    # whole L2, in proportion between (expected.reread_miss)
    l2_partitions: PositiveFigure | None = None
    # read bandwidth of data resident in L2 (re-reads of rows a kernel just read)
    l2_bandwidth_bytes_per_s: PositiveFigure | None = None
    # warp-level mma.sync (FlashAttention-2's instruction), per dtype: achieved / peak of this file
    mma_sync_fraction: dict[str, PositiveFigure] = {}
    # special-function unit (exp2, rsqrt, conversions) results per clock per SM
    sfu_ops_per_clk_per_sm: PositiveFigure | None = None
    # the SM clock while tensor-core or FMA work runs (probe: clock64 against globaltimer)
    sustained_sm_clock_mhz: PositiveFigure | None = None
    # large library GEMM, per dtype: achieved / peak_flops_per_s[dtype] of this file
    tensor_fraction: dict[str, PositiveFigure] = {}
    # the same bf16 GEMMs after seconds of back-to-back work on random inputs, the board at its
    # power limit (validation/bench/gemm_sustained.py): achieved / peak_flops_per_s.bf16. Its
    # ratio to tensor_fraction.bf16 (a short loop, before the limit binds) scales the tensor
    # rate of steps timed in a loop (CUDA-graph replays, eager steps)
    power_limited_tensor_fraction: PositiveFigure | None = None
    # a skinny GEMM (few rows: decode's projections) streams its weights at this fraction of
    # the streaming-read bandwidth (probe: bf16 16 x 8192 x 8192 through cuBLAS)
    skinny_gemm_bandwidth_fraction: PositiveFigure | None = None
    # a 16-bit matrix-vector product whose m or k is not a multiple of 16 bytes runs cuBLAS's
    # gemv kernels (gemv2T, gemvx), which stream A at this fraction of the streaming-read
    # bandwidth (probe: torch.mv bf16 16384 x 16383, 16383 x 16384 and 12289 x 12287)
    unaligned_gemv_bandwidth_fraction: PositiveFigure | None = None
    # the fixed cost of a library GEMM kernel over an empty kernel: launch of its blocks, the
    # first operands' arrival, the epilogue's stores (probe: a one-tile bf16 GEMM per node of a
    # CUDA graph, less graph_floor_s)
    gemm_kernel_floor_s: PositiveFigure | None = None
    # what a GEMM kernel of cuBLAS's pre-Hopper families (CUTLASS 2.x, sm80 xmma: cp.async
    # pipelines, the epilogue through shared memory) costs on top of gemm_kernel_floor_s, per
    # library path (GEMM_PATHS): simt (FP32, TF32 off), tf32, unaligned (a leading dimension
    # not a multiple of 16 bytes; in 16 bits, not of 4 either), word (16-bit, leading
    # dimensions in multiples of 4 bytes, not all of 16).
    # Measured (validation/bench/gemm_floors.py): a 1024 x 1024 GEMM of one k-block on the path
    # and on the TMA path, each one kernel, per node of a CUDA graph; the difference of what
    # the model leaves unexplained in each
    gemm_kernel_floor_extra_s: dict[str, PositiveFigure] = {}
    # cuBLAS's gemmSN kernel (FP32 products of at most 16 rows, TF32 off): each of its blocks
    # walks the whole k, one step of k every this many seconds, whatever the width or the
    # blocks beside it on an SM (validation/bench/skinny_fp32.py --grid: the times of the shapes
    # that ran it, against k)
    gemm_sn_k_step_s: PositiveFigure | None = None
    # cuBLAS's FP32 xmma kernel with an in-kernel serial split-K (products of 2-16 rows, 65-192
    # columns and m x n x k under 2^21): its 176 or 264 slices add into each output tile one
    # after another, one step each, whatever k; per tile shape of the kernel (32x32, 32x128),
    # the seconds per step (validation/bench/skinny_fp32.py --narrow-rows: the profiled kernel
    # time less the kernel's fixed cost, over its slices)
    gemm_serial_split_step_s: dict[str, PositiveFigure] = {}
    # cuBLAS's kernel choices for FP32 products (TF32 off and on) with few rows or few columns
    # (roofcalc/expected/choice.py): which kernel family and tile each shape of the probe's sweep
    # ran; and per dtype, family and tile (fp32_simt_32x128, tf32_xmma_64x32, ...) its fixed cost
    # and padded work per second an SM, fitted to that sweep's kernel times
    gemm_choice_map: ChoiceMapFigure | None = None
    gemm_choice_floor_s: dict[str, PositiveFigure] = {}
    gemm_choice_flops_per_sm: dict[str, PositiveFigure] = {}
    # cuBLAS's split-K reductions (choice.py REDUCERS: cublaslt, xmma): a fixed cost and the time
    # each slice of k adds (a block's threads sum their elements' slices one after another), fitted
    # to the one-wave reductions of the probe's sweep
    gemm_reduce_floor_s: dict[str, PositiveFigure] = {}
    gemm_reduce_slice_s: dict[str, PositiveFigure] = {}
    # cuBLAS's narrow-tile kernels for F.linear with few rows (nvjet "tst_64xN": 64 weight rows
    # by 8 to 96 rows of x per tile; the model takes up to 64): a fixed cost per kernel, and each
    # tile's k-loop, one 64-deep step after another (validation/bench/fit_linear_gemm.py: the
    # kernels of decode steps inside CUDA graphs, validation/expected/h100/kernels/graph-decode/,
    # h100x2/kernels/tp2-decode/)
    linear_gemm_floor_s: PositiveFigure | None = None
    linear_gemm_k_step_s: PositiveFigure | None = None
    # after an L2 flush that writes (zero_ of a large buffer: how benchmarks usually flush)
    # every line is dirty; each one an op's reads evict is written back first: its cost as a
    # fraction of reading a line (probe: a sum after a writing flush vs after a reading one)
    l2_dirty_writeback_fraction: PositiveFigure | None = None
    # FP32 GEMM on CUDA cores (cuBLAS SGEMM, large): achieved / peak_flops_per_s.fp32
    cuda_core_gemm_fraction: PositiveFigure | None = None
    # 16-bit GEMM whose leading dimension is not a multiple of 16 bytes (no TMA path):
    # achieved / peak_flops_per_s[dtype]
    unaligned_tensor_fraction: dict[str, PositiveFigure] = {}
    # 16-bit GEMM whose leading dimensions are multiples of 4 bytes (two elements) but not all of
    # 16 (cuBLAS's cp.async "align2" kernels): achieved / peak_flops_per_s[dtype]
    word_aligned_tensor_fraction: dict[str, PositiveFigure] = {}
    # all-reduce between the GPUs of one node: latency of a small message and bus bandwidth
    allreduce_latency_s: PositiveFigure | None = None
    allreduce_graph_latency_s: PositiveFigure | None = None
    allreduce_bus_bytes_per_s: PositiveFigure | None = None
    p2p_bytes_per_s: PositiveFigure | None = None

    @field_validator("skinny_gemm_bandwidth_fraction", "unaligned_gemv_bandwidth_fraction")
    @classmethod
    def _of_the_read_ceiling(cls, v: PositiveFigure | None) -> PositiveFigure | None:
        if v is not None and v.value > 1:
            raise ValueError(
                f"value must be at most 1, a fraction of the streaming-read bandwidth (got {_clip(v.value)})"
            )
        return v

    @field_validator("l2_partitions")
    @classmethod
    def _whole_partitions(cls, v: PositiveFigure | None) -> PositiveFigure | None:
        if v is not None and (v.value < 1 or v.value != int(v.value)):
            raise ValueError(f"value must be a whole number of partitions, 1 or more (got {_clip(v.value)})")
        return v

    @field_validator("gemm_kernel_floor_extra_s")
    @classmethod
    def _paths(cls, v: dict[str, PositiveFigure]) -> dict[str, PositiveFigure]:
        return _keys_among(v, GEMM_PATHS, "GEMM path")

    @field_validator("gemm_choice_floor_s", "gemm_choice_flops_per_sm", mode="before")
    @classmethod
    def _fp32_by_default(cls, v: Any) -> Any:
        """A first-version calibration's keys name no dtype (simt_64x64): its sweep timed fp32 only."""
        if isinstance(v, dict):
            families = ("simt_", "xmma_", "tensorop_", "nvjet_")
            out: dict[Any, Any] = {}
            for k, f in v.items():
                key = f"fp32_{k}" if isinstance(k, str) and k.startswith(families) else k
                if key in out:
                    raise ValueError(f"{_clip(key)!r} is given twice (once without its dtype, fp32)")
                out[key] = f
            return out
        return v

    @field_validator("gemm_choice_floor_s", "gemm_choice_flops_per_sm")
    @classmethod
    def _choice_tiles(cls, v: dict[str, PositiveFigure]) -> dict[str, PositiveFigure]:
        import re

        for key in v:
            if not re.fullmatch(
                r"(fp32|tf32|bf16|fp16)_(simt|xmma|tensorop|nvjet)_[1-9][0-9]{0,3}x[1-9][0-9]{0,3}", key
            ):
                raise ValueError(
                    f"{_clip(key)!r} is not a dtype, kernel family and tile such as fp32_simt_32x128 or tf32_xmma_64x32"
                )
        return v

    @field_validator("gemm_serial_split_step_s")
    @classmethod
    def _split_tiles(cls, v: dict[str, PositiveFigure]) -> dict[str, PositiveFigure]:
        return _keys_among(v, SERIAL_SPLIT_TILES, "serial split-K tile")

    @field_validator("gemm_reduce_floor_s", "gemm_reduce_slice_s")
    @classmethod
    def _reducers(cls, v: dict[str, PositiveFigure]) -> dict[str, PositiveFigure]:
        from .expected.choice import REDUCERS

        return _keys_among(v, REDUCERS, "split-K reduction")

    @field_validator("tensor_fraction", "unaligned_tensor_fraction", "word_aligned_tensor_fraction")
    @classmethod
    def _dtypes(cls, v: dict[str, PositiveFigure]) -> dict[str, PositiveFigure]:
        return _keys_among(v, DTYPES, "dtype")

    @field_validator("impl_host_op_s")
    @classmethod
    def _given_per_call(cls, v: PositiveFigure | None) -> PositiveFigure | None:
        # set for one call (roofcalc.validation.with_impl_pace, which does not re-validate)
        if v is not None:
            raise ValueError("is an implementation's pace given for one call (--host-layer), never a card's figure")
        return v


class Calibration(_Strict):
    """Present in files written by ``roofcalc probe --save-calibration``."""

    schema_version: int = 1
    base: str
    device_name: str
    driver: str | None = None
    date: str
    command: str
    # the libraries the probe's timings ran on (torch's version, the CUDA it was built for): the
    # kernels cuBLAS and FlashAttention choose depend on them
    libraries: dict[str, str] = {}


class Hardware(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    name: str
    vendor: str
    aliases: list[str] = []
    compute_capability: str | None = Field(default=None, pattern=r"^\d+\.\d+$")
    gpu_family: str | None = None
    sources: dict[str, Source] = Field(min_length=1)
    peak_flops_per_s: dict[str, PositiveFigure] = Field(min_length=1)
    # Rates of the non-tensor pipes (FP64/FP16 FMA on CUDA cores), which the probe
    # measures from registers; peak_flops_per_s holds the rate an op of that dtype gets.
    cuda_core_flops_per_s: dict[str, PositiveFigure] = {}
    memory: Memory
    l2_bytes: PositiveFigure | None = None
    clocks: Clocks = Field(default_factory=Clocks)
    interconnect_bytes_per_s: PositiveFigure | None = None
    launch_overhead_s: Figure | None = None
    sm: SMResources = Field(default_factory=SMResources)
    expected: Expected = Field(default_factory=Expected)
    unknown: dict[str, str] = {}
    calibration: Calibration | None = None

    @model_validator(mode="after")
    def _check(self) -> Hardware:
        for dt in [*self.peak_flops_per_s, *self.cuda_core_flops_per_s]:
            if dt not in DTYPES:
                raise ValueError(f"peak_flops_per_s: unknown dtype {_clip(dt)!r}; known: {', '.join(DTYPES)}")
        for path, fig in self.figures():
            if fig.source not in self.sources:
                raise ValueError(f"{path}: source {_clip(fig.source)!r} is not listed under sources")
        if self.compute_capability is None and self.gpu_family is None:
            raise ValueError("give compute_capability (NVIDIA) or gpu_family (others)")
        if self.l2_bytes is not None and not _whole(self.l2_bytes.value):
            raise ValueError(f"l2_bytes: value must be a whole number (got {_clip(self.l2_bytes.value)})")
        if self.calibration is not None:
            import re

            base = self.calibration.base
            if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", base) or base.endswith((".yaml", ".yml")):
                raise ValueError(
                    f"calibration.base: {_clip(base)!r} is not a hardware id from the registry "
                    "(such as h100), and a path is not accepted"
                )
        return self

    # ------------------------------------------------------------ helpers
    def figures(self) -> list[tuple[str, Figure | ListFigure | ChoiceMapFigure]]:
        """Every figure in the file with its dotted path, in file order."""
        out: list[tuple[str, Figure | ListFigure | ChoiceMapFigure]] = []

        def walk(prefix: str, obj: Any) -> None:
            if isinstance(obj, (Figure, ListFigure, ChoiceMapFigure)):
                out.append((prefix, obj))
            elif isinstance(obj, BaseModel):
                for name in type(obj).model_fields:
                    walk(f"{prefix}.{name}" if prefix else name, getattr(obj, name))
            elif isinstance(obj, dict):
                for k, v in obj.items():
                    walk(f"{prefix}.{k}", v)

        walk("", self)
        return out

    @property
    def cc(self) -> tuple[int, int] | None:
        if self.compute_capability is None:
            return None
        a, b = self.compute_capability.split(".")
        return int(a), int(b)

    @property
    def bandwidth(self) -> float:
        return float(self.memory.bandwidth_bytes_per_s.value)

    def peak(self, dtype: str) -> float:
        fig = self.peak_flops_per_s.get(dtype)
        if fig is None:
            have = ", ".join(self.peak_flops_per_s)
            raise DomainError(f"{self.id} has no {dtype} peak (it has: {have})")
        return float(fig.value)

    def sm_value(self, name: str) -> int | None:
        memo = derived(self)
        key = ("sm", name)
        if key not in memo:
            fig = getattr(self.sm, name)
            memo[key] = None if fig is None else int(fig.value)
        return memo[key]  # type: ignore[no-any-return]


# Values derived from a hardware object, remembered per object: the SM figures as ints (the
# occupancy solver reads a dozen per call) and the solver's answers (a sweep or a next-block
# search asks tens of thousands of times). The object is frozen, so what is derived from it
# never changes; the entry keeps the object alive, so its id cannot be reused while cached.
_DERIVED: dict[int, tuple[Hardware, dict[Any, Any]]] = {}
DERIVED_LIMIT = 16384  # entries per object before its memo starts over


def derived(hw: Hardware) -> dict[Any, Any]:
    """The memo of values derived from ``hw`` (callers key their entries by a tuple that names them)."""
    hit = _DERIVED.get(id(hw))
    if hit is None or hit[0] is not hw or len(hit[1]) >= DERIVED_LIMIT:
        if len(_DERIVED) >= 64:
            _DERIVED.clear()
        hit = (hw, {})
        _DERIVED[id(hw)] = hit
    return hit[1]


# ------------------------------------------------------------------ loading


@functools.cache
def _load_builtin(stem: str) -> Hardware:
    from .registry import builtin_label, load_builtin

    label = builtin_label("hardware", stem)

    def build(text: str) -> Hardware:
        data = parse_yaml(text, label, trusted=True)
        if isinstance(data, dict):
            data.setdefault("id", stem)
        return validate(Hardware, data, label)

    return load_builtin("hardware", stem, build, Hardware)


def load_hardware_file(path: str | Path) -> Hardware:
    """Load a user's hardware YAML file."""
    p = Path(path)
    return _completed(_hardware_from_text(read_text(p, what="hardware file"), str(p), p.stem.lower()))


@functools.lru_cache(maxsize=32)
def _hardware_from_text(text: str, label: str, stem: str) -> Hardware:
    """A hardware file's text, parsed and checked: remembered by its text and name (a Hardware
    is frozen), since one process may load the same calibration for every case of a report.
    A file that fails raises each time (lru_cache keeps no exceptions)."""
    data = parse_yaml(text, label)
    if "id" not in data:
        data["id"] = stem if stem and stem[0].isalnum() else "custom"
    return validate(Hardware, data, label)


def load_calibration(path: str | Path, base: str | None = None) -> Hardware:
    """A file written by 'roofcalc probe --save-calibration'; checked against ``base`` if given
    (a registry name or alias on either side)."""
    cal = load_hardware_file(path)
    if cal.calibration is None:
        raise InputError(f"{path}: not a calibration file (no 'calibration:' section)")
    if base:
        want = load_hardware(base).id
        part = _base_part(cal)
        if (part.id if part is not None else cal.calibration.base) != want:
            raise InputError(f"{path}: calibrates {cal.calibration.base}, not {base}")
    return cal


def _base_part(cal: Hardware) -> Hardware | None:
    """The registry part a calibration names, or None (a path, or not in the registry)."""
    from .registry import is_path

    assert cal.calibration is not None
    if is_path(cal.calibration.base):
        return None
    try:
        return load_hardware(cal.calibration.base)
    except RoofcalcError:
        return None


def _completed(cal: Hardware) -> Hardware:
    """A calibration file, however it is named (--calibration, --hw, --hw-file), with the figures
    the probe does not measure taken from its registry part: the power-limited rate (as a ratio),
    the cuBLAS kernels' steps (as they stand) and the slow end of the card's hosts (torch_op_slow_s:
    one machine's probe times its host once, and that host moves between states like the others).
    A base outside the registry leaves it as it is."""
    if cal.calibration is None:
        return cal
    part = _base_part(cal)
    if part is None:
        return cal
    done = _with_base_cublas_figures(_with_base_power_figure(cal, part), part)
    slow = part.expected.torch_op_slow_s
    if slow is not None and done.expected.torch_op_slow_s is None:
        done = _borrowed(done, part, {"torch_op_slow_s": slow})
    return done


def _borrowed(cal: Hardware, part: Hardware, figs: dict[str, Any]) -> Hardware:
    """``cal`` with these expected figures of ``part`` (name: figure, or a table of them whose
    entries join the calibration's own), each citing ``part``'s source; a source of the
    calibration's under the same name and another title keeps its name, and the borrowed one is
    renamed after the part."""
    sources = dict(cal.sources)

    def carry(fig: PositiveFigure) -> PositiveFigure:
        key, src, n = fig.source, part.sources[fig.source], 1
        while key in sources and sources[key] != src:  # the name is taken by another source
            key = f"{fig.source}-{part.id}" + (f"-{n}" if n > 1 else "")
            n += 1
        sources[key] = src
        return fig if key == fig.source else fig.model_copy(update={"source": key})

    update = {  # a table's entries join the calibration's own
        name: {**getattr(cal.expected, name), **{k: carry(f) for k, f in fig.items()}}
        if isinstance(fig, dict)
        else carry(fig)
        for name, fig in figs.items()
    }
    return cal.model_copy(update={"expected": cal.expected.model_copy(update=update), "sources": sources})


def _with_base_cublas_figures(cal: Hardware, part: Hardware) -> Hardware:
    """A calibration without expected.gemm_sn_k_step_s or the linear_gemm_* figures, or without
    gemm_serial_split_step_s of a tile shape (the probe does not time those cuBLAS kernels: a
    benchmark's sweep does), takes its part's, as they stand; so does one without the choice map
    or a tile's choice figures (a quick probe, or one whose sweep failed: the full probe measures
    them)."""
    e, pe = cal.expected, part.expected
    figs: dict[str, Any] = {}
    for name in (
        "gemm_sn_k_step_s",
        "linear_gemm_floor_s",
        "linear_gemm_k_step_s",
        "gemm_choice_map",
    ):
        if getattr(e, name) is None and getattr(pe, name) is not None:
            figs[name] = getattr(pe, name)
    for name in (
        "gemm_serial_split_step_s",
        "gemm_choice_floor_s",
        "gemm_choice_flops_per_sm",
        "gemm_reduce_floor_s",
        "gemm_reduce_slice_s",
    ):
        missing = {t: f for t, f in getattr(pe, name).items() if t not in getattr(e, name)}
        if missing:  # per tile shape: a calibration's own figures stay
            figs[name] = missing
    return _borrowed(cal, part, figs) if figs else cal


def _with_base_power_figure(cal: Hardware, part: Hardware) -> Hardware:
    """A calibration without expected.power_limited_tensor_fraction (the probe does not measure
    it: it takes seconds at full power) takes its part's ratio of that figure to
    tensor_fraction.bf16, applied to its own bf16 fraction; a part that lacks either figure, or
    a calibration without its own bf16 fraction, leaves it as it is."""
    plf, tf_part, tf_own = (
        part.expected.power_limited_tensor_fraction,
        bf16_tensor_fraction(part),
        bf16_tensor_fraction(cal),
    )
    if cal.expected.power_limited_tensor_fraction is not None or plf is None or tf_part is None or tf_own is None:
        return cal
    ratio = float(plf.value) / tf_part
    fig = PositiveFigure(
        value=min(tf_own, tf_own * float(plf.value) / tf_part),
        source=plf.source,
        kind="derived",
        note=f"{part.id}'s power-limited / short-run ratio ({ratio:.3f}) x this file's bf16 tensor_fraction",
    )
    return _borrowed(cal, part, {"power_limited_tensor_fraction": fig})


def bf16_tensor_fraction(hw: Hardware) -> float | None:
    """expected.tensor_fraction.bf16 (fp16's where bf16 is not given), or None."""
    f = hw.expected.tensor_fraction.get("bf16") or hw.expected.tensor_fraction.get("fp16")
    return float(f.value) if f is not None else None


def hardware_names() -> list[str]:
    from .registry import builtin_names

    return builtin_names("hardware")


def all_hardware() -> list[Hardware]:
    return [_load_builtin(s) for s in hardware_names()]


def load_hardware(name_or_path: str | Path | Hardware) -> Hardware:
    """A registry name or alias (``h100``, ``H100-SXM``), or a path to a YAML file."""
    if isinstance(name_or_path, Hardware):
        return name_or_path
    text = str(name_or_path).strip()
    from .registry import is_path

    if isinstance(name_or_path, Path) or is_path(text):
        return load_hardware_file(text)
    key = text.lower()
    stems = hardware_names()
    if key in stems:
        return _load_builtin(key)
    aliases: list[str] = []
    for stem in stems:
        hw = _load_builtin(stem)
        names = [a.lower() for a in hw.aliases]
        if key in names:
            return hw
        aliases.extend(hw.aliases)
    raise InputError(f"unknown hardware {text!r}{suggest(text, stems + aliases)}; see 'roofcalc hw list'")


__all__ = [
    "Expected",
    "Figure",
    "Hardware",
    "SMResources",
    "SpecError",
    "all_hardware",
    "hardware_names",
    "load_hardware",
    "load_hardware_file",
]

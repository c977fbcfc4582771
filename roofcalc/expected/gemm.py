"""Library GEMMs as cuBLAS runs them: alignment and kernel family (path), the tile search with
wave quantization and split-K, F.linear's narrow tiles, gemmSN and the serial split-K FP32
kernels, the fixed cost per kernel and the floor residue the probe derives it from. Reads the
achievable tensor-core and CUDA-core rates, the power-limited ratio, the GEMM floors and
k-steps (gemm_kernel_floor_*, gemm_sn_k_step_s, gemm_serial_split_step_s, linear_gemm_*),
skinny and gemv streaming rates, per-SM bandwidth and DRAM latency."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Literal

from ..dtypes import ELEMENT_BYTES
from ..hardware import Hardware
from .card import Card, card, tensor_rate
from .choice import DTYPES as CHOICE_DTYPES
from .choice import VEC_DTYPES, Choice, reduce_blocks, reducer, tile_count, tile_work
from .records import Kernel, KernelEstimate
from .stream import _prior_read, _prior_time

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
    # the extra is the tile search's figure: the planes read by measured times stand apart from it
    c = replace(card(hw), gemm_floor_extra=(), timed_planes=False)
    g = Kernel(name="gemm", model="gemm", help="", dtype=dtype, m=m, n=n, k=k)
    modelled = 0.0
    for e in _gemm(hw, c, g, size):
        modelled += e.seconds
    return gemm_path(dtype, aligned, word), node_s - c.graph_floor - modelled


# Which FP32 products (TF32 off) cuBLAS runs with its gemmSN kernel on Hopper: those of 2 to 16
# rows whose depth k is at most a limit that grows with the width n, read off the 1,408 shapes of
# validation/expected/h100/kernels/fp32-choice/fp32-grid.json.gz (torch.matmul of row-major
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


def c_bytes(k: Kernel, size: float) -> float:
    """The bytes of C a GEMM reads where it accumulates into it (beta != 0: C = alpha A B + beta C),
    ``size`` bytes an element (its output's: 4 for fp32 and tf32); none otherwise."""
    return k.m * k.n * k.batch * size if k.c_read else 0.0


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
    io = (k.m * k.k + k.k * k.n + k.m * k.n) * 4 + c_bytes(k, 4)
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


def _gemm_sn_walk(c: Card, k: Kernel, near: Choice, dtype_bytes: float) -> list[KernelEstimate]:
    """A TF32 or 16-bit product where the choice map's nearest shape ran gemmSN: as the FP32
    gemmSN (_gemm_sn), its blocks all resident, each walking the whole k, so beyond its fixed cost
    the kernel takes one walk; here at the pace the nearest shape's walk went (its measured time
    beyond the least any kernel of the dtype took, per step of its k), or the operands' and
    output's stream if that takes longer. The fixed part queued in a stream is a graph node's
    (graph_floor_s). Its blocks as FP32's: the layout every one of kernels/choice8's 4,567 gemmSN
    shapes (every dtype) launched."""
    assert c.choice_map is not None
    least = c.choice_map.kernel_floor(k.dtype)
    floor = c.graph_floor
    t_walk = max(0.0, near.kernel_s - least) * k.k / near.k
    io = _tiles_io(k, 1, dtype_bytes)
    t_mem = io / c.skinny_bw  # as FP32's gemmSN streams
    # every gemmSN of the sweeps had at most 16 rows (m), in blocks of 64 of its n columns by 1, 2
    # or 4 rows of blocks; a product of more rows is counted on the layout of 16
    block_rows = next((r for most, r in SN_BLOCK_ROWS if k.m <= most), SN_BLOCK_ROWS[-1][1])
    blocks = math.ceil(k.n / SN_BLOCK_COLS) * block_rows
    why = (
        f"cuBLAS's {k.dtype.upper()} gemmSN, {_measured_at(near)}: {blocks:,} blocks, all resident, each "
        f"walking k = {k.k:,} at the pace the nearest shape's walk went, {floor * 1e6:.2f} us fixed"
    )
    return _measured_kernels(c, k, near, (floor, t_walk, t_mem, io), blocks, "latency", why, 1, dtype_bytes)


# sgemm_largek's output tiles, rows of m by columns of n: every one of kernels/choice8's 157 largek
# launches had ceil(m / 8) x ceil(n / 64) blocks in x and y, and its k slices in z
LARGEK_TILE = (8, 64)


def _gemm_largek(c: Card, k: Kernel, near: Choice) -> list[KernelEstimate]:
    """An FP32 product where the choice map's nearest shape ran cuBLAS's sgemm_largek: a
    scal_kernel zeroes C, then 8 x 64 tiles of the output, each in as many slices of k as there,
    add their partial sums into C as they end (no reduction kernel). Its blocks run in waves,
    each walking its slice: beyond the fixed part, the nearest shape's measured time (both
    kernels) scaled by k and by the blocks, counted from one wave; or its stream if longer."""
    # (Tried and not kept: reading it only where the measured shape past the product along its
    # large side ran largek too. The sweep's tall largek is an island at 10,000 rows, not at 6,400
    # or 16,000, and the in-sample tall products at 8,323-9,224 rows ran something faster, at 0.25
    # and 0.33 of this reading; but the wide ones just below 4,000 columns, past which 2,560 ran
    # another kernel, ran largek. In-sample, 4 fewer within [0.8, 1.25] and 1 fewer outside [0.5, 2].)
    assert c.choice_map is not None
    least = c.choice_map.kernel_floor(k.dtype)
    slices = max(1, min(near.splits, k.k))
    blocks = tile_count(k.m, k.n, LARGEK_TILE) * slices
    near_blocks = tile_count(near.m, near.n, LARGEK_TILE) * near.splits
    t_walk = max(0.0, near.kernel_s - least) * k.k / near.k * max(blocks, c.sms) / max(near_blocks, c.sms)
    io = _tiles_io(k, slices, 4.0)
    why = (
        f"cuBLAS's FP32 sgemm_largek after a scal_kernel zeroes C, {_measured_at(near)}: {blocks:,} blocks "
        f"of 8x64 tiles, k in {slices} slices added into C; the measured time scaled by k and the blocks "
        f"(from one wave), {c.graph_floor * 1e6:.2f} us fixed"
    )
    return _measured_kernels(c, k, near, (c.graph_floor, t_walk, io / c.dram_bw, io), blocks, "latency", why, 1, 4.0)


# Which FP32 products (TF32 off) cuBLAS runs with an sm80 xmma FFMA kernel whose split-K is in
# the kernel and serial: those of 2 to 16 rows, 65-192 columns and a depth from 95 whose work
# m x n x k is under 2^21, read off 4,095 shapes (every row count 2-16, widths 64-200, depths
# 64-4096; cuBLAS of torch 2.11+cu130 on an H100) in validation/expected/h100/kernels/
# fp32-choice/fp32-narrow-rows.json.gz: every shape of those widths with m x n x k up to 2,088,960
# ran it and none from 2,097,152 did. Up to 90 columns it tiles the output 32 x 32 and cuts k
# into 176 slices; from 96, 32 x 128 and 264 slices, and only from 7 rows (fewer rows ran the
# SIMT kernels there), up to 192 (193-195 ran other kernels in fp32-narrow-rand1.json.gz, a
# hold-out of a first map). Two bounds are taken half way: the tiles' between 94 (32 x 32 in the
# second hold-out, fp32-narrow-rand2.json.gz) and 96; the least depth between 91 (another kernel,
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


def _measured_choice(c: Card, k: Kernel) -> tuple[Choice, float, float] | None:
    """The measured shape nearest to this FP32 (TF32 off or on) product in the card's choice map,
    with its family and tile's fixed cost and rate, where cuBLAS ran a tiled kernel there and the
    card has that tile's figures; else None (the tile search stands)."""
    if c.choice_map is None:
        return None
    near = c.choice_map.nearest(k.dtype, k.m, k.n, k.k)
    if near is None or near.key is None:
        return None
    floor, rate = dict(c.choice_floor).get(near.key), dict(c.choice_rate).get(near.key)
    return (near, floor, rate) if floor and rate else None


def _gemm_measured_choice(
    c: Card, k: Kernel, choice: tuple[Choice, float, float], dtype_bytes: float
) -> list[KernelEstimate]:
    """The kernel cuBLAS ran at the nearest measured shape, on this shape: its tile (rows of m by
    columns of n, padded where the tile overhangs the product), k cut into slices of the depth it
    cut there, the blocks dealt over the SMs; the busiest SM's padded work at the tile's measured
    rate after its fixed cost, or the operands' streaming if that takes longer. A split k is then
    summed by a reduction kernel (cublasLt's splitKreduce, or xmma's own)."""
    near, floor, rate = choice
    assert near.tile is not None
    # k cut as there: slices of the depth they had, down to its count; deeper than the measured
    # shape, its count with deeper slices (cuBLAS's counts stop growing somewhere past the grid's
    # depths, bf16 at 257-563; tried and not kept: slices of the measured depth there too, 188 of
    # 220 of the development sets within [0.8, 1.25] against 191)
    per_slice = math.ceil(near.k / near.splits)
    splits = min(near.splits, k.k) if k.k > near.k else max(1, min(k.k, round(k.k / per_slice)))
    tiles = tile_count(k.m, k.n, near.tile)
    if splits > 1:
        # cuBLAS cuts k to fill the SMs: no more blocks than the waves it filled at the nearest
        # shape (24 x 3056 x 2384 takes 24 x 2560 x 2048's 6 slices of 20 tiles, one wave; as 7 slices
        # of its 24 tiles it would be two)
        near_blocks = tile_count(near.m, near.n, near.tile) * near.splits
        splits = max(1, min(splits, math.ceil(near_blocks / c.sms) * c.sms // tiles))
    work = tile_work(k.m, k.n, k.k, near.tile, splits, c.sms)
    t_work = work / rate
    io = _tiles_io(k, splits, dtype_bytes)
    t_mem = io / c.dram_bw
    tm, tn = near.tile
    blocks = tiles * splits
    kind = FAMILY_WORDS.get(near.family, near.family)
    what = k.dtype.upper()
    why = (
        f"cuBLAS's {what} {kind} kernel on {tm}x{tn} tiles, {_measured_at(near)}: {blocks:,} blocks"
        + (f", k in {splits} slices" if splits > 1 else "")
        + f"; the busiest SM's {work / 1e6:,.1f} MFLOP of padded work at {rate / 1e9:,.0f} GFLOP/s an SM"
        + f"; {floor * 1e6:.2f} us fixed per kernel"
    )
    return _measured_kernels(c, k, near, (floor, t_work, t_mem, io), blocks, "compute", why, splits, dtype_bytes)


# how reasons name a tiled kernel family
FAMILY_WORDS = {"simt": "SIMT", "xmma": "xmma", "tensorop": "tensor-op", "nvjet": "nvjet"}


def _tiles_io(k: Kernel, splits: int, dtype_bytes: float) -> float:
    """The bytes a map-read tiled kernel streams: its operands once, its output (fp32 partials a
    slice where k is split; fp32 and tf32 write fp32), and C where it reads it."""
    out_bytes = 4 if splits > 1 or k.dtype in ("fp32", "tf32") else dtype_bytes
    return (k.m * k.k + k.k * k.n) * dtype_bytes + k.m * k.n * out_bytes * splits + c_bytes(k, dtype_bytes)


def _measured_at(near: Choice) -> str:
    """Where a kernel read off the choice map was measured, as reasons say it."""
    return f"as the choice map measured it for {near.m}x{near.n}x{near.k} (the nearest shape)"


def _measured_kernels(
    c: Card,
    k: Kernel,
    near: Choice,
    times: tuple[float, float, float, float],
    blocks: int,
    bound: Literal["compute", "latency"],
    why: str,
    splits: int,
    dtype_bytes: float,
    epilogue: bool = False,
) -> list[KernelEstimate]:
    """A kernel read off the choice map: its fixed cost, then its work (``bound`` names what binds
    it) or its operands' stream, whichever takes longer (times: fixed, work, stream, bytes
    streamed); a reduction kernel after it where it leaves ``splits`` partial sums, or, with
    ``epilogue``, where cuBLAS ran one after a single slice (its reduction epilogue:
    Choice.reduced)."""
    floor, t_work, t_mem, io = times
    if t_mem > t_work:
        why += f"; streaming its {io / 1e6:,.1f} MB takes longer"
    out = [
        KernelEstimate(
            name=k.name,
            model="gemm",
            seconds=floor + max(t_work, t_mem),
            grid=blocks,
            blocks_per_sm=math.ceil(blocks / c.sms),
            waves=blocks / c.sms,
            bound=bound if t_work >= t_mem else "memory",
            reason=why,
        )
    ]
    if splits > 1 or (epilogue and near.reduced):
        out.append(_measured_reduce(c, k, near, splits, dtype_bytes))
    return out


# the blocks of a shallow kernel whose name gives no tile (cuBLAS's "other" kernels of the plane)
# are counted as if on 64 x 64 tiles: only their ratio between two shapes enters the model
SHALLOW_UNTILED = (64, 64)


def _gemm_vec(c: Card, k: Kernel, near: Choice) -> list[KernelEstimate]:
    """A one-row (x @ B) or one-column (A @ x, a dot product at one row) 4-byte product as the GEMV
    kernel cuBLAS ran at the nearest measured shape of its plane (the choice map's vec entries):
    its launch kept, its blocks in proportion to the side (the columns of a row, the rows of a
    column: one or more blocks walk each run of them down k), each block's walk as long as k. The
    kernel's time beyond its fixed cost is the busiest SM's walk, ceil(blocks / SMs) blocks each
    k deep, at the pace the nearest shape's walk went (latency-bound: few blocks are in flight on
    an SM); or the stream of the matrix if that takes longer. Its k partial sums, where it leaves
    them, are summed by a second kernel (splitKreduce or reduce_1Block, as _measured_reduce)."""
    assert near.tile is not None and c.choice_map is not None
    # the least any vec kernel took under the profiler is its fixed part there; queued in a
    # stream a kernel's fixed cost is a graph node's (graph_floor_s), the rest is its walk
    least = c.choice_map.vec_floor(k.dtype)
    floor = c.graph_floor
    column = k.n == 1
    side, near_side = (k.m, near.m) if column else (k.n, near.n)
    near_blocks, threads = near.tile
    blocks = max(1, round(near_blocks * side / near_side))
    walk = math.ceil(blocks / c.sms) * k.k
    near_walk = math.ceil(near_blocks / c.sms) * near.k
    t_walk = max(0.0, near.kernel_s - least) * walk / near_walk
    partials = min(near.splits, k.k)
    io = (k.k * side + k.k) * 4 + side * 4 * partials + c_bytes(k, 4)
    t_mem = io / c.dram_bw
    what = "one-column" if column else "one-row"
    runs = "rows" if column else "columns"
    why = (
        f"cuBLAS's {k.dtype.upper()} {what} GEMV kernel, {_measured_at(near)}: "
        f"{blocks:,} blocks of {threads} threads, each walking k ({k.k:,}) along its {runs}"
        + (f" in {partials} partial sums" if partials > 1 else "")
        + f"; the busiest SM's {math.ceil(blocks / c.sms)} block(s) at the measured shape's pace, "
        + f"{floor * 1e6:.2f} us fixed"
    )
    return _measured_kernels(c, k, near, (floor, t_walk, t_mem, io), blocks, "latency", why, partials, 4.0)


def _gemm_shallow(c: Card, k: Kernel, near: Choice, dtype_bytes: float) -> list[KernelEstimate]:
    """A product of a large output and a shallow k (the choice map's shallow plane) as the kernel
    cuBLAS ran at the nearest measured shape: its family, tile and k slices kept. Such a kernel's
    time is its output's tiles, each loaded, multiplied a few steps deep and stored: beyond its
    fixed cost it grows with the blocks it deals over the SMs, not with k. So the nearest shape's
    measured time beyond the least any shallow kernel took (its fixed part under the profiler;
    queued, a graph node's) is scaled by the blocks, counted from one wave (fewer blocks than SMs
    take one block's time); or the operands' and output's stream, if that takes longer. Split k
    is summed by a reduction kernel after it (_measured_reduce)."""
    assert c.choice_map is not None
    least = c.choice_map.shallow_floor(k.dtype)
    floor = c.graph_floor
    # (a largek entry's slices add into C: no reduction kernel, whatever map holds one)
    splits = 1 if near.family == "largek" else max(1, min(near.splits, k.k))
    tile = near.tile if near.tile is not None else SHALLOW_UNTILED
    blocks = tile_count(k.m, k.n, tile) * splits
    near_blocks = tile_count(near.m, near.n, tile) * near.splits
    t_work = max(0.0, near.kernel_s - least) * max(blocks, c.sms) / max(near_blocks, c.sms)
    io = _tiles_io(k, splits, dtype_bytes)
    t_mem = io / c.dram_bw
    kind = FAMILY_WORDS.get(near.family, near.family)
    on = f" on {tile[0]}x{tile[1]} tiles" if near.tile is not None else ""
    why = (
        f"cuBLAS's {k.dtype.upper()} {kind} kernel{on}, {_measured_at(near)}: {blocks:,} blocks"
        + (f", k in {splits} slices" if splits > 1 else "")
        + "; its measured time beyond the least of the shallow plane scaled by the blocks (from one wave), "
        + f"{floor * 1e6:.2f} us fixed"
    )
    # the sweep timed each shape after others had filled the L2 with dirty output lines, the
    # state a writing flush leaves: the write-back is in these times (in-sample, the plane's
    # H100 cases were over-predicted by it: 577 of 718 within [0.8, 1.25] with it added, 614
    # without; outputs of 32-128 MB at a median of 0.81 with it, 1.01 without)
    # the reduction epilogue is read here only: the small-side map's tile figures were fitted to
    # first kernels beside such epilogues unmodelled (adding it there moved its 75 committed H100
    # cases from a median of 1.20 to 0.84)
    times = (floor, t_work, t_mem, io)
    kernels = _measured_kernels(c, k, near, times, blocks, "latency", why, splits, dtype_bytes, epilogue=True)
    return [replace(e, dirty_held=True) for e in kernels]


def _reduce_walk(c: Card, which: str, blocks: int, slices: int, stream: float) -> tuple[float, bool, str] | None:
    """A split-K reduction's time on the card's fitted figures for ``which`` (cublaslt, xmma):
    its fixed cost, then on the busiest SM its blocks' threads summing their ``slices`` one after
    another, or ``stream`` (its traffic's streaming) if that takes longer. With whether the walk
    binds, and the words for it; None where the card lacks the figures."""
    floor, per_slice = dict(c.reduce_floor).get(which), dict(c.reduce_slice).get(which)
    if floor is None or per_slice is None:
        return None
    walk = math.ceil(blocks / c.sms) * slices * per_slice
    words = (
        f"{blocks:,} block(s), each thread's {slices} slices one after another at {per_slice * 1e9:.1f} ns a slice, "
        f"{floor * 1e6:.2f} us fixed"
    )
    return floor + max(walk, stream), walk >= stream, words


def _measured_reduce(c: Card, k: Kernel, near: Choice, splits: int, dtype_bytes: float) -> KernelEstimate:
    """The split-K reduction after a choice-map kernel (_reduce_walk); a card without the
    reduction's figures streams only."""
    part = k.m * k.n * 4 * splits
    out_bytes = 4 if k.dtype in ("fp32", "tf32") else dtype_bytes
    stream = (part + k.m * k.n * out_bytes) / c.dram_bw
    which = reducer(near.family)
    blocks = reduce_blocks(which, k.m, k.n, near.tile)
    walked = _reduce_walk(c, which, blocks, splits, stream)
    if walked is None:
        return _split_reduce(k, splits, stream)
    seconds, binds, words = walked
    return replace(
        _split_reduce(k, splits, seconds),
        grid=blocks,
        waves=blocks / c.sms,
        bound="latency" if binds else "memory",
        reason=(
            f"{'cublasLt splitKreduce' if which == 'cublaslt' else 'xmma'} sums the {splits} fp32 partial tiles: {words}"
            + ("" if binds else f"; streaming the {part / 1e6:,.1f} MB of partials takes longer")
        ),
    )


def splitk_reduce(c: Card, k: Kernel) -> KernelEstimate:
    """cublasLt's splitKreduce as an op file declares it (model: reduce): ``grid`` blocks, each
    thread summing its element's ``passes`` slices (_reduce_walk), or streaming ``dram_bytes``
    after a queued kernel's floor on a card without the reduction's figures."""
    slices, blocks = max(k.passes, 1), max(k.grid, 1)
    stream = k.dram_bytes / c.dram_bw
    walked = _reduce_walk(c, "cublaslt", blocks, slices, stream)
    seconds, binds, words = walked or (c.stream_floor + stream, False, "")
    return KernelEstimate(
        name=k.name,
        model="stream",
        seconds=seconds,
        grid=blocks,
        blocks_per_sm=None,
        waves=blocks / c.sms,
        bound="latency" if binds else "memory",
        reason=f"cublasLt splitKreduce: {words}"
        if walked
        else f"sums {slices} fp32 partials an element (no reduction figures for this card: their streaming)",
    )


def _split_reduce(k: Kernel, splits: int, seconds: float) -> KernelEstimate:
    """cublasLt's splitKreduce after a GEMM cut into ``splits`` slices of k: it reads the fp32
    partial tiles and writes the output (``seconds`` beyond a queued kernel's floor)."""
    return KernelEstimate(
        name=f"{k.name} split-K reduce",
        model="stream",
        seconds=seconds,
        grid=math.ceil(k.m * k.n / 512),
        blocks_per_sm=None,
        waves=0.0,
        bound="memory",
        reason=f"sums the {splits} fp32 partial tiles",
        issued=False,
    )


# one tile shape's GEMM: (kernel time, split-K reduction time, reason, blocks, k-splits, bound)
_Tiling = tuple[float, float, str, int, int, Literal["memory", "compute", "latency"]]


@dataclass(frozen=True)
class _GemmPlan:
    """What the tile shapes of a library GEMM share: its kernel family, rates and fixed cost."""

    path: str  # the cuBLAS kernel family (gemm_path)
    aligned: bool
    word: bool
    gemv_off: bool  # a 16-bit GEMV that cuBLAS leaves for its gemv kernels (gemv_unaligned)
    dtype_bytes: float
    out_bytes: float
    rate: float  # achievable FLOP/s on the path, in a short run
    power: float  # the power-limited share of that rate (1: not sustained)
    per_sm: float  # FLOP/s per SM
    elems_per_s: float  # operand elements an SM loads per second (unaligned and word paths)
    prior: float  # bytes of its operands the kernel before has just written (_prior_read)
    mma_s: float  # the product's own arithmetic at the tensor rate, before any tile's padding
    floor: float  # the kernel's fixed cost
    extra: float  # the part of it a pre-Hopper family adds
    narrow: bool  # F.linear on cuBLAS's narrow-tile kernels, with their own figures
    linear: bool  # F.linear with few rows: cuBLAS's tiling of it (narrow, or the 32 x 64 tiles)


def _gemm(hw: Hardware, c: Card, k: Kernel, dtype_bytes: float, sustained: bool = False) -> list[KernelEstimate]:
    """A library GEMM: the tile shape with the least modelled time (a library's heuristic picks
    among such shapes), wave quantization over the SMs, split-K with its reduction kernel.
    sustained: part of a step timed back to back, where tensor-core GEMMs run at the board's
    power-limited rate (Card.power_ratio)."""
    if (
        k.m == 1
        and k.n > 1
        and k.batch == 1
        and not k.linear
        and not k.transposed
        and gemv_unaligned(k.n, 1, k.k, dtype_bytes)
    ):
        # a row vector times a matrix is a matrix-vector product too: cuBLAS is column-major, and
        # to it x (1 x k) @ B (k x n) is B's n x k transpose times x, so an unaligned one runs its
        # gemv kernels as the n = 1 product does (validation/expected/h100/kernels/skinny1: gemvx
        # for 1 x 3237 x 9959 and 1 x 6219 x 3136 in fp16 and bf16, nvjet where n and k are
        # aligned); modelled as that transpose
        k = replace(k, m=k.n, n=1)
    if (
        1 in (k.m, k.n)
        and k.dtype in VEC_DTYPES
        and k.batch == 1
        and not k.linear
        and not k.transposed
        and c.choice_map is not None
        and c.timed_planes
        and (near_vec := c.choice_map.nearest_vec(k.dtype, k.m, k.n, k.k)) is not None
    ):
        return _gemm_vec(c, k, near_vec)
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
    mappable = k.dtype in CHOICE_DTYPES and k.batch == 1 and not k.linear and not k.transposed
    measured = _measured_choice(c, k) if mappable else None
    if measured is not None:
        return _gemm_measured_choice(c, k, measured, float(dtype_bytes))
    near = c.choice_map.nearest(k.dtype, k.m, k.n, k.k) if mappable and c.choice_map and c.timed_planes else None
    # FP32's gemmSN: the rule and step above, read off a denser sweep
    if near is not None and near.family == "sn" and k.dtype != "fp32":
        return _gemm_sn_walk(c, k, near, float(dtype_bytes))
    if near is not None and near.family == "largek" and k.dtype == "fp32":  # an FP32 kernel
        return _gemm_largek(c, k, near)
    if (
        mappable
        and c.choice_map is not None
        and c.timed_planes
        and (near_flat := c.choice_map.nearest_shallow(k.dtype, k.m, k.n, k.k)) is not None
    ):
        return _gemm_shallow(c, k, near_flat, float(dtype_bytes))
    p = _gemm_plan(hw, c, k, dtype_bytes, aligned, word, sustained)
    tile_menu: tuple[tuple[int, int], ...] = GEMM_TILES[p.path]
    if p.narrow:
        tile_menu = ((min(k.m, LINEAR_X_ROWS), LINEAR_TILE_N),)
    elif p.linear:
        tile_menu = ((LINEAR_TILE_M, LINEAR_TILE_N),)
    best: _Tiling | None = None
    for tm, tn in tile_menu:
        tiling = _gemm_tiling(c, k, p, tm, tn)
        if best is None or tiling[0] + tiling[1] < best[0] + best[1]:
            best = tiling
    assert best is not None
    t, t_red, why, units, split, bound = best
    why += _gemm_reason(c, k, p, split, sn, serial)
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
        out.append(_split_reduce(k, split, t_red - c.stream_floor))
    return out


def _gemm_plan(
    hw: Hardware, c: Card, k: Kernel, dtype_bytes: float, aligned: bool, word: bool, sustained: bool
) -> _GemmPlan:
    """The path, rates, fixed cost and layout of a tiled library GEMM (see _gemm)."""
    gemv_off = gemv_unaligned(k.m, k.n, k.k, dtype_bytes)
    # the alignments above need the exact size (an fp4 element is a Fraction, 1/2); the byte
    # counts below are times and rates, in floating point (a Fraction would carry the whole
    # tile search in rational arithmetic)
    dtype_bytes = float(dtype_bytes)
    rate = tensor_rate(hw, k.dtype, aligned, word)
    path = gemm_path(k.dtype, aligned, word)
    # a kernel of cuBLAS's pre-Hopper families costs more than a TMA kernel's fixed cost
    floor, extra = _kernel_floor(c, path)
    # in a loop, the power limit lowers the clock of tensor-core GEMMs (SIMT FP32 not measured)
    power = c.power_ratio if sustained and path != "simt" else 1.0
    per_sm = rate * power / c.sms
    elems_per_s = _element_rate(hw, c, path, rate, power)
    out_bytes = 4 if k.dtype in ("fp32", "tf32") else dtype_bytes
    # the operands it reads: the part the kernel before has just written may come from L2
    prior = _prior_read(c, k, (k.m * k.k + k.k * k.n) * dtype_bytes * k.batch)
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
    if narrow:
        floor, extra = c.linear_floor, 0.0
    return _GemmPlan(
        path=path,
        aligned=aligned,
        word=word,
        gemv_off=gemv_off,
        dtype_bytes=dtype_bytes,
        out_bytes=out_bytes,
        rate=rate,
        power=power,
        per_sm=per_sm,
        elems_per_s=elems_per_s,
        prior=prior,
        mma_s=mma_s,
        floor=floor,
        extra=extra,
        narrow=narrow,
        linear=linear,
    )


def _element_rate(hw: Hardware, c: Card, path: str, rate: float, power: float) -> float:
    """Operand elements an SM loads per second on the unaligned and word-aligned paths.

    The unaligned fallback loads its operands an element at a time (a leading dimension not a
    multiple of 16 bytes rules out vector loads): its tiles are bound by the elements an SM
    loads per second, (tm + tn) per k, padded rows included, not by the MMAs. That rate is
    read off the measured unaligned GEMM rate (the probe's large odd GEMMs, which run
    256x128 tiles): FLOP/s per SM / (2 tm tn / (tm + tn)).
    An element load costs the same whatever its width, so the 16-bit measurement serves
    every dtype on this path (TF32 and FP16 included).
    The word-aligned kernels load two elements at a time: their element rate is read off their
    own measurement the same way (the probe's bf16 GEMMs with k or n even, not a multiple of 8)."""
    big_m, big_n = GEMM_TILES["word" if path == "word" else "unaligned"][0]
    if path == "word":
        unaligned_rate = rate
    else:
        unaligned_rate = tensor_rate(hw, "bf16", False) if "bf16" in hw.expected.unaligned_tensor_fraction else rate
    return unaligned_rate * power / c.sms * (big_m + big_n) / (2 * big_m * big_n)


def _gemm_tiling(c: Card, k: Kernel, p: _GemmPlan, tm: int, tn: int) -> _Tiling:
    """The GEMM on tiles of tm x tn: its k-splits, waves, time and that of its reduction."""
    tiles = math.ceil(k.m / tm) * math.ceil(k.n / tn) * k.batch
    split = 1
    min_k = MIN_K_PER_SPLIT[p.path]
    if p.narrow:
        if k.k > LINEAR_SPLIT_K:
            split = max(1, min(math.ceil(k.k / LINEAR_SPLIT_K), LINEAR_MAX_CTAS // tiles))
    elif tiles < (c.sms / 2 if p.linear else c.sms) and k.k >= 2 * min_k and (k.batch == 1 or min(k.m, k.n) == 1):
        # a strided-batched product spends its grid on the batch and walks the whole of k in each
        # block: each of the 320 batched bf16 products of two rows or more in
        # validation/expected/h100/kernels/naive1 (nvjet, xmma, gemmSN, magma and wmma kernels)
        # ran one kernel, none a split-K one or a reduction. A one-row batched product runs
        # cuBLAS's gemvx instead (16 blocks a batch for 1 x 64 x 7302 there), which no tiled model
        # describes: it keeps the tile search's k-slices, as before
        split = max(1, min(c.sms // tiles, k.k // min_k))
    units = tiles * split
    waves = math.ceil(units / c.sms)
    k_split = math.ceil(k.k / split)
    if p.path in ("unaligned", "word"):
        t_tile = (tm + tn) * k_split / p.elems_per_s
    else:
        t_tile = 2 * tm * tn * k_split / p.per_sm
    t_comp = waves * t_tile
    active = min(c.sms, units)
    io = (k.m * k.k + k.k * k.n) * p.dtype_bytes * k.batch + k.m * k.n * p.out_bytes * k.batch + c_bytes(k, p.out_bytes)
    # few rows (or columns): the kernel streams the other operand, as decode's projections
    # do; so does any GEMM whose operands take longer to stream than its MMAs take
    # (decode at batch 128: its projections streamed their weights at 2.4-2.7 TB/s on an
    # H100, validation/expected/h100/kernels/decode-batch/, not at the read ceiling)
    streaming = min(k.m, k.n) <= SKINNY_ROWS or (p.path == "tma" and p.mma_s < io / c.dram_bw)
    card_bw = c.skinny_bw if streaming else c.dram_bw
    if p.gemv_off:
        card_bw = c.unaligned_gemv_bw
    bw = min(card_bw, active * c.per_sm_bw)
    t_mem = io / bw
    if p.prior:
        t_mem = _prior_time(c, p.prior, io, bw, active * c.per_sm_bw * c.l2_bw / c.dram_bw)
    # each wave of tiles: the k-loop (its compute, or the k-steps as fast as the pipeline
    # brings them), then the store of the results, after the first operands arrived
    bk, stages = GEMM_PIPELINE[p.path]
    if p.narrow:  # one 64-deep step after another, or its weight rows and rows of x through one SM
        t_steps = max(math.ceil(k_split / bk) * c.linear_k_step, (tn + tm) * k_split * p.dtype_bytes / c.per_sm_bw)
    else:
        t_steps = math.ceil(k_split / bk) / stages * c.latency
    # the first wave's operands arriving and its results stored are the kernel's fixed
    # cost (gemm_floor, measured); later waves pay their own round trips
    t_wave = max(t_tile, t_steps)
    t_out = _unhidden_stores(c, k, p, bw)
    body = waves * t_wave + (waves - 1) * 2 * c.latency if p.floor else waves * (t_wave + 2 * c.latency)
    t = p.floor + max(body + t_out, t_mem)
    stores_counted = t_out >= 5e-8 and body + t_out > t_mem  # the reason names them where they count
    t_red = 0.0
    if split > 1:  # fp32 partial tiles written, then read back by a reduction kernel
        part = k.m * k.n * 4 * split * k.batch
        t_red = c.stream_floor + (part + k.m * k.n * p.out_bytes * k.batch) / c.dram_bw
        t += part / bw
    why = (
        f"{tm}x{tn} tiles: {tiles:,}"
        + (f" x {split} k-splits" if split > 1 else "")
        + f" = {waves} wave(s) over {c.sms} SMs"
        + (
            f"; {t_out * 1e6:,.1f} us of stores beyond the L2 after the k-loops (a pre-Hopper kernel)"
            if stores_counted
            else ""
        )
    )
    return t, t_red, why, units, split, "compute" if t_comp >= t_mem else "memory"


def _unhidden_stores(c: Card, k: Kernel, p: _GemmPlan, bw: float) -> float:
    """The time a pre-Hopper GEMM kernel spends storing its output beyond what the L2 takes in.

    cuBLAS's TMA kernels on Hopper are persistent: one CTA per SM walks its tiles and stores each
    tile's results while the next tile's k-loop runs. Its pre-Hopper kernels (the paths for
    unaligned or word-aligned operands, FP32 on CUDA cores) give each tile a CTA of its own,
    which stores its results after its k-loop and retires, and the next wave starts then. The
    L2 (a write-back cache) takes those stores as they come until it is full; past that, each
    wave waits on DRAM writes that no k-loop hides, so the output beyond the L2's size adds its
    DRAM time to the k-loops. Read off the committed shallow products with large outputs
    (validation/expected/h100/ops-wide*: e.g. tf32 11376 x 13352 x 111, 608 MB of output, 519 us
    where k-loops and stores overlapped would take 277 us). No fitted figure: the output's bytes,
    the L2's size and the bandwidth the tiles see. (Read on Hopper: on a part without TMA, such as
    an A100, the aligned path's kernels are not persistent either, and their stores are not
    counted here; not measured.) Where the k-loops are nearly nothing (k of 1-8)
    the stores alone bound the kernel, and they ran slower than this (tf32 5808 x 11217 x 2:
    260 MB in 150 us, 1.7 TB/s): not modelled."""
    if p.path == "tma" or not c.l2_total:
        return 0.0
    return max(0.0, k.m * k.n * p.out_bytes * k.batch - c.l2_total) / bw


def _gemm_reason(c: Card, k: Kernel, p: _GemmPlan, split: int, sn: bool, serial: tuple[str, int, int] | None) -> str:
    """What the reason of a tiled GEMM says after its tiles: its layout, path, rate and fixed cost."""
    why = ""
    if p.linear:
        if p.narrow:
            why += (
                f"; as F.linear with few rows: cuBLAS's narrow tiles span 64 weight rows and up to {LINEAR_X_ROWS} of x"
                + (f", k in {split} slices" if split > 1 else "")
                + f", each tile's k-loop one 64-deep step every {c.linear_k_step * 1e9:.0f} ns"
            )
        else:
            why += "; as F.linear with few rows: cuBLAS's tiles span 64 weight rows" + (
                ", k split to fill the SMs" if split > 1 else ""
            )
    if p.prior:
        why += "; its input, just written by the kernel before, is read from L2"
    if p.gemv_off and c.unaligned_gemv_bw != c.skinny_bw:
        why += f"; m or k not a multiple of 16 bytes: cuBLAS's gemv kernels, {c.unaligned_gemv_bw / 1e12:.2f} TB/s"
    if p.word:
        why += "; leading dimensions in multiples of 4 bytes, not 16: no TMA, two elements per load"
    elif not p.aligned:
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
    why += f"; {p.rate * p.power / 1e12:,.0f} TFLOP/s achievable"
    if p.power < 1:
        why += f" (at the power limit, in a loop: {p.power:.2f} of a short run's)"
    if p.floor:
        why += "; " + _fixed_cost(p.floor, p.extra)
    return why

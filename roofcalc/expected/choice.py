"""Which kernel cuBLAS runs for a GEMM, as measured on a card: a choice map.

cuBLAS's heuristic picks a kernel family per shape, and for some families the pick is irregular
(for FP32 products with a few columns it takes its SIMT 128 x 32 kernel for some mid sizes and an
xmma kernel for others beside them: validation/expected/h100/kernels/tall1). Such a choice is not
read off by hand: the probe (roofcalc/probe/torch_ops.py gemm_choices) runs torch.matmul over a
grid of shapes under the profiler, and each shape's kernels are classified here. The map is saved
in the calibration with the libraries it was measured on; the registry's map is the probe's sweep
on the registry's card (hardware/h100.yaml expected.gemm_choice_map).

The map's domain: FP32 products with TF32 off (fp32) and on (tf32), bf16 and fp16, of which one
dimension, m or n, is 2-64 (few rows or few columns), row-major operands. The model asks the map for the nearest
measured shape of the same dtype and the same alignment class (in the logarithms of m, n and k)
and uses the kernel it ran; outside the domain the map says nothing.

One entry, as files keep it (one a line): ``"dtype MxNxK family TMxTN splits kernel_us"``, e.g.
``"fp32 700x2x1700 simt 32x128 25 19.20"``: cuBLAS's SIMT kernel on tiles of 32 rows of m by 128
columns of n (the 2 columns padded to 128), k cut into 25 slices (the grid's z), the first kernel's
profiled duration 19.2 us. The tile is "-" for families without one. The probe fits each (dtype,
family, tile)'s fixed cost and rate to the durations of the shapes that ran it (fit_tiles).
"""

from __future__ import annotations

import math
import re
from bisect import bisect_left
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from itertools import groupby, pairwise
from operator import itemgetter
from typing import Any, NamedTuple

# The families a GEMM's first kernel is sorted into, by its name: cutlass_80_simt_sgemm_AxB
# (simt), sm80/sm90 xmma_gemm_..._tilesizeAxB (xmma), cutlass tensorop_..._AxB (tensorop) and the
# Hopper nvjet_..._AxB kernels (nvjet) carry their tile; gemmSN (sn), the gemv and dot kernels
# (gemv) and anything else (other) do not. The GEMV kernel of a one-row or one-column product (vec)
# carries its launch instead: BLOCKSxTHREADS, the blocks of its grid and the threads of each
# (row_shapes, column_shapes). FP32's sgemm_largek kernel (largek), which cuBLAS runs after a
# scal_kernel has zeroed C and whose k slices add into C as they end (no reduction kernel), names
# no tile either; its launches have one (gemm.py LARGEK_TILE).
FAMILIES = ("simt", "xmma", "tensorop", "nvjet", "sn", "gemv", "other", "vec", "largek")
# the families whose blocks walk k and whose time the model reads off the entry (gemm.py)
WALKED = ("sn", "largek")
TILED = ("simt", "xmma", "tensorop", "nvjet")
_TILE_PATTERNS = (
    ("simt", r"simt_sgemm_(\d+)x(\d+)_"),
    ("xmma", r"xmma_gemm.*?tilesize(\d+)x(\d+)x"),
    # cutlass_80_tensorop_s1688gemm_64x64_16x6, cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_32x32_64x1
    ("tensorop", r"tensorop_[a-z0-9_]*?gemm[a-z0-9_]*?_(\d+)x(\d+)_"),
    ("nvjet", r"nvjet_(?:sm\d+_)?[a-z]+_(\d+)x(\d+)_"),  # nvjet_sm90_tst_64x8_64x16_4x1_v_bz_NNT
)
DTYPES = ("fp32", "tf32", "bf16", "fp16")
ELEMENT = {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2}

# The probe's sweep, per dtype: every (m, n) with one of them small (2-64: GRID_SMALL, GRID_MID and
# the large sides up to 64) and the other small or large (24-16,000, log-spaced, not powers of two
# only: cuBLAS treats some sizes apart), at depths of 16-16,384 (powers of two, and the mixed depths
# below): 532 (m, n) pairs x 25 depths = 13,300 shapes for fp32. The TF32 and 16-bit kernels depend
# on the leading dimensions' alignment (16 bytes, 4, or less), so their grid adds odd large sides,
# odd depths and depths of every alignment: 735 pairs x 34 depths (tf32) or 38 (bf16, fp16), 94,150
# shapes in all (without the odd sides a TF32 product with an odd large side found its nearest shape
# among few-column ones).
GRID_SMALL = (2, 3, 4, 5, 6, 8, 10, 12, 16)
# sides between 16 and 64 beside GRID_LARGE's 24, 40 and 64: the map reaches up to MAP_MAX_SMALL
GRID_MID = (32, 48)
GRID_LARGE = (24, 40, 64, 100, 160, 256, 400, 640, 1000, 1600, 2560, 4000, 6400, 10000, 16000)
GRID_K = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
GRID_LARGE_ODD = (41, 101, 401, 1001, 4001, 10001)
GRID_K_ODD = (33, 129, 513, 2049, 8193)
# Depths near 300, 1,000, 3,000 and 9,000 that are odd multiples of 8, 32 and 128: cuBLAS slices k
# for split-K by what divides it (validation/expected/h100/kernels/kdiv1: bf16 8 x 2 x 4016 runs 502
# slices of 8 and a 16 us reduction, 8 x 2 x 4032 63 slices of 64 and a 4 us one), so a depth such
# as 4,016 finds its nearest measured depth among depths like it, not only powers of two. (Tried
# and not kept: the largest power of two dividing k as a fourth dimension of the distance; on the
# development sets 184 of 220 within [0.8, 1.25] against 191 without it.)
GRID_K_MIXED = (296, 1000, 3000, 9000, 288, 992, 3040, 8992, 384, 896, 2944, 8832)
# Depths between 4,096 and 8,192 (an odd multiple of 128, and of 8): cuBLAS changes kernel inside
# that octave (fp32 60 x 3: a SIMT kernel and a 9 us reduction at 4,096, xmma's 264 slices and a
# 64 us reduction from about 4,400 on), where the grid had no depth
GRID_K_MID = (4992, 6600)
# Depths whose rows of A are aligned to 4 and to 8 bytes only (not 16, not 2): with GRID_K_ODD and
# the depths above, every alignment class has depths of its own, not only the few columns whose
# rows give it (without them, bf16 3 x 336 x 1132, 8-byte aligned by its depth, found its nearest
# shape at 100 columns, the only large side of that class)
GRID_K_ALIGNED = {
    "tf32": (102, 1002, 4002, 9002),  # 8 bytes (odd depths are its 4)
    "bf16": (102, 1002, 4002, 9002, 100, 1004, 4004, 9004),  # 4 bytes, then 8
    "fp16": (102, 1002, 4002, 9002, 100, 1004, 4004, 9004),
}
# The map speaks for products whose smaller side, m or n, is at most this (the others are the
# tile search's); FP32 products of 2-16 rows that gemmSN or the serial split-K kernel runs are
# mapped apart in gemm.py, before this map is asked. 16 until kernels/choice8: on every committed
# H100 op report, products with a smaller side of 17-64 missed [0.8, 1.25] 36-70% of the time in
# fp32 on the tile search; with the map to 64, 1,023 of the 1,163 such cases (H100 and H200) were
# within against 864, and those with a side of 2-16 2,846 of 3,348 against 2,845 (validation/HOLDOUT.md)
MAP_MAX_SMALL = 64


def grid_shapes(dtype: str = "fp32") -> list[tuple[int, int, int]]:
    """The (m, n, k) of the probe's sweep, for one dtype."""
    sides: tuple[int, ...] = GRID_SMALL + GRID_MID + GRID_LARGE
    depths: tuple[int, ...] = GRID_K + GRID_K_MIXED + GRID_K_MID
    if dtype != "fp32":  # TF32 and 16-bit kernels depend on the leading dimensions' alignment
        sides, depths = sides + GRID_LARGE_ODD, depths + GRID_K_ODD + GRID_K_ALIGNED.get(dtype, ())
    depths = tuple(sorted(depths))
    return [(m, n, k) for m in sides for n in sides if min(m, n) <= MAP_MAX_SMALL for k in depths]


# Shallow products of large outputs (both sides above MAP_MAX_SMALL, k of 1-32): their kernels
# are bound by storing the output, not by their k-loops, and cuBLAS's pick there follows k in steps
# no rule read off a few shapes gives (kernels/tinyk1: bf16 1104 x 1152 x 7 runs cutlass_75's 1688
# kernel with k in two slices and a splitKreduce; at depths 2, 4 and 6 cutlass_80's 16816 kernel
# alone; at 4433 x 277 depths 2-6 split and 7 on do not). The probe sweeps that plane: the grid's
# large sides from 100 (odd ones too for the kernels that depend on alignment) at every depth of
# 1-16 and at depths of 17-32 of each alignment class (20: 8 bytes of a 16-bit row, 24: 16, 31: 2).
SHALLOW_SIDES = tuple(s for s in GRID_LARGE if s > MAP_MAX_SMALL)
SHALLOW_SIDES_ODD = tuple(s for s in GRID_LARGE_ODD if s > MAP_MAX_SMALL)
SHALLOW_DEPTHS = (*range(1, 17), 20, 24, 31, 32)
SHALLOW_MAX_K = SHALLOW_DEPTHS[-1]


def in_shallow_plane(m: int, n: int, k: int) -> bool:
    """Whether m x n x k lies in the shallow plane's domain (both sides above MAP_MAX_SMALL, k of
    at most SHALLOW_MAX_K): the small-side map never holds such a shape, so its entries are told
    apart by their shape alone."""
    return min(m, n) > MAP_MAX_SMALL and k <= SHALLOW_MAX_K


# Column counts whose rows are aligned to 8 bytes in tf32 (n of 2 mod 4) and to 4 or 8 bytes in
# bf16 and fp16 (2 mod 4; 4 mod 8), beside the large sides (multiples of 4, so 16 bytes, or 100's 8
# in 16 bits) and the odd ones (4 bytes in tf32, 2 in 16 bits): a product's alignment class is
# that of its columns and its depth, and without such columns a class had depths of its own only
# (tf32 5053 x 390 x 4 of ops-wide132, 8-byte aligned, found its nearest shape 6 deep: another
# kernel, at 0.38). One such column beside each large side, as densely as they are: a side + 2,
# and in 16 bits a side + 4 (100 is one already). kernels/shallow2 swept 7 of them first.
_COLS_16 = tuple(sorted({s + 2 for s in SHALLOW_SIDES} | {s + 4 for s in SHALLOW_SIDES if s % 8 == 0}))
SHALLOW_COLS_ALIGNED = {"tf32": tuple(s + 2 for s in SHALLOW_SIDES), "bf16": _COLS_16, "fp16": _COLS_16}
# the columns kernels/shallow2 swept (the first of them)
SHALLOW2_COLS = (102, 1002, 4002, 10002, 1004, 4004, 10004)


def shallow_shapes(dtype: str = "fp32") -> list[tuple[int, int, int]]:
    """The (m, n, k) of the probe's shallow sweep (large outputs, k of 1-32), for one dtype."""
    sides = SHALLOW_SIDES if dtype == "fp32" else SHALLOW_SIDES + SHALLOW_SIDES_ODD
    return [(m, n, k) for m in sides for n in sides for k in SHALLOW_DEPTHS] + shallow_aligned_shapes(dtype)


def shallow_aligned_shapes(dtype: str = "fp32", cols: tuple[int, ...] | None = None) -> list[tuple[int, int, int]]:
    """The shallow sweep's shapes whose columns give their alignment class (SHALLOW_COLS_ALIGNED), or
    those of them among ``cols`` (in that order)."""
    mine = SHALLOW_COLS_ALIGNED.get(dtype, ())
    chosen = mine if cols is None else tuple(n for n in cols if n in mine)
    return [(m, n, k) for m in SHALLOW_SIDES + SHALLOW_SIDES_ODD for n in chosen for k in SHALLOW_DEPTHS]


# One-row products (x @ B: m = 1) of 4-byte elements: cuBLAS runs its column-walking GEMV kernels
# (gemvx, gemvNSP, gemv2N, dot_kernel; validation/expected/h100/kernels/vec1, row1), whose launch
# (blocks, threads) and k slices change with n and k in steps no rule read off a few shapes
# reproduces (on an H100 every k of 65-127 runs gemv2N at 8.5 us for 512 columns or more, k = 64
# gemvx at 2.1 us). The probe sweeps the (n, k) plane densely, a factor 2^(1/6) between
# neighbours, the depths also as multiples of 8 (kernels/row2; every other size of it, a factor
# 2^(1/3), was kernels/row1), with each kernel's block as well as its grid.
VEC_DTYPES = ("fp32", "tf32")  # the dtypes whose one-row and one-column products the planes model
# TF32 changes no GEMV kernel: at each of the 16,317 shapes of kernels/row2 and col1 the fp32 and
# tf32 products ran the same kernels on the same grids and blocks. The probe sweeps the planes in
# fp32 only, and a tf32 product reads the fp32 plane.
VEC_DTYPE = "fp32"
VEC_SIDES = tuple(sorted({round(2 ** (i / 6)) for i in range(6, 85)}))  # 2-16,384: 73 column counts
VEC_DEPTHS = tuple(
    sorted({round(2 ** (i / 6)) for i in range(0, 85)} | {round(2 ** (i / 6)) // 8 * 8 for i in range(24, 85)})
)  # 1-16,384: 111 depths


def row_shapes(dtype: str = "fp32") -> list[tuple[int, int, int]]:
    """The (1, n, k) of the probe's one-row sweep, for one dtype (fp32 only: tf32 runs its
    kernels; 16-bit one-row products the GEMM paths model)."""
    if dtype != VEC_DTYPE:
        return []
    return [(1, n, k) for n in VEC_SIDES for k in VEC_DEPTHS]


# One-column products (A @ x: n = 1; torch.mv runs the same kernels, kernels/col1 mv-paths) run
# cuBLAS's GEMV kernels as well (gemv2T, gemvx, dot_kernel then reduce_1Block; at one row, a dot
# product, gemvx in up to 264 slices of k then splitKreduce): the probe sweeps that plane too,
# its rows from 1, on the one-row plane's depths.
def column_shapes(dtype: str = "fp32") -> list[tuple[int, int, int]]:
    """The (m, 1, k) of the probe's one-column sweep (A @ x), the rows from 1 (a dot product) on,
    for one dtype (fp32 only, as row_shapes)."""
    if dtype != VEC_DTYPE:
        return []
    return [(m, 1, k) for m in (1, *VEC_SIDES) for k in VEC_DEPTHS]


def aligned16(dtype: str, n: int, k: int) -> int:
    """The alignment class a kernel depends on: the largest power of two up to 16 that divides both
    leading dimensions in bytes (k of A, n of B); FP32 with TF32 off runs kernels that need none
    (one class, 16)."""
    if dtype == "fp32":
        return 16
    size, a = ELEMENT[dtype], 16
    while a > 1 and ((k * size) % a or (n * size) % a):
        a //= 2
    return a


@dataclass(frozen=True)
class Choice:
    """One measured shape: what cuBLAS ran for it."""

    dtype: str
    m: int
    n: int
    k: int
    family: str
    # (rows of m, columns of n) a block, for the tiled families; for a vec entry its launch
    # (blocks, threads a block)
    tile: tuple[int, int] | None
    splits: int  # k slices (the grid's z); of a vec entry, the partial sums of each output
    kernel_s: float
    # a reduction kernel (cublasLt's splitKreduce) followed though k was not cut: cuBLAS's
    # reduction epilogue (splits > 1 implies one); written "1r" in an entry's splits
    reduced: bool = False

    @property
    def key(self) -> str | None:
        """The name its dtype, family and tile's figures go by, e.g. fp32_simt_32x128."""
        return (
            f"{self.dtype}_{self.family}_{self.tile[0]}x{self.tile[1]}" if self.tile and self.family in TILED else None
        )

    def entry(self) -> str:
        tile = f"{self.tile[0]}x{self.tile[1]}" if self.tile else "-"
        splits = f"{self.splits}r" if self.reduced and self.splits == 1 else str(self.splits)
        return f"{self.dtype} {self.m}x{self.n}x{self.k} {self.family} {tile} {splits} {self.kernel_s * 1e6:.2f}"


def parse_entry(text: str) -> Choice:
    """One entry of a map file; ValueError with what is wrong."""
    if len(str(text)) > MAX_ENTRY or "\n" in str(text) or "\r" in str(text):
        raise ValueError(f"{str(text)[:60]!r}...: an entry is one line of at most {MAX_ENTRY} characters")
    parts = str(text).split()
    if len(parts) == 5 and parts[0] not in DTYPES:  # a first-version map (fp32 only) names no dtype
        parts = ["fp32", *parts]
    if len(parts) != 6:
        raise ValueError(f"{text!r}: expected 'dtype MxNxK family TMxTN splits kernel_us'")
    dtype, shape, family, tile_text, splits, us_text = parts
    if dtype not in DTYPES:
        raise ValueError(f"{text!r}: unknown dtype {dtype!r}; a choice map holds {', '.join(DTYPES)}")
    dims = shape.split("x")
    if len(dims) != 3 or not all(d.isascii() and d.isdigit() and 0 < int(d) < 10**10 for d in dims):
        raise ValueError(f"{text!r}: the shape must be MxNxK of positive whole numbers (under 10^10)")
    if family not in FAMILIES:
        raise ValueError(f"{text!r}: unknown family {family!r}; known: {', '.join(FAMILIES)}")
    tile: tuple[int, int] | None = None
    if family in TILED:
        t = tile_text.split("x")
        if len(t) != 2 or not all(d.isascii() and d.isdigit() and 0 < int(d) < 10**4 for d in t):
            raise ValueError(f"{text!r}: a {family} entry needs its tile as TMxTN (1-9999 each)")
        tile = (int(t[0]), int(t[1]))
    elif family == "vec":
        t = tile_text.split("x")
        if len(t) != 2 or not all(d.isascii() and d.isdigit() and 0 < int(d) < 10**6 for d in t) or int(t[1]) > 1024:
            raise ValueError(
                f"{text!r}: a vec entry needs its launch as BLOCKSxTHREADS (1-999999 blocks, 1-1024 threads)"
            )
        if "1" not in (dims[0], dims[1]):
            raise ValueError(f"{text!r}: a vec entry is a one-row or one-column product (1xNxK or Mx1xK)")
        tile = (int(t[0]), int(t[1]))
    elif tile_text != "-":
        raise ValueError(f"{text!r}: a {family} entry has no tile: write '-'")
    if splits == "1r" and family == "vec":
        raise ValueError(f"{text!r}: a vec entry's partial sums are a whole number (1r is a GEMM kernel's one slice)")
    reduced = splits == "1r"
    if reduced:
        splits = "1"
    if not (splits.isascii() and splits.isdigit()) or not 1 <= int(splits) < 10**5:
        raise ValueError(f"{text!r}: splits must be a whole number, 1-99999 (or 1r: one slice and a reduction)")
    if not re.fullmatch(r"[0-9]{1,9}(?:\.[0-9]{1,9})?", us_text):
        raise ValueError(f"{text!r}: kernel_us must be a decimal number of plain digits, e.g. 3.25")
    us = float(us_text)
    if not 1e-6 <= us < 1e7:
        raise ValueError(f"{text!r}: kernel_us must be at least 0.000001 and under 10^7")
    m, n, k = (int(d) for d in dims)
    return Choice(dtype, m, n, k, family, tile, int(splits), us * 1e-6, reduced)


_N = r"[1-9][0-9]{0,9}"
# One well-formed entry, as parse_entry accepts it (the sizes' limits included), its fields
# captured: a whole map checked in one pass (_BLOCK), and each entry read in one match
# (_parse_fast), not parse_entry's checks one by one.
_DTYPE = r"(fp32|tf32|bf16|fp16) "
_THREADS = r"(?:[1-9][0-9]{0,2}|10[01][0-9]|102[0-4])"  # 1-1024
_ENTRY = (
    rf"(?:{_DTYPE}({_N})x({_N})x({_N}) "
    r"(?:(simt|xmma|tensorop|nvjet) ([1-9][0-9]{0,3})x([1-9][0-9]{0,3})|(sn|gemv|other|largek) -)"
    # the k slices, or one slice and a reduction kernel after it ("1r")
    r" (?:(1r)|([1-9][0-9]{0,4}))"
    # a vec entry: one row or one column, its launch as BLOCKSxTHREADS, its partial sums
    # (a side of 1 read one way only: "1x1" is the one-row alternative's, never the other's, or a
    # failing map would backtrack through every such entry two ways)
    rf"|{_DTYPE}(1x{_N}|(?:[2-9][0-9]{{0,9}}|1[0-9]{{1,9}})x1)x({_N}) vec ([1-9][0-9]{{0,5}})x({_THREADS})"
    r" ([1-9][0-9]{0,4}))"
    # under 1 us: zeros, then the first other digit, then any; one way to read each entry, so a
    # malformed line after many good ones costs one pass, not a backtrack through them all
    r" ([1-9][0-9]{0,6}(?:\.[0-9]{1,6})?|0\.0{0,5}[1-9][0-9]{0,5})"
)
_BLOCK = re.compile(rf"(?:{_ENTRY}\n)*")
_ONE_ENTRY = re.compile(_ENTRY)
MAX_ENTRY = 120  # characters of one entry (the longest well-formed one is under 80)


def _parse_fast(text: str) -> Choice:
    """parse_entry, for an entry in the probe's own form first (what else it reads, and every
    refusal, is parse_entry's). The form's time is positive and under 10^7 us, as parse_entry
    asks."""
    f = _ONE_ENTRY.fullmatch(text) if type(text) is str else None
    if f is None:
        return parse_entry(text)
    dtype, m, n, k, fam, tm, tn, other, one_r, splits, vec_dtype, vec_mn, vec_k, blocks, threads, vec_splits, us = (
        f.groups()
    )
    # the frozen dataclass's fields set as its __init__ would (without its checks per field)
    c = object.__new__(Choice)
    if vec_dtype:
        vm, vn = vec_mn.split("x")
        c.__dict__.update(
            dtype=vec_dtype, m=int(vm), n=int(vn), k=int(vec_k), family="vec", tile=(int(blocks), int(threads))
        )
    else:
        c.__dict__.update(
            dtype=dtype, m=int(m), n=int(n), k=int(k), family=fam or other, tile=(int(tm), int(tn)) if fam else None
        )
    c.__dict__.update(splits=int(splits or vec_splits or 1), kernel_s=float(us) * 1e-6, reduced=one_r is not None)
    return c


_CHECKED: set[str] = set()  # blocks of entries already checked (a calibration borrows its part's map)


# entries of one map (the registry's: 94,150 of its grid, 13,540 of their refinement, 16,171 on its vector
# planes, 39,940 on its shallow plane): at about 44 bytes an entry, what a spec file of MAX_SPEC_BYTES
# (specfile.py) holds with the rest of a card's figures, so that a probe never saves a map its
# calibration file could not be read back with
MAX_ENTRIES = 175000


def check_block(text: str) -> str:
    """A map's block of entries, one a line, as it is kept: each entry stripped, blank lines gone,
    a newline after each. ValueError naming the first malformed entry, or for none or too many."""
    if not (text.endswith("\n") and text in _CHECKED):
        canonical = text.endswith("\n") and "\n\n" not in text
        lines = text.count("\n")
        if canonical and lines > MAX_ENTRIES:  # refused before a pass over them all
            raise ValueError(f"{lines:,} entries; at least 1 and at most {MAX_ENTRIES:,}")
        if not (canonical and _BLOCK.fullmatch(text)):
            entries = [t.strip() for t in text.splitlines() if t.strip()]
            if len(entries) > MAX_ENTRIES:
                raise ValueError(f"{len(entries):,} entries; at most {MAX_ENTRIES:,}")
            check_entries(entries)
            text = "".join(t + "\n" for t in entries)
        if len(_CHECKED) >= 4:
            _CHECKED.clear()
        _CHECKED.add(text)
    n = text.count("\n")
    if not 1 <= n <= MAX_ENTRIES:
        raise ValueError(f"{n:,} entries; at least 1 and at most {MAX_ENTRIES:,}")
    return text


def check_entries(texts: list[str]) -> None:
    """ValueError naming the first malformed entry (as parse_entry words it), else None. Entries
    in the form the probe writes pass in one regular-expression pass; others are parsed one by one."""
    if all(len(t) <= MAX_ENTRY and "\n" not in t for t in texts) and _BLOCK.fullmatch(
        "".join(t.strip() + "\n" for t in texts)
    ):
        return
    for i, text in enumerate(texts):
        try:
            parse_entry(text)
        except ValueError as e:
            raise ValueError(f"entry {i}: {e}") from None


MAX_NAME = 512  # characters of a kernel name read for its family and tile (cuBLAS's are < 200)


def classify(kernels: list[Mapping[str, Any]], m: int, n: int) -> tuple[str, tuple[int, int] | None, int]:
    """The family of an m x n GEMM's kernels (profiler records with name and grid), its tile as
    (rows of m, columns of n) a block, and its first kernel's k-slices where it splits k (the
    grid's z; a Hopper nvjet "splitK" kernel's y).

    A kernel's name gives its tile as A x B in cuBLAS's column-major terms; which side spans the
    rows of our row-major product is the one whose tile count matches the blocks the grid
    launched (x by y; nvjet launches clusters, so the count is rounded up to them). Where both
    match as well, SIMT and nvjet tiles put B on the rows and the others A, as seen where the grid
    tells them apart (kernels/choice3)."""
    if not kernels or not isinstance(kernels[0], Mapping):
        return "other", None, 1
    if (largek := largek_kernel(kernels)) is not None:
        return "largek", None, largek[1]
    name = str(kernels[0].get("name") or "")[:MAX_NAME]
    grid = kernels[0].get("grid") or [1, 1, 1]
    ext = [int(g) if isinstance(g, (int, float)) and 0 < g < 2**31 else 1 for g in list(grid)[:3]] + [1, 1, 1]
    gx, gy, gz = ext[:3]
    vector = 1 in (m, n) and ("gemv" in name or "dot_kernel" in name)
    launch = _vec_launch(kernels[0], gx * gy * gz) if vector else None
    if launch is not None:
        # the partial sums of each output a second kernel adds up: dot_kernel's blocks along k
        # (reduce_1Block after it), a gemvx's k slices (splitKreduce); none where one kernel ran
        partials = 1 if len(kernels) < 2 else gx * gy if "dot_kernel" in name else gz
        return "vec", launch, max(1, partials)
    for family, pattern in _TILE_PATTERNS:
        hit = re.search(pattern, name)
        if hit and 0 < int(hit.group(1)) < 10**4 and 0 < int(hit.group(2)) < 10**4:
            a, b = int(hit.group(1)), int(hit.group(2))
            split_y = family == "nvjet" and "splitK" in name
            splits, launched = (gy, gx * gz) if split_y else (gz, gx * gy)

            def miss(tile: tuple[int, int], launched: int = launched) -> float:
                return abs(math.log(max(1, tile_count(m, n, tile)) / launched))

            default = (b, a) if family in ("simt", "nvjet") else (a, b)
            other = (default[1], default[0])
            tile = other if miss(other) < miss(default) else default
            return family, tile, max(1, splits)
    if "gemmSN" in name:
        return "sn", None, gz
    if "gemv" in name or "dot_kernel" in name:
        return "gemv", None, gz
    return "other", None, gz  # a tiled family whose tile the name does not give counts here too


def largek_kernel(kernels: list[Mapping[str, Any]]) -> tuple[float, int] | None:
    """Where cuBLAS zeroed C with a scal_kernel and then ran its sgemm_largek kernel (k in slices
    that add into C as they end): the seconds of both together and the slices (the grid's z);
    else None. (kernels/choice8: 157 FP32 products of 2-16 rows or columns ran so, each that
    pair alone, most of them at k of 3,000 and more, 14 at 128-384; where FP32's gemmSN rule
    claims a shape, gemm.py reads that rule first.)"""
    if len(kernels) != 2 or not all(isinstance(k, Mapping) for k in kernels) or not _zeroes_then_largek(kernels):
        return None
    main = kernels[1]
    grid = main.get("grid")
    if not (isinstance(grid, list) and len(grid) == 3 and all(type(g) is int and 0 < g < 2**31 for g in grid)):
        return None
    gz = grid[2]
    times = [k.get("duration_s") for k in kernels]
    if not all(isinstance(t, (int, float)) and not isinstance(t, bool) and 0 <= t < 10 for t in times):
        return None
    return float(sum(times)), gz  # type: ignore[arg-type]


def _zeroes_then_largek(kernels: list[Mapping[str, Any]]) -> bool:
    """Whether a record's kernels open with a scal_kernel and name an sgemm_largek after it (a
    largek record, well formed or not)."""
    names = [str(k.get("name") or "")[:MAX_NAME] if isinstance(k, Mapping) else "" for k in kernels]
    return bool(names) and names[0].startswith("void scal_kernel<") and any("sgemm_largek" in x for x in names[1:])


def _vec_launch(kernel: Mapping[str, Any], blocks: int) -> tuple[int, int] | None:
    """A one-row or one-column GEMV kernel's launch, (blocks, threads a block), where the record gives its block
    (sweeps before row_shapes did not) and both are in an entry's range."""
    block = kernel.get("block")
    if not isinstance(block, list) or len(block) != 3 or not all(type(b) is int and b > 0 for b in block):
        return None
    threads = block[0] * block[1] * block[2]
    return (blocks, threads) if blocks < 10**6 and threads <= 1024 else None


def _by_class(entries: Iterable[Choice]) -> dict[tuple[str, int], tuple[Choice, ...]]:
    """Entries by dtype and alignment class (aligned16), in their order."""
    out: dict[tuple[str, int], list[Choice]] = {}
    for c in entries:
        out.setdefault((c.dtype, aligned16(c.dtype, c.n, c.k)), []).append(c)
    return {key: tuple(v) for key, v in out.items()}


# a class's entries by m, then n: (log m, [(log n, logs of its depths ascending, each one's index)])
_Rows = list[tuple[float, list[tuple[float, list[float], list[int]]]]]


def _by_pairs(shapes: Iterable[tuple[int, int, int]]) -> _Rows:
    """Entries, given as their (m, n, k) in order, by their m, then their n: log m, and for each n
    its log and the logs of its depths in ascending order with each one's index in that order."""
    by: dict[int, dict[int, list[tuple[float, int]]]] = {}
    for i, (m, n, k) in enumerate(shapes):
        by.setdefault(m, {}).setdefault(n, []).append((math.log(k), i))
    rows = []
    for m, cols in by.items():
        row = []
        for n, ks in cols.items():
            # of a depth measured twice the first entry (the tie rule of the full scan)
            first: dict[float, int] = {}
            for a, i in ks:
                first.setdefault(a, i)
            depths = sorted(first.items())
            row.append((math.log(n), [a for a, _ in depths], [i for _, i in depths]))
        rows.append((math.log(m), row))
    return rows


def _scan(rows: _Rows, m: int, n: int, k: int) -> int:
    """The index of the entry nearest to m x n x k in the sum of squares of the logs of m, n and
    k (of two as near, the first entry): by rows of one m, nearest first, whose part of the
    distance bounds their pairs'; by (m, n) pairs, whose part bounds their depths'; in a pair,
    the depths on either side of k (its nearest is one of them)."""
    lm, ln, lk = math.log(m), math.log(n), math.log(k)
    best, at = math.inf, -1
    for dm, row in sorted((((pm - lm) ** 2, row) for pm, row in rows), key=itemgetter(0)):
        if dm > best:
            break
        for pn, logs, index in row:
            base = dm + (pn - ln) ** 2
            if base > best:
                continue
            j = bisect_left(logs, lk)
            for t in (j - 1, j):
                if 0 <= t < len(logs):
                    d = base + (logs[t] - lk) ** 2
                    i = index[t]
                    if d < best or (d == best and i < at):
                        best, at = d, i
    return at


# A checked map (check_block) is read one dtype at a time: a query reads its own dtype's entries
# (a quarter of the registry's map), and those only as far as it needs (the shapes of all of them,
# then the times of some), not a Choice for each of the 163,801 entries (about a second).
# An entry in the probe's form begins with its dtype, then its shape, a space after each (parse_entry
# reads the same fields from such a text); one in another form (a first-version entry, which names
# no dtype, or fields apart by other whitespace) is parsed whole.
_HEADS = {f"{dtype} ": dtype for dtype in DTYPES}
# An entry's shape at the start of each line of a block of texts: one match a line (the group
# empty where the line is not in the probe's form)
_SHAPE_AT = re.compile(r"^(?:(?:fp32|tf32|bf16|fp16) ([0-9]+)x([0-9]+)x([0-9]+) )?", re.MULTILINE)
# An entry's family and kernel_us, where its six fields are apart by one space each (split() then
# finds the same six)
_FAMILY_US = re.compile(r"\S+ \S+ (\S+) \S+ \S+ (\S+)")


@dataclass(frozen=True)
class _Part:
    """The entries of one dtype of a checked map, read off their texts: their shapes, and where the
    products (the small-side map: ChoiceMap.products) and the shallow plane's entries lie, by
    alignment class, with the bounds the products give the map's domain."""

    texts: list[str]  # the dtype's entries, in the map's order
    shapes: list[tuple[int, int, int]]  # (m, n, k) of each
    products: dict[int, list[int]]  # alignment class: the indices (in texts) of its products, in order
    shallow: dict[int, list[int]]  # the same for the shallow plane's entries
    least: int  # the least dimension of its products (10^10 without any)
    most: int  # the largest dimension of its products
    small: int  # the largest smaller side (m or n) of its products, MAP_MAX_SMALL or not

    @cached_property
    def kernel_floor(self) -> float:
        """The least kernel time of its products, those whose time the model reads as a walk of k
        (WALKED) apart; 0 without any (ChoiceMap.kernel_floor)."""
        return self._least_time(self.products, WALKED)

    @cached_property
    def shallow_floor(self) -> float:
        """The least kernel time of its shallow plane's entries; 0 without any (ChoiceMap.shallow_floor)."""
        return self._least_time(self.shallow, ())

    def _least_time(self, classes: dict[int, list[int]], apart: tuple[str, ...]) -> float:
        times = []
        for at in classes.values():
            for i in at:
                form = _FAMILY_US.fullmatch(self.texts[i])
                family, seconds = (
                    (form[1], float(form[2]) * 1e-6)  # as _parse_fast and parse_entry compute it
                    if form
                    else ((c := _parse_fast(self.texts[i])).family, c.kernel_s)
                )
                if family not in apart:
                    times.append(seconds)
        return min(times, default=0.0)


def _read_part(dtype: str, texts: list[str]) -> _Part:
    """One dtype's entries (texts of a checked map, in its order) as a _Part."""
    heads = _SHAPE_AT.findall("\n".join(texts)) if texts else []  # (no text: no line, though one match)
    shapes = [
        (int(m), int(n), int(k)) if m else _shape(text)  # (else not in the probe's form)
        for (m, n, k), text in zip(heads, texts, strict=True)
    ]
    products: dict[int, list[int]] = {}
    shallow: dict[int, list[int]] = {}
    aligned: dict[tuple[int, int], int] = {}  # the alignment class of each (n, k) met: a grid has few
    least, most, small = 10**10, 0, 0  # (every dimension is under 10^10: parse_entry)
    # The sorting of ChoiceMap.products and ChoiceMap.shallow, and the bounds of domain and
    # small_side, in one pass over what may be 45,000 entries: in_shallow_plane and min() and
    # max() written out (as calls they doubled the time of the pass). A vec entry, one row or one
    # column, is in neither plane.
    for i, (m, n, k) in enumerate(shapes):
        side = m if m < n else n
        if side > MAP_MAX_SMALL and k <= SHALLOW_MAX_K:
            plane = shallow
        elif side > 1:
            plane = products
            least = side if side < least else least
            least = k if k < least else least
            most = m if m > most else most
            most = n if n > most else most
            most = k if k > most else most
            small = side if side > small else small
        else:
            continue
        cls = aligned.get((n, k))
        if cls is None:
            cls = aligned[(n, k)] = aligned16(dtype, n, k)
        plane.setdefault(cls, []).append(i)
    return _Part(texts, shapes, products, shallow, least, most, small)


def _shape(text: str) -> tuple[int, int, int]:
    """The (m, n, k) of an entry not in the probe's form, parsed whole."""
    c = _parse_fast(text)
    return c.m, c.n, c.k


class _Index(NamedTuple):
    """One class's entries of a checked map, ready for _scan: their texts in order, their rows
    (_by_pairs), their deepest k and largest side."""

    texts: list[str]
    rows: _Rows
    deepest: int
    largest: int


@dataclass(frozen=True, eq=False)
class ChoiceMap:
    """The measured choices of one card and library version (compared and hashed as an object:
    the model asks one map many times)."""

    texts: tuple[str, ...]  # the entries as files keep them, parsed when first asked (a card's
    # figures are read by every command; most never ask the map)
    # Whether the texts are a checked map's (check_block: every one a well-formed entry, as a
    # hardware or calibration file's map is). Such a map answers nearest, nearest_shallow, the
    # floors, domain and small_side from the dtypes' texts it needs (_Part); another parses every
    # entry when first asked, and so refuses a malformed one wherever it lies, as parse_entry words it.
    checked: bool = False

    @classmethod
    def from_entries(cls, texts: Iterable[str], checked: bool = False) -> ChoiceMap:
        if isinstance(texts, str):  # a block of text is not a list of entries (its characters)
            raise TypeError("ChoiceMap.from_entries takes the entries, not one block of text")
        return cls(tuple(texts), checked)

    @cached_property
    def entries(self) -> tuple[Choice, ...]:
        return tuple(_parse_fast(t) for t in self.texts)

    @cached_property
    def _by_dtype(self) -> dict[str, list[str]]:
        """A checked map's texts by their dtype, each dtype's in the map's order: those that begin
        with their dtype and a space sorted by those characters, runs of them at a time (the
        probe writes each dtype's sweep together), any other by its parse."""
        out: dict[str, list[str]] = {}
        for head, run in groupby(self.texts, key=itemgetter(slice(0, 5))):
            if head in _HEADS:
                out.setdefault(_HEADS[head], []).extend(run)
            else:
                for text in run:
                    out.setdefault(_parse_fast(text).dtype, []).append(text)
        return out

    @cached_property
    def _parts(self) -> dict[str, _Part]:
        return {}  # filled as dtypes are asked (_part)

    def _part(self, dtype: str) -> _Part:
        """A checked map's entries of this dtype (none for a dtype it does not hold), read once."""
        part = self._parts.get(dtype)
        if part is None:
            part = self._parts[dtype] = _read_part(dtype, self._by_dtype.get(dtype, []))
        return part

    @cached_property
    def _indexes(self) -> dict[tuple[str, int, bool], _Index | None]:
        return {}  # filled as classes are asked (_index)

    def _index(self, dtype: str, cls: int, shallow: bool) -> _Index | None:
        """A checked map's products (or shallow plane's entries) of this dtype and alignment class,
        ready for _scan; None where it has none. The same entries, in the same order, as classes
        (or shallow) holds for that key."""
        key = (dtype, cls, shallow)
        if key not in self._indexes:
            part = self._part(dtype)
            at = (part.shallow if shallow else part.products).get(cls, [])
            shapes = [part.shapes[i] for i in at]
            self._indexes[key] = (
                _Index(
                    [part.texts[i] for i in at],
                    _by_pairs(shapes),
                    max(k for _, _, k in shapes),
                    max(max(m, n) for m, n, _ in shapes),
                )
                if at
                else None
            )
        return self._indexes[key]

    def _inside(self, dtype: str, m: int, n: int, k: int) -> bool:
        """Whether m x n x k passes nearest's test of the map's domain (small_side, domain), for a
        checked map. Those are taken over the products of every dtype, so a shape within the
        bounds of its own dtype's products passes without reading the other dtypes; any other
        is tested against the whole map's."""
        own = self._part(dtype)
        if min(m, n) <= min(MAP_MAX_SMALL, own.small) and own.least <= min(m, n, k) and max(m, n, k) <= 2 * own.most:
            return True
        lo, hi = self.domain
        return not (min(m, n) > self.small_side or min(m, n, k) < lo or max(m, n, k) > 2 * hi)

    def nearest(self, dtype: str, m: int, n: int, k: int) -> Choice | None:
        """The measured shape of this dtype and alignment class nearest to m x n x k, or None
        outside the map's domain: both m and n above the largest small side it measured (at most
        MAP_MAX_SMALL), or a dimension below the least
        measured or above twice the largest. (Tried on the development sets and not kept: keeping
        m and n each on their side of 16, and no map below k = 8; both put fewer in the band.)"""
        return _nearest(self, dtype, m, n, k)

    @cached_property
    def products(self) -> tuple[Choice, ...]:
        """The entries of products with a small side of 2 or more (the vector planes apart: vectors;
        the shallow plane apart: shallow)."""
        return tuple(c for c in self.entries if min(c.m, c.n) > 1 and not in_shallow_plane(c.m, c.n, c.k))

    @cached_property
    def shallow(self) -> dict[tuple[str, int], tuple[Choice, ...]]:
        """The shallow plane's entries (large outputs, k of 1-32) by dtype and alignment class."""
        return _by_class(c for c in self.entries if c.family != "vec" and in_shallow_plane(c.m, c.n, c.k))

    @cached_property
    def _shallow_least(self) -> dict[str, float]:  # (of a map not checked: shallow_floor)
        out: dict[str, float] = {}
        for (dtype, _), v in self.shallow.items():
            out[dtype] = min(out.get(dtype, math.inf), *(c.kernel_s for c in v))
        return out

    def shallow_floor(self, dtype: str) -> float:
        """The fixed part of a shallow kernel of this dtype under the profiler: the least time any
        of the plane's entries of that dtype took (0 without any)."""
        if self.checked:
            return self._part(dtype).shallow_floor
        return self._shallow_least.get(dtype, 0.0)

    @cached_property
    def _products_least(self) -> dict[str, float]:  # (of a map not checked: kernel_floor)
        out: dict[str, float] = {}
        for c in self.products:
            if c.family not in WALKED:
                out[c.dtype] = min(out.get(c.dtype, math.inf), c.kernel_s)
        return out

    def kernel_floor(self, dtype: str) -> float:
        """The fixed part of a kernel of this dtype under the profiler: the least time any of the
        map's product entries (the planes apart) of that dtype took, those whose time the model
        reads as a walk of k (WALKED) apart, so that a walk is never measured from itself (0
        without any)."""
        if self.checked:
            return self._part(dtype).kernel_floor
        return self._products_least.get(dtype, 0.0)

    def nearest_shallow(self, dtype: str, m: int, n: int, k: int) -> Choice | None:
        """The shallow plane's entry of this dtype and alignment class nearest to m x n x k in the
        logarithms of m, n and k; None outside the plane (in_shallow_plane), with k above the
        deepest measured or a side above twice the largest."""
        return _nearest_shallow(self, dtype, m, n, k)

    @cached_property
    def vectors(self) -> dict[tuple[str, str], tuple[Choice, ...]]:
        """The GEMV entries by dtype and plane: "row" (1 x n x k, n of 2 or more) and "column"
        (m x 1 x k, a dot product at m = 1). Where the map is not parsed yet, only the entries
        whose text names the family ("vec") are: a GEMV asks for these alone, a tenth of the map
        (the texts of a checked map, check_block: a malformed entry elsewhere is refused when the
        map's file is read, not here)."""
        out: dict[tuple[str, str], list[Choice]] = {}
        parsed = self.__dict__.get("entries")
        for c in parsed if parsed is not None else (_parse_fast(t) for t in self.texts if "vec" in t):
            if c.family == "vec":
                out.setdefault((c.dtype, "column" if c.n == 1 else "row"), []).append(c)
        return {key: tuple(v) for key, v in out.items()}

    @cached_property
    def vector_domain(self) -> dict[tuple[str, str], tuple[tuple[int, int], tuple[int, int]]]:
        """Per dtype and plane, the least and largest side, and the least and largest depth."""
        return {
            key: ((min(map(_side, v)), max(map(_side, v))), (min(c.k for c in v), max(c.k for c in v)))
            for key, v in self.vectors.items()
        }

    @cached_property
    def _vec_groups(self) -> dict[tuple[str, str, bool], tuple[tuple[Choice, ...], list[float], list[float]]]:
        """Per dtype, plane and whether k is a power of two: the vec entries a shape of that kind is
        compared with (those whose depth is of the same kind, else all of the plane's), in the
        map's order, with the logarithms of their sides and of their depths (_nearest_vec)."""
        out: dict[tuple[str, str, bool], tuple[tuple[Choice, ...], list[float], list[float]]] = {}
        for (dtype, plane), entries in self.vectors.items():
            for pow2 in (True, False):
                same = tuple(c for c in entries if _pow2(c.k) == pow2) or entries
                out[(dtype, plane, pow2)] = (
                    same,
                    [math.log(_side(c)) for c in same],
                    [math.log(c.k) for c in same],
                )
        return out

    @cached_property
    def _vec_least(self) -> float:
        return min((c.kernel_s for (dt, _), v in self.vectors.items() if dt == VEC_DTYPE for c in v), default=0.0)

    def vec_floor(self, dtype: str) -> float:
        """The fixed part of a GEMV kernel under the profiler: the least time any of the map's vec
        entries took (those of fp32, which tf32 products read; 0 without any)."""
        return self._vec_least if dtype in VEC_DTYPES else 0.0

    def nearest_vec(self, dtype: str, m: int, n: int, k: int) -> Choice | None:
        """The GEMV entry of this dtype and plane (one column where n = 1, else one row where m =
        1) nearest to m x n x k in the logarithms of its side (m or n) and k; None for other shapes,
        a plane not measured, a side or k below the least measured, or k above twice the largest."""
        plane = "column" if n == 1 else "row" if m == 1 else None
        if plane is None or dtype not in VEC_DTYPES:
            return None
        return _nearest_vec(self, VEC_DTYPE, plane, m if n == 1 else n, k)

    @cached_property
    def classes(self) -> dict[tuple[str, int], tuple[Choice, ...]]:
        """The entries by dtype and alignment class: a shape is compared only with its own."""
        return _by_class(self.products)

    @cached_property
    def pairs(self) -> dict[tuple[str, int], _Rows]:
        """Each class's entries by their m, then their n (_by_pairs)."""
        return {key: _by_pairs((c.m, c.n, c.k) for c in entries) for key, entries in self.classes.items()}

    @cached_property
    def shallow_pairs(self) -> dict[tuple[str, int], tuple[_Rows, int, int]]:
        """The shallow plane's classes by their m, then their n (_by_pairs), with each class's
        deepest k and largest side."""
        return {
            key: (_by_pairs((c.m, c.n, c.k) for c in v), max(c.k for c in v), max(max(c.m, c.n) for c in v))
            for key, v in self.shallow.items()
        }

    @cached_property
    def domain(self) -> tuple[int, int]:
        """The least and largest dimension measured."""
        if self.checked:  # the same bounds, over each dtype's products
            parts = [p for p in map(self._part, DTYPES) if p.products]
            return (min(p.least for p in parts), max(p.most for p in parts)) if parts else (1, 0)
        sides = [d for c in self.products for d in (c.m, c.n, c.k)]
        return (min(sides), max(sides)) if sides else (1, 0)

    @cached_property
    def small_side(self) -> int:
        """The largest smaller side (m or n) this map measured, up to MAP_MAX_SMALL: a map swept
        before the grid reached 64 (a calibration of an earlier probe) speaks to 16 only."""
        if self.checked:
            return min(MAP_MAX_SMALL, max(self._part(dtype).small for dtype in DTYPES))
        return min(MAP_MAX_SMALL, max((min(c.m, c.n) for c in self.products), default=0))


@lru_cache(maxsize=4096)
def _nearest(cmap: ChoiceMap, dtype: str, m: int, n: int, k: int) -> Choice | None:
    if min(m, n) > MAP_MAX_SMALL:  # above any map's small side (below), answered without reading the map
        return None
    key = (dtype, aligned16(dtype, n, k))
    if cmap.checked:  # its own class and dtype read, and the rest only where they decide
        index = cmap._index(dtype, key[1], shallow=False)
        if index is None or not cmap._inside(dtype, m, n, k):
            return None
        return _parse_fast(index.texts[_scan(index.rows, m, n, k)])
    entries = cmap.classes.get(key)
    if not entries or min(m, n) > cmap.small_side:
        return None
    lo, hi = cmap.domain
    if min(m, n, k) < lo or max(m, n, k) > 2 * hi:
        return None
    at = _scan(cmap.pairs[key], m, n, k)
    # (Tried on the development sets and not kept: no answer beyond a factor of 2, 8 or 8^3 in
    # distance; each put fewer in the band.)
    return entries[at]


@lru_cache(maxsize=4096)
def _nearest_shallow(cmap: ChoiceMap, dtype: str, m: int, n: int, k: int) -> Choice | None:
    if not in_shallow_plane(m, n, k):
        return None
    key = (dtype, aligned16(dtype, n, k))
    if cmap.checked:  # its own class alone read
        index = cmap._index(dtype, key[1], shallow=True)
        if index is None or k > index.deepest or max(m, n) > 2 * index.largest:
            return None
        return _parse_fast(index.texts[_scan(index.rows, m, n, k)])
    entries = cmap.shallow.get(key)
    if not entries:
        return None
    rows, deepest, largest = cmap.shallow_pairs[key]
    if k > deepest or max(m, n) > 2 * largest:
        return None
    return entries[_scan(rows, m, n, k)]


def _side(c: Choice) -> int:
    """A vec entry's side: its rows in the column plane, its columns in the row plane."""
    return c.m if c.n == 1 else c.n


def _pow2(k: int) -> bool:
    return k & (k - 1) == 0


@lru_cache(maxsize=4096)
def _nearest_vec(cmap: ChoiceMap, dtype: str, plane: str, side: int, k: int) -> Choice | None:
    entries = cmap.vectors.get((dtype, plane))
    if not entries:
        return None
    # below the least side or depth measured, or above twice the largest depth, no answer; above
    # the largest side, the largest (its launch grows with the side: _gemm_vec scales it; the 95
    # committed H100 fp32 gemvs of more than 16,384 rows land within [0.67, 1.5] so, 89 of them
    # within [0.8, 1.25]). Past the depths swept,
    # a walk scaled by k outgrows what the kernel does (gemvx caps its slices of k near 264)
    sides, depths = cmap.vector_domain[(dtype, plane)]
    if side < sides[0] or not depths[0] <= k <= 2 * depths[1]:
        return None
    # a depth that is a power of two is compared with its own kind: cuBLAS's GEMV kernels walk k in
    # unrolled steps, and at such depths they run other kernels or faster (1 x 1024 x 64 2.1 us,
    # x 51 3.4 us, x 81 8.3 us: kernels/row1)
    same, log_sides, log_depths = cmap._vec_groups[(dtype, plane, _pow2(k))]
    ls, lk = math.log(side), math.log(k)
    distances = [(a - ls) ** 2 + (b - lk) ** 2 for a, b in zip(log_sides, log_depths, strict=True)]
    # of two as near, the first entry
    return same[distances.index(min(distances))]


def tile_count(m: int, n: int, tile: tuple[int, int]) -> int:
    """The tiles of tm x tn that cover an m x n output (the last of a row or column overhanging)."""
    return math.ceil(m / tile[0]) * math.ceil(n / tile[1])


def tile_work(m: int, n: int, k: int, tile: tuple[int, int], splits: int, sms: int) -> float:
    """FLOPs of the busiest SM of a tiled kernel: its blocks (a tile of the output each, padded
    where the tile overhangs it, and a slice of k) dealt over the SMs, ceil(blocks / sms) on one."""
    blocks = tile_count(m, n, tile) * splits
    return math.ceil(blocks / sms) * tile[0] * tile[1] * math.ceil(k / splits) * 2


# cuBLAS's split-K reductions (the kernel after a GEMM whose k it cut into slices): cublasLt's
# splitKreduce follows the tensor-op, SIMT and nvjet kernels, xmma's kernels run their own; every
# reduction of the committed sweeps is one of these two (validation/expected/h100/kernels/choice5)
REDUCERS = ("cublaslt", "xmma")


def reducer(family: str) -> str:
    """The split-K reduction that follows a kernel of this family."""
    return "xmma" if family == "xmma" else "cublaslt"


def reduce_blocks(name: str, m: int, n: int, tile: tuple[int, int] | None) -> int:
    """The blocks a reduction launches, as the sweep's grids show them: cublasLt's splitKreduce one
    per 16 x 32 of the output (every one of its 26,985 launches in choice5); xmma's two per output
    tile (600 of its 734; the others one or four)."""
    if name == "xmma":
        return 2 * tile_count(m, n, tile or (64, 64))
    return tile_count(m, n, (16, 32))


def reduce_kernel(kernels: list[Mapping[str, Any]]) -> tuple[str, int, float] | None:
    """The sweep record's split-K reduction, if its last kernel is one: (reducer, blocks launched,
    profiled seconds)."""
    if len(kernels) < 2:
        return None
    last = kernels[-1]
    if not isinstance(last, Mapping):  # a malformed record's reduction is left out
        return None
    name = str(last.get("name", ""))[:MAX_NAME]
    which = "cublaslt" if "splitKreduce" in name else "xmma" if "xmma" in name and "split" in name else None
    grid, seconds = last.get("grid"), last.get("duration_s")
    if which is None or not isinstance(grid, list) or len(grid) != 3:
        return None
    # a malformed record's reduction is left out (the rest of the sweep stands)
    if not all(type(g) is int and 1 <= g < 2**31 for g in grid):
        return None
    if not isinstance(seconds, (int, float)) or isinstance(seconds, bool) or not 0 < seconds < 10:
        return None
    return which, grid[0] * grid[1] * grid[2], float(seconds)


def record_choice(r: Mapping[str, Any]) -> tuple[Choice, tuple[str, int, float] | None] | None:
    """A sweep record (dtype, m, n, k and its kernels) as the map's entry, with the reduction
    kernel after it if any (reduce_kernel); None for a record no entry holds: sizes out of range,
    one-row or one-column products other than the fp32 GEMV kernels (tf32 runs the same kernels:
    VEC_DTYPE; their k = 1 GEMMs are left out), times an entry cannot hold. Raises KeyError,
    TypeError, ValueError, IndexError, AttributeError or OverflowError for a malformed record."""
    m, n, k = int(r["m"]), int(r["n"]), int(r["k"])
    if not 0 < min(m, n, k) <= max(m, n, k) < 10**10:
        return None
    dtype = str(r.get("dtype", "fp32"))  # the first sweeps timed fp32 only
    family, tile, splits = classify(r["kernels"], m, n)
    if 1 in (m, n) and (family != "vec" or dtype != VEC_DTYPE):
        return None
    if family != "largek" and _zeroes_then_largek(r["kernels"]):
        return None  # a malformed largek record: not the scal_kernel's time as the product's
    first = float(r["kernels"][0]["duration_s"]) if r["kernels"] else 0.0
    if family == "largek" and (both := largek_kernel(r["kernels"])) is not None:
        first = both[0]  # the scal_kernel that zeroes C and the kernel after it
    # what an entry can hold: 0.01 us to under 10 s (two decimals of us), the sizes checked above
    if dtype not in DTYPES or not 1e-8 <= first < 9.99 or splits >= 10**5:
        return None
    # a reduction kernel after one slice of k: cuBLAS's reduction epilogue
    tail = reduce_kernel(r["kernels"]) if family != "vec" else None
    return Choice(dtype, m, n, k, family, tile, splits, first, splits == 1 and tail is not None), tail


# Where cuBLAS's choice changes between two measured large sides of a line (one dtype, alignment
# class, orientation, small side and depth), the nearest-shape read puts the change half way (in
# the logarithm); a product between them may run either kernel (fp32 12,848-15,104 x 3 x 2-21
# ran a kernel like 10,000 x 3's, at 0.47-0.50 of 16,000 x 3's). The probe measures the middle of
# each such pair whose two kernels' times are not in the ratio of the sides to within
# REFINE_JUMP, then the middles of the new pairs that still differ so, REFINE_PASSES times in
# all. (The test is against the sides' ratio, not equal times: a kernel of one wave takes the
# same time at both sides, and two kernels that do must still be told apart, since the model
# reads a tiled one off its tile's fitted figures, not its time. Of the 8,322 pairs of the first
# pass over kernels/choice8, 70% were within 1.25x in time.)
REFINE_JUMP = 1.25
REFINE_PASSES = 2


def _same_kernel(a: Choice, b: Choice) -> bool:
    return (a.family, a.tile, a.splits > 1 or a.reduced) == (b.family, b.tile, b.splits > 1 or b.reduced)


def _middle(dtype: str, cls: int, wide: bool, k: int, lo: int, hi: int) -> int | None:
    """A large side strictly between lo and hi, nearest their geometric middle, that keeps the
    line's alignment class (a wide product's large side is n, whose rows' alignment counts); None
    if there is none within 8 of it."""
    mid = round(math.sqrt(lo * hi))
    for step in range(9):
        for side in (mid - step, mid + step):
            if lo < side < hi and (not wide or aligned16(dtype, side, k) == cls):
                return side
    return None


def refine_shapes(choices: Iterable[Choice]) -> dict[str, list[tuple[int, int, int]]]:
    """The shapes to measure next, per dtype (REFINE_JUMP): the middles of adjacent measured large
    sides of the small-side map's lines whose kernels differ (family, tile, or k split or not)
    and whose times differ by more than REFINE_JUMP beyond the ratio of the sides. Only products
    with one side of 2-MAP_MAX_SMALL and the other above it are refined."""
    lines: dict[tuple[str, int, bool, int, int], list[Choice]] = {}
    for c in choices:
        small, large = min(c.m, c.n), max(c.m, c.n)
        if not 2 <= small <= MAP_MAX_SMALL < large or c.kernel_s <= 0:  # (the planes are outside)
            continue
        lines.setdefault((c.dtype, aligned16(c.dtype, c.n, c.k), c.n > c.m, small, c.k), []).append(c)
    out: dict[str, set[tuple[int, int, int]]] = {}
    for (dtype, cls, wide, small, k), line in lines.items():
        line.sort(key=lambda c: max(c.m, c.n))
        for a, b in pairwise(line):
            lo, hi = max(a.m, a.n), max(b.m, b.n)
            if _same_kernel(a, b) or abs(math.log(b.kernel_s / a.kernel_s) - math.log(hi / lo)) < math.log(REFINE_JUMP):
                continue
            side = _middle(dtype, cls, wide, k, lo, hi)
            if side is not None:
                out.setdefault(dtype, set()).add((small, side, k) if wide else (side, small, k))
    return {dt: sorted(v) for dt, v in out.items()}


def fit_reduce(
    rows: Iterable[tuple[str, int, int, float]], sms: int, least: int = 3
) -> dict[str, tuple[float, float, int]]:
    """Per reducer, its fixed cost (s) and the time each slice adds (s), fitted to the reductions
    of one wave (no more blocks than SMs: each block's threads sum their elements' slices one after
    another) by least squares in relative error of time = fixed + slices x per-slice; rows are
    (reducer, slices, blocks, seconds)."""
    pts: dict[str, list[tuple[float, float]]] = {}
    for which, slices, blocks, seconds in rows:
        if blocks <= sms and slices > 1 and seconds > 0:
            pts.setdefault(which, []).append((float(slices), seconds))
    out: dict[str, tuple[float, float, int]] = {}
    for which, p in sorted(pts.items()):
        line = _relative_line(p) if len(p) >= least else None
        if line is not None:
            out[which] = (line[0], line[1], len(p))
    return out


def _relative_line(pts: list[tuple[float, float]]) -> tuple[float, float] | None:
    """(a, b) minimising sum((a + b x) / y - 1)^2 (weighted least squares, weights 1 / y^2), where
    both come out positive; else None."""
    s_w = sum(1 / d**2 for _, d in pts)
    s_x = sum(w / d**2 for w, d in pts)
    s_xx = sum(w * w / d**2 for w, d in pts)
    s_y = sum(1 / d for _, d in pts)
    s_xy = sum(w / d for w, d in pts)
    det = s_w * s_xx - s_x * s_x
    # one x for every point (all reductions of one slice count) leaves the line undetermined:
    # det is then rounding noise, not a slope
    if not math.isfinite(det) or det <= 1e-9 * s_w * s_xx:
        return None
    a = (s_y * s_xx - s_x * s_xy) / det
    b = (s_w * s_xy - s_x * s_y) / det
    return (a, b) if a > 0 and b > 0 else None


def fit_tiles(choices: Iterable[Choice], sms: int, least: int = 3) -> dict[str, tuple[float, float, int]]:
    """Per dtype, family and tile (Choice.key): its fixed cost (s) and padded-work rate (FLOP/s an
    SM), fitted to the profiled first-kernel times of the shapes that ran it, by least squares in
    relative error of time = fixed + busiest SM's padded work / rate; with ``least`` shapes or
    more, and both figures positive."""
    rows: dict[str, list[tuple[float, float]]] = {}
    for c in choices:
        if c.key is not None and c.tile is not None:
            rows.setdefault(c.key, []).append((tile_work(c.m, c.n, c.k, c.tile, c.splits, sms), c.kernel_s))
    out: dict[str, tuple[float, float, int]] = {}
    for key, pts in sorted(rows.items()):
        line = _relative_line(pts) if len(pts) >= least else None
        if line is not None:
            out[key] = (line[0], 1 / line[1], len(pts))
    return out

"""Which kernel cuBLAS runs for a GEMM, as measured on a card: a choice map.

cuBLAS's heuristic picks a kernel family per shape, and for some families the pick is irregular
(for FP32 products with a few columns it takes its SIMT 128 x 32 kernel for some mid sizes and an
xmma kernel for others beside them: validation/expected/h100/kernels/tall1). Such a choice is not
read off by hand: the probe (roofcalc/probe/torch_ops.py gemm_choices) runs torch.matmul over a
grid of shapes under the profiler, and each shape's kernels are classified here. The map is saved
in the calibration with the libraries it was measured on; the registry's map is the probe's sweep
on the registry's card (hardware/h100.yaml expected.gemm_choice_map).

The map's domain: FP32 products with TF32 off (fp32) and on (tf32) of which one dimension, m or n,
is 2-16 (few rows or few columns), row-major operands. The model asks the map for the nearest
measured shape of the same dtype and the same alignment class (in the logarithms of m, n and k)
and uses the kernel it ran; outside the domain the map says nothing.

One entry, as files keep it (one a line): ``"dtype MxNxK family TMxTN splits kernel_us"``, e.g.
``"fp32 700x2x1700 simt 32x128 25 19.20"``: cuBLAS's SIMT kernel on tiles of 32 rows of m by 128
columns of n (the 2 columns padded to 128), k cut into 25 slices (the grid's z), the first kernel's
profiled duration 19.2 us. The tile is "-" for families without one. The probe fits each (dtype,
family, tile)'s fixed cost and rate to the durations of the shapes that ran it (fit_tiles).
"""

from __future__ import annotations

import bisect
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

# The families a GEMM's first kernel is sorted into, by its name: cutlass_80_simt_sgemm_AxB
# (simt), sm80/sm90 xmma_gemm_..._tilesizeAxB (xmma), cutlass tensorop_..._AxB (tensorop) and the
# Hopper nvjet_..._AxB kernels (nvjet) carry their tile; gemmSN (sn), the gemv and dot kernels
# (gemv) and anything else (other) do not.
FAMILIES = ("simt", "xmma", "tensorop", "nvjet", "sn", "gemv", "other")
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

# The probe's sweep, per dtype: every (m, n) with one of them small (2-16, GRID_SMALL) and the
# other small or large (24-16,000, log-spaced, not powers of two only: cuBLAS treats some sizes
# apart), at depths of 16-16,384: 351 (m, n) pairs x 11 depths = 3,861 shapes for fp32. The TF32
# and 16-bit kernels depend on the leading dimensions' alignment (16 bytes, 4, or less), so their
# grid adds odd large sides and odd depths: 459 pairs x 16 depths = 7,344 shapes a dtype (without
# them a TF32 product with an odd large side found its nearest shape among few-column ones).
GRID_SMALL = (2, 3, 4, 5, 6, 8, 10, 12, 16)
GRID_LARGE = (24, 40, 64, 100, 160, 256, 400, 640, 1000, 1600, 2560, 4000, 6400, 10000, 16000)
GRID_K = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
GRID_LARGE_ODD = (41, 101, 401, 1001, 4001, 10001)
GRID_K_ODD = (33, 129, 513, 2049, 8193)
# The map speaks for products whose smaller side, m or n, is at most this (the others are the
# tile search's); FP32 products of 2-16 rows that gemmSN or the serial split-K kernel runs are
# mapped apart in gemm.py, before this map is asked.
MAP_MAX_SMALL = 16


def grid_shapes(dtype: str = "fp32") -> list[tuple[int, int, int]]:
    """The (m, n, k) of the probe's sweep, for one dtype."""
    sides: tuple[int, ...] = GRID_SMALL + GRID_LARGE
    depths: tuple[int, ...] = GRID_K
    if dtype != "fp32":  # TF32 and 16-bit kernels depend on the leading dimensions' alignment
        sides, depths = sides + GRID_LARGE_ODD, tuple(sorted(GRID_K + GRID_K_ODD))
    return [(m, n, k) for m in sides for n in sides if min(m, n) <= MAP_MAX_SMALL for k in depths]


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
    tile: tuple[int, int] | None  # (rows of m, columns of n) a block, for the tiled families
    splits: int
    kernel_s: float

    @property
    def key(self) -> str | None:
        """The name its dtype, family and tile's figures go by, e.g. fp32_simt_32x128."""
        return f"{self.dtype}_{self.family}_{self.tile[0]}x{self.tile[1]}" if self.tile else None

    def entry(self) -> str:
        tile = f"{self.tile[0]}x{self.tile[1]}" if self.tile else "-"
        return f"{self.dtype} {self.m}x{self.n}x{self.k} {self.family} {tile} {self.splits} {self.kernel_s * 1e6:.2f}"


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
    if len(dims) != 3 or not all(d.isdigit() and 0 < int(d) < 10**10 for d in dims):
        raise ValueError(f"{text!r}: the shape must be MxNxK of positive whole numbers (under 10^10)")
    if family not in FAMILIES:
        raise ValueError(f"{text!r}: unknown family {family!r}; known: {', '.join(FAMILIES)}")
    tile: tuple[int, int] | None = None
    if family in TILED:
        t = tile_text.split("x")
        if len(t) != 2 or not all(d.isdigit() and 0 < int(d) < 10**4 for d in t):
            raise ValueError(f"{text!r}: a {family} entry needs its tile as TMxTN (1-9999 each)")
        tile = (int(t[0]), int(t[1]))
    elif tile_text != "-":
        raise ValueError(f"{text!r}: a {family} entry has no tile: write '-'")
    if not splits.isdigit() or not 1 <= int(splits) < 10**5:
        raise ValueError(f"{text!r}: splits must be a whole number, 1-99999")
    try:
        us = float(us_text)
    except ValueError:
        raise ValueError(f"{text!r}: kernel_us must be a number") from None
    if not math.isfinite(us) or us <= 0 or us >= 1e7:
        raise ValueError(f"{text!r}: kernel_us must be positive and under 10^7")
    m, n, k = (int(d) for d in dims)
    return Choice(dtype, m, n, k, family, tile, int(splits), us * 1e-6)


# One well-formed entry, as parse_entry accepts it (the sizes' limits included), for checking a
# whole map in one pass: 22,410 entries in milliseconds, where parsing each takes 0.1 s.
_N = r"[1-9][0-9]{0,9}"
_ENTRY = (
    rf"(?:fp32|tf32|bf16|fp16) {_N}x{_N}x{_N} "
    r"(?:(?:simt|xmma|tensorop|nvjet) [1-9][0-9]{0,3}x[1-9][0-9]{0,3}|(?:sn|gemv|other) -) "
    r"[1-9][0-9]{0,4} (?:[1-9][0-9]{0,6}(?:\.[0-9]{1,6})?|0\.[0-9]{0,5}[1-9][0-9]{0,5})"
)
_BLOCK = re.compile(rf"(?:{_ENTRY}\n)*")
MAX_ENTRY = 120  # characters of one entry (the longest well-formed one is under 80)


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
    name = str(kernels[0].get("name") or "")[:MAX_NAME]
    grid = kernels[0].get("grid") or [1, 1, 1]
    ext = [int(g) if isinstance(g, (int, float)) and 0 < g < 2**31 else 1 for g in list(grid)[:3]] + [1, 1, 1]
    gx, gy, gz = ext[:3]
    for family, pattern in _TILE_PATTERNS:
        hit = re.search(pattern, name)
        if hit and 0 < int(hit.group(1)) < 10**4 and 0 < int(hit.group(2)) < 10**4:
            a, b = int(hit.group(1)), int(hit.group(2))
            split_y = family == "nvjet" and "splitK" in name
            splits, launched = (gy, gx * gz) if split_y else (gz, gx * gy)

            def miss(tm: int, tn: int, launched: int = launched) -> float:
                tiles = max(1, math.ceil(m / tm) * math.ceil(n / tn))
                return abs(math.log(tiles / launched))

            default = (b, a) if family in ("simt", "nvjet") else (a, b)
            other = (default[1], default[0])
            tile = other if miss(*other) < miss(*default) else default
            return family, tile, max(1, splits)
    if "gemmSN" in name:
        return "sn", None, gz
    if "gemv" in name or "dot_kernel" in name:
        return "gemv", None, gz
    return "other", None, gz  # a tiled family whose tile the name does not give counts here too


@dataclass(frozen=True, eq=False)
class ChoiceMap:
    """The measured choices of one card and library version (compared and hashed as an object:
    the model asks one map many times)."""

    texts: tuple[str, ...]  # the entries as files keep them, parsed when first asked (a card's
    # figures are read by every command; most never ask the map)

    @classmethod
    def from_entries(cls, texts: Iterable[str]) -> ChoiceMap:
        return cls(tuple(texts))

    @cached_property
    def entries(self) -> tuple[Choice, ...]:
        return tuple(parse_entry(t) for t in self.texts)

    def nearest(self, dtype: str, m: int, n: int, k: int) -> Choice | None:
        """The measured shape of this dtype and alignment class nearest to m x n x k, or None
        outside the map's domain: both m and n above MAP_MAX_SMALL, or a dimension below the least
        measured or above twice the largest. (Tried on the development sets and not kept: keeping
        m and n each on their side of 16, and no map below k = 8; both put fewer in the band.)"""
        return _nearest(self, dtype, m, n, k)

    @cached_property
    def classes(self) -> dict[tuple[str, int], tuple[Choice, ...]]:
        """The entries by dtype and alignment class: a shape is compared only with its own."""
        out: dict[tuple[str, int], list[Choice]] = {}
        for c in self.entries:
            out.setdefault((c.dtype, aligned16(c.dtype, c.n, c.k)), []).append(c)
        return {key: tuple(v) for key, v in out.items()}

    @cached_property
    def grids(self) -> dict[tuple[str, int], _Grid]:
        """Each class's entries as a grid: its measured rows, columns and depths, and the entry at
        each (m, n, k) (of two at one shape, the last)."""
        out = {}
        for key, entries in self.classes.items():
            out[key] = _Grid(
                tuple(sorted({c.m for c in entries})),
                tuple(sorted({c.n for c in entries})),
                tuple(sorted({c.k for c in entries})),
                {(c.m, c.n, c.k): c for c in entries},
            )
        return out

    @cached_property
    def logs(self) -> dict[tuple[str, int], tuple[tuple[float, float, float], ...]]:
        """Each class's entries' log m, log n and log k, in the order of ``classes``."""
        return {
            key: tuple((math.log(c.m), math.log(c.n), math.log(c.k)) for c in entries)
            for key, entries in self.classes.items()
        }

    @cached_property
    def by_rows(self) -> dict[tuple[str, int], tuple[list[float], list[tuple[float, float, float, int]]]]:
        """Each class's entries' logs with their index in ``classes``, in the order of log m (and
        the log m of each, for bisection)."""
        out = {}
        for key, logs in self.logs.items():
            rows = sorted(((a, b, c, i) for i, (a, b, c) in enumerate(logs)), key=lambda r: (r[0], r[3]))
            out[key] = ([r[0] for r in rows], rows)
        return out

    @cached_property
    def domain(self) -> tuple[int, int]:
        """The least and largest dimension measured."""
        sides = [d for c in self.entries for d in (c.m, c.n, c.k)]
        return min(sides), max(sides)


@dataclass(frozen=True)
class _Grid:
    """One class's entries, indexed as the grid they were swept on."""

    ms: tuple[int, ...]
    ns: tuple[int, ...]
    ks: tuple[int, ...]
    at: dict[tuple[int, int, int], Choice]


def _bracket(values: tuple[int, ...], x: int) -> tuple[int, ...]:
    """The measured values on either side of x (one where x is beyond them all)."""
    i = bisect.bisect_left(values, x)
    return tuple(values[j] for j in (i - 1, i) if 0 <= j < len(values))


@lru_cache(maxsize=4096)
def _nearest(cmap: ChoiceMap, dtype: str, m: int, n: int, k: int) -> Choice | None:
    key = (dtype, aligned16(dtype, n, k))
    entries = cmap.classes.get(key)
    if not entries or min(m, n) > MAP_MAX_SMALL:
        return None
    lo, hi = cmap.domain
    if min(m, n, k) < lo or max(m, n, k) > 2 * hi:
        return None
    lm, ln, lk = math.log(m), math.log(n), math.log(k)

    def dist(c: Choice) -> float:
        return (math.log(c.m) - lm) ** 2 + (math.log(c.n) - ln) ** 2 + (math.log(c.k) - lk) ** 2

    # On a grid, the nearest point in the sum of squares is the nearest value in each dimension:
    # the points of the bracketing values hold it when all of them were measured; else (a hole in
    # the grid, or a map that is no grid) every entry is looked at.
    g = cmap.grids[key]
    near = [g.at.get((a, b, c)) for a in _bracket(g.ms, m) for b in _bracket(g.ns, n) for c in _bracket(g.ks, k)]
    if all(x is not None for x in near):
        found = min((x for x in near if x is not None), key=dist)
    else:
        found = entries[_scan(*cmap.by_rows[key], lm, ln, lk)]
    # (Tried on the development sets and not kept: no answer beyond a factor of 2, 8 or 8^3 in
    # distance; each put fewer in the band.)
    return found


def _scan(lms: list[float], rows: list[tuple[float, float, float, int]], lm: float, ln: float, lk: float) -> int:
    """The index of the entry nearest in the sum of squares of the logs (of two as near, the
    first): walks out from log m both ways, and stops on a side once log m alone is farther
    than the best found."""
    best, at = math.inf, -1
    hi = bisect.bisect_left(lms, lm)
    lo = hi - 1
    n = len(rows)
    while lo >= 0 or hi < n:
        for j in (lo, hi):
            if 0 <= j < n:
                a, b, c, i = rows[j]
                d = (a - lm) ** 2 + (b - ln) ** 2 + (c - lk) ** 2
                if d < best or (d == best and i < at):
                    best, at = d, i
        if lo >= 0 and (lms[lo] - lm) ** 2 > best:
            lo = -1
        else:
            lo -= 1
        if hi < n and (lms[hi] - lm) ** 2 > best:
            hi = n
        else:
            hi += 1
    return at


def tile_work(m: int, n: int, k: int, tile: tuple[int, int], splits: int, sms: int) -> float:
    """FLOPs of the busiest SM of a tiled kernel: its blocks (a tile of the output each, padded
    where the tile overhangs it, and a slice of k) dealt over the SMs, ceil(blocks / sms) on one."""
    tm, tn = tile
    blocks = math.ceil(m / tm) * math.ceil(n / tn) * splits
    return math.ceil(blocks / sms) * tm * tn * math.ceil(k / splits) * 2


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
        if len(pts) < least:
            continue
        # minimise sum((a + b w) / d - 1)^2: weighted least squares with weights 1 / d^2
        s_w = sum(1 / d**2 for _, d in pts)
        s_x = sum(w / d**2 for w, d in pts)
        s_xx = sum(w * w / d**2 for w, d in pts)
        s_y = sum(1 / d for _, d in pts)
        s_xy = sum(w / d for w, d in pts)
        det = s_w * s_xx - s_x * s_x
        if det <= 0:
            continue
        a = (s_y * s_xx - s_x * s_xy) / det
        b = (s_w * s_xy - s_x * s_y) / det
        if a > 0 and b > 0:
            out[key] = (a, 1 / b, len(pts))
    return out

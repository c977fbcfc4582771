"""Which kernel cuBLAS runs for a GEMM, as measured on a card: a choice map.

cuBLAS's heuristic picks a kernel family per shape, and for some families the pick is irregular
(for FP32 products with a few columns it takes its SIMT 128 x 32 kernel for some mid sizes and an
xmma kernel for others beside them: validation/expected/h100/kernels/tall1). Such a choice is not
read off by hand: the probe (roofcalc/probe/torch_ops.py gemm_choices) runs torch.matmul over a
grid of shapes under the profiler, and each shape's kernels are classified here. The map is saved
in the calibration with the libraries it was measured on; the registry's map is the probe's sweep
on the registry's card (hardware/h100.yaml expected.gemm_choice_map).

The model asks the map for the nearest measured shape (in the logarithms of m, n and k) within the
map's domain, and uses the family it ran; outside the domain the map says nothing.

One entry, as files keep it: ``"MxNxK family TMxTN splits kernel_us"``, e.g. ``"700x2x1700 simt
32x128 25 19.20"``: cuBLAS's SIMT kernel on tiles of 32 rows of m by 128 columns of n (the 2
columns padded to 128), k cut into 25 slices (the grid's z), the first kernel's profiled duration
19.2 us. The tile is "-" for families without one. The probe fits each (family, tile)'s fixed cost
and rate to the durations of the shapes that ran it (fit_tiles).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cached_property, lru_cache
from typing import Any

# The families a GEMM's first kernel is sorted into, by its name: cutlass_80_simt_sgemm_AxB
# (simt) and sm80_xmma_gemm_..._tilesizeAxB (xmma) carry their tile; gemmSN (sn), the gemv and dot
# kernels (gemv), the Hopper nvjet kernels (nvjet) and anything else (other) do not.
FAMILIES = ("simt", "xmma", "sn", "gemv", "nvjet", "other")
TILED = ("simt", "xmma")

# The probe's sweep: FP32 products (TF32 off) of many rows and few columns, row-major operands,
# torch.matmul. Rows and depths log-spaced (not powers of two only: cuBLAS treats some sizes
# apart), columns every small count. 15 x 9 x 11 = 1,485 shapes.
GRID_M = (24, 40, 64, 100, 160, 256, 400, 640, 1000, 1600, 2560, 4000, 6400, 10000, 16000)
GRID_N = (2, 3, 4, 5, 6, 8, 10, 12, 16)
GRID_K = (16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384)
# The map speaks for products of at most this many columns and more rows than that (the few-row
# FP32 products are gemmSN's and the serial split-K kernel's, mapped apart in gemm.py).
TALL_MAX_N = 16


@dataclass(frozen=True)
class Choice:
    """One measured shape: what cuBLAS ran for it."""

    m: int
    n: int
    k: int
    family: str
    tile: tuple[int, int] | None  # (rows of m, columns of n) a block, for simt and xmma
    splits: int
    kernel_s: float

    @property
    def key(self) -> str | None:
        """The name its family and tile's figures go by, e.g. simt_32x128."""
        return f"{self.family}_{self.tile[0]}x{self.tile[1]}" if self.tile else None

    def entry(self) -> str:
        tile = f"{self.tile[0]}x{self.tile[1]}" if self.tile else "-"
        return f"{self.m}x{self.n}x{self.k} {self.family} {tile} {self.splits} {self.kernel_s * 1e6:.2f}"


def parse_entry(text: str) -> Choice:
    """One entry of a map file; ValueError with what is wrong."""
    parts = str(text).split()
    if len(parts) != 5:
        raise ValueError(f"{text!r}: expected 'MxNxK family TMxTN splits kernel_us'")
    dims = parts[0].split("x")
    if len(dims) != 3 or not all(d.isdigit() and int(d) > 0 for d in dims):
        raise ValueError(f"{text!r}: the shape must be MxNxK of positive whole numbers")
    if parts[1] not in FAMILIES:
        raise ValueError(f"{text!r}: unknown family {parts[1]!r}; known: {', '.join(FAMILIES)}")
    tile: tuple[int, int] | None = None
    if parts[1] in TILED:
        t = parts[2].split("x")
        if len(t) != 2 or not all(d.isdigit() and 0 < int(d) <= 1024 for d in t):
            raise ValueError(f"{text!r}: a {parts[1]} entry needs its tile as TMxTN (1-1024 each)")
        tile = (int(t[0]), int(t[1]))
    elif parts[2] != "-":
        raise ValueError(f"{text!r}: a {parts[1]} entry has no tile: write '-'")
    if not parts[3].isdigit() or int(parts[3]) < 1:
        raise ValueError(f"{text!r}: splits must be a whole number, 1 or more")
    try:
        us = float(parts[4])
    except ValueError:
        raise ValueError(f"{text!r}: kernel_us must be a number") from None
    if not math.isfinite(us) or us <= 0 or us > 1e7:
        raise ValueError(f"{text!r}: kernel_us must be positive and finite")
    m, n, k = (int(d) for d in dims)
    return Choice(m, n, k, parts[1], tile, int(parts[3]), us * 1e-6)


def classify(kernels: list[Mapping[str, Any]], m: int, n: int) -> tuple[str, tuple[int, int] | None, int]:
    """The family of an m x n GEMM's kernels (profiler records with name and grid), its tile as
    (rows of m, columns of n) a block, and its first kernel's z extent (k-slices where it splits).

    A kernel's name gives its tile as A x B in cuBLAS's column-major terms; which side spans the
    rows of our row-major product is read off the grid (its x extent is ceil(m / that side)),
    and where both would fit, SIMT tiles put B on the rows and xmma tiles A, as seen where the
    grid tells them apart."""
    if not kernels:
        return "other", None, 1
    name = str(kernels[0].get("name") or "")
    grid = kernels[0].get("grid") or [1, 1, 1]
    gx = int(grid[0]) if len(grid) > 0 else 1
    z = int(grid[2]) if len(grid) > 2 and int(grid[2]) > 0 else 1
    for family, pattern in (("simt", r"simt_sgemm_(\d+)x(\d+)_"), ("xmma", r"xmma_gemm.*tilesize(\d+)x(\d+)x")):
        hit = re.search(pattern, name)
        if hit and 0 < int(hit.group(1)) <= 1024 and 0 < int(hit.group(2)) <= 1024:
            a, b = int(hit.group(1)), int(hit.group(2))
            on_a, on_b = math.ceil(m / a) == gx, math.ceil(m / b) == gx
            a_on_rows = on_a if on_a != on_b else family == "xmma"
            return family, ((a, b) if a_on_rows else (b, a)), z
    if "gemmSN" in name:
        return "sn", None, z
    if "gemv" in name or "dot_kernel" in name:
        return "gemv", None, z
    if "nvjet" in name:
        return "nvjet", None, z
    return "other", None, z


@dataclass(frozen=True, eq=False)
class ChoiceMap:
    """The measured choices of one card and library version (compared and hashed as an object:
    the model asks one map many times)."""

    entries: tuple[Choice, ...]

    @classmethod
    def from_entries(cls, texts: Iterable[str]) -> ChoiceMap:
        return cls(tuple(parse_entry(t) for t in texts))

    def nearest(self, m: int, n: int, k: int) -> Choice | None:
        """The measured shape nearest to m x n x k, or None outside the map's domain: more than
        TALL_MAX_N columns or no more rows than that, or rows, columns or depth beyond the
        measured range (by more than a factor of two for rows and depth)."""
        return _nearest(self, m, n, k)

    @cached_property
    def domain(self) -> tuple[tuple[int, int], tuple[int, int], tuple[int, int]]:
        """The measured range of rows, columns and depths."""
        ms = [c.m for c in self.entries]
        ns = [c.n for c in self.entries]
        ks = [c.k for c in self.entries]
        return (min(ms), max(ms)), (min(ns), max(ns)), (min(ks), max(ks))


@lru_cache(maxsize=4096)
def _nearest(cmap: ChoiceMap, m: int, n: int, k: int) -> Choice | None:
    if not cmap.entries or n > TALL_MAX_N or m <= TALL_MAX_N:
        return None
    (m0, m1), (n0, n1), (k0, k1) = cmap.domain
    if not (m0 / 2 <= m <= 2 * m1 and n0 <= n <= n1 and k0 / 2 <= k <= 2 * k1):
        return None
    lm, ln, lk = math.log(m), math.log(n), math.log(k)

    def dist(c: Choice) -> float:
        return (math.log(c.m) - lm) ** 2 + (math.log(c.n) - ln) ** 2 + (math.log(c.k) - lk) ** 2

    return min(cmap.entries, key=dist)


def tile_work(m: int, n: int, k: int, tile: tuple[int, int], splits: int, sms: int) -> float:
    """FLOPs of the busiest SM of a tiled kernel: its blocks (a tile of the output each, padded
    where the tile overhangs it, and a slice of k) dealt over the SMs, ceil(blocks / sms) on one."""
    tm, tn = tile
    blocks = math.ceil(m / tm) * math.ceil(n / tn) * splits
    return math.ceil(blocks / sms) * tm * tn * math.ceil(k / splits) * 2


def fit_tiles(choices: Iterable[Choice], sms: int, least: int = 3) -> dict[str, tuple[float, float, int]]:
    """Per family and tile (Choice.key): its fixed cost (s) and padded-work rate (FLOP/s an SM),
    fitted to the profiled first-kernel times of the shapes that ran it, by least squares in
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

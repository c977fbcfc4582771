"""One-row 4-byte products (x @ B, m = 1) as cuBLAS's GEMV kernels, read off the choice map's
one-row plane (roofcalc/expected/choice.py row_shapes, gemm.py _gemm_row). Expected values come
from the committed sweep validation/expected/h100/kernels/row2 (each record's grid, block and
duration, read by hand in the test), hand derivations written here, and the committed
measurements of the development plans row-rand2 and row-rand3."""

from __future__ import annotations

import gzip
import json
import math
import statistics
from functools import lru_cache
from pathlib import Path

import pytest

from roofcalc import analyze
from roofcalc.expected.card import card
from roofcalc.expected.choice import ChoiceMap, classify, parse_entry
from roofcalc.hardware import load_hardware

ROOT = Path(__file__).resolve().parent.parent
H100 = ROOT / "validation" / "expected" / "h100"
SWEEP = H100 / "kernels" / "row2" / "row-sweep.json.gz"


@lru_cache(maxsize=1)
def _sweep() -> dict[tuple[str, int, int], list[dict]]:
    doc = json.loads(gzip.decompress(SWEEP.read_bytes()))
    return {(c["dtype"], c["n"], c["k"]): c["kernels"] for c in doc["cases"]}


def test_classify_reads_a_row_kernels_launch_and_partial_sums() -> None:
    s = _sweep()
    # 1 x 2896 x 72: gemv2N alone, 23 blocks of 128 threads (each thread one column, all of k)
    ks = s[("fp32", 2896, 72)]
    assert [(k["grid"], k["block"]) for k in ks] == [([23, 1, 1], [128, 1, 1])]
    assert classify(ks, 1, 2896) == ("row", (23, 128), 1)
    # 1 x 2 x 1290: dot_kernel on 31 blocks along k for each of the 2 columns, then reduce_1Block
    # sums each column's 31 partials
    ks = s[("fp32", 2, 1290)]
    assert [k["grid"] for k in ks] == [[31, 1, 2], [1, 1, 2]] and "reduce_1Block" in ks[1]["name"]
    assert classify(ks, 1, 2) == ("row", (62, 128), 31)
    # 1 x 1024 x 13004: gemvx with k in 4 slices (the grid's z), then cublasLt's splitKreduce
    ks = s[("fp32", 1024, 13004)]
    assert ks[0]["grid"] == [32, 1, 4] and ks[0]["block"] == [32, 16, 1] and "splitKreduce" in ks[1]["name"]
    assert classify(ks, 1, 1024) == ("row", (128, 512), 4)
    # a record without the block (a sweep before row_shapes) stays a plain gemv entry
    bare = [{k: v for k, v in ks[0].items() if k != "block"}]
    assert classify(bare, 1, 1024) == ("gemv", None, 4)


def test_row_entries_parse_alike_on_both_paths_and_refuse_in_one_line() -> None:
    text = "tf32 1x2896x72 row 23x128 1 7.36"
    entry = parse_entry(text)
    assert (entry.family, entry.tile, entry.splits, entry.m) == ("row", (23, 128), 1, 1)
    fast = ChoiceMap.from_entries([text]).entries[0]
    assert fast == entry and fast.key is None  # no tile figures are fitted to a launch
    assert entry.entry() == text
    for bad, why in [
        ("fp32 2x2896x72 row 23x128 1 7.36", "one-row"),
        ("fp32 1x2896x72 row 23x1025 1 7.36", "BLOCKSxTHREADS"),
        ("fp32 1x2896x72 row - 1 7.36", "BLOCKSxTHREADS"),
    ]:
        with pytest.raises(ValueError, match=why):
            parse_entry(bad)
        with pytest.raises(ValueError, match=why):
            _ = ChoiceMap.from_entries([bad]).entries


def test_row_entries_leave_the_small_side_map_as_it_was() -> None:
    products = ["fp32 2x100x64 simt 32x128 1 3.00", "fp32 16x1000x1024 simt 32x128 4 9.00"]
    rows = ["fp32 1x100x64 row 4x64 1 2.00", "fp32 1x5000x3 row 157x64 1 1.50"]
    alone, both = ChoiceMap.from_entries(products), ChoiceMap.from_entries(products + rows)
    assert both.domain == alone.domain == (2, 1024) and both.small_side == alone.small_side == 16
    for q in [(2, 100, 64), (3, 500, 100), (16, 1000, 2000)]:
        assert both.nearest("fp32", *q) == alone.nearest("fp32", *q)
    assert alone.nearest_row("fp32", 100, 64) is None and both.nearest_row("tf32", 100, 64) is None
    assert both.row_floor("fp32") == pytest.approx(1.5e-6)


def test_a_depth_that_is_a_power_of_two_is_compared_with_its_own_kind() -> None:
    # row2: 1 x 1024 x 64 ran gemvx in 2.1 us, 1 x 1024 x 81 gemv2N in 8.3 us; a depth of 70 is
    # nearer 64 in its logarithm but runs gemv2N (1 x 2830 x 70 measured 14.4 us, ops-wide114)
    s = _sweep()
    assert "gemvx" in s[("fp32", 1024, 64)][0]["name"] and "gemv2N" in s[("fp32", 1024, 81)][0]["name"]
    cmap = ChoiceMap.from_entries(["fp32 1x1024x64 row 32x64 1 2.11", "fp32 1x1024x81 row 8x128 1 8.30"])
    assert cmap.nearest_row("fp32", 1100, 70).k == 81
    assert cmap.nearest_row("fp32", 1100, 128).k == 64  # a power of two takes the power of two
    # outside the measured plane (below its least, above twice its largest): no answer
    assert cmap.nearest_row("fp32", 1100, 162).k == 81 and cmap.nearest_row("fp32", 1100, 163) is None
    assert cmap.nearest_row("fp32", 1100, 63) is None and cmap.nearest_row("fp32", 1000, 70) is None
    assert cmap.nearest_row("fp32", 2048, 70) is not None and cmap.nearest_row("fp32", 2049, 70) is None


def test_the_row_kernel_by_hand() -> None:
    """1 x 2830 x 70 fp32 (ops-wide114's one case outside [0.5, 2] before the row map): the nearest
    measured shape is 1 x 2896 x 72 (gemv2N, 23 blocks of 128 threads, 7.361 us under the
    profiler). Its walk beyond the fixed part (the least any fp32 row kernel of the sweep took) is
    kept per block-wave and scaled by depth: 22 blocks (23 x 2830 / 2896 = 22.5, rounded), one wave
    of 132 SMs as there, 70 deep against 72; queued, its fixed cost is a graph node's."""
    s = _sweep()
    ks = s[("fp32", 2896, 72)]
    assert ks[0]["duration_s"] == pytest.approx(7.361e-6, abs=1e-9)
    least = min(
        v[0]["duration_s"]
        for (dt, _, k), v in s.items()
        if dt == "fp32" and k >= 2  # the depth of 1 runs a SIMT GEMM, not a row kernel
    )
    hw = load_hardware("h100")
    c = card(hw)
    walk = (7.361e-6 - least) * (1 * 70) / (1 * 72)
    stream = ((70 * 2830 + 70) * 4 + 2830 * 4) / c.dram_bw
    assert walk > stream
    r = analyze("gemm", hw, m=1, n=2830, k=70, dtype="fp32")
    (kernel,) = r.expected_kernels
    assert kernel.grid == 22 and "1x2896x72" in kernel.reason
    assert kernel.seconds == pytest.approx(c.graph_floor + walk, rel=1e-3)


def test_sixteen_bit_and_linear_products_keep_their_paths() -> None:
    hw = load_hardware("h100")
    for dtype in ("bf16", "fp16"):
        r = analyze("gemm", hw, m=1, n=2830, k=70, dtype=dtype)
        assert "one-row GEMV" not in r.expected_kernels[0].reason
    # a depth of 1 is outside the plane's GEMV kernels (a SIMT GEMM ran there)
    r = analyze("gemm", hw, m=1, n=2830, k=1, dtype="fp32")
    assert "one-row GEMV" not in r.expected_kernels[0].reason


@pytest.mark.parametrize("source", ["ops-row-rand2.json", "ops-row-rand3.json"])
def test_one_row_products_against_their_committed_measurements(source: str) -> None:
    """The development plans' 60 one-row fp32/tf32 products each (committed measurements, one
    H100): at least 85% within [0.8, 1.25] of the expected time, none outside [0.5, 2], the median
    within [0.9, 1.1] (with the row map: 54 and 51 of 60 within, medians 0.969 and 0.989; on the
    tiled GEMM model before it, 32 and 36, medians 0.825 and 0.840, one case outside)."""
    hw = load_hardware("h100")
    ratios = []
    for case in json.loads((H100 / source).read_text())["cases"]:
        p = case["params"]
        r = analyze("gemm", hw, m=p["m"], n=p["n"], k=p["k"], dtype=case["dtype"])
        assert r.expected_s is not None
        ratios.append(case["median_s"] / r.expected_s)
    assert len(ratios) == 60
    assert sum(0.8 <= x <= 1.25 for x in ratios) >= 0.85 * 60
    assert all(0.5 <= x <= 2 for x in ratios)
    assert 0.9 <= statistics.median(ratios) <= 1.1
    assert not any(math.isnan(x) for x in ratios)

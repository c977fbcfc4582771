"""One-row (x @ B, m = 1) and one-column (A @ x, n = 1) 4-byte products as cuBLAS's GEMV kernels,
read off the choice map's vector planes (roofcalc/expected/choice.py row_shapes, column_shapes;
gemm.py _gemm_vec). Expected values come from the committed sweeps
validation/expected/h100/kernels/row2 and col1 (each record's grid, block and duration, read by
hand in the test), hand derivations written here, and the committed measurements of the
development plans row-rand2, row-rand3 and col-rand2."""

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

from .conftest import kept, without_column_plane

ROOT = Path(__file__).resolve().parent.parent
H100 = ROOT / "validation" / "expected" / "h100"
SWEEPS = (H100 / "kernels" / "row2" / "row-sweep.json.gz", H100 / "kernels" / "col1" / "col-sweep.json.gz")


@lru_cache(maxsize=1)
def _records() -> dict[tuple[str, int, int, int], list[dict]]:
    """(dtype, m, n, k): the kernels, of both sweeps."""
    out = {}
    for path in SWEEPS:
        for c in json.loads(gzip.decompress(path.read_bytes()))["cases"]:
            out[(c["dtype"], c["m"], c["n"], c["k"])] = c["kernels"]
    return out


def _sweep() -> dict[tuple[str, int, int], list[dict]]:
    """The one-row plane: (dtype, n, k)."""
    return {(dt, n, k): v for (dt, m, n, k), v in _records().items() if m == 1 and n > 1}


@lru_cache(maxsize=1)
def _least() -> float:
    """The least time any fp32 GEMV kernel of either plane took (the vec entries': a depth of 1
    with two rows or more ran a SIMT GEMM; tf32 products read the fp32 planes)."""
    least = min(
        v[0]["duration_s"]
        for key, v in _records().items()
        if key[0] == "fp32" and classify(v, key[1], key[2])[0] == "vec"
    )
    return kept(least)


def test_classify_reads_a_row_kernels_launch_and_partial_sums() -> None:
    s = _sweep()
    # 1 x 2896 x 72: gemv2N alone, 23 blocks of 128 threads (each thread one column, all of k)
    ks = s[("fp32", 2896, 72)]
    assert [(k["grid"], k["block"]) for k in ks] == [([23, 1, 1], [128, 1, 1])]
    assert classify(ks, 1, 2896) == ("vec", (23, 128), 1)
    # 1 x 2 x 1290: dot_kernel on 31 blocks along k for each of the 2 columns, then reduce_1Block
    # sums each column's 31 partials
    ks = s[("fp32", 2, 1290)]
    assert [k["grid"] for k in ks] == [[31, 1, 2], [1, 1, 2]] and "reduce_1Block" in ks[1]["name"]
    assert classify(ks, 1, 2) == ("vec", (62, 128), 31)
    # 1 x 1024 x 13004: gemvx with k in 4 slices (the grid's z), then cublasLt's splitKreduce
    ks = s[("fp32", 1024, 13004)]
    assert ks[0]["grid"] == [32, 1, 4] and ks[0]["block"] == [32, 16, 1] and "splitKreduce" in ks[1]["name"]
    assert classify(ks, 1, 1024) == ("vec", (128, 512), 4)
    # a record without the block (a sweep before row_shapes) stays a plain gemv entry
    bare = [{k: v for k, v in ks[0].items() if k != "block"}]
    assert classify(bare, 1, 1024) == ("gemv", None, 4)
    # the column plane: 1 x 1 x 720 (a dot product) ran gemvx on 240 slices of k, then
    # splitKreduce; 4096 x 1 x 2048 gemv2T alone, one block of 128 threads per 8 rows
    ks = _records()[("fp32", 1, 1, 720)]
    assert ks[0]["grid"] == [1, 1, 240] and ks[0]["block"] == [4, 32, 1] and "splitKreduce" in ks[1]["name"]
    assert classify(ks, 1, 1) == ("vec", (240, 128), 240)
    ks = _records()[("fp32", 4096, 1, 2048)]
    assert [(k["grid"], k["block"]) for k in ks] == [([512, 1, 1], [128, 1, 1])] and "gemv2T" in ks[0]["name"]
    assert classify(ks, 4096, 1) == ("vec", (512, 128), 1)


def test_row_entries_parse_alike_on_both_paths_and_refuse_in_one_line() -> None:
    for text, mn in (
        ("tf32 1x2896x72 vec 23x128 1 7.36", (1, 2896)),
        ("fp32 4096x1x2048 vec 512x128 1 8.86", (4096, 1)),
    ):
        entry = parse_entry(text)
        assert (entry.family, (entry.m, entry.n)) == ("vec", mn) and entry.tile is not None
        fast = ChoiceMap.from_entries([text]).entries[0]
        assert fast == entry and fast.key is None  # no tile figures are fitted to a launch
        assert entry.entry() == text
    for bad, why in [
        ("fp32 2x2896x72 vec 23x128 1 7.36", "one-row or one-column"),
        ("fp32 1x2896x72 vec 23x1025 1 7.36", "BLOCKSxTHREADS"),
        ("fp32 1x2896x72 vec - 1 7.36", "BLOCKSxTHREADS"),
    ]:
        with pytest.raises(ValueError, match=why):
            parse_entry(bad)
        with pytest.raises(ValueError, match=why):
            _ = ChoiceMap.from_entries([bad]).entries


def test_row_entries_leave_the_small_side_map_as_it_was() -> None:
    products = ["fp32 2x100x64 simt 32x128 1 3.00", "fp32 16x1000x1024 simt 32x128 4 9.00"]
    rows = ["fp32 1x100x64 vec 4x64 1 2.00", "fp32 1x5000x3 vec 157x64 1 1.50", "fp32 300x1x64 vec 38x128 1 1.80"]
    alone, both = ChoiceMap.from_entries(products), ChoiceMap.from_entries(products + rows)
    assert both.domain == alone.domain == (2, 1024) and both.small_side == alone.small_side == 16
    for q in [(2, 100, 64), (3, 500, 100), (16, 1000, 2000)]:
        assert both.nearest("fp32", *q) == alone.nearest("fp32", *q)
    assert alone.nearest_vec("fp32", 1, 100, 64) is None and both.nearest_vec("bf16", 1, 100, 64) is None
    # tf32 products read the fp32 planes (the same kernels at every swept shape)
    assert both.nearest_vec("tf32", 1, 100, 64) == both.nearest_vec("fp32", 1, 100, 64) is not None
    assert both.nearest_vec("fp32", 1, 100, 64).n == 100 and both.nearest_vec("fp32", 320, 1, 64).m == 300
    assert both.nearest_vec("fp32", 2, 100, 64) is None  # neither plane
    assert both.vec_floor("fp32") == both.vec_floor("tf32") == pytest.approx(1.5e-6) and both.vec_floor("bf16") == 0.0


def test_a_depth_that_is_a_power_of_two_is_compared_with_its_own_kind() -> None:
    # row2: 1 x 1024 x 64 ran gemvx in 2.1 us, 1 x 1024 x 81 gemv2N in 8.3 us; a depth of 70 is
    # nearer 64 in its logarithm but runs gemv2N (1 x 2830 x 70 measured 14.4 us, ops-wide114)
    s = _sweep()
    assert "gemvx" in s[("fp32", 1024, 64)][0]["name"] and "gemv2N" in s[("fp32", 1024, 81)][0]["name"]
    cmap = ChoiceMap.from_entries(["fp32 1x1024x64 vec 32x64 1 2.11", "fp32 1x1024x81 vec 8x128 1 8.30"])
    assert cmap.nearest_vec("fp32", 1, 1100, 70).k == 81
    assert cmap.nearest_vec("fp32", 1, 1100, 128).k == 64  # a power of two takes the power of two
    # below the measured plane's least side or depth, no answer
    assert cmap.nearest_vec("fp32", 1, 1100, 63) is None and cmap.nearest_vec("fp32", 1, 1000, 70) is None
    # past the largest side, the largest; past twice the largest depth, no answer
    assert cmap.nearest_vec("fp32", 1, 50000, 100).k == 81 and cmap.nearest_vec("fp32", 1, 1100, 163) is None


def test_the_row_kernel_by_hand() -> None:
    """1 x 2830 x 70 fp32 (ops-wide114's one case outside [0.5, 2] before the row map): the nearest
    measured shape is 1 x 2896 x 72 (gemv2N, 23 blocks of 128 threads, 7.361 us under the
    profiler). Its walk beyond the fixed part (the least any fp32 row kernel of the sweep took) is
    kept per block-wave and scaled by depth: 22 blocks (23 x 2830 / 2896 = 22.5, rounded), one wave
    of 132 SMs as there, 70 deep against 72; queued, its fixed cost is a graph node's."""
    s = _sweep()
    ks = s[("fp32", 2896, 72)]
    assert ks[0]["duration_s"] == pytest.approx(7.361e-6, abs=1e-9)
    least = _least()
    hw = load_hardware("h100")
    c = card(hw)
    walk = (kept(7.361e-6) - least) * (1 * 70) / (1 * 72)
    stream = ((70 * 2830 + 70) * 4 + 2830 * 4) / c.dram_bw
    assert walk > stream
    r = analyze("gemm", hw, m=1, n=2830, k=70, dtype="fp32")
    (kernel,) = r.expected_kernels
    assert kernel.grid == 22 and "1x2896x72" in kernel.reason
    assert kernel.seconds == pytest.approx(c.graph_floor + walk, rel=1e-6)


def test_a_dot_product_by_hand() -> None:
    """tf32 1 x 1 x 778 (ops-wide116's one case outside [0.5, 2], at 4.04 on the gemv2T stream the
    op file declared): its nearest measured shape is the fp32 plane's 1 x 1 x 808 (tf32 runs the
    same kernels; 778 is no power of two; 724 and 813 are farther), where cuBLAS ran gemvx on 202
    slices of k (202 blocks of 128 threads, 2.176 us) and then splitKreduce. Its walk is scaled by depth (778 / 808; the blocks, one per
    slice, kept: one side), and the 202 partials are summed by the reduction (_reduce_walk)."""
    ks = _records()[("fp32", 1, 1, 808)]
    same = [(k["name"], k["grid"], k["block"]) for k in _records()[("tf32", 1, 1, 808)]]
    assert [(k["name"], k["grid"], k["block"]) for k in ks] == same
    assert ks[0]["grid"] == [1, 1, 202] and ks[0]["duration_s"] == pytest.approx(2.176e-6, abs=1e-9)
    hw = load_hardware("h100")
    c = card(hw)
    r = analyze("gemm", hw, m=1, n=1, k=778, dtype="tf32")
    first, reduce = r.expected_kernels
    assert first.grid == 202 and "1x1x808" in first.reason
    assert first.seconds == pytest.approx(c.graph_floor + (kept(2.176e-6) - _least()) * 778 / 808, rel=1e-6)
    assert "splitKreduce" in reduce.reason and "202" in reduce.reason
    # the gemv op's dot product, torch.mv of one row, is the same product
    g = analyze("gemv", hw, m=1, n=778, dtype="tf32")
    assert [k.seconds for k in g.expected_kernels] == pytest.approx([k.seconds for k in r.expected_kernels])


def test_without_a_column_plane_the_op_files_stream_kernels_stand() -> None:
    """A card whose map has no column plane (a calibration of an earlier probe) models one-column
    4-byte products with the op files' gemv kernels (gemv2T, or dot_kernel and reduce_1block)."""
    hw = load_hardware("h100")
    bare = without_column_plane()
    assert not bare.expected.gemm_choice_map.column_plane and hw.expected.gemm_choice_map.column_plane
    names = [k.name for k in analyze("gemm", bare, m=40, n=1, k=4000, dtype="fp32").expected_kernels]
    assert names == ["dot_kernel", "reduce_1block"]
    names = [k.name for k in analyze("gemv", bare, m=4096, n=2048, dtype="fp32").expected_kernels]
    assert names == ["gemv2T"]
    assert [k.name for k in analyze("gemv", hw, m=4096, n=2048, dtype="fp32").expected_kernels] == ["gemv"]


def test_sixteen_bit_products_and_a_depth_of_one_keep_their_paths() -> None:
    hw = load_hardware("h100")
    for dtype in ("bf16", "fp16"):
        r = analyze("gemm", hw, m=1, n=2830, k=70, dtype=dtype)
        assert "GEMV kernel" not in r.expected_kernels[0].reason
    # a depth of 1 with many columns is outside the row plane's GEMV kernels (a SIMT GEMM ran there)
    r = analyze("gemm", hw, m=1, n=2830, k=1, dtype="fp32")
    assert "GEMV kernel" not in r.expected_kernels[0].reason


@pytest.mark.parametrize("source", ["ops-row-rand2.json", "ops-row-rand3.json", "ops-col-rand2.json"])
def test_vector_products_against_their_committed_measurements(source: str) -> None:
    """The development plans' 60 one-row (row-rand2, row-rand3) or one-column (col-rand2)
    fp32/tf32 products each (committed measurements, one H100): at least 85% within [0.8, 1.25]
    of the expected time, none outside [0.5, 2], the median within [0.9, 1.1] (with both planes:
    53, 51 and 58 of 60 within, medians 0.964, 0.984 and 0.972; before the planes, on the tiled
    GEMM model and the op file's gemv kernels, 32, 36 and 47, medians 0.825, 0.840 and 1.134, two
    cases outside)."""
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


def test_a_bad_entry_after_many_dot_products_is_refused_at_once() -> None:
    """A side of 1 reads one way only in the map's one-pass check: entries 1x1xK (dot products)
    followed by a malformed one (or one in another form, parsed one by one) end in a one-line
    refusal, not in a backtrack through every 1x1 entry two ways (a review found 22 of them took
    6 s)."""
    import time

    from roofcalc.expected.choice import check_block

    dots = "".join(f"fp32 1x1x{k} vec 1x128 1 2.00\n" for k in range(1, 300))
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="kernel_us"):
        check_block(dots + "fp32 16384x1x16384 vec 16384x128 8 356.55x\n")
    assert check_block(dots + "fp32  16384x1x16384 vec 16384x128 8 356.55\n").count("\n") == 300
    assert time.perf_counter() - t0 < 2.0


def test_a_transferred_map_keeps_its_vector_planes_to_itself() -> None:
    """The H200 borrows the H100's map as transferred figures: its small-side choices transfer (per-SM
    rates), the vector planes' times do not (they hold the H100's memory), so H200 one-column and
    one-row 4-byte products keep the op files' gemv kernels and the tiled GEMM."""
    h200 = load_hardware("h200")
    assert h200.expected.gemm_choice_map.kind == "transferred" and not h200.expected.gemm_choice_map.column_plane
    assert [k.name for k in analyze("gemv", h200, m=16384, n=16384, dtype="fp32").expected_kernels] == ["gemv2T"]
    assert "GEMV kernel" not in analyze("gemm", h200, m=1, n=2830, k=70, dtype="fp32").expected_kernels[0].reason
    h100 = load_hardware("h100")
    assert analyze("gemv", h100, m=16384, n=16384, dtype="fp32").expected_kernels[0].name == "gemv"

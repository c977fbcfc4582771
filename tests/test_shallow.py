"""Products of a large output and a shallow k (both sides above 64, k of 1-32), read off the
choice map's shallow plane (roofcalc/expected/choice.py shallow_shapes; gemm.py _gemm_shallow).
Expected values come from the committed sweep validation/expected/h100/kernels/shallow1 (each
record's kernels and durations, read in the test), hand derivations written here, and the
committed measurements of the development plan flat-rand2."""

from __future__ import annotations

import json
import math
import statistics
from pathlib import Path

import pytest

from roofcalc import analyze
from roofcalc.expected.card import card
from roofcalc.expected.choice import (
    SHALLOW_COLS_ALIGNED,
    SHALLOW_SIDES,
    ChoiceMap,
    aligned16,
    in_shallow_plane,
    parse_entry,
    shallow_shapes,
)
from roofcalc.hardware import load_hardware

from .conftest import kept, sweep_kernels

ROOT = Path(__file__).resolve().parent.parent
H100 = ROOT / "validation" / "expected" / "h100"
SWEEPS = (
    H100 / "kernels" / "shallow1" / "shallow-sweep.json.gz",
    H100 / "kernels" / "shallow2" / "shallow-aligned.json.gz",
    H100 / "kernels" / "shallow3" / "shallow-aligned-rest.json.gz",
)


def _records() -> dict[tuple[str, int, int, int], list[dict]]:
    """(dtype, m, n, k): the kernels the sweeps profiled."""
    return sweep_kernels(*SWEEPS)


def _least(dtype: str) -> float:
    """The least time any first kernel of the plane took in this dtype (its fixed part)."""
    return kept(min(v[0]["duration_s"] for key, v in _records().items() if key[0] == dtype))


def test_the_sweep_is_the_plane_the_probe_asks_for() -> None:
    assert {key[0] for key in _records()} == {"fp32", "tf32", "bf16", "fp16"}
    for dtype in ("fp32", "tf32", "bf16", "fp16"):
        shapes = shallow_shapes(dtype)
        assert len(set(shapes)) == len(shapes)
        assert set(shapes) == {(m, n, k) for dt, m, n, k in _records() if dt == dtype}
        assert all(in_shallow_plane(*s) for s in shapes)


def test_each_alignment_class_has_columns_of_its_own() -> None:
    """tf32 5053 x 390 x 4 (ops-wide132's 0.38 with the first plane): 390 columns of 4 bytes are
    8-byte aligned; the plane's columns of that class (n of 2 mod 4) put its nearest shape 4 deep,
    at 402 columns, not 6 deep at 400 (another kernel: split k and a reduction)."""
    assert aligned16("tf32", 390, 4) == 8 and aligned16("tf32", 402, 4) == 8 and aligned16("tf32", 400, 4) == 16
    cmap = card(load_hardware("h100")).choice_map  # parsed once a process
    assert cmap is not None
    near = cmap.nearest_shallow("tf32", 5053, 390, 4)
    assert near is not None and (near.n, near.k) == (402, 4)
    for dtype in ("tf32", "bf16", "fp16"):
        cols = SHALLOW_COLS_ALIGNED[dtype]
        classes = {aligned16(dtype, n, 16) for n in cols}
        assert classes == ({8} if dtype == "tf32" else {4, 8})
        assert all(any(abs(math.log(n / s)) < 0.05 for n in cols) for s in SHALLOW_SIDES)


def test_a_shallow_kernel_by_hand() -> None:
    """bf16 1104 x 1152 x 7 (ops-wide131's 2.07, one kernel in the tile search): its nearest
    measured shape, of its alignment class (a 7-deep row of bf16 is 14 bytes: 2-byte aligned, the
    class of every 7-deep shape), is 1001 x 1004 x 7, where cuBLAS ran cutlass_75's 128 x 128
    kernel (64 blocks, 5.12 us) and then a splitKreduce with k uncut (its reduction epilogue: the
    entry's "1r"). 9 x 9 = 81 tiles of 128 x 128 cover 1104 x 1152; with the 64 there, under one
    wave of 132 SMs, the time beyond the least any bf16 kernel of the plane took is kept as it was;
    queued, the fixed cost is a graph node's. The sweep's times hold the write-back of the L2's
    dirty lines: the op adds none."""
    first, red = _records()[("bf16", 1001, 1004, 7)]
    assert first["grid"] == [64, 1, 1] and first["duration_s"] == pytest.approx(5.12e-6, abs=1e-9)
    assert "splitKreduce" in red["name"]
    hw = load_hardware("h100")
    c = card(hw)
    r = analyze("gemm", hw, m=1104, n=1152, k=7, dtype="bf16")
    gemm, reduce = r.expected_kernels
    assert gemm.grid == 81 and "1001x1004x7" in gemm.reason
    assert gemm.seconds == pytest.approx(c.graph_floor + kept(5.12e-6) - _least("bf16"), rel=1e-6)
    assert "splitKreduce" in reduce.reason
    assert "L2 write-back" not in [t.name for t in r.expected_terms]
    # a card whose map is transferred (the H200's) does not read the plane: its memory is another's
    h200 = analyze("gemm", "h200", m=1104, n=1152, k=7, dtype="bf16")
    assert "1001x1004x7" not in h200.expected_kernels[0].reason
    assert "L2 write-back" in [t.name for t in h200.expected_terms]


def test_blocks_past_a_wave_scale_the_time() -> None:
    """fp32 16181 x 651 x 1 (flat-rand2): nearest 16000 x 640 x 1, cuBLAS's SIMT kernel on 32 x 128
    tiles (19.073 us). 506 x 6 = 3,036 tiles against 500 x 5 = 2,500, both past one wave: the time
    beyond the fixed part grows with the blocks."""
    (first,) = _records()[("fp32", 16000, 640, 1)]
    assert "simt_sgemm_128x32" in first["name"] and first["duration_s"] == pytest.approx(19.073e-6, abs=1e-9)
    hw = load_hardware("h100")
    c = card(hw)
    (gemm,) = analyze("gemm", hw, m=16181, n=651, k=1, dtype="fp32").expected_kernels
    assert gemm.grid == 3036
    assert gemm.seconds == pytest.approx(c.graph_floor + (kept(19.073e-6) - _least("fp32")) * 3036 / 2500, rel=1e-6)


def test_a_reduction_epilogue_is_kept_in_an_entry() -> None:
    """fp32 160 x 100 x 4: cuBLAS ran its SIMT kernel on 3 blocks (k not cut: the grid's z is 1)
    and then a splitKreduce; the map keeps that as "1r", and the model adds the reduction."""
    first, red = _records()[("fp32", 160, 100, 4)]
    assert first["grid"] == [3, 1, 1] and "splitKreduce" in red["name"]
    cmap = load_hardware("h100").expected.gemm_choice_map
    assert cmap is not None
    (entry,) = [e for e in cmap.entries if e.startswith("fp32 160x100x4 ")]
    assert entry == "fp32 160x100x4 simt 64x128 1r 3.23"
    choice = parse_entry(entry)
    assert choice.reduced and choice.splits == 1 and choice.entry() == entry
    assert ChoiceMap.from_entries([entry]).entries[0] == choice  # the one-pass reading agrees
    names = [k.name for k in analyze("gemm", "h100", m=160, n=100, k=4, dtype="fp32").expected_kernels]
    assert names == ["gemm", "gemm split-K reduce"]
    with pytest.raises(ValueError, match="1r: one slice and a reduction"):
        parse_entry("fp32 160x100x4 simt 64x128 2r 3.23")


def test_the_plane_speaks_only_inside_its_domain() -> None:
    cmap = card(load_hardware("h100")).choice_map  # parsed once a process
    assert cmap is not None
    assert cmap.nearest_shallow("bf16", 1104, 1152, 7) is not None
    assert cmap.nearest_shallow("bf16", 1104, 1152, 33) is None  # deeper than the plane
    assert cmap.nearest_shallow("bf16", 64, 1152, 7) is None  # the small-side map's
    assert cmap.nearest_shallow("bf16", 40000, 1152, 7) is None  # past twice the largest side
    # the small-side map never answers from the plane's entries
    near = cmap.nearest("bf16", 64, 1152, 7)
    assert near is not None and min(near.m, near.n) <= 64


def test_flat_rand2_against_its_measurements() -> None:
    """The development plan flat-rand2 (80 GEMMs of large outputs, k of 1-32, every dtype; one
    H100): 71 of 80 within [0.8, 1.25] with the plane, 61 before it (the tile search); one outside
    [0.5, 2], three before: tf32 2360 x 65 x 13 at 2.31 (2.01 before), whose side of 65 is far
    below the plane's least, 100."""
    hw = load_hardware("h100")
    ratios = []
    for case in json.loads((H100 / "ops-flat-rand2.json").read_text())["cases"]:
        p = case["params"]
        r = analyze("gemm", hw, m=p["m"], n=p["n"], k=p["k"], dtype=case["dtype"])
        assert r.expected_s is not None
        ratios.append(case["median_s"] / r.expected_s)
    assert len(ratios) == 80
    assert sum(0.8 <= x <= 1.25 for x in ratios) >= 71
    assert sum(not 0.5 <= x <= 2 for x in ratios) <= 1
    assert 0.9 <= statistics.median(ratios) <= 1.1


def test_the_epilogue_is_read_off_the_plane_only() -> None:
    """The small-side map's entries carry "1r" too (fp32 32 x 2 x 32: cuBLAS's SIMT kernel, then a
    splitKreduce over one slice), but its tile figures were fitted beside such epilogues: the
    model keeps one kernel there."""
    cmap = load_hardware("h100").expected.gemm_choice_map
    assert cmap is not None
    (entry,) = [e for e in cmap.entries if e.startswith("fp32 32x2x32 ")]
    assert parse_entry(entry).reduced
    names = [k.name for k in analyze("gemm", "h100", m=32, n=2, k=32, dtype="fp32").expected_kernels]
    assert names == ["gemm"]


def test_a_map_of_plane_entries_only_answers_inside_the_plane() -> None:
    """A calibration whose map holds only a plane entry (no small-side products: its small side is
    0) does not answer for products with a side of 64 or less, nor one-row products."""
    from roofcalc.hardware import Hardware

    hw = load_hardware("h100")
    assert hw.expected.gemm_choice_map is not None
    only = hw.expected.gemm_choice_map.model_copy(update={"value": "bf16 1000x1000x8 nvjet 112x128 1 3.94\n"})
    bare: Hardware = hw.model_copy(update={"expected": hw.expected.model_copy(update={"gemm_choice_map": only})})
    assert "1000x1000x8" in analyze("gemm", bare, m=1504, n=1504, k=8, dtype="bf16").expected_kernels[0].reason
    for m in (1, 2, 8, 64):
        r = analyze("gemm", bare, m=m, n=1504, k=8, dtype="bf16")
        assert "1000x1000x8" not in r.expected_kernels[0].reason, m


def test_a_sweep_record_with_a_malformed_last_kernel_keeps_the_map() -> None:
    """One record whose last kernel is not a profiler record loses its reduction only."""
    from roofcalc.expected.choice import reduce_kernel
    from roofcalc.probe.report import choice_figures

    good = {"dtype": "fp32", "m": 160, "n": 100, "k": 4, "kernels": list(_records()[("fp32", 160, 100, 4)])}
    bad = dict(good, m=200, kernels=[good["kernels"][0], "junk"])
    assert reduce_kernel(bad["kernels"]) is None
    notes: list[str] = []
    figs = choice_figures({"torch": {"gemm_choices": [good, bad]}}, 132, notes)
    assert not notes
    assert figs["gemm_choice_map"]["value"].splitlines() == [
        "fp32 160x100x4 simt 64x128 1r 3.23",
        "fp32 200x100x4 simt 64x128 1 3.23",
    ]


@pytest.mark.parametrize(
    ("m", "n", "k", "dtype"),
    [(16000, 16000, 1, "fp32"), (10000, 10000, 8, "bf16"), (10000, 10000, 64, "bf16"), (12, 3000, 900, "fp32")],
)
def test_beta_reads_c_and_the_expected_time_stays_above_the_bound(m: int, n: int, k: int, dtype: str) -> None:
    """With --beta a GEMM reads C as well (ops/gemm.yaml c_read): the bound counts that read, and
    so does every GEMM path's stream (the shallow plane, the tile search, the small-side map); the
    expected time is never below the bound (16000^2 x 1 fp32 came out at 0.62 of it)."""
    hw = load_hardware("h100")
    plain = analyze("gemm", hw, m=m, n=n, k=k, dtype=dtype)
    beta = analyze("gemm", hw, m=m, n=n, k=k, dtype=dtype, beta=True)
    assert beta.expected_s is not None and plain.expected_s is not None
    assert beta.expected_s >= beta.predicted_s
    assert beta.expected_s >= plain.expected_s


def test_c_read_by_hand_on_the_plane() -> None:
    """fp32 16000 x 16000 x 1 with beta streams A, B, C and the output once each (4 bytes an element):
    longer than the plane's measured time scaled, so the kernel is the stream after its fixed cost."""
    hw = load_hardware("h100")
    c = card(hw)
    (gemm,) = analyze("gemm", hw, m=16000, n=16000, k=1, dtype="fp32", beta=True).expected_kernels
    io = (16000 + 16000) * 4 + 16000 * 16000 * 4 * 2
    assert gemm.seconds == pytest.approx(c.graph_floor + io / c.dram_bw, rel=1e-9)
    assert "streaming" in gemm.reason


@pytest.mark.parametrize(
    ("entry", "match"),
    [
        ("fp32 160x100x4 simt 64x128 1r 3_2", "plain digits"),
        ("fp32 160x100x4 simt 64x128 1r \u0663.5", "plain digits"),
        ("fp32 160x100x4 simt 64x128 1r 5e-324", "plain digits"),
        ("fp32 160x100x4 simt 64x128 1r 0.0000001", "at least 0.000001"),
        ("fp32 1x2x2 vec 1x64 1r 1.70", "a vec entry's partial sums are a whole number"),
    ],
)
def test_hostile_entry_times_and_epilogues_are_refused(entry: str, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        parse_entry(entry)

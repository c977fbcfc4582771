"""Products where the choice map's nearest measured shape ran a kernel whose blocks walk k: cuBLAS's
gemmSN in TF32 and 16 bits (roofcalc/expected/gemm.py _gemm_sn_walk) and FP32's sgemm_largek
(_gemm_largek). Expected values come from the committed sweep
validation/expected/h100/kernels/choice8 (each record's kernel, grid and duration, read in the
test), hand derivations written here, and committed op measurements."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from roofcalc import analyze
from roofcalc.expected.card import card
from roofcalc.expected.choice import ChoiceMap, classify, parse_entry
from roofcalc.expected.gemm import LARGEK_TILE
from roofcalc.hardware import load_hardware

from .conftest import VerifiedFor, kept, sweep_kernels

ROOT = Path(__file__).resolve().parent.parent
H100 = ROOT / "validation" / "expected" / "h100"
SWEEP = H100 / "kernels" / "choice8" / "choice-sweep.json.gz"


def _records() -> dict[tuple[str, int, int, int], list[dict]]:
    """(dtype, m, n, k): the kernels the registry map's sweep profiled."""
    return sweep_kernels(SWEEP)


def _least(dtype: str) -> float:
    """The least time a product of this dtype took in the registry map's sweeps (choice8 and its
    refinement), as the map keeps it, gemmSN and largek apart (the kernels read as walks): a
    kernel's fixed part there."""
    times = []
    for key, v in {**_records(), **_refined()}.items():
        if key[0] == dtype and v and min(key[1], key[2]) > 1:
            if any(name in k["name"] for k in v for name in ("gemmSN", "sgemm_largek")):
                continue
            times.append(kept(v[0]["duration_s"]))
    return min(times)


def _refined() -> dict[tuple[str, int, int, int], list[dict]]:
    return sweep_kernels(H100 / "kernels" / "refine1" / "refine-sweep.json.gz")


def _measured(source: str, label: str) -> float:
    cases = json.loads((H100 / source).read_text())["cases"]
    (case,) = [c for c in cases if c["label"] == label]
    return float(case["median_s"])


# (dtype, m, n, k): the kernels (grid, profiled seconds) the tests below read, as the sweep has them
READ = {
    ("bf16", 5, 2, 2944): [([1, 1, 1], 36.544e-6)],
    ("bf16", 4, 10000, 8193): [([157, 1, 1], 159.076e-6)],
    ("fp32", 2, 4000, 3000): [([63, 1, 1], 1.088e-6), ([63, 1, 7], 46.689e-6)],
    ("fp32", 8, 10000, 9000): [([157, 1, 1], 1.152e-6), ([157, 1, 8], 158.084e-6)],
}


def test_the_sweep_as_these_tests_read_it(verified: VerifiedFor) -> None:
    """The records the tests below take their numbers from (READ), the map's fixed part of a
    kernel (the least any product of a dtype took), and the launches the model counts: every
    gemmSN of the sweep (every dtype) had 64 columns a block and 1, 2 or 4 rows of blocks for up
    to 5, 14 or 16 rows; every sgemm_largek ceil(m / 8) x ceil(n / 64) blocks in x and y."""

    def check() -> None:
        records = _records()
        for key, kernels in READ.items():
            assert [
                (k["grid"], pytest.approx(t, abs=1e-9)) for k, (_, t) in zip(records[key], kernels, strict=True)
            ] == [(g, pytest.approx(t, abs=1e-9)) for g, t in kernels]
        cmap = card(load_hardware("h100")).choice_map
        assert cmap is not None
        for dtype in ("fp32", "tf32", "bf16", "fp16"):
            assert cmap.kernel_floor(dtype) == pytest.approx(_least(dtype), abs=1e-12)
        seen, largek = set(), 0
        for (dtype, m, n, _), kernels in records.items():
            if kernels and "gemmSN" in kernels[0]["name"]:
                seen.add(dtype)
                rows = 1 if m <= 5 else 2 if m <= 14 else 4
                gx, gy, gz = kernels[0]["grid"]
                assert gx * gy * gz == math.ceil(n / 64) * rows, (dtype, m, n)
            if any("sgemm_largek" in k["name"] for k in kernels):
                gx, gy, _ = kernels[-1]["grid"]
                assert gx * gy == math.ceil(m / LARGEK_TILE[0]) * math.ceil(n / LARGEK_TILE[1])
                largek += 1
        assert seen >= {"fp32", "bf16", "fp16"} and largek == 157
        scal, main = records[("fp32", 2, 4000, 3000)]
        assert scal["name"].startswith("void scal_kernel<") and "sgemm_largek" in main["name"]
        assert classify([scal, main], 2, 4000) == ("largek", None, 7)
        assert "gemmSN" in records[("bf16", 5, 2, 2944)][0]["name"]

    refine = H100 / "kernels" / "refine1" / "refine-sweep.json.gz"
    verified.once("walk-records", [SWEEP, refine, ROOT / "hardware" / "h100.yaml"], check)


def test_a_gemmsn_walk_by_hand() -> None:
    """bf16 5 x 2 x 2680 (ops-wide49 and tall1: 3.73 and 3.78 of the tile search's time): its
    nearest measured shape, 5 x 2 x 2944 of its alignment class, ran gemmSN on one block for
    36.544 us. Every block walks the whole k: beyond a kernel's fixed part (the least any other
    bf16 kernel of the map took), the walk is scaled by 2680 / 2944; queued, the fixed part is a
    graph node's. Its grid: ceil(2 / 64) blocks by one row of them (5 rows)."""
    hw = load_hardware("h100")
    c = card(hw)
    assert c.choice_map is not None
    r = analyze("gemm", hw, m=5, n=2, k=2680, dtype="bf16")
    (gemm,) = r.expected_kernels
    assert "gemmSN" in gemm.reason and "5x2x2944" in gemm.reason and gemm.grid == 1
    walk = (kept(36.544e-6) - c.choice_map.kernel_floor("bf16")) * 2680 / 2944
    assert gemm.seconds == pytest.approx(c.graph_floor + walk, rel=1e-6)
    # the committed measurement: within [0.8, 1.25] of the expected time
    for source in ("ops-wide49.json", "ops-tall1.json"):
        label = ("wide-" if "wide" in source else "") + "gemm-bf16-5x2x2680"
        assert 0.8 <= _measured(source, label) / r.expected_s <= 1.25


def test_wide_gemmsn_streams_or_walks() -> None:
    """bf16 4 x 8819 x 7976 (ops-wide79, 0.50 of the tile search's time): nearest 4 x 10000 x 8193,
    gemmSN on ceil(10000 / 64) = 157 blocks for 159.076 us; here ceil(8819 / 64) = 138 blocks, the
    walk scaled by 7976 / 8193 (its stream, 141 MB of B, takes less)."""
    hw = load_hardware("h100")
    c = card(hw)
    assert c.choice_map is not None
    r = analyze("gemm", hw, m=4, n=8819, k=7976, dtype="bf16")
    (gemm,) = r.expected_kernels
    assert gemm.grid == 138 and gemm.bound == "latency"
    walk = (kept(159.076e-6) - c.choice_map.kernel_floor("bf16")) * 7976 / 8193
    assert gemm.seconds == pytest.approx(c.graph_floor + walk, rel=1e-6)
    assert 0.8 <= _measured("ops-wide79.json", "wide-gemm-bf16-4x8819x7976") / r.expected_s <= 1.25


def test_fp32_keeps_its_rule_and_other_cards_their_search() -> None:
    """FP32's gemmSN is the rule read off the denser fp32 sweep (cublas_runs_gemm_sn): 2 x 1110 x
    840 lies past its depth limit there, so no gemmSN though the map's nearest shape ran one. A
    card whose map is transferred (the H200's) keeps the tile search. A walk is never measured from
    itself: a map of one gemmSN entry has no fixed part to take off, and reads the entry's whole
    time as the walk; a largek entry of another dtype than fp32 is not read as one."""
    cmap = card(load_hardware("h100")).choice_map
    assert cmap is not None
    near = cmap.nearest("fp32", 2, 1110, 840)
    assert near is not None and near.family == "sn"
    fp32 = analyze("gemm", "h100", m=2, n=1110, k=840, dtype="fp32").expected_kernels[0]
    assert "gemmSN" not in fp32.reason
    h200 = analyze("gemm", "h200", m=5, n=2, k=2680, dtype="bf16")
    assert "gemmSN" not in h200.expected_kernels[0].reason
    assert ChoiceMap.from_entries(["bf16 5x40x16 tensorop 32x32 1 2.10"]).kernel_floor("fp16") == 0.0
    assert ChoiceMap.from_entries(["bf16 5x2x2944 sn - 1 36.54"]).kernel_floor("bf16") == 0.0


def test_largek_is_its_own_family() -> None:
    """fp32 2 x 4000 x 3000: cuBLAS zeroed C with a scal_kernel (1.088 us), then ran sgemm_largek
    on 63 blocks in 7 slices of k (46.689 us), adding into C (READ): the map's entry is that
    family, its slices and both kernels' time, and reads back the same both ways."""
    cmap = load_hardware("h100").expected.gemm_choice_map
    assert cmap is not None
    (entry,) = [e for e in cmap.entries if e.startswith("fp32 2x4000x3000 ")]
    assert entry == f"fp32 2x4000x3000 largek - 7 {round((1.088e-6 + 46.689e-6) * 1e6, 2):.2f}"
    assert ChoiceMap.from_entries([entry]).entries[0] == parse_entry(entry)
    with pytest.raises(ValueError, match="has no tile"):
        parse_entry("fp32 2x4000x3000 largek 8x64 7 47.78")


def test_a_largek_walk_by_hand() -> None:
    """fp32 7 x 9123 x 10384 (ops-wide77: 0.62 of the tile search's time): nearest 8 x 10000 x 9000,
    a scal_kernel and sgemm_largek on 157 x 8 blocks. Here 143 tiles of 8 x 64 in 8 slices, 1,144
    blocks against 1,256, both past a wave of 132 SMs: the measured time beyond a kernel's fixed
    part scaled by k and by the blocks."""
    hw = load_hardware("h100")
    c = card(hw)
    assert c.choice_map is not None
    r = analyze("gemm", hw, m=7, n=9123, k=10384, dtype="fp32")
    (gemm,) = r.expected_kernels
    assert "sgemm_largek" in gemm.reason and gemm.grid == 143 * 8
    near = kept(1.152e-6 + 158.084e-6)  # READ
    walk = (near - c.choice_map.kernel_floor("fp32")) * 10384 / 9000 * (143 * 8) / (157 * 8)
    assert gemm.seconds == pytest.approx(c.graph_floor + walk, rel=1e-6)
    assert 0.8 <= _measured("ops-wide77.json", "wide-gemm-fp32-7x9123x10384") / r.expected_s <= 1.25

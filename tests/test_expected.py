"""The expected-time mechanisms, each checked against a hand derivation written here from the
hardware file's figures, or against what cuBLAS/FA-2 were measured to launch (the committed
kernel shapes under validation/expected/)."""

from __future__ import annotations

import csv
import importlib.util
import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest

import roofcalc
from roofcalc.dtypes import ELEMENT_BYTES
from roofcalc.expected import GEMM_TILES, HOST_PACED_NOTE, HOST_PACED_TP_NOTE
from roofcalc.hardware import GEMM_PATHS, load_hardware

from .conftest import load_script, without_column_plane

KERNELS = Path(__file__).resolve().parent.parent / "validation" / "expected"
BENCH = Path(__file__).resolve().parent.parent / "validation" / "bench"


def fig(hw: str, name: str) -> float:
    f = getattr(load_hardware(hw).expected, name)
    assert f is not None, f"{hw} lacks {name}"
    return float(f.value)


def extra(hw: str, path: str) -> float:
    """What a pre-Hopper GEMM kernel on ``path`` adds to gemm_kernel_floor_s (hardware file)."""
    return float(load_hardware(hw).expected.gemm_kernel_floor_extra_s[path].value)


def without_choice_map(hw: str) -> Any:
    """The card's registry figures less its measured GEMM choice map: the tile search for every
    product, as on a card the probe has not swept."""
    h = load_hardware(hw)
    return h.model_copy(update={"expected": h.expected.model_copy(update={"gemm_choice_map": None})})


def kernel(result: object, name: str) -> object:
    found = [k for k in result.expected_kernels if k.name == name]  # type: ignore[attr-defined]
    assert len(found) == 1, [k.name for k in result.expected_kernels]  # type: ignore[attr-defined]
    return found[0]


def test_fa2_combine_walks_the_splits_one_l2_round_trip_each() -> None:
    # decode attention, 1 x 32 heads over 8 KV heads, 4096 keys: FA-2 splits the keys 32 ways
    # on an H100 (measured grid [1, 32, 8] in validation/expected/h100/kernel-shapes.json)
    shapes = json.loads((KERNELS / "h100" / "kernel-shapes.json").read_text())
    case = next(c for c in shapes["cases"] if c["label"] == "attn-decode-bf16-b1h32kv8-ctx4096-d128")
    assert case["kernels"][0]["grid"] == [1, 32, 8]
    r = roofcalc.analyze("attention", "h100", batch=1, heads=32, kv_heads=8, seq=1, kv_seq=4096, head_dim=128)
    assert "32 key splits" in kernel(r, "flash_attention").reason  # type: ignore[attr-defined]
    # 33 dependent L2 round trips (the log-sum-exps, then one per split), then the store; and
    # each warp, alone on its scheduler, issues 570 + 12.2 x 32 instructions (Nsight Compute:
    # 961 per warp at 32 splits, validation/expected/h100/kernels/flash-ncu.csv), one per 4
    # clocks at 1.98 GHz
    ncu = (KERNELS / "h100" / "kernels" / "flash-ncu.csv").read_text()
    assert "flash_fwd_splitkv_combine_kernel" in ncu
    issue = (570 + 12.2 * 32) * 4 / 1.98e9
    want = 33 * fig("h100", "l2_latency_s") + fig("h100", "dram_latency_s") + issue
    assert kernel(r, "flash_attention combine").seconds == pytest.approx(want, rel=1e-9)  # type: ignore[attr-defined]


def test_unsplit_decode_pads_the_query_group_to_128_row_blocks() -> None:
    # batch 32 x 8 KV heads = 256 blocks fill the H100's 2 x 132 slots: no split, and PyTorch
    # ran flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4>> (128 query rows per block;
    # validation/expected/h100/kernels/flash-ncu.csv). The 4 query heads of a KV head are
    # computed as 128 rows, twice the split kernel's 64.
    ncu = (KERNELS / "h100" / "kernels" / "flash-ncu.csv").read_text()
    assert "flash_fwd_kernel<Flash_fwd_kernel_traits<128, 128, 64, 4" in ncu
    hw = load_hardware("h100")
    r = roofcalc.analyze("attention", "h100", batch=32, heads=32, kv_heads=8, seq=1, kv_seq=8192, head_dim=128)
    k = kernel(r, "flash_attention")
    assert "split" not in k.reason  # type: ignore[attr-defined]
    # the busiest SM holds 2 blocks of 128 x 8192 scores; per score 4 x 128 FLOP at the mma.sync
    # rate per SM, then the longer of the softmax, 1 SFU result (16 per clock) and 3.5 FP32
    # operations (the FP32 peak's lanes per SM: 66.9 TFLOP/s / (2 x 132 x 1.98 GHz), about 128
    # per clock), and the shared-memory reads, 4 warps x (K + V) x 128 x 2 bytes per 128 scores
    # = 16 bytes at 128 per clock, at the sustained clock; plus the block's 1,234 instructions
    # around its tiles (2 resident: one round), 4 clocks each at 1.98 GHz
    rate_sm = hw.peak("bf16") * float(hw.expected.mma_sync_fraction["bf16"].value) / 132
    clock = fig("h100", "sustained_sm_clock_mhz") * 1e6
    lanes = hw.peak("fp32") / (2 * 132 * 1.98e9)
    t_score = 4 * 128 / rate_sm + max(1 / 16 + 3.5 / lanes, 4 * 2 * 128 * 2 / 128 / 128) / clock
    t_comp = 2 * 128 * 8192 * t_score + 1234 * 4 / 1.98e9
    # the K/V stream: 2 x 32 x 8 x 8192 x 128 x 2 bytes at the DRAM read rate
    kv = 2 * 32 * 8 * 8192 * 128 * 2
    t_mem = (kv + 2 * 32 * 32 * 128 * 2) / (hw.bandwidth * fig("h100", "dram_read_fraction"))
    # 8192 / 64 = 128 tiles per block: a block prefetches its next tile while it computes,
    # 1/(2 x 128) of the shorter part stays exposed
    want = max(t_comp, t_mem) + min(t_comp, t_mem) / 256 + 2 * fig("h100", "dram_latency_s")
    assert k.seconds == pytest.approx(want, rel=1e-6)  # type: ignore[attr-defined]


def _committed_attention_ratios(card: str, name: str) -> list[tuple[str, float]]:
    """Measured / expected for each attention op of a committed decode_split.py record."""
    doc = json.loads((KERNELS / card / "kernels" / name).read_text())
    keys = ("batch", "heads", "kv_heads", "seq", "kv_seq", "head_dim", "causal")
    out = []
    for case in doc["cases"]:
        r = roofcalc.analyze("attention", card, **{k: case["params"][k] for k in keys})
        out.append((case["label"], case["median_s"] / r.expected_s))
    return out


@pytest.mark.parametrize("card", ["h100", "h200"])
def test_decode_sweep_matches_its_committed_timings(card: str) -> None:
    # validation/bench/decode_split.py timed 52 decode steps (batch 1-8, KV 128 to 32,768) on
    # each card as ops_bench.py does (the H200's after the model was settled on the H100's):
    # each within [0.8, 1.25] of the expected time
    ratios = _committed_attention_ratios(card, "decode-split.json")
    assert len(ratios) == 52
    for label, ratio in ratios:
        assert 0.8 <= ratio <= 1.25, (label, ratio)


def test_equal_flash_blocks_left_over_go_one_each_to_the_sms_that_free_first() -> None:
    from roofcalc.expected import _busiest_sm

    # 320 equal blocks, 2 resident per SM on 132 SMs: 264 start, the other 56 go one each to
    # the first SMs to free, so the busiest SM does 3 blocks (not two full rounds of 2)
    assert _busiest_sm(None, 320, 1.0, 132, 2, 40) == 3.0
    assert _busiest_sm(None, 264, 1.0, 132, 2, 33) == 2.0
    assert _busiest_sm(None, 128, 1.0, 132, 2, 16) == 1.0
    assert _busiest_sm(None, 533, 1.0, 132, 2, 1) == 5.0  # 4 x 132 = 528, 5 left over


@pytest.mark.parametrize("head_dim", [64, 128])
def test_a_lone_flash_block_runs_its_phases_one_after_another(head_dim: int) -> None:
    # flash-rounds.json (H100): a 1,024-token prefill with 16 heads is 128 blocks, one per SM;
    # with 32 heads, 256 blocks, two per SM. Measured, the lone blocks took 0.65-0.68 of the
    # pairs' time, not the half that sharing the SM's pipes would give.
    doc = json.loads((KERNELS / "h100" / "kernels" / "flash-rounds.json").read_text())
    dur = {
        c["params"]["heads"]: c["flushed"][0]["duration_s"]
        for c in doc["cases"]
        if c["params"]["seq"] == 1024 and c["params"]["head_dim"] == head_dim
    }
    measured = dur[16] / dur[32]
    assert 0.6 < measured < 0.72
    # by hand: a pair shares the SM, 2 x 128 x 1,024 scores at the overlapped cost per score
    # (tensor + the longer of softmax and shared-memory reads); a lone block runs 128 x 1,024
    # at the summed cost (tensor + softmax + shared-memory reads)
    hw = load_hardware("h100")
    rate_sm = hw.peak("bf16") * float(hw.expected.mma_sync_fraction["bf16"].value) / 132
    clock = fig("h100", "sustained_sm_clock_mhz") * 1e6
    lanes = hw.peak("fp32") / (2 * 132 * 1.98e9)
    soft, smem = 1 / 16 + 3.5 / lanes, head_dim / 8 / 128
    shared = 4 * head_dim / rate_sm + max(soft, smem) / clock
    alone = 4 * head_dim / rate_sm + (soft + smem) / clock
    fixed = {64: 1044, 128: 1234}[head_dim] * 4 / 1.98e9
    args = {"batch": 1, "kv_heads": None, "seq": 1024, "kv_seq": 1024, "head_dim": head_dim, "causal": False}
    lone = kernel(roofcalc.analyze("attention", "h100", heads=16, **args), "flash_attention")
    pair = kernel(roofcalc.analyze("attention", "h100", heads=32, **args), "flash_attention")
    # (plus the two DRAM latencies of every FA-2 kernel; the K/V reads, mostly from L2, hide
    # under the compute but for 1/(bps x tiles) of them)
    edge = fixed + 2 * fig("h100", "dram_latency_s")
    t_lone, t_pair = 128 * 1024 * alone + edge, 2 * 128 * 1024 * shared + edge
    assert lone.seconds == pytest.approx(t_lone, rel=0.02)  # type: ignore[attr-defined]
    assert pair.seconds == pytest.approx(t_pair, rel=0.02)  # type: ignore[attr-defined]
    # and the model's ratio is the measured one within 10%
    assert lone.seconds / pair.seconds == pytest.approx(measured, rel=0.1)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("card", "cases"), [("h100", 17), ("h200", 21)])
def test_flash_rounds_match_their_committed_timings(card: str, cases: int) -> None:
    # validation/bench/decode_split.py (validation/expected/*/kernels/flash-rounds.json):
    # 1,024-token prefill at 128-512 equal blocks, decode at batch 12 and 40 (the H200's, with
    # four more prefill shapes, measured after the model was set from the H100's); each op
    # within [0.8, 1.25] of the expected time (before the busiest SM counted ceil(blocks / SMs),
    # the H100's 320- and 384-block cases were at 0.77-0.82, outside it)
    ratios = _committed_attention_ratios(card, "flash-rounds.json")
    assert len(ratios) == cases
    for label, ratio in ratios:
        assert 0.8 <= ratio <= 1.25, (label, ratio)


def test_unaligned_small_gemm_splits_k_as_cublas_does() -> None:
    # 30 x 197 x 800 bf16 (n odd: no 16-byte leading dimension): cuBLAS ran a cutlass_75 64x64
    # kernel with grid [4, 1, 12], i.e. 4 tiles x 12 k-splits, then a split-K reduction
    # (validation/expected/h200/kernels/kshapes-rand2.json)
    shapes = json.loads((KERNELS / "h200" / "kernels" / "kshapes-rand2.json").read_text())
    case = next(c for c in shapes["cases"] if c["label"] == "rand-gemm-bf16-30x197x800")
    assert "64x64" in case["kernels"][0]["name"] and case["kernels"][0]["grid"] == [4, 1, 12]
    # the registry's choice map measured that kernel's tile at the nearest shape (32 x 160 x 513,
    # cutlass's 64x64 tensor-op kernel, 9 slices there)
    mapped = kernel(roofcalc.analyze("gemm", "h200", m=30, n=197, k=800), "gemm")
    assert "tensor-op kernel on 64x64 tiles" in mapped.reason and "k in 9 slices" in mapped.reason  # type: ignore[attr-defined]
    # the tile search (a card without a measured map) finds the same tiles and cuBLAS's 12 slices
    r = roofcalc.analyze("gemm", without_choice_map("h200"), m=30, n=197, k=800)
    g = kernel(r, "gemm")
    assert g.reason.startswith("64x64 tiles: 4 x 12 k-splits")  # type: ignore[attr-defined]
    # each tile loads (64 + 64) elements per k, one element at a time, at the per-SM element
    # rate implied by the unaligned GEMM rate on 256x128 tiles
    hw = load_hardware("h200")
    rate = hw.peak("bf16") * float(hw.expected.unaligned_tensor_fraction["bf16"].value)
    per_sm_elems = rate / 132 * (256 + 128) / (2 * 256 * 128)
    tile = (64 + 64) * 67 / per_sm_elems  # ceil(800 / 12) = 67 k per slice
    steps = 3 / 2 * fig("h200", "dram_latency_s")  # ceil(67 / 32) k-steps, 2 stages
    # the 12 slices' fp32 partial tiles are written at the skinny streaming rate (m = 30 rows),
    # capped by the 48 busy SMs' own bandwidth
    bw = min(
        hw.bandwidth * fig("h200", "dram_read_fraction") * fig("h200", "skinny_gemm_bandwidth_fraction"),
        48 * fig("h200", "per_sm_bandwidth_bytes_per_s"),
    )
    partials = 30 * 197 * 4 * 12
    want = fig("h200", "gemm_kernel_floor_s") + extra("h200", "unaligned") + max(tile, steps) + partials / bw
    assert g.seconds == pytest.approx(want, rel=1e-6)  # type: ignore[attr-defined]


def test_fp32_gemm_with_few_tiles_slices_k_as_cublas_does() -> None:
    # 21 x 216 x 920 fp32: cuBLAS ran cutlass_80_simt_sgemm_64x64 with grid [4, 1, 16] (16 slices
    # of k, about 58 each), then cublasLt's splitKreduce (validation/expected/h100/kernels/
    # skinny-fp32.json). The model keeps slices of at least 64: 920 // 64 = 14 of them.
    sweep = json.loads((KERNELS / "h100" / "kernels" / "skinny-fp32.json").read_text())
    case = next(c for c in sweep["cases"] if (c["m"], c["n"], c["k"]) == (21, 216, 920))
    first, second = case["kernels"]
    assert "simt_sgemm_64x64" in first["name"] and first["grid"] == [4, 1, 16] and "splitKreduce" in second["name"]
    # the registry's choice map names that kernel: SIMT on 64x64 tiles, 14 slices at 24 x 256 x 896
    mapped = kernel(roofcalc.analyze("gemm", "h100", m=21, n=216, k=920, dtype="fp32"), "gemm")
    assert "SIMT kernel on 64x64 tiles" in mapped.reason and "k in 14 slices" in mapped.reason  # type: ignore[attr-defined]
    g = kernel(roofcalc.analyze("gemm", without_choice_map("h100"), m=21, n=216, k=920, dtype="fp32"), "gemm")
    assert g.reason.startswith("32x64 tiles: 4 x 14 k-splits")  # type: ignore[attr-defined]


def test_fp32_gemms_with_few_rows_match_their_committed_sweep() -> None:
    """FP32 GEMMs of 8 to 48 rows (validation/expected/h100/kernels/skinny-fp32.json, 118 shapes,
    timed with one L2 flush before each call, the pacing of the sets before ops-wide46): median
    measured/expected at least 0.8, half within [0.8, 1.25] (60 of 118) and 94% within [0.67, 1.5]
    (112). Since the choice map reaches sides of 64 (kernels/choice8), the 72 of 24-48 rows take
    the kernel measured at the nearest shape, where cuBLAS flips between kernels from one grid
    shape to the next (24 x 2560 x 2048: SIMT 32x128, 6 slices, 25.6 us; 24 x 3056 x 2384 here:
    128x32, 16 slices, 21.2 us): 36 of them within, against 57 on the tile search, while the map
    to 64 put 1,023 of the 1,163 committed op cases with such a side within, against 864. The
    composition puts about 10 us beside the kernels of these ops where the event-timed op ran
    about 5 us beyond them (the median of 0.82)."""
    sweep = json.loads((KERNELS / "h100" / "kernels" / "skinny-fp32.json").read_text())
    hw = load_hardware("h100")
    ratios = sorted(
        c["median_s"] / roofcalc.analyze("gemm", hw, m=c["m"], n=c["n"], k=c["k"], dtype="fp32").expected_s
        for c in sweep["cases"]
    )
    assert len(ratios) == 118
    assert ratios[len(ratios) // 2] >= 0.8
    assert sum(0.8 <= r <= 1.25 for r in ratios) >= len(ratios) / 2
    assert sum(0.67 <= r <= 1.5 for r in ratios) >= 0.94 * len(ratios)


FP32_CHOICE = KERNELS / "h100" / "kernels" / "fp32-choice"


def fp32_choice(name: str) -> dict:
    """A record of FP32_CHOICE, kept gzip-compressed (NAME.json.gz: the device's copy of the tree
    has a size limit)."""
    import gzip

    return json.loads(gzip.decompress((FP32_CHOICE / f"{name}.gz").read_bytes()))


def _ran_sn(case: dict) -> bool:
    return any("gemmSN" in k["name"] for k in case["kernels"])


def test_the_gemm_sn_map_is_the_committed_grid_read_again() -> None:
    """GEMM_SN_K_LIMIT, derived here from the 1,408 shapes of fp32-grid.json: per band of rows
    and measured width, the geometric mean of the deepest k that still ran gemmSN (counting up
    from the shallowest, which may run another kernel) and the next measured k."""
    from roofcalc.expected import GEMM_SN_K_LIMIT, GEMM_SN_WIDTHS

    grid = fp32_choice("fp32-grid.json")["cases"]
    assert len(grid) == 1408
    ran: dict[tuple[int, int], dict[int, bool]] = {}
    for c in grid:
        if c["m"] <= 16:
            ran.setdefault((c["m"], c["n"]), {})[c["k"]] = _ran_sn(c)
    want: dict[int, list[tuple[int, int]]] = {}
    for (m, n), by_k in sorted(ran.items()):
        depths = sorted(by_k)
        last, after = 0, None
        for i, k in enumerate(depths):
            if by_k[k]:
                last = k
            elif i > 0:
                after = k
                break
        limit = 0 if not last else last if after is None else round(math.sqrt(last * after))
        want.setdefault(m, []).append((n, limit))
    assert all(tuple(n for n, _ in v) == GEMM_SN_WIDTHS for v in want.values())
    assert {m: tuple(limit for _, limit in v) for m, v in want.items()} == GEMM_SN_K_LIMIT


def test_gemm_sn_walks_k_at_its_measured_step() -> None:
    # 16 x 4096 x 4096 fp32: in the map (rows 13-16, width 4096: k up to 5,017), so gemmSN: 64
    # columns by 4 rows a block, 64 x 4 blocks, each walking all 4,096 k one step every
    # gemm_sn_k_step_s, after a pre-Hopper kernel's fixed cost; the skinny stream of its 67 MB
    # would take less
    r = roofcalc.analyze("gemm", "h100", m=16, n=4096, k=4096, dtype="fp32")
    g = kernel(r, "gemm")
    assert g.reason.startswith("cuBLAS's gemmSN") and "256 blocks" in g.reason  # type: ignore[attr-defined]
    want = fig("h100", "gemm_kernel_floor_s") + extra("h100", "simt") + 4096 * fig("h100", "gemm_sn_k_step_s")
    assert g.seconds == pytest.approx(want, rel=1e-9)  # type: ignore[attr-defined]
    # the step: per (rows, width) of the grid with gemmSN at depths of 2,048 and more, at least
    # 1,024 apart, the profiled kernel time's rise over the rise in k; the median
    slopes = []
    by: dict[tuple[int, int], dict[int, float]] = {}
    for c in fp32_choice("fp32-grid.json")["cases"]:
        sn = [k for k in c["kernels"] if "gemmSN" in k["name"]]
        if sn and c["k"] >= 2048:
            by.setdefault((c["m"], c["n"]), {})[c["k"]] = sn[0]["duration_s"]
    for times in by.values():
        lo, hi = min(times), max(times)
        if hi - lo >= 1024:
            slopes.append((times[hi] - times[lo]) / (hi - lo))
    slopes.sort()
    assert len(slopes) == 16
    assert fig("h100", "gemm_sn_k_step_s") == pytest.approx((slopes[7] + slopes[8]) / 2, rel=0.001)
    # one row (not measured), 17 rows (no gemmSN variant), wider than the map: no gemmSN; bf16: never
    assert "gemmSN" not in kernel(roofcalc.analyze("gemm", "h100", m=1, n=4096, k=256, dtype="fp32"), "gemm").reason  # type: ignore[attr-defined]
    assert "gemmSN" not in kernel(roofcalc.analyze("gemm", "h100", m=17, n=4096, k=4096, dtype="fp32"), "gemm").reason  # type: ignore[attr-defined]
    assert "gemmSN" not in kernel(roofcalc.analyze("gemm", "h100", m=16, n=14336, k=4096, dtype="fp32"), "gemm").reason  # type: ignore[attr-defined]
    assert "gemmSN" not in kernel(roofcalc.analyze("gemm", "h100", m=16, n=4096, k=4096), "gemm").reason  # type: ignore[attr-defined]


def test_gemm_sn_blocks_are_the_grids_cublas_launched() -> None:
    """Every gemmSN kernel of the three sweeps (rows 2-16): the model's block count is the
    launched grid, ceil(n / 64) columns by 1, 2 or 4 rows of blocks."""
    hw = load_hardware("h100")
    checked = 0
    for name in ("fp32-grid.json", "fp32-rand1.json", "fp32-rand2.json"):
        for c in fp32_choice(name)["cases"]:
            sn = [k for k in c["kernels"] if "gemmSN" in k["name"]]
            if not sn:
                continue
            gx, gy, gz = sn[0]["grid"]
            g = roofcalc.expected.Kernel(name="gemm", model="gemm", help="", dtype="fp32", m=c["m"], n=c["n"], k=c["k"])
            est = roofcalc.expected._gemm_sn(roofcalc.expected.card(hw), g)
            assert est.grid == gx * gy * gz, (c["m"], c["n"], c["k"], sn[0]["grid"])
            checked += 1
    assert checked == 322 + 40 + 45


def _hold_out(cases: list[dict], ran: Any, named: str) -> tuple[int, list[float]]:
    """Of these fp32 sweep cases: how many the model names right (``named`` in the GEMM's reason
    exactly where ``ran`` says the kernel ran), and measured/expected of those that ran it, sorted."""
    hw = load_hardware("h100")
    right, ratios = 0, []
    for c in cases:
        r = roofcalc.analyze("gemm", hw, m=c["m"], n=c["n"], k=c["k"], dtype="fp32")
        right += ran(c) == (named in kernel(r, "gemm").reason)  # type: ignore[attr-defined]
        if ran(c):
            ratios.append(c["median_s"] / r.expected_s)
    return right, sorted(ratios)


@pytest.mark.parametrize(("name", "few", "ran"), [("fp32-rand1.json", 142, 40), ("fp32-rand2.json", 141, 45)])
def test_the_gemm_sn_map_holds_on_its_random_hold_outs(name: str, few: int, ran: int) -> None:
    """Two sets of 300 random shapes (rows 2-32, widths and depths 256-8192 and 128-8192, half of
    them not multiples of 16), read only after the map was committed: rand1 measured with the
    grid, rand2 in a later call. Of their products of at most 16 rows the map names gemmSN right
    for 136 of 142 and 132 of 141; those that ran gemmSN are at a median measured/expected of
    1.00 and 0.99, 92% and 82% within [0.8, 1.25]."""
    rows = [c for c in fp32_choice(name)["cases"] if c["m"] <= 16]
    right, ratios = _hold_out(rows, _ran_sn, "gemmSN")
    assert len(rows) == few and right >= 0.9 * len(rows)
    assert len(ratios) == ran
    assert 0.9 <= ratios[len(ratios) // 2] <= 1.1
    assert sum(0.8 <= r <= 1.25 for r in ratios) >= 0.8 * len(ratios)


def _ran_serial_split(case: dict) -> bool:
    return any("ffma" in k["name"] and k["grid"][2] >= 100 for k in case["kernels"])


def test_the_serial_split_k_region_is_the_committed_sweep_read_again() -> None:
    """fp32-narrow-rows.json (every row count 2-16, widths 64-200, depths 64-4096; 4,290 cases,
    4,095 shapes: width 200 twice): for 66-90 columns, and 96-192 from 7 rows, at k of 128 and
    more, every product of m x n x k below 2^21 ran the serial split-K kernel and none at or above
    it; 64 and 200 columns never did, nor k of 64, nor 96-192 columns under 7 rows. In the four
    narrow sweeps each kernel that ran has the model's tile, grid and slices."""
    from roofcalc.expected import SERIAL_SPLIT_MAX_WORK, _serial_split_variant, cublas_runs_serial_split

    cases = fp32_choice("fp32-narrow-rows.json")["cases"]
    assert len(cases) == 4290 and len({(c["m"], c["n"], c["k"]) for c in cases}) == 4095
    inside = [c for c in cases if (66 <= c["n"] <= 90 or (96 <= c["n"] <= 192 and c["m"] >= 7)) and c["k"] >= 128]
    ran_work = [c["m"] * c["n"] * c["k"] for c in inside if _ran_serial_split(c)]
    not_ran_work = [c["m"] * c["n"] * c["k"] for c in inside if not _ran_serial_split(c)]
    assert max(ran_work) < SERIAL_SPLIT_MAX_WORK <= min(not_ran_work)
    assert not any(_ran_serial_split(c) for c in cases if c not in inside)
    assert all(_ran_serial_split(c) == cublas_runs_serial_split(c["m"], c["n"], c["k"]) for c in cases)
    checked = 0
    for name in ("fp32-narrow-rows.json", "fp32-narrow.json", "fp32-narrow-rand1.json", "fp32-narrow-rand2.json"):
        for c in fp32_choice(name)["cases"]:
            for kern in c["kernels"]:
                if "ffma" in kern["name"] and kern["grid"][2] >= 100:
                    tile, cols, slices = _serial_split_variant(c["m"], c["n"], c["k"]) or ("", 1, 0)
                    rows_, cols_ = tile.split("x") if tile else ("", "")
                    assert f"tilesize{rows_}x{cols_}x" in kern["name"], (c["m"], c["n"], c["k"], kern["name"][:120])
                    assert kern["grid"] == [1, math.ceil(c["n"] / cols), slices], (c["m"], c["n"], c["k"])
                    checked += 1
    assert checked == 1947 + 324 + 81 + 87


def test_the_serial_split_k_kernel_takes_its_slices_in_turn() -> None:
    # 16 x 112 x 320 fp32: 16 x 112 x 320 = 573,440 < 2^21, 96-192 columns, 16 rows: one 32x128
    # tile whose 264 slices add in one after another; k does not matter. The step: the median
    # profiled time of the sweep's kernels of that tile, less the fixed cost the model gives every
    # pre-Hopper GEMM kernel, over 264 (and 32x32's over 176)
    cases = fp32_choice("fp32-narrow-rows.json")["cases"]
    durations: dict[int, list[float]] = {176: [], 264: []}
    for c in cases:
        for k in c["kernels"]:
            if "ffma" in k["name"] and k["grid"][2] in durations:
                durations[k["grid"][2]].append(k["duration_s"])
    steps = load_hardware("h100").expected.gemm_serial_split_step_s
    fixed = fig("h100", "gemm_kernel_floor_s") + extra("h100", "simt")
    for slices, tile in ((176, "32x32"), (264, "32x128")):
        d = sorted(durations[slices])
        assert float(steps[tile].value) == pytest.approx((d[len(d) // 2] - fixed) / slices, rel=0.001)
    g = kernel(roofcalc.analyze("gemm", "h100", m=16, n=112, k=320, dtype="fp32"), "gemm")
    want = fixed + 264 * float(steps["32x128"].value)
    assert g.seconds == pytest.approx(want, rel=1e-9) and "serial split-K" in g.reason  # type: ignore[attr-defined]
    deeper = kernel(roofcalc.analyze("gemm", "h100", m=16, n=112, k=1100, dtype="fp32"), "gemm")
    assert deeper.seconds == pytest.approx(want, rel=1e-9)  # type: ignore[attr-defined]
    # 16 x 112 x 1200 = 2,150,400 >= 2^21: the SIMT kernels again
    assert "serial" not in kernel(roofcalc.analyze("gemm", "h100", m=16, n=112, k=1200, dtype="fp32"), "gemm").reason  # type: ignore[attr-defined]


def test_a_transposed_operand_keeps_the_general_gemm_model() -> None:
    """transposed-fp32.json: as q @ k^T, 16 x 66 x 706 ran SIMT kernels, as a @ b the serial
    split-K one. Naive attention's scores (transposed: true) keep neither map; a gemm of the same
    shape takes the serial split-K kernel."""
    cases = fp32_choice("transposed-fp32.json")["cases"]
    by = {c["layout"]: c for c in cases if (c["m"], c["n"], c["k"]) == (16, 66, 706)}
    assert _ran_serial_split(by["a @ b"]) and not _ran_serial_split(by["q @ k^T"])
    assert "simt_sgemm" in by["q @ k^T"]["kernels"][0]["name"]
    plain = kernel(roofcalc.analyze("gemm", "h100", m=16, n=66, k=706, dtype="fp32"), "gemm")
    assert "serial split-K" in plain.reason  # type: ignore[attr-defined]
    shape = {"impl": "naive", "batch": 1, "heads": 1, "kv_heads": 1, "seq": 16, "kv_seq": 66, "head_dim": 706}
    scores = kernel(roofcalc.analyze("attention", "h100", dtype="fp32", **shape), "scores")
    assert "serial" not in scores.reason and "gemmSN" not in scores.reason  # type: ignore[attr-defined]


@pytest.mark.parametrize(("name", "ran"), [("fp32-narrow-rand1.json", 81), ("fp32-narrow-rand2.json", 87)])
def test_the_serial_split_k_region_holds_on_its_hold_outs(name: str, ran: int) -> None:
    """Two sets of 300 random shapes (rows 2-20, widths 56-260, depths 64-4096). rand1 was the
    hold-out of a first map by width (measured at 8 and 16 rows: 87% right) and gave the region
    its widest output; rand2 was read after the rule was committed, and moved its least depth (3
    x 79 x 91 ran another kernel, 99-107 this one) and the tiles' boundary (9 x 94 x 671 ran
    32x32). All 600 are named right now, and those that ran the kernel are at a median 0.99."""
    cases = fp32_choice(name)["cases"]
    right, ratios = _hold_out(cases, _ran_serial_split, "serial split-K")
    assert len(cases) == 300 and right == 300
    assert len(ratios) == ran
    assert 0.95 <= ratios[len(ratios) // 2] <= 1.05
    assert sum(0.8 <= r <= 1.25 for r in ratios) >= 0.95 * len(ratios)


def test_even_but_not_16_byte_aligned_gemm_loads_two_elements_at_a_time() -> None:
    # 8192 x 8192 x 8190 bf16: k even, not a multiple of 8. cuBLAS ran a cutlass_80 s16816
    # 256x128_64x3 "align2" kernel at 275-285 TFLOP/s, twice the odd-k cutlass_75 "align1" one
    # (validation/expected/h100/kernels/gemm-alignment.txt)
    seen = (KERNELS / "h100" / "kernels" / "gemm-alignment.txt").read_text().splitlines()
    assert "s16816gemm_bf16_256x128_64x3_nn_align2" in next(line for line in seen if line.startswith("8192x8192x8190"))
    assert "s1688gemm_bf16_256x128_nn_align1" in next(line for line in seen if line.startswith("8192x8192x8191"))
    hw = load_hardware("h100")
    word = hw.peak("bf16") * float(hw.expected.word_aligned_tensor_fraction["bf16"].value)
    g = kernel(roofcalc.analyze("gemm", "h100", m=8192, n=8192, k=8190), "gemm")
    assert g.reason.startswith("256x128 tiles: 2,048 = 16 wave(s)") and "two elements per load" in g.reason  # type: ignore[attr-defined]
    # 256x128 tiles: 32 x 64 = 2048 of them, ceil(2048 / 132) = 16 waves; each tile loads
    # (256 + 128) elements per k at the per-SM element rate the word-aligned probe GEMMs imply
    per_sm_elems = word / 132 * (256 + 128) / (2 * 256 * 128)
    tile = (256 + 128) * 8190 / per_sm_elems
    # a pre-Hopper kernel stores each tile after its k-loop: the 134 MB of bf16 output beyond
    # the L2's 50 MiB wait on DRAM writes (at the card's read bandwidth) that no k-loop hides
    stores = (8192 * 8192 * 2 - float(hw.l2_bytes.value)) / (hw.bandwidth * fig("h100", "dram_read_fraction"))
    want = (
        fig("h100", "gemm_kernel_floor_s")
        + extra("h100", "word")
        + 16 * tile
        + stores
        + 15 * 2 * fig("h100", "dram_latency_s")
    )
    assert g.seconds == pytest.approx(want, rel=1e-6)  # type: ignore[attr-defined]
    # odd k: one element per load, at the unaligned rate; k a multiple of 8: the TMA path
    odd = kernel(roofcalc.analyze("gemm", "h100", m=8192, n=8192, k=8191), "gemm")
    assert "no TMA fast path" in odd.reason and odd.seconds > 1.8 * g.seconds  # type: ignore[attr-defined]
    assert "no TMA" not in kernel(roofcalc.analyze("gemm", "h100", m=8192, n=8192, k=8192), "gemm").reason  # type: ignore[attr-defined]


def test_without_a_word_aligned_figure_the_unaligned_rate_serves(tmp_path: Path) -> None:
    src = (Path(__file__).resolve().parent.parent / "hardware" / "h100.yaml").read_text()
    lines = src.splitlines()
    at = lines.index("  word_aligned_tensor_fraction:")
    del lines[at : at + 2]
    f = tmp_path / "h100-noword.yaml"
    f.write_text("\n".join(lines) + "\n")
    no_word = roofcalc.analyze("gemm", str(f), m=8192, n=8192, k=8190)
    odd = roofcalc.analyze("gemm", "h100", m=8192, n=8192, k=8191)
    assert kernel(no_word, "gemm").seconds == pytest.approx(kernel(odd, "gemm").seconds, rel=0.01)  # type: ignore[attr-defined]


def test_a_gemv_streams_whatever_its_leading_dimension() -> None:
    # k = 4053 (odd): a matrix-vector product is no tiled GEMM, so it keeps the streaming path
    # (at cuBLAS's gemv kernels' rate), not the element-at-a-time GEMM path
    r = roofcalc.analyze("gemv", "h100", m=42179, n=4053)
    reasons = " ".join(k.reason for k in r.expected_kernels)
    assert "no TMA fast path" not in reasons and "gemv kernels" in reasons
    assert r.expected_s is not None and r.expected_s < 2 * r.predicted_s


@pytest.mark.parametrize("n", [4096, 400_000])
def test_event_timed_op_pays_the_flushed_floor_then_queued_kernels(n: int) -> None:
    # torch.dot of n fp32: dot_kernel then reduce_1Block_kernel, timed as a benchmark times
    # one op (right after a writing L2 flush)
    r = roofcalc.analyze("dot", "h100", n=n, dtype="fp32")
    a, b = kernel(r, "dot_kernel"), kernel(r, "reduce_1block")
    graph, queued = fig("h100", "graph_floor_s"), fig("h100", "queued_kernel_floor_s")
    first = fig("h100", "flushed_op_floor_s") - graph + graph + a.seconds  # type: ignore[attr-defined]
    # a queued kernel starts as long after the last one as a queued small kernel takes, less
    # that small kernel's own body (its CUDA-graph node less the graph floor)
    gap = queued - (fig("h100", "torch_graph_node_s") - graph)
    second = max(gap + b.seconds, queued)  # type: ignore[attr-defined]
    if n > 100_000:  # the reduction of many partial sums outlasts the small kernel's body
        assert second > queued + 0.5e-6
    partials = min(-(-n // 128), 16 * 132)  # dot_kernel's blocks (ops/dot.yaml), one partial each
    traffic = 2 * n * 4 + 4 * partials + 4  # x and y read, the partials read back, the result
    wb = (
        fig("h100", "l2_dirty_writeback_fraction")
        * min(traffic, 50 * 2**20)
        / (load_hardware("h100").bandwidth * fig("h100", "dram_read_fraction"))
    )
    assert r.expected_s == pytest.approx(first + second + wb, rel=0.02)


def test_dirty_writeback_is_one_l2_of_lines_for_a_large_op() -> None:
    # 8192^3 bf16 moves 402 MB, far more than the 50 MiB L2: every dirty line is evicted once
    r = roofcalc.analyze("gemm", "h100", m=8192)
    wb = next(t for t in r.expected_terms if t.name == "L2 write-back")
    hw = load_hardware("h100")
    assert hw.l2_bytes is not None
    read_bw = hw.bandwidth * fig("h100", "dram_read_fraction")
    want = fig("h100", "l2_dirty_writeback_fraction") * float(hw.l2_bytes.value) / read_bw
    assert wb.seconds == pytest.approx(want, rel=1e-9)


def test_dirty_lines_already_written_back_are_not_counted_again() -> None:
    """A kernel whose measured time holds the flush's write-back (a shallow-plane GEMM) evicted
    that many dirty lines: the op's other kernels evict at most the rest of the L2."""
    from roofcalc.expected import _dirty_writeback
    from roofcalc.expected.card import card
    from roofcalc.expected.records import Kernel

    hw = load_hardware("h100")
    c = card(hw)
    k = Kernel(name="s", model="stream", help="", dtype="bf16", dram_bytes=80e6)
    full = _dirty_writeback(hw, c, [k], 2)
    assert full == pytest.approx(c.writeback * c.l2_total / c.dram_bw, rel=1e-12)
    assert _dirty_writeback(hw, c, [k], 2, evicted=c.l2_total / 4) == pytest.approx(0.75 * full, rel=1e-12)
    assert _dirty_writeback(hw, c, [k], 2, evicted=2 * c.l2_total) == 0.0


def test_graph_nodes_are_never_shorter_than_a_small_pytorch_kernel() -> None:
    r = roofcalc.analyze(
        "decode", "h200", model="llama-3.1-8b", batch=1, context=1024, engine="eager", cuda_graphs=True
    )
    node = fig("h200", "torch_graph_node_s")
    assert r.expected_launch == "graph"
    assert all(k.launched_s >= node - 1e-15 for k in r.expected_kernels)
    assert sum(k.launched_s >= node + 1e-9 for k in r.expected_kernels) >= 1  # large ones exceed it


def _closing(r: Any) -> float:
    """The GPU's time for the kernels an eager step runs after its last layer (closes_step: the
    logits and what reads them), each as queued: one run less its share of the host's wait, which
    the host issue term spreads over every kernel."""
    n = sum(k.count for k in r.expected_kernels)
    wait = next((t.seconds for t in r.expected_terms if t.name == "host issue"), 0.0) / n
    return sum((k.launched_s - wait) * k.count for k in r.expected_kernels if k.closes_step)


def test_an_eager_step_takes_the_longer_of_the_host_and_the_gpu() -> None:
    """Eager decode at batch 1: Python issues each op at EAGER_STEP_HOST_FACTOR (2.0, paired
    measurements in validation/expected/*/host/) x the hot-loop op, and the GPU's share (the
    kernels queued on the stream) is shorter, so the step is the host's issue, then the kernels
    issued after the last layer (the logits GEMM), which the GPU can start only once the host has
    issued them; a large prefill is the GPU's work, with no host term."""
    floor = fig("h200", "torch_op_floor_s")
    r = roofcalc.analyze(
        "decode", "h200", model="llama-3.1-8b", batch=1, context=1024, engine="eager", cuda_graphs=False
    )
    # the host issues the framework's calls: a library's own second kernel (a split-K
    # reduction) comes with the call that launched it
    n = sum(k.count for k in r.expected_kernels if k.issued)
    assert n < sum(k.count for k in r.expected_kernels)
    closing = [k for k in r.expected_kernels if k.closes_step]
    assert [k.name for k in closing] == ["lm_head"]
    # the logits GEMM reads the 128,256 x 4,096 bf16 weights: at least their time at the
    # card's bandwidth, and less than the step
    assert 128256 * 4096 * 2 / load_hardware("h200").bandwidth < _closing(r) < r.expected_s / 10
    assert r.expected_s == pytest.approx(n * 2.0 * floor + _closing(r), rel=1e-12)
    assert r.expected_limiter == "host" and any("the host paces this step" in note for note in r.expected_notes)
    terms = {t.name: t.seconds for t in r.expected_terms}
    gpu = sum(t.seconds for t in r.expected_terms if t.name != "host issue")
    assert terms["host issue"] == pytest.approx(r.expected_s - gpu, rel=1e-9)
    assert "then the GPU runs the step's last kernels" in next(
        t.reason for t in r.expected_terms if t.name == "host issue"
    )
    # the layer kinds add up to the step: each kernel carries its share of the host's wait
    assert sum(k.launched_s * k.count for k in r.expected_kernels) == pytest.approx(r.expected_s, rel=1e-9)
    big = roofcalc.analyze("prefill", "h200", model="llama-3.1-8b", batch=8, seq=512, engine="eager")
    assert "host issue" not in {t.name for t in big.expected_terms} and big.expected_limiter == "compute"
    assert big.expected_s > sum(k.count for k in big.expected_kernels) * 2.0 * floor


@pytest.mark.parametrize(
    ("impl", "phase", "gpus"),
    [
        (i, p, g)
        for i in ("reference", "hf", "hf-dynamic", "fused")
        for p in ("decode", "prefill")
        for g in (1, 2)
        if not (i == "hf-dynamic" and p == "prefill")
    ],
)
def test_the_kernels_after_the_last_layer_close_the_step(impl: str, phase: str, gpus: int) -> None:
    """Every implementation marks the kernels it runs after its last layer as closing the step:
    the logits (of the last token or of every position), their gather and reorder under tensor
    parallelism, and the greedy argmax; nothing else (the embedding and its tensor-parallel mask
    run first)."""
    size = {"context": 1000} if phase == "decode" else {"seq": 300}
    r = roofcalc.analyze(phase, "h100", model="llama-3.1-8b", batch=2, impl=impl, gpus=gpus, **size)
    names = [k.name for k in r.expected_kernels]
    closing = {k.name for k in r.expected_kernels if k.closes_step}
    last = {n for n in names if n.startswith(("lm_head", "logits_", "argmax"))}
    assert closing == last and any(n.startswith("lm_head") for n in closing)
    assert (gpus > 1) == any(n.startswith("logits_") for n in closing)


def test_the_host_paced_notes_span_the_committed_host_paced_steps() -> None:
    """The notes' ranges are what the committed steps the model reads as host-paced (the note is
    printed for those: their `limiter` is the host) measured against the model, with the card's
    figures (-registry reports), with the figures of the host that ran them (-hostrate reports)
    and with the host's speed timed around each step (-hostcase reports): on one GPU 0.6x to 2.4x,
    0.7x to 2.2x and 0.6x to 1.7x; under tensor parallelism (the ranks' hosts wait for each other
    at each all-reduce) 0.6x to 1.8x, 0.6x to 1.8x and 0.7x to 1.3x."""

    def ratios(kind: str, tp: bool) -> list[float]:
        return [
            c["ratio"]
            for path in KERNELS.glob(f"*/report-llm*-{kind}.json")
            for c in json.loads(path.read_text())["cases"]
            if c["limiter"] == "host" and (c["params"]["gpus"] > 1) == tp
        ]

    card, own, case = ratios("registry", False), ratios("hostrate", False), ratios("hostcase", False)
    assert "0.6x to 2.4x of this on different machines (0.7x to 2.2x with each host's own figures" in HOST_PACED_NOTE
    assert "0.6x to 1.7x with the host's speed timed around each step" in HOST_PACED_NOTE
    assert len(card) >= 321 and 0.55 <= min(card) < 0.65 and 2.35 < max(card) <= 2.45
    assert len(own) >= 314 and 0.65 <= min(own) < 0.75 and 2.15 < max(own) <= 2.25
    assert len(case) >= 207 and 0.55 <= min(case) < 0.65 and 1.65 < max(case) <= 1.75
    card, own, case = ratios("registry", True), ratios("hostrate", True), ratios("hostcase", True)
    assert "0.6x to 1.8x of this with each host's own figures (0.6x to 1.8x with the card's;" in HOST_PACED_TP_NOTE
    assert "0.7x to 1.3x with the ranks' speed timed around each step" in HOST_PACED_TP_NOTE
    assert len(card) >= 100 and 0.55 <= min(card) < 0.65 and 1.75 < max(card) <= 1.85
    assert len(own) >= 80 and 0.55 <= min(own) < 0.65 and 1.75 < max(own) <= 1.85
    assert len(case) >= 36 and 0.65 <= min(case) < 0.75 and 1.25 < max(case) <= 1.35


def test_one_tile_gemm_costs_the_library_kernel_floor() -> None:
    # 128^3 bf16: one tile, two k-steps; the kernel is its fixed cost plus a fraction of a microsecond
    g = kernel(roofcalc.analyze("gemm", "h100", m=128), "gemm")
    floor = fig("h100", "gemm_kernel_floor_s")
    assert floor <= g.seconds <= floor + 2 * fig("h100", "dram_latency_s")  # type: ignore[attr-defined]


@pytest.mark.parametrize("card", ["h100", "h200"])
def test_pre_hopper_gemm_kernels_pay_their_measured_extra(card: str, tmp_path: Path) -> None:
    # The registry's figures are what validation/probe/gemm_floor_extra.py derives from the
    # committed graph timings (rounded to 3 digits in the file)
    spec = importlib.util.spec_from_file_location("gfe", KERNELS.parent / "probe" / "gemm_floor_extra.py")
    assert spec is not None and spec.loader is not None
    gfe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gfe)
    record = json.loads((KERNELS / card / "kernels" / "gemm-floors.json").read_text())
    res = gfe.residues(record, card)
    # the paths a hardware file may name are the model's, less the TMA one the floor is of
    assert set(GEMM_TILES) == {"tma", *GEMM_PATHS}
    for path in GEMM_PATHS:
        assert extra(card, path) == pytest.approx(res[path] - res["tma"], rel=5e-3)
    # Without the figure, each pre-Hopper path's kernel is faster by exactly its extra; the TMA
    # path does not change
    src = (Path(__file__).resolve().parent.parent / "hardware" / f"{card}.yaml").read_text().splitlines()
    at = src.index("  gemm_kernel_floor_extra_s:")
    f = tmp_path / "no-extra.yaml"
    f.write_text("\n".join(src[:at] + src[at + 5 :]) + "\n")
    for path, dtype, k in (
        ("simt", "fp32", 4096),
        ("tf32", "tf32", 4096),
        ("unaligned", "bf16", 4095),
        ("word", "bf16", 4094),
    ):
        with_it = kernel(roofcalc.analyze("gemm", card, m=4096, n=4096, k=k, dtype=dtype), "gemm")
        without = kernel(roofcalc.analyze("gemm", str(f), m=4096, n=4096, k=k, dtype=dtype), "gemm")
        assert with_it.seconds - without.seconds == pytest.approx(extra(card, path), rel=1e-6)  # type: ignore[attr-defined]
        assert "pre-Hopper" in with_it.reason  # type: ignore[attr-defined]
    tma = [kernel(roofcalc.analyze("gemm", h, m=4096), "gemm").seconds for h in (card, str(f))]  # type: ignore[attr-defined]
    assert tma[0] == tma[1]


def test_dot_loads_span_twice_what_they_use_and_keep_that_in_flight() -> None:
    # Nsight Compute on an H200 (validation/expected/h200/kernels/dot-ncu.csv): one global load
    # instruction per element and operand, and per request twice the 32-byte sectors that 32
    # lanes of the element size need
    rows = list(csv.reader((KERNELS / "h200" / "kernels" / "dot-ncu.csv").read_text().splitlines()))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
    got: dict[tuple[str, str], float] = {}
    for r in rows[head + 1 :]:
        d = dict(zip(rows[head], r, strict=False))
        dtype = "bf16" if "bfloat16" in d["Kernel Name"] else "fp32"
        got[(dtype, d["Metric Name"])] = float(d["Metric Value"].replace(",", ""))
    for dtype, size in (("fp32", 4), ("bf16", 2)):
        requests = got[(dtype, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum")]
        assert got[(dtype, "smsp__inst_executed_op_global_ld.sum")] * 32 == 2 * 134217728
        assert got[(dtype, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum")] / requests == 2 * 32 * size / 32
    # so a thread of the 128-thread blocks has 2 x 2 elements on their way: in bf16, 16 blocks
    # per SM keep 16 KiB in flight, which over the loaded latency is more than the card's read
    # ceiling: the kernel streams at that ceiling (with 8 KiB it would not)
    hw = load_hardware("h100")
    ceiling = hw.bandwidth * fig("h100", "dram_read_fraction")
    assert 132 * 16 * 128 * 4 * 2 / fig("h100", "loaded_latency_s") > ceiling
    assert 132 * 16 * 128 * 2 * 2 / fig("h100", "loaded_latency_s") < ceiling
    d = kernel(roofcalc.analyze("dot", "h100", n=134217728, dtype="bf16"), "dot_kernel")
    bw = ceiling
    moved = 2 * 134217728 * 2
    issue = 0.5 * 134217728 / (4 * float(load_hardware("h100").clocks.boost_mhz.value) * 1e6 * 132)
    assert d.seconds == pytest.approx(moved / bw + issue / 16, rel=1e-6)  # type: ignore[attr-defined]


@pytest.mark.parametrize(("dtype", "eight_rows_in"), [("bf16", "ops-rand11.json"), ("fp32", "ops-rand10.json")])
def test_layernorm_affine_loads_ride_with_the_second_read(dtype: str, eight_rows_in: str) -> None:
    # PyTorch's vectorized_layer_norm_kernel loads x, gamma and beta in the same steps of its
    # second pass, so gamma and beta add no time of their own to a block: one row of 4096
    # measured the same as eight (one block per row, each on its own SM) on the H100
    def measured(name: str, rows: int) -> float:
        cases = json.loads((KERNELS / "h100" / name).read_text())["cases"]
        return float(
            next(
                c["median_s"]
                for c in cases
                if c["op"] == "layernorm"
                and c["dtype"] == dtype
                and c["params"]["rows"] == rows
                and c["params"]["cols"] == 4096
            )
        )

    seen = measured("ops.json", 1) / measured(eight_rows_in, 8)
    one, eight = (roofcalc.analyze("layernorm", "h100", rows=r, cols=4096, dtype=dtype).expected_s for r in (1, 8))
    assert 0.95 < seen < 1.05 and one / eight == pytest.approx(seen, abs=0.05)


def test_eager_rmsnorm_mean_is_pytorchs_row_reduction() -> None:
    # PyTorch's reduce_kernel for the mean of 32 rows of 4096 fp32: grid [2] of (32, 16) threads,
    # one warp per row (validation/expected/h100/llm-kernels.json, decode eager batch 32)
    runs = json.loads((KERNELS / "h100" / "llm-kernels.json").read_text())["cases"]
    case = next(c for c in runs if c["phase"] == "decode" and c["engine"] == "eager" and c["batch"] == 32)
    mean = next(k for k in case["kernels"] if "reduce_kernel<512" in k["name"] and "MeanOps" in k["name"])
    assert mean["grid"] == [2, 1, 1] and mean["block"] == [32, 16, 1]
    r = roofcalc.analyze("decode", "h100", model="llama-3.1-8b", batch=32, context=1024, engine="eager")
    k = kernel(r, "rmsnorm_mean")
    assert k.grid == 2  # type: ignore[attr-defined]
    # each lane walks 4096 / 32 floats as 32 dependent 16-byte loads, then the result is stored
    assert k.seconds >= 33 * fig("h100", "dram_latency_s")  # type: ignore[attr-defined]
    assert k.seconds == pytest.approx(mean["duration_s"], rel=0.25)  # type: ignore[attr-defined]


def test_a_warp_per_row_issues_one_dependent_instruction_per_four_clocks() -> None:
    # softmax of one 1024-element bf16 row: softmax_warp_forward gives the row to one warp,
    # which issues its 1.3 instructions per element (Nsight Compute, ops/softmax.yaml) one
    # dependent step (4 clocks, CUDA guide) at a time at the 1.98 GHz boost clock: 2.69 us,
    # plus at most the row's own memory time (4 KiB in, 2 KiB out, one block's loads in flight)
    r = roofcalc.analyze("softmax", "h100", rows=1, cols=1024, dtype="bf16")
    k = kernel(r, "softmax_warp_forward")
    issue = 1.3 * 1024 * 4 / 1.98e9
    assert k.bound == "compute"  # type: ignore[attr-defined]
    assert issue <= k.seconds <= issue + 1.5e-6  # type: ignore[attr-defined]
    assert "dependent step" in k.reason  # type: ignore[attr-defined]
    # 132 x 40 rows are 40 warps on each SM (10 blocks of 4): the SM's issue slots bind
    # (4 per clock), not one warp's dependent steps
    kf = kernel(roofcalc.analyze("softmax", "h100", rows=132 * 40, cols=1024, dtype="bf16"), "softmax_warp_forward")
    assert "dependent step" not in kf.reason  # type: ignore[attr-defined]


def test_rereads_in_l2_overlap_the_dram_stream() -> None:
    # three-pass softmax over 936 fp32 rows of 12292 (48 KB, past the 12,256 floats a block's
    # shared memory holds): 2 blocks per SM keep 13 MB of rows in flight, within one 25 MB L2
    # partition, so the two re-reads come from the L2 while DRAM streams other rows' first
    # read: the kernel takes at least the DRAM stream (read once, write once, at the copy rate)
    # and less than that stream followed by the re-reads at the L2's bandwidth
    r = roofcalc.analyze("softmax", "h100", rows=936, cols=12292, dtype="fp32")
    k = kernel(r, "cunn_softmax_forward")
    row = 12292 * 4
    dram, reread = 2 * 936 * row, 2 * 936 * row
    copy_bw = load_hardware("h100").bandwidth * fig("h100", "dram_copy_fraction")
    assert "re-reads hit L2" in k.reason  # type: ignore[attr-defined]
    assert dram / copy_bw <= k.seconds < dram / copy_bw + reread / fig("h100", "l2_bandwidth_bytes_per_s")  # type: ignore[attr-defined]


def test_rereads_that_miss_l2_stream_at_the_mix_of_all_the_traffic() -> None:
    # LayerNorm over 2048 bf16 rows of 16384 (32 KB): 16 blocks per SM keep 69 MB of rows in
    # flight, over the 26 MB L2 partition, so the second read comes from DRAM again (Nsight
    # Compute read 134 MB from DRAM for this case, validation/expected/h100/ncu-cases.csv).
    # The bus then carries two reads per write: a third of the traffic is writes, so the rate
    # is 1 / ((1/3) / read + (2/3) / copy), between the read and the copy ceilings
    rows, cols = 2048, 16384
    r = roofcalc.analyze("layernorm", "h100", rows=rows, cols=cols, dtype="bf16")
    k = kernel(r, "layer_norm")
    bw = load_hardware("h100").bandwidth
    read_bw, copy_bw = bw * fig("h100", "dram_read_fraction"), bw * fig("h100", "dram_copy_fraction")
    first = (2 * rows * cols + 2 * cols) * 2 + 8 * rows  # read and write
    written = rows * cols * 2 + 8 * rows
    total = first + rows * cols * 2  # and the second read
    w = 2 * written / total
    t_mem = total * ((1 - w) / read_bw + w / copy_bw)
    assert "re-reads miss L2" in k.reason  # type: ignore[attr-defined]
    # the issue of its instructions, 1/16 of it exposed (16 resident blocks), adds under 5%
    assert t_mem <= k.seconds < 1.05 * t_mem  # type: ignore[attr-defined]
    # priced at the first pass's mix (half writes: the copy rate), the re-reads took longer
    assert k.seconds < total / copy_bw  # type: ignore[attr-defined]


def test_causal_naive_attention_clones_the_scores_before_masking() -> None:
    # Tensor.masked_fill is clone + masked_fill_ (ATen): a causal mask costs a copy of S,
    # read once and written once at the copy rate, ahead of the in-place fill
    kw = {"batch": 1, "heads": 32, "seq": 2048, "causal": True, "impl": "naive", "dtype": "bf16"}
    r = roofcalc.analyze("attention", "h100", **kw)
    names = [k.name for k in r.expected_kernels]
    assert names.index("mask_clone") + 1 == names.index("causal_mask")
    s_bytes = 32 * 2048 * 2048 * 2
    copy_bw = load_hardware("h100").bandwidth * fig("h100", "dram_copy_fraction")
    assert kernel(r, "mask_clone").seconds == pytest.approx(2 * s_bytes / copy_bw, rel=1e-6)  # type: ignore[attr-defined]
    plain = roofcalc.analyze("attention", "h100", **{**kw, "causal": False})
    assert "mask_clone" not in [k.name for k in plain.expected_kernels]


def test_an_in_order_elementwise_kernel_adds_its_issue_to_its_memory_time() -> None:
    # masked_fill_ over 32 x 2048 x 2048 bf16 scores with a (2048, 2048) bool mask: it streams
    # S in and out plus the mask at the copy rate, and then issues 1.65 warp instructions per
    # element (ops/attention.yaml) on 132 SMs x 4 schedulers at the 1.98 GHz boost clock;
    # PyTorch's loop does a thread's items in order, so the two add
    r = roofcalc.analyze("attention", "h100", batch=1, heads=32, seq=2048, causal=True, impl="naive", dtype="bf16")
    k = kernel(r, "causal_mask")
    n = 32 * 2048 * 2048
    copy_bw = load_hardware("h100").bandwidth * fig("h100", "dram_copy_fraction")
    stream = (2 * n * 2 + 2048 * 2048) / copy_bw
    issue = 1.65 * n / (132 * 4 * 1.98e9)
    assert k.seconds == pytest.approx(stream + issue, rel=0.02)  # type: ignore[attr-defined]
    assert "in order" in k.reason  # type: ignore[attr-defined]


@pytest.mark.parametrize("card", ["h100", "h200"])
def test_masked_fill_matches_its_committed_profile(card: str) -> None:
    # validation/bench/masked_fill.py profiled S.masked_fill(mask, -inf) on the card: one
    # device-to-device memcpy (the clone) and one elementwise kernel (the fill); for score
    # matrices past the L2 the model's two kernels land within 20% of each
    doc = json.loads((KERNELS / card / "kernels" / "masked-fill.json").read_text())
    checked = 0
    for case in doc["cases"]:
        p = case["params"]
        if case["score_bytes"] < 60e6:
            continue
        acts = {a["category"]: a["duration_s"] for a in case["activities"]}
        assert set(acts) == {"gpu_memcpy", "kernel"}
        r = roofcalc.analyze(
            "attention", card, batch=1, heads=p["batch_heads"], seq=p["seq"], causal=True, impl="naive", dtype="bf16"
        )
        for name, act in (("mask_clone", "gpu_memcpy"), ("causal_mask", "kernel")):
            ratio = acts[act] / kernel(r, name).seconds  # type: ignore[attr-defined]
            assert 0.8 <= ratio <= 1.2, (case["label"], name, ratio)
        checked += 1
    assert checked >= 3


@pytest.mark.parametrize(("heads", "in_l2"), [(8, True), (16, False)])
def test_naive_attention_reads_the_scores_it_just_wrote_from_l2(heads: int, in_l2: bool) -> None:
    # S * scale right after S = Q K^T, bf16, seq 1024: S is heads x 2 MiB. 16.8 MB fit the
    # H100's L2 share (50 MiB over 2 partitions), 33.6 MB do not.
    from roofcalc.expected import card, mixed_bandwidth

    hw = load_hardware("h100")
    c = card(hw)
    s = heads * 1024 * 1024 * 2
    r = roofcalc.analyze(
        "attention", "h100", batch=1, heads=heads, kv_heads=heads, seq=1024, head_dim=128, impl="naive"
    )
    scale = kernel(r, "scale")
    assert (s <= c.l2_bytes) == in_l2
    # 1024 elements per block of 128 threads: 16 blocks per SM (2048 threads), every SM busy
    grid = heads * 1024
    resident = 16
    in_flight = resident * 128 * 16
    sm_bw = min(c.per_sm_bw, in_flight / c.loaded_latency)
    dram = min(mixed_bandwidth(c, 2 * s, s), c.sms * c.per_sm_bw, c.sms * sm_bw)
    if in_l2:  # S's reads hit the L2; the write streams to DRAM beside them; the L2 carries both
        l2_sm = min(c.per_sm_bw * c.l2_bw / c.dram_bw, in_flight / c.l2_latency)
        t_mem = max(s / dram, 2 * s / min(c.l2_bw, c.sms * l2_sm))
    else:
        t_mem = 2 * s / dram
    t_comp = 0.17 * heads * 1024 * 1024 / (4 * c.boost_hz * c.sms)  # issue slots (ops/attention.yaml)
    t_lat = math.ceil(grid / (resident * c.sms)) * 2 * c.latency
    want = max(t_mem, t_comp, t_lat) + min(t_mem, t_comp) / resident
    assert scale.seconds == pytest.approx(want, rel=1e-6)  # type: ignore[attr-defined]
    assert ("read from L2" in scale.reason) == in_l2  # type: ignore[attr-defined]


@pytest.mark.parametrize(("m", "n", "unaligned"), [(16384, 16384, False), (16384, 16383, True), (16383, 16384, True)])
def test_a_16bit_gemv_off_16_bytes_streams_at_the_probes_gemv_rate(m: int, n: int, unaligned: bool) -> None:
    # torch.mv bf16: A (m x n) is streamed once beside x and y; aligned, at the skinny GEMM
    # rate (cuBLASLt's GEMM kernels); with m or n not a multiple of 8 elements, at the rate the
    # probe measured for cuBLAS's gemv kernels. Both are fractions of the read ceiling.
    hw = load_hardware("h200")
    read = hw.bandwidth * fig("h200", "dram_read_fraction")
    frac = fig("h200", "unaligned_gemv_bandwidth_fraction" if unaligned else "skinny_gemm_bandwidth_fraction")
    g = kernel(roofcalc.analyze("gemv", "h200", m=m, n=n), "gemv_as_gemm")
    moved = (m * n + n + m) * 2
    assert g.seconds == pytest.approx(fig("h200", "gemm_kernel_floor_s") + moved / (read * frac), rel=1e-9)  # type: ignore[attr-defined]
    assert ("gemv kernels" in g.reason) == unaligned  # type: ignore[attr-defined]


def test_prior_bytes_count_only_what_the_kernel_reads() -> None:
    # a copy kernel of 2 MB read + 2 MB written on an H100: declaring more "just written"
    # bytes than it reads changes nothing, and a kernel that only writes reads nothing from L2
    from roofcalc.expected import Kernel, card, kernel_time

    hw = load_hardware("h100")
    c = card(hw)
    n = 1 << 20

    def copy(prior: float, dram: float = 4.0 * n, write: float = 2.0 * n) -> object:
        k = Kernel(
            name="copy",
            model="stream",
            help="",
            dtype="bf16",
            grid=n // 1024,
            threads=128,
            dram_bytes=dram,
            write_bytes=write,
            prior_bytes=prior,
            passes=2,
        )
        return kernel_time(hw, c, k, 2)[0]

    reads = copy(2.0 * n)
    assert "read from L2" in reads.reason  # type: ignore[attr-defined]
    assert copy(20.0 * n).seconds == reads.seconds  # type: ignore[attr-defined]
    assert copy(2.0 * n).seconds < copy(0.0).seconds  # type: ignore[attr-defined]
    only_writes = copy(2.0 * n, dram=2.0 * n, write=2.0 * n)
    assert "L2" not in only_writes.reason  # type: ignore[attr-defined]
    assert only_writes.seconds == copy(0.0, dram=2.0 * n, write=2.0 * n).seconds  # type: ignore[attr-defined]


def test_alignment_is_exact_beyond_float_precision() -> None:
    """k = 2**53 + 1 fp16 elements: 2**54 + 2 bytes, not a multiple of 16 (as a float the
    product rounds to 2**54, which is): the GEMM stays off the aligned tensor-core path."""
    from roofcalc.expected import gemm_aligned

    k = 2**53 + 1
    assert not gemm_aligned(16, 16, k, ELEMENT_BYTES["fp16"])
    r = roofcalc.analyze("gemm", "h100", m=16, n=16, k=k)
    assert "not a multiple of 16 bytes" in kernel(r, "gemm").reason  # type: ignore[attr-defined]


@pytest.mark.parametrize("card", ["h100", "h200"])
def test_power_limited_tensor_rate_is_the_committed_loop(card: str) -> None:
    """The registry's power_limited_tensor_fraction is the committed measurement: the median of
    the second half of 3 s of back-to-back bf16 16384 x 14336 x 4096 GEMMs on random inputs, over
    the bf16 peak; and that loop's first batch ran faster (the limit binds within ~50 ms)."""
    doc = json.loads((KERNELS / card / "kernels" / "gemm-sustained.json").read_text())
    case = next(c for c in doc["cases"] if c["input"] == "normal" and (c["m"], c["n"], c["k"]) == (16384, 14336, 4096))
    hw = load_hardware(card)
    measured = case["flops"] / case["loop_second_half_median_s"] / hw.peak("bf16")
    assert fig(card, "power_limited_tensor_fraction") == pytest.approx(measured, abs=5e-5)
    assert case["curve"][0]["median_s"] < 0.9 * case["loop_second_half_median_s"]


def test_steps_timed_in_a_loop_run_gemms_at_the_power_limited_rate() -> None:
    """A compute-bound GEMM in a prefill step (eager, or graph replays) takes its tile time at
    tensor_fraction x (power_limited_tensor_fraction / tensor_fraction.bf16) of the peak; the
    same GEMM timed as one op keeps the short-run rate. By hand: one 8B prefill of 4 x 1024
    tokens, gate_proj = 4096 x 14336 x 4096 bf16."""
    ratio = fig("h200", "power_limited_tensor_fraction") / load_hardware("h200").expected.tensor_fraction["bf16"].value
    step = roofcalc.analyze("prefill", "h200", model="llama-3.1-8b", batch=4, seq=1024, engine="eager")
    gate = kernel(step, "gate_proj")
    op = kernel(roofcalc.analyze("gemm", "h200", m=4096, n=14336, k=4096), "gemm")
    assert "at the power limit" in gate.reason and "power limit" not in op.reason  # type: ignore[attr-defined]
    rate = lambda k: float(k.reason.split(" TFLOP/s achievable")[0].rsplit("; ", 1)[1].replace(",", ""))  # noqa: E731
    assert rate(gate) == pytest.approx(rate(op) * ratio, abs=1.0)
    # compute-bound, the floor aside: the tile time scales by 1 / ratio
    floor = fig("h200", "gemm_kernel_floor_s")
    assert (gate.seconds - floor) == pytest.approx((op.seconds - floor) / ratio, rel=0.02)  # type: ignore[attr-defined]
    # decode with CUDA graphs: the power limit is the same, but its GEMMs stream weights
    dec = roofcalc.analyze("decode", "h200", model="llama-3.1-8b", batch=1, context=1024)
    assert "at the power limit" in kernel(dec, "gate_proj").reason  # type: ignore[attr-defined]


def test_a_calibration_takes_its_registry_parts_figures_and_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The probe measures neither the power-limited rate nor cuBLAS's gemmSN step: a calibration
    takes the ratio of the registry part it names (the committed H200 calibration: its own bf16
    short-run rate x the H200 file's ratio) and the step as it stands. A base that is a file name
    (which could name the calibration itself) or an unknown part gives neither: the note says the
    power figure is missing, the map's gemmSN shapes keep the SIMT model and say gemmSN is not
    modelled; no recursion."""
    from roofcalc.expected import card
    from roofcalc.hardware import load_calibration

    cal_path = KERNELS.parent / "probe" / "h200" / "calibration.yaml"
    h200 = load_hardware("h200").expected
    ratio = fig("h200", "power_limited_tensor_fraction") / h200.tensor_fraction["bf16"].value
    assert card(load_calibration(cal_path)).power_ratio == pytest.approx(ratio, rel=1e-12)
    assert card(load_calibration(cal_path)).sn_k_step == fig("h200", "gemm_sn_k_step_s")
    text = cal_path.read_text()
    assert "\n  base: h200\n" in text and "gemm_sn_k_step_s" not in text
    monkeypatch.chdir(tmp_path)
    for base in ("loop.json", "no-such-part"):
        own = tmp_path / "loop.json"
        own.write_text(text.replace("\n  base: h200\n", f"\n  base: {base}\n"))
        cal = load_calibration(own)
        assert card(cal).power_ratio == 1.0 and card(cal).sn_k_step == 0.0
        r = roofcalc.analyze("prefill", cal, model="llama-3.1-8b", batch=4, seq=1024)
        assert any("power_limited_tensor_fraction" in n for n in r.expected_notes)
        g = kernel(roofcalc.analyze("gemm", cal, m=16, n=4096, k=4096, dtype="fp32"), "gemm")
        assert "not modelled here" in g.reason and not g.reason.startswith("cuBLAS's gemmSN")  # type: ignore[attr-defined]


def test_a_calibration_is_completed_the_same_by_every_route(tmp_path: Path) -> None:
    """A hostile tester's findings: the registry part's figures were borrowed only under
    --calibration (the same file by --hw-file or --hw kept the SIMT model), a base named by its
    alias was refused against --hw h100, and a borrowed figure could cite a source of the
    calibration's own that shared its name."""
    from roofcalc.hardware import load_calibration

    cal_path = KERNELS.parent / "probe" / "h100" / "calibration.yaml"
    text = cal_path.read_text()
    want = roofcalc.analyze("gemm", load_calibration(cal_path), m=16, n=4096, k=4096, dtype="fp32").expected_s
    for hw in (load_hardware(cal_path), load_hardware(str(cal_path))):
        assert roofcalc.analyze("gemm", hw, m=16, n=4096, k=4096, dtype="fp32").expected_s == want
    alias = tmp_path / "alias.yaml"
    alias.write_text(text.replace("\n  base: h100\n", "\n  base: h100-sxm\n"))
    assert load_calibration(alias, "h100").expected.gemm_sn_k_step_s is not None
    clash = tmp_path / "clash.yaml"
    assert "\nsources:\n" in text
    clash.write_text(text.replace("\nsources:\n", "\nsources:\n  bench-fp32-choice: {title: 'my own notes'}\n", 1))
    cal = load_calibration(clash)
    step = cal.expected.gemm_sn_k_step_s
    assert step is not None and step.source == "bench-fp32-choice-h100"
    assert cal.sources["bench-fp32-choice"].title == "my own notes"
    assert cal.sources["bench-fp32-choice-h100"] == load_hardware("h100").sources["bench-fp32-choice"]


def test_a_host_paced_step_is_limited_by_the_host_whatever_the_gpus_largest_share() -> None:
    """70B decode at TP=2 without graphs: the GPU's largest share is memory, but the step is the
    host's issue time, so the limiter is the host (review finding: it said 'memory')."""
    r = roofcalc.analyze(
        "decode", "h200", model="llama-3.1-70b", batch=8, context=2048, engine="eager", cuda_graphs=False, gpus=2
    )
    assert HOST_PACED_TP_NOTE in r.expected_notes and r.expected_limiter == "host"


def test_a_part_the_occupancy_solver_cannot_run_on_gets_the_bound_and_says_why(tmp_path: Path) -> None:
    """A user hardware file without the SM's shared-memory configurations: the op's bound is
    answered, the expected time is left out with a warning naming the figure (it was an
    AssertionError, exit 70, before)."""
    text = (KERNELS.parent.parent / "hardware" / "h100.yaml").read_text()
    lines = [ln for ln in text.splitlines() if "shared_memory_configs_kib" not in ln]
    path = tmp_path / "nocfg.yaml"
    path.write_text("\n".join(ln for ln in lines if not ln.startswith("id:")) + "\n")
    r = roofcalc.analyze("layernorm", str(path), rows=100)
    assert r.predicted_s > 0 and r.expected_s is None
    assert any("sm.shared_memory_configs_kib" in w and "no expected time" in w for w in r.warnings)


# PyTorch's softmax kernels, as the profiler named them for each shape of the sweep either side
# of host_softmax's boundaries (validation/bench/kernel_shapes.py --plan paths on an H100)
SOFTMAX_KERNELS = {
    "softmax_warp_forward": "softmax_warp_forward<",
    "cunn_softmax_forward_reg": "cunn_SoftMaxForwardReg<",
    "cunn_softmax_forward_smem": "cunn_SoftMaxForwardSmem<",
    "cunn_softmax_forward": "cunn_SoftMaxForward<",
}


def test_softmax_picks_the_kernel_pytorch_launched_for_each_row_length() -> None:
    shapes = json.loads((KERNELS / "h100" / "kernels" / "paths" / "kshapes-paths.json").read_text())
    cases = [c for c in shapes["cases"] if c["op"] == "softmax"]
    assert len(cases) == 75
    seen = set()
    for c in cases:
        (launched,) = c["kernels"]
        r = roofcalc.analyze("softmax", "h100", dtype=c["dtype"], **c["params"])
        (model,) = r.expected_kernels  # type: ignore[attr-defined]
        assert SOFTMAX_KERNELS[model.name] in launched["name"], (c["label"], model.name, launched["name"])
        assert model.grid == launched["grid"][0], c["label"]
        # the declared registers give the blocks per SM the profiled ones give (one 1024-thread
        # block once a thread holds 37 or more)
        want = roofcalc.occupancy(
            load_hardware("h100"),
            threads=math.prod(launched["block"]),
            regs=launched["registers per thread"],
            smem=launched["shared memory"],
        ).blocks_per_sm
        assert model.blocks_per_sm == want, c["label"]
        seen.add(model.name)
    assert seen == set(SOFTMAX_KERNELS)


def ncu_cases(folder: str, csv_name: str, plan_name: str) -> list[tuple[dict, dict[str, str]]]:
    """The cases of a committed ncu_cases.py run (validation/expected/h100/kernels/FOLDER), each
    with its kernel's Nsight Compute row: one kernel per case, in the plan's order."""
    base = KERNELS / "h100" / "kernels" / folder
    rows = list(csv.reader((base / csv_name).read_text().splitlines()))
    head = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
    measured = [dict(zip(rows[head], r, strict=True)) for r in rows[head + 2 :] if len(r) == len(rows[head])]
    plan = json.loads((base / plan_name).read_text())
    assert len(plan) == len(measured)
    return list(zip(plan, measured, strict=True))


def counter(row: dict[str, str], name: str) -> float:
    return float(row[name].replace(",", ""))


def test_softmax_block_kernels_issue_what_nsight_compute_counted() -> None:
    # per-row warp instructions of the three block kernels (ops/softmax.yaml) against Nsight
    # Compute's smsp__inst_executed for each 1024-row case of the sweep (one kernel per case,
    # in the plan's order): within 8% in both dtypes
    per_row = {
        "cunn_SoftMaxForwardReg<": lambda cols: 1.995 * cols + 2250,
        "cunn_SoftMaxForwardSmem<": lambda cols: 1.215 * cols + 3850,
        "cunn_SoftMaxForward<": lambda cols: 1.242 * cols + 6100,
    }
    checked = 0
    for case, r in ncu_cases("paths", "ncu-paths.csv", "ncu-paths-plan.json"):
        fit = next((f for k, f in per_row.items() if k in r["Kernel Name"]), None)
        if fit is None:
            continue
        p = case["params"]
        inst = counter(r, "smsp__inst_executed.sum") / p["rows"]
        assert fit(p["cols"]) == pytest.approx(inst, rel=0.08), case["label"]
        model = roofcalc.analyze("softmax", "h100", dtype=case["dtype"], **p)
        assert "block(s) of 1024 threads" in model.expected_terms[0].reason  # type: ignore[attr-defined]
        checked += 1
    assert checked == 23  # 11 Reg, 6 Smem, 6 three-pass


@pytest.mark.parametrize("part", ["a100", "b200", "h100-pcie"])
def test_a_part_without_measured_figures_gets_no_expected_time(part: str) -> None:
    # these files have no `expected:` section (nothing measured on the card): the model would fall
    # back to the peaks and print the bound again as "expected" (A100 8B decode came out at 1.05x
    # the bound, against 1.95x on an H100). So there is no expected time, and the note says how to
    # get one; the bound is unchanged.
    for op, params in (
        ("gemm", {"m": 128}),
        ("softmax", {"rows": 1, "cols": 1024}),
        ("decode", {"model": "llama-3.1-8b"}),
    ):
        r = roofcalc.analyze(op, part, **params)
        assert r.expected_s is None and r.expected_terms == [], op
        assert r.bound_s == r.predicted_s > 0
        assert r.summary is not None and r.summary.expected_s is None and r.summary.band is None
        assert any("roofcalc probe" in n for n in r.expected_notes), r.expected_notes
        assert "no expected time" in r.summary.text and "bound" in r.summary.text


def test_reread_miss_share_runs_from_one_l2_partition_to_the_whole_l2() -> None:
    # H100: 50 MiB of L2 in two partitions (hardware file). Re-reads all hit while the rows in
    # flight fit one partition (25 MiB), all miss once they fill the whole L2, in proportion
    # between: at 3/4 of the L2, half of them miss
    from roofcalc.expected import card, reread_miss

    c = card(load_hardware("h100"))
    l2 = 50 * 2**20
    assert reread_miss(c, l2 / 2) == 0.0
    assert reread_miss(c, 0.75 * l2) == pytest.approx(0.5)
    assert reread_miss(c, l2) == pytest.approx(1.0)
    assert reread_miss(c, 3 * l2) == 1.0


@pytest.mark.parametrize(
    ("folder", "csv_name", "plan_name", "op", "rereads"),
    [
        ("l2", "ncu-l2.csv", "ncu-l2-plan.json", "softmax", 2),
        ("l2-layernorm", "ncu-l2ln.csv", "ncu-l2ln-plan.json", "layernorm", 1),
    ],
)
def test_reread_misses_follow_what_nsight_compute_read_from_dram(
    folder: str, csv_name: str, plan_name: str, op: str, rereads: int
) -> None:
    # for each case of the sweeps (rows in flight between 13 and 52 MB on an H100), the share of
    # the re-reads the model sends to DRAM against Nsight Compute's DRAM reads (each row read
    # once, plus the re-reads that missed): within 0.2 everywhere, 0.12 in the median
    from roofcalc.expected import card, reread_miss

    c = card(load_hardware("h100"))
    errors = []
    for case, r in ncu_cases(folder, csv_name, plan_name):
        p = case["params"]
        row_bytes = p["cols"] * ELEMENT_BYTES[case["dtype"]]
        read = counter(r, "dram__bytes_read.sum") / (p["rows"] * row_bytes)
        res = roofcalc.analyze(op, "h100", dtype=case["dtype"], **p)
        (k,) = res.expected_kernels  # type: ignore[attr-defined]
        footprint = 1.2 * row_bytes if op == "softmax" else 1.6 * row_bytes  # the op files' figures
        working = min(k.grid, k.blocks_per_sm * 132) * footprint
        errors.append(abs(reread_miss(c, working) - (read - 1) / rereads))
    assert max(errors) < 0.2
    assert sorted(errors)[len(errors) // 2] < 0.12


def _graph_decode_layer(model: str, engine: str, batch: int) -> list[dict]:
    """The kernels of the first layer of a two-layer decode step profiled inside its CUDA graph
    (validation/expected/h100/kernels/graph-decode/), each with its node time."""
    doc = json.loads((KERNELS / "h100" / "kernels" / "graph-decode" / f"graph-kernels-{model}.json").read_text())
    ks = next(c for c in doc["cases"] if c["engine"] == engine and c["batch"] == batch)["kernels"]
    if engine == "eager":
        # each RMSNorm starts with the cast of the residual stream to float32; two per layer
        starts = [
            i for i, k in enumerate(ks) if "unrolled_elementwise_kernel" in k["name"] and "direct_copy" in k["name"]
        ]
        return ks[starts[0] : starts[2]]
    # compiled: a layer starts with Inductor's fused RMSNorm before attention
    starts = [i for i, k in enumerate(ks) if k["name"].startswith("triton_red_fused__to_copy_add_mean")]
    return ks[starts[0] : starts[1]]


@pytest.mark.parametrize(("model", "batch"), [("llama-3.1-8b", 1), ("llama-3.1-8b", 16), ("qwen2.5-7b", 32)])
def test_eager_kernels_off_the_vectorized_path_take_their_items_in_order(model: str, batch: int) -> None:
    # A broadcast or strided operand sends PyTorch to elementwise_kernel<128, vt> (rotary
    # embedding's products and half negation, RMSNorm's scale): vt items per thread one after
    # another. Inside a CUDA graph their nodes took longer than the vectorized kernels' of the
    # same layer, and the model's launched time for them (graph floor + vt + 1 dependent round
    # trips) is within 25% of their median node; the vectorized ones stay near the floor
    layer = _graph_decode_layer(model, "eager", batch)
    inorder = sorted(k["node_s"] for k in layer if "elementwise_kernel<128" in k["name"] and "index" not in k["name"])
    vector = sorted(k["node_s"] for k in layer if "vectorized_elementwise_kernel" in k["name"])
    assert len(inorder) >= 7 and len(vector) >= 10
    assert inorder[len(inorder) // 2] > 1.2 * vector[len(vector) // 2]
    r = roofcalc.analyze("decode", "h100", model=model, layers=2, batch=batch, context=1024, engine="eager")
    strided = next(e for e in r.expected_kernels if e.name == "rope_eager_strided")
    assert strided.launched_s == pytest.approx(inorder[len(inorder) // 2], rel=0.25)
    plain = next(e for e in r.expected_kernels if e.name == "rmsnorm_eager")
    assert plain.launched_s == pytest.approx(vector[len(vector) // 2], rel=0.25)


# the projections the model splits where cuBLAS did not, and the other way round, per case
SPLIT_MISSES = {("qwen2.5-7b", 1): ({"q_proj", "o_proj"}, set()), ("qwen2.5-7b", 32): ({"q_proj", "o_proj"}, set()),
                ("llama-3.1-8b", 64): ({"q_proj", "o_proj"}, set())}  # fmt: skip


@pytest.mark.parametrize(
    ("model", "batch"),
    [("llama-3.1-8b", 1), ("llama-3.1-8b", 16), ("llama-3.1-8b", 64), ("qwen2.5-7b", 1), ("qwen2.5-7b", 32)],
)
def test_decode_projections_split_k_where_cublas_did(model: str, batch: int) -> None:
    # F.linear with few rows: cuBLAS's narrow tiles span 64 weight rows and up to 64 rows of x
    # (LINEAR_X_ROWS), and k is cut into ceil(k / 2,048) slices while tiles x slices stay within
    # 128, with cublasLt's splitKreduce after. Inside a CUDA graph (validation/expected/h100/
    # kernels/graph-decode/) the projections followed by a splitKreduce are the ones the model
    # splits, but for the misses named in SPLIT_MISSES (q and o of 4,096 or 3,584 rows: cuBLAS
    # took more tiles of x there, or deeper slices)
    order = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
    seen, at = set(), -1
    for k in _graph_decode_layer(model, "compiled", batch):
        if "nvjet" in k["name"]:
            at += 1
        elif "splitKreduce" in k["name"]:
            seen.add(order[at])
    r = roofcalc.analyze("decode", "h100", model=model, layers=2, batch=batch, context=1024, engine="compiled")
    split = {e.name.removesuffix(" split-K reduce") for e in r.expected_kernels if e.name.endswith("split-K reduce")}
    extra, missed = SPLIT_MISSES.get((model, batch), (set(), set()))
    assert "gate_proj" not in split and "up_proj" not in split
    assert split - seen == extra and seen - split == missed
    assert len(seen & split) >= 2  # k and v at least, everywhere
    # an op's torch.matmul of the same shape keeps the model's own tile search, and so do parts
    # that are not Hopper or whose per-SM streaming rate is not measured (the tiles can leave
    # SMs idle): the A100 and the H100 PCIe
    plain = roofcalc.analyze("gemm", "h100", m=batch, n=4096, k=4096)
    assert "F.linear" not in kernel(plain, "gemm").reason  # type: ignore[attr-defined]
    for part in ("a100", "h100-pcie"):
        other = roofcalc.analyze("decode", part, model=model, layers=2, batch=batch, context=1024, engine="compiled")
        assert not any("F.linear" in k.reason for k in other.expected_kernels)


def test_a_mixture_of_experts_runs_each_touched_experts_gemms() -> None:
    # mixtral-8x7b (8 experts, 2 per token): at batch 64 all 8 are touched, each running gate,
    # up and down over its share of the 128 token-expert pairs (16 rows); the expected time
    # streams every touched expert's weights, so it is no faster than the bound (it was 0.4x)
    r = roofcalc.analyze("decode", "h100", model="mixtral-8x7b", batch=64, context=1024)
    gate = next(k for k in r.expected_kernels if k.name == "gate_proj")
    assert gate.count == 32 * 8
    assert r.expected_s >= r.predicted_s
    one = roofcalc.analyze("decode", "h100", model="mixtral-8x7b", batch=1, context=1024)
    # one token touches 2 experts: 8 x (1 - (1 - 2/8)^1) = 2, one row each
    assert next(k for k in one.expected_kernels if k.name == "gate_proj").count == 32 * 2
    assert one.expected_s >= one.predicted_s


RUN3 = KERNELS / "h100" / "host" / "run3"


def _med(xs: list[float]) -> float:
    s = sorted(xs)
    return s[len(s) // 2] if len(s) % 2 else (s[len(s) // 2 - 1] + s[len(s) // 2]) / 2


def _compiled_fit(path: Path) -> tuple[float, float, float]:
    """(hot-loop op, compiled cost per kernel, per entry) of one host_rate.py record, by hand."""
    rec = json.loads(path.read_text())
    lo, hi = sorted(rec["torch_compiled"]["chains"], key=lambda c: c["kernels"])
    t_lo, t_hi = sorted(lo["samples_s"])[3], sorted(hi["samples_s"])[3]  # medians of 7
    per = (t_hi - t_lo) / (hi["kernels"] - lo["kernels"])
    return sorted(rec["torch_op"]["samples_s"])[3], per, t_lo - per * lo["kernels"]


def test_compiled_host_figures_are_the_measured_multiples_of_the_op_floor() -> None:
    """COMPILED_KERNEL_OPS and COMPILED_ENTRY_OPS are the medians over the machines (a machine's
    host_rate.py records averaged) of what the compiled chains cost per kernel and per entry, in
    multiples of the hot-loop op of the same record: the fourteen H100 machines they were taken
    from (an H200's records, h200/host2, came with a hold-out measured after them)."""
    from roofcalc.expected import COMPILED_ENTRY_OPS, COMPILED_KERNEL_OPS

    machines: dict[Path, list[tuple[float, float]]] = {}
    for path in sorted(KERNELS.glob("h100*/**/host-rate*.json")):
        if "torch_compiled" in json.loads(path.read_text()):
            op, k, e = _compiled_fit(path)
            machines.setdefault(path.parent, []).append((k / op, e / op))
    assert len(machines) == 14
    per = [tuple(sum(r[i] for r in rs) / len(rs) for i in range(2)) for rs in machines.values()]
    assert pytest.approx(_med([p[0] for p in per]), abs=0.01) == COMPILED_KERNEL_OPS
    assert pytest.approx(_med([p[1] for p in per]), abs=0.01) == COMPILED_ENTRY_OPS


def test_h100_host_floor_is_the_median_over_the_machines_measured() -> None:
    """The registry's torch_op_floor_s is a property of the host: the median over every H100
    machine whose hot loop is committed (the probe's, the host-call sweep's, and each folder of
    host_rate.py records on one or two H100s, a machine's records averaged)."""
    import yaml

    cal = yaml.safe_load((KERNELS.parent / "probe" / "h100" / "calibration.yaml").read_text())
    calls = json.loads((KERNELS / "h100" / "kernels" / "host-calls.json").read_text())["cases"]
    machines = [
        cal["expected"]["torch_op_floor_s"]["value"],
        next(c["per_call_s"] for c in calls if c["case"] == "x.add_(1)"),
    ]
    folders: dict[Path, list[float]] = {}
    for path in sorted(KERNELS.glob("h100*/**/host-rate*.json")):
        folders.setdefault(path.parent, []).append(_med(json.loads(path.read_text())["torch_op"]["samples_s"]))
    machines += [sum(v) / len(v) for v in folders.values()]
    assert len(machines) >= 11
    assert fig("h100", "torch_op_floor_s") == pytest.approx(_med(machines), rel=2e-3)


def test_h200_host_floor_is_the_median_of_the_hot_loops_timed_around_steps() -> None:
    """The H200's torch_op_floor_s: the median of the hot loops timed just before and just after
    each step of the implementation sets impl-holdout10 to -21 (impl_bench.py --host), read here
    from the files apart from validation/expected/host_pool.py. impl-holdout22 and later sets,
    which test the figure, stay out. The records hold both of the host's states (about 6.5-7.5 and
    10-12 us), the slow one in a minority."""
    records: list[float] = []
    for n in range(10, 22):
        doc = json.loads((KERNELS.parent / "traces" / "h200" / f"impl-holdout{n}" / "times.json").read_text())
        records += [
            v for c in doc["cases"] if c.get("host_op_s") for v in (c["host_op_s"]["before"], c["host_op_s"]["after"])
        ]
    assert len(records) > 900
    figure = fig("h200", "torch_op_floor_s")
    assert figure == pytest.approx(_med(records), rel=2e-3)
    assert json.loads((KERNELS / "h200" / "host-pool.json").read_text())["torch_op_floor_s"] == pytest.approx(
        _med(records), rel=1e-9
    )
    slow = sum(r > 8.3e-6 for r in records) / len(records)
    assert 0.2 < slow < 0.5
    assert min(records) < 0.9 * figure and max(records) > 1.3 * figure
    # the committed pool (with the other pools looked at and the layer's ops by state) is what the
    # script computes from the committed files
    pool = load_script(KERNELS / "host_pool.py").pool()
    assert json.loads(json.dumps(pool)) == json.loads((KERNELS / "h200" / "host-pool.json").read_text())


def test_the_slow_end_of_the_hosts_is_the_p95_of_the_hot_loops_around_steps() -> None:
    """torch_op_slow_s of the H100 and H200: the 95th percentile of the hot loops timed just before
    and after each step issued from Python on that card's machines (llm_bench.py's host_op_s; on
    the H200 also impl_bench.py's of impl-holdout10 to -21), read here from the files apart from
    validation/expected/host_slow.py, by numpy's default interpolation written out. The hold-out
    that tested the figure (h200/host6, unopened when it was set) and host7, measured after it and
    unopened, stay out."""

    def p95(xs: list[float]) -> float:
        s = sorted(xs)
        pos = (len(s) - 1) * 0.95
        lo = int(pos)
        return s[lo] + (s[min(lo + 1, len(s) - 1)] - s[lo]) * (pos - lo)

    def around(card: str) -> list[float]:
        out: list[float] = []
        for path in KERNELS.glob(f"{card}*/**/*.json"):
            if "report" in path.name or path.relative_to(KERNELS).parts[:2] in (("h200", "host6"), ("h200", "host7")):
                continue
            raw = path.read_bytes()
            if b'"host_op_s"' not in raw:  # parse only the files that can hold such records
                continue
            try:
                doc = json.loads(raw)
            except ValueError:
                continue
            if isinstance(doc, dict) and isinstance(doc.get("cases"), list):
                out += [
                    v
                    for c in doc["cases"]
                    if isinstance(c, dict) and isinstance(c.get("host_op_s"), dict)
                    for v in (c["host_op_s"]["before"], c["host_op_s"]["after"])
                ]
        return out

    h100 = around("h100")
    h200 = around("h200")
    for n in range(10, 22):
        doc = json.loads((KERNELS.parent / "traces" / "h200" / f"impl-holdout{n}" / "times.json").read_text())
        h200 += [
            v for c in doc["cases"] if c.get("host_op_s") for v in (c["host_op_s"]["before"], c["host_op_s"]["after"])
        ]
    assert len(h100) >= 300 and len(h200) >= 1200
    for card, recs in (("h100", h100), ("h200", h200)):
        assert fig(card, "torch_op_slow_s") == pytest.approx(p95(recs), rel=1e-3)
        # the slow end lies above the card's typical figure, within the slow state's reach (12 us)
        assert fig(card, "torch_op_floor_s") * 1.2 < fig(card, "torch_op_slow_s") < 12.5e-6
    committed = json.loads((KERNELS / "host-slow.json").read_text())
    assert json.loads(json.dumps(load_script(KERNELS / "host_slow.py").figures())) == committed


def test_a_compiled_step_without_graphs_pays_per_entry_and_per_compiled_kernel() -> None:
    """Compiled decode at batch 1 without CUDA graphs, by hand: the host makes layers + 1 calls
    into compiled functions (one per layer, the final norm and head) and issues the embedding
    eagerly; under TP=2 two calls per layer, and the all-reduces, the add after the second, the
    logits' gather and the copy that puts the gathered logits in order are eager PyTorch calls."""
    from roofcalc.expected import (
        COLLECTIVE_STEP_HOST_OPS,
        COMPILED_ENTRY_OPS,
        COMPILED_KERNEL_OPS,
        COMPILED_STEP_HOST_FACTOR,
        EAGER_STEP_HOST_FACTOR,
    )

    floor = fig("h100", "torch_op_floor_s")
    kern, entry = COMPILED_KERNEL_OPS * floor, COMPILED_ENTRY_OPS * floor
    # (GPUs, compiled entries, eager ops, eager collectives)
    for gpus, entries, eager, coll in ((1, 16 + 1, 1, 0), (2, 2 * 16 + 1, 1 + 16 + 1, 2 * 16 + 1)):
        r = roofcalc.analyze(
            "decode",
            "h100",
            model="llama-3.2-1b",
            batch=1,
            context=1000,
            engine="compiled",
            cuda_graphs=False,
            gpus=gpus,
        )
        issued = [k for k in r.expected_kernels if k.issued]
        aten = sum(k.count for k in issued if k.launcher == "aten" and k.model not in ("allreduce", "allgather"))
        compiled = sum(k.count for k in issued if k.launcher == "inductor")
        assert aten == eager and sum(k.count for k in issued if k.model in ("allreduce", "allgather")) == coll
        host = (aten * EAGER_STEP_HOST_FACTOR + coll * COLLECTIVE_STEP_HOST_OPS) * floor + COMPILED_STEP_HOST_FACTOR * (
            compiled * kern + entries * entry
        )
        assert r.expected_limiter == "host"
        assert r.expected_s == pytest.approx(host + _closing(r), rel=1e-12)
        why = next(t.reason for t in r.expected_terms if t.name == "host issue")
        host_entry_us = COMPILED_STEP_HOST_FACTOR * entry * 1e6
        assert (
            f"{entries} calls of compiled functions at {host_entry_us:.0f} us a call launching {compiled} compiled"
            in why
        )
    # with CUDA graphs the host is out of it: no entry or launch cost
    g = roofcalc.analyze("decode", "h100", model="llama-3.2-1b", batch=1, context=1000, engine="compiled")
    assert "host issue" not in {t.name for t in g.expected_terms}
    # the counts against a profiled step (llama-3.1-8b, validation/expected/h100x2/host3/): the
    # compiled regions the host entered, and at one GPU every kernel the step ran
    for gpus, name in ((1, "host-trace-tp1.json"), (2, "host-trace-tp2.json")):
        doc = json.loads((KERNELS / "h100x2" / "host3" / name).read_text())
        prof = next(c for c in doc["cases"] if c["engine"] == "compiled")["profile"]
        regions = sum(v["n"] for k, v in prof["host_top"].items() if k.startswith("Torch-Compiled Region"))
        assert regions == 32 * gpus + 1
        if gpus == 1:
            r = roofcalc.analyze(
                "decode", "h100", model="llama-3.1-8b", batch=1, context=1024, engine="compiled", cuda_graphs=False
            )
            assert sum(k.count for k in r.expected_kernels) == prof["kernels"]


def test_compiled_step_factor_is_the_median_of_the_measured_host_bound_steps() -> None:
    """COMPILED_STEP_HOST_FACTOR: over the host-bound compiled steps of run3 (the GPU's modelled
    work under 0.7 of the step), the median of (step - eager calls) / (the hot-loop costs of
    the compiled kernels and entries measured in the same call)."""
    from roofcalc.expected import COMPILED_STEP_HOST_FACTOR, EAGER_STEP_HOST_FACTOR

    fits = [_compiled_fit(RUN3 / name) for name in ("host-rate.json", "host-rate-after.json")]
    op, kern, entry = (sum(f[i] for f in fits) / 2 for i in range(3))
    layers = {"llama-3.2-1b": 16, "llama-3.2-3b": 28, "llama-3.1-8b": 32, "qwen2.5-7b": 28}
    factors = []
    for name in ("llm-nograph.json", "llm-prefill-small.json"):
        for c in json.loads((RUN3 / name).read_text())["cases"]:
            if c["engine"] != "compiled":
                continue
            size = {"context": c["context"]} if c["phase"] == "decode" else {"seq": c["seq"]}
            r = roofcalc.analyze(
                c["phase"], "h100", model=c["model"], batch=c["batch"], engine="compiled", cuda_graphs=False, **size
            )
            host = next((t.seconds for t in r.expected_terms if t.name == "host issue"), 0.0)
            if (r.expected_s - host) / c["median_s"] >= 0.7:
                continue  # the GPU's work, not the host's issue
            issued = [k for k in r.expected_kernels if k.issued]
            aten = sum(k.count for k in issued if k.launcher == "aten")
            compiled = sum(k.count for k in issued if k.launcher == "inductor")
            factors.append(
                (c["median_s"] - aten * EAGER_STEP_HOST_FACTOR * op)
                / (compiled * kern + (layers[c["model"]] + 1) * entry)
            )
    assert len(factors) == 13
    assert pytest.approx(_med(factors), abs=0.02) == COMPILED_STEP_HOST_FACTOR


def test_collective_host_cost_is_the_measured_step_difference_over_the_op_floor() -> None:
    """COLLECTIVE_STEP_HOST_OPS: the host issue time of the same eager decode step at TP=2 less at
    one GPU, per collective (64 all-reduces and the logits' gather), over the machine's hot-loop
    op, the mean of the two machines profiled; the hot loops of tp_host.py on a third put an
    all-reduce between 20 or 60 ops at about half of it (a step's factor of 2)."""
    from roofcalc.expected import COLLECTIVE_STEP_HOST_OPS, EAGER_STEP_HOST_FACTOR

    def issue(path: Path) -> float:
        doc = json.loads(path.read_text())
        return next(c for c in doc["cases"] if c["phase"] == "decode" and c["engine"] == "eager")[
            "sync_host_issue_median_s"
        ]

    h200 = KERNELS / "h200x2" / "host"
    calls = json.loads((h200 / "host-calls.json").read_text())["cases"]
    floors = {
        h200: next(c["per_call_s"] for c in calls if c["case"] == "x.add_(1)"),
        KERNELS / "h100x2" / "host3": _med(
            json.loads((KERNELS / "h100x2" / "host3" / "host-rate.json").read_text())["torch_op"]["samples_s"]
        ),
    }
    ops = [(issue(d / "host-trace-tp2.json") - issue(d / "host-trace-tp1.json")) / 65 / f for d, f in floors.items()]
    assert pytest.approx(sum(ops) / 2, abs=0.1) == COLLECTIVE_STEP_HOST_OPS
    for name in ("tp-host.json", "tp-host-k60.json"):
        ranks = json.loads((KERNELS / "h100x2" / "host2" / name).read_text())["cases"]
        op = max(_med(r["op"]["done_s"]) for r in ranks)
        seg = max(_med(r["segments"]["done_s"]) for r in ranks)
        mixed = (seg - ranks[0]["k"] * op) / op
        assert 0.7 < mixed * EAGER_STEP_HOST_FACTOR / COLLECTIVE_STEP_HOST_OPS < 1.0


def test_a_host_paced_compiled_step_is_not_told_to_compile() -> None:
    """The host-paced note of a compiled step leaves out the advice to compile; an eager one has
    it; the host term's reason counts in the singular where there is one."""
    from roofcalc.expected import HOST_PACED_COMPILED_NOTE

    kw = {"model": "llama-3.2-1b", "batch": 1, "context": 1000, "cuda_graphs": False}
    compiled = roofcalc.analyze("decode", "h100", engine="compiled", **kw)
    eager = roofcalc.analyze("decode", "h100", engine="eager", **kw)
    assert compiled.expected_notes == [HOST_PACED_COMPILED_NOTE] and eager.expected_notes == [HOST_PACED_NOTE]
    assert "torch.compile" not in HOST_PACED_COMPILED_NOTE and "torch.compile" in HOST_PACED_NOTE
    why = next(t.reason for t in compiled.expected_terms if t.name == "host issue")
    assert why.startswith("Python issues 1 PyTorch op at ") and " and 17 calls of compiled functions " in why


@pytest.mark.parametrize("value", ['"-1"', '"2.5"', '"10**18"', "true"])
def test_an_op_file_host_entries_that_is_no_whole_count_is_refused(tmp_path: Path, value: str) -> None:
    """An op file's host_entries must give a whole number of calls (0 to a million): a negative,
    fractional, absurd or boolean one is refused in one line, not rounded or printed."""
    import subprocess
    import sys

    src = (Path(roofcalc.__file__).resolve().parent.parent / "ops" / "decode.yaml").read_text()
    assert "\nhost_entries: " in src
    lines = [f"host_entries: {value}" if ln.startswith("host_entries: ") else ln for ln in src.splitlines()]
    op = tmp_path / "decode.yaml"
    op.write_text("\n".join(lines) + "\n")
    r = subprocess.run(
        [sys.executable, "-m", "roofcalc", "op", str(op), "--model", "llama-3.2-1b", "--engine", "compiled",
         "--no-cuda-graphs", "--hw", "h100"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert r.returncode in (1, 2) and r.stdout == "" and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "host_entries" in r.stderr


def _fit_linear_gemm() -> Any:
    """validation/bench/fit_linear_gemm.py as a module (its kernels, and the model's times of them)."""
    spec = importlib.util.spec_from_file_location("fit_linear_gemm", BENCH / "fit_linear_gemm.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_narrow_linear_kernels_match_their_profiled_durations() -> None:
    """cuBLAS's narrow-tile F.linear kernels (decode's projections, batch 1-96, one GPU and each
    rank of TP=2: 119 kernels profiled inside CUDA graphs on H100s) against the model with the
    H100 file's expected.linear_gemm_* figures, as validation/bench/fit_linear_gemm.py fits
    them: the median within 5% and nine in ten within 15%; and the figures are the fit's best
    (moving either by a tenth fits worse)."""
    fit = _fit_linear_gemm()
    hw = load_hardware("h100")
    floor, step = fig("h100", "linear_gemm_floor_s"), fig("h100", "linear_gemm_k_step_s")
    cases = fit.measured_cases()
    pairs = fit.modelled(hw, cases)
    ratios = sorted(m / e for m, e in pairs)
    assert len(ratios) == 119
    assert 0.95 <= ratios[len(ratios) // 2] <= 1.05
    assert sum(0.85 <= r <= 1.15 for r in ratios) >= 0.9 * len(ratios)
    best = fit.error(pairs)
    for f, s in ((floor * 1.1, step), (floor * 0.9, step), (floor, step * 1.1), (floor, step * 0.9)):
        assert fit.error(fit.modelled(fit.with_figures(hw, f, s), cases)) > best
    assert not math.isclose(best, 0.0)


def test_narrow_linear_kernels_hold_out() -> None:
    """Kernels the fit never saw (validation/expected/h100/kernels/linear-holdout/: llama-3.2-3b
    and qwen2.5-14b at batch 3-128, measured after the figures were set): median within 5%, and
    85% of the 56 within 15%."""
    fit = _fit_linear_gemm()
    held = "validation/expected/h100/kernels/linear-holdout"
    fit.RECORDS = [
        (f"{held}/gk-llama-3.2-3b.json", "llama-3.2-3b", 1),
        (f"{held}/gk-qwen2.5-14b.json", "qwen2.5-14b", 1),
    ]
    ratios = sorted(m / e for m, e in fit.modelled(load_hardware("h100"), fit.measured_cases()))
    assert len(ratios) == 56
    assert 0.95 <= ratios[len(ratios) // 2] <= 1.05
    assert sum(0.85 <= r <= 1.15 for r in ratios) >= 0.85 * len(ratios)


def test_a_narrow_tile_figure_without_its_pair_is_named_and_not_used() -> None:
    # the fixed cost without the k-step (or the other way round) is no model of the kernel: the
    # note says so, and F.linear keeps the general tiles, as a part with neither figure does
    hw = load_hardware("h100")
    neither = hw.model_copy(
        update={"expected": hw.expected.model_copy(update={"linear_gemm_floor_s": None, "linear_gemm_k_step_s": None})}
    )
    one = hw.model_copy(update={"expected": hw.expected.model_copy(update={"linear_gemm_k_step_s": None})})
    args = {"model": "llama-3.2-1b", "batch": 5, "context": 1024}
    r_one, r_neither = roofcalc.analyze("decode", one, **args), roofcalc.analyze("decode", neither, **args)
    assert r_one.expected_s == pytest.approx(r_neither.expected_s, rel=1e-12)
    assert any("linear_gemm_floor_s without linear_gemm_k_step_s" in n for n in r_one.expected_notes)
    assert not any("linear_gemm" in n for n in r_neither.expected_notes)
    assert roofcalc.analyze("decode", hw, **args).expected_s != pytest.approx(r_neither.expected_s, rel=1e-3)


def test_a_mixture_of_experts_keeps_its_experts_gemms_aligned() -> None:
    # the expected share of each touched expert's width is rounded to whole 32-element rows, as
    # the real widths are (14,336): at batch 3 the width 14,336 x 4.6 / 5 would not be a multiple
    # of 16 bytes and sent the GEMM down the unaligned path (4.7x slower at batch 2 -> 3); the
    # step now grows with the batch (more experts touched), within 1% where it dips
    times = []
    for b in range(1, 41):
        r = roofcalc.analyze("decode", "h100", model="mixtral-8x7b", batch=b, context=1024)
        assert not any("not a multiple of 16 bytes" in k.reason for k in r.expected_kernels), b
        times.append(r.expected_s)
    assert all(t2 >= 0.99 * t1 for t1, t2 in itertools.pairwise(times))


def _measured(set_path: str, label: str) -> float:
    (case,) = [c for c in json.loads((KERNELS / set_path).read_text())["cases"] if c["label"] == label]
    return float(case["median_s"])


SKINNY = KERNELS / "h100" / "kernels" / "skinny1" / "skinny-kernels.json"


def _skinny_kernels(label: str) -> list[str]:
    """The kernels PyTorch ran for one case of the skinny sweep (kernel_shapes.py, one H100)."""
    cases = json.loads(SKINNY.read_text())["cases"]
    (case,) = [c for c in cases if c["label"] == label]
    return [k["name"] for k in case["kernels"]]


@pytest.mark.parametrize(("m", "n"), [(2, 1942), (9, 24034), (33, 6000), (65, 13728)])
def test_fp32_gemv_with_few_long_rows_runs_a_batch_of_dots(m: int, n: int) -> None:
    # cuBLAS ran dot_kernel (grid z = m rows) then reduce_1Block_kernel for these shapes; without
    # a measured column plane the model names the same two kernels, and its time is within [0.8,
    # 1.25] of the sweep's (validation/expected/h100/ops-skinny1.json); the old
    # one-block-per-8-rows gemv2T read 0.41-0.85 of them. With the registry's column plane, a
    # GEMV kernel and its reduction, within [0.75, 1.25] (0.795-0.966)
    ran = _skinny_kernels(f"gemv-fp32-{m}x{n}")
    assert [name.split("<")[0].split()[-1] for name in ran] == ["dot_kernel", "reduce_1Block_kernel"]
    measured = _measured("h100/ops-skinny1.json", f"gemv-fp32-{m}x{n}")
    r = roofcalc.analyze("gemv", without_column_plane(), m=m, n=n, dtype="fp32")
    assert [k.name for k in r.expected_kernels] == ["dot_kernel", "reduce_1block"]
    assert r.expected_s is not None
    assert 0.8 <= measured / r.expected_s <= 1.25
    r = roofcalc.analyze("gemv", "h100", m=m, n=n, dtype="fp32")
    assert [k.name for k in r.expected_kernels] == ["gemv", "gemv split-K reduce"]
    assert r.expected_s is not None and 0.75 <= measured / r.expected_s <= 1.25


def test_fp32_gemv_with_short_rows_keeps_one_block_per_rows() -> None:
    # 348-element rows: cuBLAS keeps a one-kernel gemv (gemvx, no split) at every row count swept
    assert all("gemvx" in _skinny_kernels(f"gemv-fp32-{m}x348")[0] for m in (2, 9, 65))
    r = roofcalc.analyze("gemv", without_column_plane(), m=9, n=348, dtype="fp32")
    assert [k.name for k in r.expected_kernels] == ["gemv2T"]
    r = roofcalc.analyze("gemv", "h100", m=9, n=348, dtype="fp32")
    assert [k.name for k in r.expected_kernels] == ["gemv"]


@pytest.mark.parametrize(("n", "k", "dtype"), [(3237, 9959, "fp16"), (6219, 3136, "bf16")])
def test_a_row_vector_times_an_unaligned_matrix_is_cublas_gemv(n: int, k: int, dtype: str) -> None:
    # x (1 x k) @ B (k x n) with n odd: cuBLAS (column-major) runs its gemv kernels (gemvx), as
    # for the n = 1 product of B's transpose; the model takes that transpose, so both
    # orientations give one time
    assert "gemvx" in _skinny_kernels(f"gemm-{dtype}-1x{n}x{k}")[0]
    row = roofcalc.analyze("gemm", "h100", m=1, n=n, k=k, dtype=dtype)
    col = roofcalc.analyze("gemm", "h100", m=n, n=1, k=k, dtype=dtype)
    assert row.expected_s == pytest.approx(col.expected_s, rel=1e-9)
    assert "gemv kernels" in " ".join(e.reason for e in row.expected_kernels)
    # and the sweep's time is within [0.8, 1.25] of it (the tiled-GEMM path read 0.38 and 0.34)
    assert row.expected_s is not None
    assert 0.8 <= _measured("h100/ops-skinny1.json", f"gemm-{dtype}-1x{n}x{k}") / row.expected_s <= 1.25
    # an aligned one stays a tiled GEMM (cuBLAS ran nvjet for 1 x 4096 x 4096)
    assert "nvjet" in _skinny_kernels(f"gemm-{dtype}-1x4096x4096")[0]
    aligned = roofcalc.analyze("gemm", "h100", m=1, n=4096, k=4096, dtype=dtype)
    assert "gemv kernels" not in " ".join(e.reason for e in aligned.expected_kernels)


def test_a_causal_prompt_whose_blocks_do_not_fill_the_sms_splits_its_keys() -> None:
    # FA-2's num_splits_heuristic (flash_api.cpp) takes batch x heads x ceil(seq / 64) blocks
    # against 2 x 132 slots on an H100 and does not look at the mask: 3 x 64 x 1 = 192 blocks
    # are under 0.8 x 264 = 211.2, so 26 causal queries over 7,595 keys are split. Unsplit, the
    # model read 0.44 of the measured time (ops-wide49, one H100, in-sample since)
    r = roofcalc.analyze(
        "attention", "h100", batch=3, heads=64, kv_heads=8, seq=26, kv_seq=7595, head_dim=128, causal=True, impl="flash"
    )
    assert "key splits" in " ".join(k.reason for k in r.expected_kernels)
    assert r.expected_s is not None
    measured = _measured("h100/ops-wide49.json", "wide-attn-flash-bf16-b3h64kv8-s26-kv7595-d128-causal")
    assert 0.8 <= measured / r.expected_s <= 1.25
    # 4 x 32 x ceil(2048 / 64) = 4,096 blocks fill the SMs: no split
    big = roofcalc.analyze("attention", "h100", batch=4, heads=32, seq=2048, head_dim=128, causal=True, impl="flash")
    assert "key splits" not in " ".join(k.reason for k in big.expected_kernels)


def test_a_calibration_on_other_libraries_says_the_kernel_choices_may_differ(tmp_path: Path) -> None:
    import yaml

    from roofcalc.hardware import load_calibration

    doc = yaml.safe_load((KERNELS.parent / "probe" / "h100" / "calibration.yaml").read_text())
    same, other = dict(doc), dict(doc)
    same["calibration"] = {**doc["calibration"], "libraries": {"torch": "2.11.0+cu130", "cuda": "13.0"}}
    other["calibration"] = {**doc["calibration"], "libraries": {"torch": "2.12.0+cu131", "cuda": "13.1"}}
    notes = {}
    for name, d in (("same", same), ("other", other), ("unknown", doc)):
        f = tmp_path / f"{name}.yaml"
        f.write_text(yaml.safe_dump(d))
        notes[name] = " ".join(roofcalc.analyze("gemm", load_calibration(f), m=4096).expected_notes)
    assert "torch 2.12.0 and CUDA 13.1" in notes["other"] and "may choose other kernels" in notes["other"]
    assert "kernel-choice maps" not in notes["same"] and "kernel-choice maps" not in notes["unknown"]
    # a streaming op chooses no library kernel: no note
    ln = tmp_path / "other.yaml"
    assert not any("kernel-choice" in n for n in roofcalc.analyze("softmax", load_calibration(ln)).expected_notes)


def test_causal_split_units_walk_the_key_tiles_their_rows_see() -> None:
    from roofcalc.expected.attention import _causal_split_scores
    from roofcalc.expected.records import Kernel

    def unit_scores(seq: int, kv_seq: int, split: int) -> list[int]:
        k = Kernel(name="f", model="flash", help="", dtype="bf16", seq=seq, kv_seq=kv_seq, head_dim=64, causal=True)
        return _causal_split_scores(k, math.ceil(seq / 64), split)

    # head_dim 64: the split kernel's K/V tiles hold 256 keys, its query blocks 64 rows.
    # 100 queries at the end of 1,000 keys (offset 900): both 64-row blocks see all 4 tiles
    # (ceil(964 / 256) and ceil(1000 / 256)); 2 splits of 2 tiles each, 64 x 256 x 2 scores a unit
    assert unit_scores(100, 1000, 2) == [64 * 256 * 2] * 4
    # a square causal prompt of 512: blocks 0-3 see 1 tile (at most 256 keys), blocks 4-7 both;
    # the second split of blocks 0-3 starts past their last visible key and does no work
    assert unit_scores(512, 512, 2) == [64 * 256, 0] * 4 + [64 * 256, 64 * 256] * 4


def test_a_pre_hopper_kernel_waits_on_its_stores_beyond_the_l2() -> None:
    # tf32 11376 x 13352 x 111 (k odd: cuBLAS's pre-Hopper kernels) measured 519 us on an H100
    # (validation/expected/h100/ops-wide59.json): 608 MB of fp32 output behind short k-loops.
    # Each tile's CTA stores after its k-loop; past the L2's 50 MiB the waves wait on DRAM writes.
    measured = next(
        c["median_s"]
        for c in json.loads((KERNELS / "h100" / "ops-wide59.json").read_text())["cases"]
        if c["label"] == "wide-gemm-tf32-11376x13352x111"
    )
    hw = load_hardware("h100")
    g = kernel(roofcalc.analyze("gemm", "h100", m=11376, n=13352, k=111, dtype="tf32"), "gemm")
    beyond = 11376 * 13352 * 4 - float(hw.l2_bytes.value)
    stores = beyond / (hw.bandwidth * fig("h100", "dram_read_fraction"))
    assert f"{stores * 1e6:,.1f} us of stores beyond the L2" in g.reason  # type: ignore[attr-defined]
    assert 0.8 <= measured / g.seconds <= 1.25  # type: ignore[attr-defined]
    # the TMA kernels are persistent: a tile's stores overlap the next tile's k-loop
    tma = kernel(roofcalc.analyze("gemm", "h100", m=11376, n=13352, k=112, dtype="bf16"), "gemm")
    assert "no TMA" not in tma.reason and "stores beyond" not in tma.reason  # type: ignore[attr-defined]


def test_a_one_row_fp32_gemv_splits_its_row_and_reduces_the_slices() -> None:
    """torch.mv of one fp32 row: cuBLAS's gemvx cuts the row into at most two slices an SM, then
    cublasLt's splitKreduce sums them one after another (validation/expected/h100/kernels/skinny1:
    the grids' z and the reductions' profiled durations)."""
    doc = json.loads((KERNELS / "h100" / "kernels" / "skinny1" / "skinny-kernels.json").read_text())
    hw = without_column_plane()
    floor = float(hw.expected.gemm_reduce_floor_s["cublaslt"].value)
    per_slice = float(hw.expected.gemm_reduce_slice_s["cublaslt"].value)
    seen = 0
    for case in doc["cases"]:
        if not case["label"].startswith("gemv-fp32-1x"):
            continue
        n = int(case["label"].split("x")[-1])
        gemvx, reduce = case["kernels"]
        assert "gemv" in gemvx["name"] and "splitKreduce" in reduce["name"]
        slices = math.ceil(n / math.ceil(n / (2 * 132)))  # at most two slices an SM, all of one size
        assert gemvx["grid"][2] == slices
        r = roofcalc.analyze("gemv", hw, m=1, n=n, dtype="fp32")
        red = kernel(r, "splitk_reduce")
        assert red.seconds == pytest.approx(floor + slices * per_slice)  # type: ignore[attr-defined]
        # the figures were fitted to the GEMM sweep's reductions of many elements: here one element,
        # 6.2-8.7 us profiled against 6.6-9.3 modelled
        assert red.seconds == pytest.approx(reduce["duration_s"], rel=0.15)  # type: ignore[attr-defined]
        assert kernel(r, "gemvx_split").grid == slices  # type: ignore[attr-defined]
        seen += 1
    assert seen == 5

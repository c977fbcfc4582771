"""cuBLAS's measured kernel choices (roofcalc/expected/choice.py): the classification of a GEMM's
kernels, the registry's map against the committed sweep, the model's use of it, and the probe's
calibration of it. Expected values come from the committed kernel records (their names and grids,
read by hand in each test) and hand derivations written here."""

from __future__ import annotations

import copy
import gzip
import json
import math
from pathlib import Path

import pytest

from roofcalc import analyze
from roofcalc.errors import SpecError
from roofcalc.expected.choice import (
    ChoiceMap,
    classify,
    fit_reduce,
    fit_tiles,
    parse_entry,
    reduce_blocks,
    reduce_kernel,
    reducer,
    tile_work,
)
from roofcalc.hardware import load_hardware, load_hardware_file
from roofcalc.probe.report import choice_figures
from roofcalc.probe.runner import calibrated_hardware

from .conftest import VerifiedFor, h100_with_map, load_script

ROOT = Path(__file__).resolve().parent.parent
KERNELS = ROOT / "validation" / "expected" / "h100" / "kernels"
SIMT = "void cutlass::Kernel2<cutlass_80_simt_sgemm_128x32_8x5_nn_align1>(cutlass_80_simt_sgemm_128x32_8x5_nn_align1::Params)"
XMMA = "sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x32x8_stage3_warpsize2x1x1_ffma_aligna4_alignc4_execute_kernel"


def _tall1(label: str) -> dict:
    cases = json.loads((KERNELS / "tall1" / "tall-kernels.json").read_text())["cases"]
    return next(c for c in cases if c["label"] == label)


def test_classify_reads_the_tile_and_its_orientation_off_the_grid() -> None:
    # tall1: 700 x 2 x 1700 ran cutlass_80_simt_sgemm_128x32 on a grid of [22, 1, 25]: 22 blocks
    # of 32 rows (ceil(700 / 32) = 22), the 2 columns on the 128 side, k in 25 slices
    c = _tall1("gemm-fp32-700x2x1700")
    assert c["kernels"][0]["grid"] == [22, 1, 25]
    assert classify(c["kernels"], 700, 2) == ("simt", (32, 128), 25)
    # 5000 x 2 x 1700 ran an xmma kernel on [79, 1, 6]: ceil(5000 / 64) = 79 blocks of 64 rows
    c = _tall1("gemm-fp32-5000x2x1700")
    assert c["kernels"][0]["grid"] == [79, 1, 6]
    family, tile, z = classify(c["kernels"], 5000, 2)
    assert (family, tile[0], z) == ("xmma", 64, 6)
    # names given here: the grid decides the side; where both sides fit, SIMT puts B on the rows
    tensorop = "void cutlass::Kernel2<cutlass_80_tensorop_s1688gemm_64x64_16x6_nn_align4>(Params)"
    assert classify([{"name": tensorop, "grid": [8, 6, 3]}], 500, 300) == ("tensorop", (64, 64), 3)
    assert classify([{"name": SIMT, "grid": [4, 1, 3]}], 100, 2) == ("simt", (32, 128), 3)
    assert classify([{"name": XMMA, "grid": [4, 1, 1]}], 250, 2) == ("xmma", (64, 32), 1)
    assert classify([{"name": "void gemmSN_NN_kernel<float>", "grid": [1, 1, 1]}], 5, 2)[0] == "sn"
    assert classify([], 5, 2) == ("other", None, 1)
    # Hopper's nvjet kernels name their tile after the architecture (kernels/choice3)
    nvjet = "nvjet_sm90_tst_64x8_64x16_4x1_v_bz_NNT"
    assert classify([{"name": nvjet, "grid": [2, 1, 1]}], 100, 8) == ("nvjet", (64, 8), 1)
    # a tile of 0 in a name (nothing cuBLAS ships) is no tile, never a division by zero
    assert classify([{"name": "simt_sgemm_0x32_", "grid": [1, 1, 1]}], 5, 2)[0] == "other"


def test_tile_work_by_hand() -> None:
    # 700 x 2 x 1700 on 32 x 128 tiles in 25 slices: 22 x 1 x 25 = 550 blocks, 5 on the busiest of
    # 132 SMs, each 32 x 128 x ceil(1700 / 25) = 68 deep x 2 FLOP
    assert tile_work(700, 2, 1700, (32, 128), 25, 132) == 5 * 32 * 128 * 68 * 2


def test_fit_tiles_recovers_a_line() -> None:
    """Shapes whose times are exactly 3 us + work / 200 GFLOP/s an SM give those figures back."""
    from roofcalc.expected.choice import Choice

    shapes = [(700, 2, 100 * i, 5 * i) for i in range(1, 6)]
    choices = [
        Choice("fp32", m, n, k, "simt", (32, 128), z, 3e-6 + tile_work(m, n, k, (32, 128), z, 132) / 200e9)
        for m, n, k, z in shapes
    ]
    (floor, rate, n) = fit_tiles(choices, 132)["fp32_simt_32x128"]
    assert floor == pytest.approx(3e-6, rel=1e-9) and rate == pytest.approx(200e9, rel=1e-9) and n == 5


def test_the_registry_map_is_the_committed_sweep(verified: VerifiedFor) -> None:
    """hardware/h100.yaml's map and per-tile figures are what choice_map.py computes from the
    committed sweep with the probe's own code (and h200.yaml's, transferred), not edited by hand."""
    path = ROOT / "validation" / "expected" / "choice_map.py"

    rows_path = KERNELS / "row2" / "row-sweep.json.gz"

    def check() -> None:
        assert load_script(path).main(["--check"]) == 0, "python3 validation/expected/choice_map.py"
        sweep = json.loads(gzip.decompress((KERNELS / "choice8" / "choice-sweep.json.gz").read_bytes()))
        rows = json.loads(gzip.decompress(rows_path.read_bytes()))
        # the sweeps' sizes, as the grids give them (below: the map's)
        assert len(sweep["cases"]) == 532 * 25 + 735 * (3 * 30 + 4 + 8 + 8)
        assert len(rows["cases"]) == 2 * 73 * 111
        cols = json.loads(gzip.decompress(cols_path.read_bytes()))
        assert len(cols["cases"]) == 2 * 74 * 111
        shallow = json.loads(gzip.decompress(shallow_path.read_bytes()))
        assert len(shallow["cases"]) == 12 * 12 * 20 + 3 * 17 * 17 * 20
        # the aligned columns: 4 in tf32 and 7 in 16 bits first, then 8 and 16 more, x 17 rows x 20 depths
        for p, cols in ((aligned_paths[0], 4 + 7 + 7), (aligned_paths[1], 8 + 16 + 16)):
            assert len(json.loads(gzip.decompress(p.read_bytes()))["cases"]) == cols * 17 * 20

    cols_path = KERNELS / "col1" / "col-sweep.json.gz"
    shallow_path = KERNELS / "shallow1" / "shallow-sweep.json.gz"
    aligned_paths = (
        KERNELS / "shallow2" / "shallow-aligned.json.gz",
        KERNELS / "shallow3" / "shallow-aligned-rest.json.gz",
    )
    refine_path = KERNELS / "refine1" / "refine-sweep.json.gz"
    sources = [
        path,
        KERNELS / "choice8" / "choice-sweep.json.gz",
        rows_path,
        cols_path,
        shallow_path,
        *aligned_paths,
        refine_path,
    ]
    verified.once("choice-map", sources, check)
    cmap = load_hardware("h100").expected.gemm_choice_map
    assert cmap is not None
    parsed = ChoiceMap.from_entries(cmap.entries)
    # fp32 (TF32 off): 26 sides (9 small, 2 mid, 15 large), the 532 (m, n) pairs with a side up to
    # 64 (26^2 less the 12^2 of two large sides above 64) x 25 depths; tf32, bf16 and fp16: 32 sides
    # (6 odd large added, 41 of them at most 64), 735 pairs (32^2 - 17^2) x 30 depths (odd depths
    # added), and 4 (tf32) or 8 (bf16, fp16) of 4- and 8-byte alignment
    # and the grid's refinement (kernels/refine1: two passes, test_refine.py)
    refined = len(json.loads(gzip.decompress(refine_path.read_bytes()))["cases"])
    assert refined == 13540
    assert len(parsed.products) == 532 * 25 + 735 * (3 * 30 + 4 + 8 + 8) + refined
    # the one-row plane: 73 column counts x 111 depths (swept in fp32 and tf32, kept in fp32: the
    # same kernels); its depth of 1 runs a SIMT GEMM (73 shapes, left out), every other shape a
    # GEMV kernel (the sweep's log); the one-column plane: 74 row counts (from 1) x 111 depths, its
    # depth of 1 a SIMT GEMM but at one row (73 left out)
    planes = {key: len(v) for key, v in parsed.vectors.items()}
    assert planes == {("fp32", "row"): 73 * 110, ("fp32", "column"): 74 * 111 - 73}
    # the shallow plane: fp32 12 large sides from 100 (144 pairs), tf32, bf16 and fp16 17 (the odd
    # ones added: 289 pairs), each at 20 depths (1-16, 20, 24, 31, 32); and 17 row counts by the
    # aligned columns (12 in tf32, 23 in bf16 and fp16)
    shallow = 12 * 12 * 20 + 3 * 17 * 17 * 20 + (12 + 23 + 23) * 17 * 20
    assert sum(map(len, parsed.shallow.values())) == shallow
    assert len(parsed.entries) == len(parsed.products) + sum(planes.values()) + shallow
    assert cmap.libraries == {"torch": "2.11.0+cu130", "cuda": "13.0"}
    h200 = load_hardware("h200").expected
    assert h200.gemm_choice_map is not None and h200.gemm_choice_map.kind == "transferred"
    assert {f.kind for f in h200.gemm_choice_flops_per_sm.values()} == {"transferred"}


def test_nearest_stays_inside_the_map() -> None:
    cmap = ChoiceMap.from_entries(
        ["fp32 100x2x64 simt 32x128 4 3.00", "fp32 1000x8x1024 xmma 64x32 8 9.00", "tf32 100x4x64 tensorop 64x64 1 4.0"]
    )
    assert cmap.nearest("fp32", 120, 2, 60) == parse_entry("fp32 100x2x64 simt 32x128 4 3.00")
    assert cmap.nearest("fp32", 900, 8, 2000).family == "xmma"
    assert cmap.nearest("fp32", 100, 17, 64) is None  # neither side up to 8, the least this map measured
    assert cmap.nearest("fp32", 5000, 2, 64) is None  # rows beyond twice those measured
    # a duplicated shape: of two as near, the first entry (whichever depth bisection lands on)
    dup = ChoiceMap.from_entries(
        ["fp32 8x100x64 simt 32x128 4 3.00", "fp32 8x100x64 xmma 64x32 8 9.00", "fp32 8x100x512 simt 32x128 4 5.00"]
    )
    assert dup.nearest("fp32", 8, 100, 100) == parse_entry("fp32 8x100x64 simt 32x128 4 3.00")
    # tf32: only shapes of the same alignment class (n and k multiples of 4 elements, or not)
    assert cmap.nearest("tf32", 120, 4, 64).family == "tensorop"
    assert cmap.nearest("tf32", 120, 3, 64) is None
    # a first-version entry (fp32 only) names no dtype
    assert parse_entry("100x2x64 simt 32x128 4 3.00") == parse_entry("fp32 100x2x64 simt 32x128 4 3.00")


def test_a_checked_map_reads_one_dtype_and_answers_as_a_parsed_one() -> None:
    """A map whose entries check_block passed (a hardware or calibration file's: card.py) reads
    only the asked dtype's entries where they settle the answer, and the other dtypes' where the
    map's domain does (it spans every dtype's products); its answers are those of the map parsed
    whole. Derived by hand: the products' dimensions are 1-30,000 (fp32 2 x 100 x 1 and 40 x
    30000 x 64), their largest smaller side 40 (bf16's own: 8-128, and 16); bf16 8 x 64 x 64 and
    16 x 64 x 128 are of alignment class 16, 8 x 63 x 64 of class 2, 100 x 100 x 8 (the shallow
    plane) of class 8; 8 x 64 x 64 is there twice."""
    from roofcalc.expected.choice import check_block

    entries = [
        "bf16 8x64x64 tensorop 64x64 1 4.00",
        "fp32 2x100x1 simt 32x128 1 3.00",
        "bf16 8x63x64 tensorop 64x64 1 4.20",
        "fp32 40x30000x64 simt 32x128 1 5.00",
        "fp32 1x100x64 vec 4x64 1 2.00",
        "bf16 100x100x8 tensorop 64x64 1 6.00",
        "100x4x64 sn - 1 7.00",  # a first-version entry: fp32, and not in the probe's form
        "bf16\t16x64x128 tensorop 64x64 1 4.50",  # nor this one (a tab), parsed whole
        "bf16 8x64x64 nvjet 64x8 1 4.10",  # a shape measured twice: of two as near, the first entry
    ]
    texts = check_block("\n".join(entries)).splitlines()
    e = [parse_entry(t) for t in texts]
    # (query, answer): inside bf16's own bounds; k, then m, past them but inside the map's;
    # past the map's; a side of 1 inside the map's least dimension (fp32's k of 1)
    cases = [
        (("bf16", 8, 64, 64), e[0]),
        (("bf16", 8, 64, 40000), e[7]),  # log distances: 33.5 to 16 x 64 x 128, 41.4 to 8 x 64 x 64
        (("bf16", 40, 64, 64), e[7]),  # 1.32 against 2.59
        (("bf16", 8, 63, 1), e[2]),
        (("bf16", 8, 64, 70000), None),  # above twice the largest dimension
        (("bf16", 41, 64, 64), None),  # above the largest smaller side
        (("bf16", 120, 64, 64), None),
    ]
    cmap, whole = ChoiceMap.from_entries(texts, checked=True), ChoiceMap.from_entries(texts)
    assert cmap.nearest("bf16", 8, 64, 64) == e[0] and set(cmap._parts) == {"bf16"}  # its own dtype alone
    for query, answer in cases:
        assert cmap.nearest(*query) == whole.nearest(*query) == answer, query
    assert cmap.domain == whole.domain == (1, 30000) and cmap.small_side == whole.small_side == 40
    # without fp32's k of 1 the least dimension is 4 (fp32 100 x 4 x 64): no answer at k = 1
    short = ChoiceMap.from_entries(texts[:1] + texts[2:], checked=True)
    assert short.domain == (4, 30000) and short.nearest("bf16", 8, 63, 1) is None
    # the floors: fp32's sn entry is a walk of k, left out; the shallow plane's own
    floors = [(cmap.kernel_floor(d), cmap.shallow_floor(d)) for d in ("fp32", "bf16", "fp16")]
    assert floors == [(e[1].kernel_s, 0.0), (e[0].kernel_s, e[5].kernel_s), (0.0, 0.0)]
    assert floors == [(whole.kernel_floor(d), whole.shallow_floor(d)) for d in ("fp32", "bf16", "fp16")]
    # the shallow plane: its class's deepest k (8) and largest side (100) bound it
    for query, answer in [(("bf16", 100, 100, 4), e[5]), (("bf16", 100, 100, 16), None), (("bf16", 300, 100, 8), None)]:
        assert cmap.nearest_shallow(*query) == whole.nearest_shallow(*query) == answer, query
    assert cmap.nearest_vec("fp32", 1, 100, 64) == e[4]
    assert "entries" not in cmap.__dict__  # never parsed whole


def test_shapes_outside_the_products_and_gemvs_read_only_what_they_need() -> None:
    """A product with both sides above 64 (MAP_MAX_SMALL, the most any map's small side reaches)
    is answered without parsing the map; a GEMV parses only the entries that name the vec family,
    and finds what the whole map's parse finds (the registry's map: 16,171 vec entries of 163,801)."""
    texts = load_hardware("h100").expected.gemm_choice_map.entries  # type: ignore[union-attr]
    cmap = ChoiceMap.from_entries(texts)
    assert cmap.nearest("bf16", 65, 8192, 8192) is None and cmap.nearest("fp32", 4096, 4096, 64) is None
    assert "entries" not in cmap.__dict__  # nothing parsed
    near = cmap.nearest_vec("fp32", 4096, 1, 3000)
    assert near is not None and near.family == "vec" and "entries" not in cmap.__dict__
    # the same vec entries, in the same order, as a parse of every entry gives
    vec = [parse_entry(t) for t in texts if t.split()[2] == "vec"]
    assert len(vec) == 16171 and sorted(cmap.vectors) == [("fp32", "column"), ("fp32", "row")]
    assert [c for key in sorted(cmap.vectors) for c in cmap.vectors[key]] == sorted(
        vec, key=lambda c: "column" if c.n == 1 else "row"
    )


@pytest.mark.parametrize(
    "entry",
    [
        "fp32 100x2x64 simt 32x128 4",
        "fp32 100x2 simt 32x128 4 3.0",
        "fp32 100x2x64 cutlass 32x128 4 3.0",
        "fp32 100x2x64 simt - 4 3.0",
        "fp32 100x2x64 sn 32x32 1 3.0",
        "fp32 100x2x64 simt 32x128 0 3.0",
        "fp32 100x2x64 simt 32x128 4 -1",
        "fp32 100x2x64 simt 32x128 4 nan",
        "int8 100x2x64 simt 32x128 4 3.0",
    ],
)
def test_a_malformed_entry_is_refused_in_one_line(entry: str, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"expected|shape|family|tile|splits|kernel_us|dtype"):
        parse_entry(entry)
    bad = tmp_path / "bad.yaml"
    bad.write_text(h100_with_map(["fp32 100x2x64 simt 32x128 4 3.00", entry, "fp32 1000x8x1024 xmma 64x32 8 9.00"]))
    with pytest.raises(SpecError) as e:
        load_hardware_file(bad)
    assert "gemm_choice_map" in str(e.value) and "\n" not in str(e.value).strip()


@pytest.mark.parametrize(
    ("old", "new", "needle"),
    [
        # a tile key that names no dtype, kernel family and tile
        ('bf16_nvjet_104x64: {"value": 2.296e-06,', 'bf16_cutlass_104x64: {"value": 2.296e-06,', "bf16_cutlass_104x64"),
        ('bf16_nvjet_104x64: {"value": 2.296e-06,', 'bf16_nvjet_104: {"value": 2.296e-06,', "bf16_nvjet_104"),
        # a figure that is not a positive finite number
        ('bf16_nvjet_104x64: {"value": 2.296e-06,', 'bf16_nvjet_104x64: {"value": -2.296e-06,', "gemm_choice_floor_s"),
        ('bf16_nvjet_104x64: {"value": 2.296e-06,', 'bf16_nvjet_104x64: {"value": .nan,', "gemm_choice_floor_s"),
        # the same tile twice, once without its dtype (a first-version calibration names fp32 only)
        ('bf16_nvjet_104x64: {"value": 2.296e-06,', 'simt_32x128: {"value": 2.296e-06,', "given twice"),
    ],
)
def test_a_bad_tile_figure_is_refused_in_one_line(old: str, new: str, needle: str, tmp_path: Path) -> None:
    """The per-tile figures that go with the choice map (gemm_choice_floor_s, gemm_choice_flops_per_sm):
    a malformed key or figure is refused naming it, in one line."""
    bad = tmp_path / "bad.yaml"
    bad.write_text(h100_with_map(["fp32 100x2x64 simt 32x128 4 3.00"], replace=(old, new)))
    with pytest.raises(SpecError) as e:
        load_hardware_file(bad)
    msg = str(e.value).strip()
    assert needle in msg and "\n" not in msg, msg


def _measured(name: str, label: str) -> float:
    cases = json.loads((ROOT / "validation" / "expected" / "h100" / name).read_text())["cases"]
    return float(next(c for c in cases if c["label"] == label)["median_s"])


@pytest.mark.parametrize("label", ["gemm-fp32-5000x4x1700", "gemm-fp32-700x2x5700", "gemm-fp32-2300x2x1700"])
def test_tall_fp32_products_read_their_measured_kernel(label: str) -> None:
    """Tall fp32 products that cuBLAS runs on its SIMT 128x32 kernel: the committed times
    (ops-tall1) within [0.8, 1.25] of the expected time, where the tile search alone read 2.4-2.7."""
    m, n, k = (int(x) for x in label.split("-")[-1].split("x"))
    r = analyze("gemm", load_hardware("h100"), m=m, n=n, k=k, dtype="fp32")
    assert r.expected_s is not None
    assert 0.8 <= _measured("ops-tall1.json", label) / r.expected_s <= 1.25
    assert "choice map" in r.expected_kernels[0].reason


def test_the_probe_calibrates_the_map_and_a_quick_calibration_borrows_it() -> None:
    saved = json.loads((ROOT / "validation" / "probe" / "h100" / "probe.json").read_text())
    meta = {"date": saved["date"], "command": "roofcalc probe", "driver": "580"}
    sweep = json.loads(gzip.decompress((KERNELS / "choice1" / "choice-sweep.json.gz").read_bytes()))
    raw = copy.deepcopy(saved["raw"])
    raw["torch"]["gemm_choices"] = sweep["cases"][:200]
    doc = calibrated_hardware(load_hardware("h100"), raw, meta)
    e = doc["expected"]
    assert len(e["gemm_choice_map"]["value"].splitlines()) == 200 and e["gemm_choice_map"]["source"] == "probe"
    assert e["gemm_choice_flops_per_sm"]["fp32_simt_64x64"]["kind"] == "fitted"
    # without a sweep the calibration keeps the registry's map and figures, citing their source
    raw["torch"].pop("gemm_choices")
    doc = calibrated_hardware(load_hardware("h100"), raw, meta)
    assert doc["expected"]["gemm_choice_map"]["source"] == "bench-choice8"
    assert doc["expected"]["gemm_choice_flops_per_sm"]["fp32_simt_32x128"]["source"] == "bench-choice8"
    assert doc["expected"]["gemm_reduce_slice_s"]["cublaslt"]["source"] == "bench-choice8"


@pytest.mark.parametrize(
    "records",
    [
        {"not": "a list"},
        [{"m": 10}],
        [{"m": 100, "n": 2, "k": 64, "kernels": [{"name": SIMT, "grid": "x", "duration_s": 1e-5}]}],
        [{"m": 100, "n": 2, "k": 64, "kernels": [{"name": SIMT, "grid": [4, 1, 3], "duration_s": math.inf}]}],
    ],
)
def test_a_malformed_sweep_gives_no_map_and_no_traceback(records: object) -> None:
    notes: list[str] = []
    out = choice_figures({"torch": {"gemm_choices": records}}, 132, notes)
    assert "gemm_choice_map" not in out or out["gemm_choice_map"]["value"]


@pytest.mark.parametrize(
    ("source", "dtypes", "least"),
    [("ops-small-rand1.json", ("tf32",), 0.9), ("ops-small16-rand1.json", ("bf16", "fp16"), 0.85)],
)
def test_products_of_a_small_side_read_their_measured_kernel(
    source: str, dtypes: tuple[str, ...], least: float
) -> None:
    """TF32 and 16-bit products with few rows or few columns take the kernel the map measured at
    the nearest shape of their alignment class: of the committed cases of those dtypes that take it
    (development data), at least ``least`` within [0.8, 1.25] of the expected time (at the map of
    kernels/choice7: 32 of 34 tf32, 53 of 59 bf16 and fp16; with kernels/choice8's, up to 64)."""
    hw = load_hardware("h100")
    cases = json.loads((KERNELS.parent / source).read_text())["cases"]
    within = taken = 0
    for case in cases:
        if case["dtype"] not in dtypes:
            continue
        p = case["params"]
        r = analyze("gemm", hw, m=p["m"], n=p["n"], k=p["k"], dtype=case["dtype"])
        assert r.expected_s is not None
        if "choice map" in r.expected_kernels[0].reason:
            taken += 1
            within += 0.8 <= case["median_s"] / r.expected_s <= 1.25
    assert taken >= 30 and within >= least * taken


@pytest.mark.parametrize(
    "entry",
    [
        "fp32 1x1x1 sn - 1 0.1",
        "bf16 9999999999x2x3 nvjet 9999x8 99999 9999999.99",
        "tf32 10x2x3 tensorop 1x1 1 1",
        "fp16 10x2x3 other - 7 0.001",
    ],
)
def test_the_one_pass_check_accepts_only_what_parses(entry: str) -> None:
    """check_entries' regular expression (one pass over a whole map) against parse_entry, at the
    limits both state: what the pass accepts parses; what it refuses is parsed line by line."""
    from roofcalc.expected.choice import _BLOCK, check_entries

    assert _BLOCK.fullmatch(entry + "\n")
    parse_entry(entry)
    check_entries([entry])
    for bad in (entry.replace(" ", "  ", 1), entry + "0" * 12):
        try:
            parse_entry(bad)
        except ValueError:
            with pytest.raises(ValueError, match="entry 0"):
                check_entries([bad])


def test_the_grid_lookup_is_the_nearest_entry(verified: VerifiedFor) -> None:
    """ChoiceMap.nearest (rows of one m nearest first, the depths either side of k by bisection)
    against a plain scan of every entry of the class, on 200 seeded random shapes of every dtype
    and a small side up to 64 (a pure function of the code and the registry's map: Verified)."""
    import random

    from roofcalc.expected.choice import aligned16

    def check() -> None:
        cmap = ChoiceMap.from_entries(load_hardware("h100").expected.gemm_choice_map.entries)
        rng = random.Random(7)

        logs: dict[object, list[tuple[float, float, float, object]]] = {}

        for _ in range(200):
            dtype = rng.choice(("fp32", "tf32", "bf16", "fp16"))
            small, other, k = rng.randint(2, 64), int(2 ** rng.uniform(1, 14)), int(2 ** rng.uniform(1, 14))
            m, n = (small, other) if rng.random() < 0.5 else (other, small)
            got = cmap.nearest(dtype, m, n, k)
            key = (dtype, aligned16(dtype, n, k))
            if key not in logs:
                logs[key] = [(math.log(c.m), math.log(c.n), math.log(c.k), c) for c in cmap.classes[key]]
            lm, ln, lk = math.log(m), math.log(n), math.log(k)
            # the least distance, of two as near the first entry (the distance as _nearest sums it)
            best = min(((a - lm) ** 2 + (b - ln) ** 2 + (d - lk) ** 2, i) for i, (a, b, d, _) in enumerate(logs[key]))
            assert got is logs[key][best[1]][3], (dtype, m, n, k, got, logs[key][best[1]][3])

    verified.once("grid-lookup", [], check)


def test_the_probe_report_with_its_choice_sweep(tmp_path: Path, verified: VerifiedFor) -> None:
    """A full probe's saved report (validation/probe/h100-choice3, with the sweep of all four
    dtypes): `roofcalc probe --report` renders it (the map as a count of shapes) and saves a
    calibration whose map agrees with the registry's on every shape both swept (the same libraries
    on another H100; the registry's later sweep added odd sizes for TF32)."""
    probe = ROOT / "validation" / "probe" / "h100-choice3" / "probe.json.gz"
    verified.once("probe-report-choice-sweep", [probe], lambda: _probe_report_check(tmp_path, probe))


def _probe_report_check(tmp_path: Path, probe: Path) -> None:
    from click.testing import CliRunner

    from roofcalc.cli import cli

    src = tmp_path / "probe.json"
    src.write_bytes(gzip.decompress(probe.read_bytes()))
    out = tmp_path / "cal.yaml"
    res = CliRunner().invoke(cli, ["probe", "--report", str(src), "--save-calibration", str(out)])
    assert res.exit_code == 0, res.output
    assert "gemm_choice_map" in res.output and "22410 shapes" in res.output.replace("\n", " ")
    text = out.read_text()
    assert "gemm_choice_map:" in text and "value: |" in text  # one block of text, one entry a line
    cal = load_hardware_file(out).expected.gemm_choice_map
    reg = load_hardware("h100").expected.gemm_choice_map
    assert cal is not None and reg is not None
    key = lambda e: (e.dtype, e.m, e.n, e.k, e.family, e.tile)  # noqa: E731
    mine = {key(e) for e in ChoiceMap.from_entries(cal.entries).entries}
    theirs = {key(e) for e in ChoiceMap.from_entries(reg.entries).entries}
    shapes = {k[:4] for k in theirs}
    assert {k for k in mine if k[:4] in shapes} <= theirs and len(mine) == 22410


def test_hostile_sweep_records_and_entries_found_by_review() -> None:
    """Inputs a review found to escape as exceptions or to hang: a kernel record that is no
    mapping, an infinite grid, a duration too short or too long for an entry, a huge size; an
    entry whose time rounds to 10^7 or underflows to 0; a long run of digits (the regular
    expression must not backtrack); a kernel name of 40,000 characters."""
    import time

    from roofcalc.expected.choice import check_entries

    sweep = [
        {"dtype": "fp32", "m": 100, "n": 2, "k": 64, "kernels": "abc"},
        {"dtype": "fp32", "m": 100, "n": 2, "k": 64, "kernels": [[1, 2]]},
        {
            "dtype": "fp32",
            "m": 100,
            "n": 2,
            "k": 64,
            "kernels": [{"name": SIMT, "grid": [float("inf"), 1, 1], "duration_s": 1e-5}],
        },
        {
            "dtype": "fp32",
            "m": 10**400,
            "n": 2,
            "k": 64,
            "kernels": [{"name": SIMT, "grid": [4, 1, 3], "duration_s": 1e-5}],
        },
        {
            "dtype": "fp32",
            "m": 100,
            "n": 2,
            "k": 64,
            "kernels": [{"name": SIMT, "grid": [4, 1, 3], "duration_s": 1e-170}],
        },
        {
            "dtype": "fp32",
            "m": 100,
            "n": 2,
            "k": 64,
            "kernels": [{"name": SIMT, "grid": [4, 1, 3], "duration_s": 10.0}],
        },
        {
            "dtype": "fp32",
            "m": 100,
            "n": 2,
            "k": 64,
            "kernels": [{"name": "tensorop_gemm_" * 3000, "grid": [1, 1, 1], "duration_s": 1e-5}],
        },
    ]
    for rec in sweep:
        notes: list[str] = []
        t0 = time.perf_counter()
        out = choice_figures({"torch": {"gemm_choices": [rec]}}, 132, notes)
        assert time.perf_counter() - t0 < 1.0
        for entry in (out.get("gemm_choice_map") or {}).get("value", "").splitlines():
            parse_entry(entry)  # whatever is kept makes a valid entry
    for bad in ("fp32 2x2x16 sn - 1 9999999.99999999999", "fp32 2x2x16 sn - 1 0." + "0" * 400 + "1"):
        with pytest.raises(ValueError, match="entry 0"):
            check_entries([bad])
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="entry 0"):
        check_entries(["fp32 2x2x16 sn - 1 0." + "1" * 100_000 + "z"])
    assert time.perf_counter() - t0 < 1.0
    with pytest.raises(ValueError, match="one line"):
        parse_entry("fp32 2x2x16 sn - 1\n2.43")


def test_the_tile_is_the_one_the_grid_launched() -> None:
    """tf32 3 x 1000 x 8192 ran cutlass's tensor-op 128x64 kernel on a grid of 8 x 1 blocks
    (kernels/choice3 and choice4): 128 of its 1,000 columns a block, 64 of the 3 rows; an nvjet split-K kernel
    cuts k in its grid's y (bf16 2 x 8 x 4096 on [1, 3, 1], then cublasLt's splitKreduce)."""
    sweep = json.loads(gzip.decompress((KERNELS / "choice4" / "choice-sweep.json.gz").read_bytes()))["cases"]
    rec = next(r for r in sweep if (r["dtype"], r["m"], r["n"], r["k"]) == ("tf32", 3, 1000, 8192))
    gx, gy, _ = rec["kernels"][0]["grid"]
    family, tile, _ = classify(rec["kernels"], 3, 1000)
    assert family == "tensorop" and math.ceil(3 / tile[0]) * math.ceil(1000 / tile[1]) == gx * gy
    rec = next(r for r in sweep if (r["dtype"], r["m"], r["n"], r["k"]) == ("bf16", 2, 8, 4096))
    assert "splitK" in rec["kernels"][0]["name"] and rec["kernels"][0]["grid"] == [1, 3, 1]
    assert classify(rec["kernels"], 2, 8)[2] == 3


def test_the_split_k_reductions_of_the_sweep() -> None:
    """The reductions in the committed sweep (kernels/choice5), read off the records themselves:
    cublasLt's splitKreduce follows every tensor-op, SIMT and nvjet kernel that cut k, xmma's own
    follows xmma's; splitKreduce launches one block per 16 x 32 of the output; and one block's time
    grows with the slices it sums: for bf16 8 x 2, 502 slices (k = 4016) against 63 (k = 4032)."""
    sweep = json.loads(gzip.decompress((KERNELS / "choice5" / "choice-sweep.json.gz").read_bytes()))["cases"]
    seen = single = 0
    for r in sweep:
        family, tile, splits = classify(r["kernels"], r["m"], r["n"])
        red = reduce_kernel(r["kernels"])
        if red is None:
            continue
        seen += 1
        single += splits == 1  # a kernel that wrote fp32 partials without cutting k (the model adds none)
        assert red[0] == reducer(family)
        if red[0] == "cublaslt":
            assert red[1] == reduce_blocks("cublaslt", r["m"], r["n"], tile)
    assert seen > 20000 and single < 0.02 * seen  # 376 of 27,719
    kdiv = json.loads(gzip.decompress((KERNELS / "kdiv1" / "kdiv-sweep.json.gz").read_bytes()))["cases"]

    def reduction(k: int) -> tuple[int, float]:
        rec = next(
            x for x in kdiv if x["part"] == "depth" and (x["dtype"], x["m"], x["n"], x["k"]) == ("bf16", 8, 2, k)
        )
        red = reduce_kernel(rec["kernels"])
        assert red is not None and red[1] == 1
        return classify(rec["kernels"], 8, 2)[2], red[2]

    (s_few, t_few), (s_many, t_many) = reduction(4032), reduction(4016)
    assert (s_few, s_many) == (63, 502) and t_many > 4 * t_few


def test_reduce_fit_and_the_model_use_it() -> None:
    """fit_reduce recovers a fixed cost and a time per slice from one-wave reductions (exact points
    of 1.5 us + 30 ns a slice; a reduction of more blocks than SMs is left out); a GEMM that the
    map cuts into 500 slices then costs the reduction's fixed cost and 500 slices one after another."""
    rows = [("cublaslt", s, 1, 1.5e-6 + s * 30e-9) for s in (4, 60, 250, 500)] + [("cublaslt", 10, 500, 1.0)]
    floor, per_slice, n = fit_reduce(rows, 132)["cublaslt"]
    assert floor == pytest.approx(1.5e-6) and per_slice == pytest.approx(30e-9) and n == 4
    from roofcalc.expected.card import card
    from roofcalc.expected.gemm import _measured_reduce
    from roofcalc.expected.records import Kernel

    c = card(load_hardware("h100"))
    k = Kernel(name="g", model="gemm", help="", dtype="bf16", m=8, n=2, k=4016)
    near = parse_entry("bf16 8x2x4000 tensorop 16x16 500 3.52")
    est = _measured_reduce(c, k, near, 500, 2.0)
    a, b = dict(c.reduce_floor)["cublaslt"], dict(c.reduce_slice)["cublaslt"]
    assert est.seconds == pytest.approx(a + 500 * b) and est.grid == 1


def test_a_map_is_kept_as_one_block_of_checked_entries() -> None:
    """A map given as a list, or as text with blank lines, CRLF line ends and spaces around its
    entries, is kept as one block (each entry stripped, one a line); none, too many or a
    malformed one is refused naming the entry."""
    from roofcalc.expected.choice import MAX_ENTRIES, check_block
    from roofcalc.hardware import ChoiceMapFigure

    a, b = "fp32 100x2x64 simt 32x128 4 3.00", "tf32 10x4x64 tensorop 64x64 1 4.0"
    want = f"{a}\n{b}\n"
    assert ChoiceMapFigure(value=[a, b], source="s", kind="measured").value == want
    assert check_block(f"\r\n  {a}  \r\n\n{b}") == want
    assert ChoiceMapFigure(value=want, source="s", kind="measured").entries == [a, b]
    for bad, match in (("\n\n", "0 entries"), (f"{a}\nfp32 1x1 simt\n", "entry 1"), (a + "\n" * 2, None)):
        if match is None:
            assert check_block(bad) == a + "\n"
            continue
        with pytest.raises(ValueError, match=match):
            check_block(bad)
    with pytest.raises(ValueError, match="at most"):
        check_block(f"{a}\n" * (MAX_ENTRIES + 1))


def test_hw_show_counts_the_maps_shapes() -> None:
    """`hw show` gives the map's size in shapes (its entries), not the length of its text."""
    from .conftest import run

    res = run("hw", "show", "h100")
    n = len(load_hardware("h100").expected.gemm_choice_map.entries)  # type: ignore[union-attr]
    assert res.exit_code == 0 and f"{n:,} shapes" in res.stdout.replace("\n", " ") and n > 50000


def test_a_malformed_line_after_many_good_ones_is_refused_at_once() -> None:
    """The one-pass check reads each entry one way only: a bad line after 40 good entries whose
    durations have many digits under 1 us (each readable several ways by a looser pattern, which
    then backtracks through all of them) is refused in one pass. Run apart, with a limit, so that
    a regression fails instead of hanging the suite."""
    import subprocess
    import sys

    code = (
        "from roofcalc.expected.choice import check_block\n"
        "text = 'fp32 2x2x16 sn - 1 0.111111\\n' * 40 + 'fp32 2x2x16 sn - 1 bad\\n'\n"
        "try:\n    check_block(text)\nexcept ValueError as e:\n    print('refused', 'entry 40' in str(e))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == "refused True", out.stderr


def test_a_malformed_reduction_record_leaves_the_rest_of_the_sweep() -> None:
    """A sweep record whose reduction has a grid or duration that is no number is left out of the
    reductions' fit; the map and the other figures stand. One slice count for every reduction
    gives no line."""
    from roofcalc.expected.choice import _relative_line

    good = {"name": "cublasLt::splitKreduce_kernel", "grid": [1, 1, 1], "duration_s": 2e-6}
    assert reduce_kernel([{"name": SIMT}, good]) == ("cublaslt", 1, 2e-6)
    for bad in ({"grid": [None, 1, 1]}, {"grid": [-5, 1, 1]}, {"duration_s": None}, {"duration_s": float("nan")}):
        assert reduce_kernel([{"name": SIMT}, {**good, **bad}]) is None
    sweep = json.loads(gzip.decompress((KERNELS / "choice1" / "choice-sweep.json.gz").read_bytes()))["cases"][:300]
    broken = copy.deepcopy(sweep)
    two = [r for r in broken if len(r["kernels"]) > 1 and reduce_kernel(r["kernels"]) is not None]
    assert two
    two[0]["kernels"][-1]["grid"] = [None, 1, 1]
    notes: list[str] = []
    out = choice_figures({"torch": {"gemm_choices": broken}}, 132, notes)
    assert not notes and len(out["gemm_choice_map"]["value"].splitlines()) == 300
    assert _relative_line([(100.0, 3e-6 * (1 + 0.01 * i)) for i in range(5)]) is None

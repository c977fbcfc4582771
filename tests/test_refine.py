"""The GEMM choice map's refinement where cuBLAS's kernel changes between two measured large sides
(roofcalc/expected/choice.py refine_shapes). Expected values come from hand derivations written
here, the committed sweeps validation/expected/h100/kernels/choice8 and refine1, and committed op
measurements."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from roofcalc import analyze
from roofcalc.expected.choice import (
    REFINE_JUMP,
    Choice,
    aligned16,
    record_choice,
    refine_shapes,
)

from .conftest import VerifiedFor, sweep_cases

ROOT = Path(__file__).resolve().parent.parent
H100 = ROOT / "validation" / "expected" / "h100"


def _sweep(name: str) -> list[dict]:
    return sweep_cases(H100 / "kernels" / name)


def test_a_middle_by_hand() -> None:
    """fp32 10,000 x 3 x 16 ran an xmma kernel on 32 x 32 tiles in 3.07 us, 16,000 x 3 x 16 a SIMT
    kernel on 128 x 256 in 7.74 us: 2.52x the time for 1.6x the rows, a jump of 1.58x beyond
    the sides' ratio (over REFINE_JUMP), so the middle, sqrt(10,000 x 16,000) = 12,649 rows, is
    measured next. The same kernel at both, or times in the sides' ratio, ask for nothing."""
    xmma = Choice("fp32", 10000, 3, 16, "xmma", (32, 32), 1, 3.07e-6)
    simt = Choice("fp32", 16000, 3, 16, "simt", (128, 256), 1, 7.74e-6)
    assert REFINE_JUMP < (7.74 / 3.07) / 1.6
    assert refine_shapes([xmma, simt]) == {"fp32": [(12649, 3, 16)]}
    assert refine_shapes([xmma, Choice("fp32", 16000, 3, 16, "xmma", (32, 32), 1, 7.74e-6)]) == {}
    assert refine_shapes([xmma, Choice("fp32", 16000, 3, 16, "simt", (128, 256), 1, 3.07e-6 * 1.6)]) == {}
    # k split at one and not the other is another kernel too; one-row products are not refined
    split = Choice("fp32", 16000, 3, 16, "xmma", (32, 32), 4, 7.74e-6)
    assert refine_shapes([xmma, split]) == {"fp32": [(12649, 3, 16)]}
    assert refine_shapes([Choice("fp32", 1, 1000, 16, "vec", (8, 128), 1, 3e-6)]) == {}


def test_a_wide_middle_keeps_its_alignment_class() -> None:
    """bf16 2 x 1,001 x 32 and 2 x 1,601 x 32: rows of 2-byte alignment (odd n). The geometric
    middle, 1,266, is even (4-byte rows): the middle measured is the nearest odd side, 1,265."""
    a = Choice("bf16", 2, 1001, 32, "tensorop", (32, 32), 1, 3e-6)
    b = Choice("bf16", 2, 1601, 32, "nvjet", (64, 8), 1, 9e-6)
    assert round(math.sqrt(1001 * 1601)) == 1266 and aligned16("bf16", 1266, 32) != aligned16("bf16", 1001, 32)
    ((side_m, side_n, k),) = refine_shapes([a, b])["bf16"]
    assert (side_m, k) == (2, 32) and side_n == 1265 and aligned16("bf16", 1265, 32) == aligned16("bf16", 1001, 32)


def test_the_committed_refinement_is_the_probes(verified: VerifiedFor) -> None:
    """kernels/refine1's first pass is refine_shapes over the registry's sweep, in that order."""

    def check() -> None:
        base = [got[0] for r in _sweep("choice8/choice-sweep.json.gz") if (got := record_choice(r)) is not None]
        first = refine_shapes(base)
        refined = [(r["dtype"], r["m"], r["n"], r["k"]) for r in _sweep("refine1/refine-sweep.json.gz")]
        want = [(dt, *s) for dt, shapes in first.items() for s in shapes]
        assert refined[: len(want)] == want and len(refined) > len(want)
        # the second pass: the middles over the grid and the first pass together; nothing twice
        records = _sweep("refine1/refine-sweep.json.gz")
        done = base + [got[0] for r in records[: len(want)] if (got := record_choice(r)) is not None]
        second = [(dt, *s) for dt, shapes in refine_shapes(done).items() for s in shapes]
        assert refined[len(want) :] == second
        measured = {(c.dtype, c.m, c.n, c.k) for c in base}
        assert len(set(refined)) == len(refined) and not measured & set(refined)

    sweeps = [H100 / "kernels" / name for name in ("choice8/choice-sweep.json.gz", "refine1/refine-sweep.json.gz")]
    verified.once("refine1", [ROOT / "roofcalc" / "expected" / "choice.py", *sweeps], check)


@pytest.mark.parametrize(
    ("source", "label", "m", "n", "k"),
    [
        ("ops-tall-rand1.json", "gemm-fp32-14272x8x12", 14272, 8, 12),
        ("ops-wide108.json", "wide-gemm-fp32-9224x4x10408", 9224, 4, 10408),
    ],
)
def test_products_between_two_kernels(source: str, label: str, m: int, n: int, k: int) -> None:
    """fp32 14,272 x 8 x 12 took 0.49 of the time of 16,000 x 8's SIMT kernel, its nearest shape
    before the refinement, and 9,224 x 4 x 10,408 0.25 of 10,000 x 4's sgemm_largek: with the
    middles measured, each finds a shape that ran its kernel, within [0.8, 1.25]."""
    (case,) = [c for c in json.loads((H100 / source).read_text())["cases"] if c["label"] == label]
    r = analyze("gemm", "h100", m=m, n=n, k=k, dtype="fp32")
    assert 0.8 <= case["median_s"] / r.expected_s <= 1.25

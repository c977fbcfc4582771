"""The naive attention's batched GEMMs (S = Q K^T, O = P V, one product per batch and head): a
strided-batched product spends its grid on the batch and walks the whole of k in each block, so
the model cuts no k into slices for it (roofcalc/expected/gemm.py _gemm_tiling). Expected values
come from the committed profile validation/expected/h100/kernels/naive1 (read by hand) and the
committed measurements of the development plan naive-short-rand2."""

from __future__ import annotations

import gzip
import json
import statistics
from functools import lru_cache
from pathlib import Path

import roofcalc

H100 = Path(__file__).resolve().parent.parent / "validation" / "expected" / "h100"


@lru_cache(maxsize=1)
def _profile() -> list[dict]:
    return json.loads(gzip.decompress((H100 / "kernels" / "naive1" / "naive-kernels.json.gz").read_bytes()))["cases"]


def test_batched_products_launch_one_kernel_and_no_split() -> None:
    calls = [c for c in _profile() if c["what"] != "naive" and c["seq"] >= 2]
    assert len(calls) == 320
    assert all(len(c["kernels"]) == 1 for c in calls)
    assert not any("split" in k["name"].lower() for c in calls for k in c["kernels"])
    # the hold-out miss: P (2 x 6955, rows not 16-byte aligned) @ V (6955 x 64) over 4 x 2 heads ran
    # cuBLAS's gemmSN on one block a head, each walking all 6,955 of k: 222 us
    (pv,) = [
        c
        for c in calls
        if c["what"] == "probs_v" and (c["batch"], c["heads"], c["seq"], c["kv_seq"]) == (4, 2, 2, 6955)
    ]
    (k,) = pv["kernels"]
    assert "gemmSN" in k["name"] and k["grid"] == [1, 1, 8] and 2.2e-4 < k["duration_s"] < 2.3e-4


def test_the_model_cuts_no_k_for_a_batched_product() -> None:
    r = roofcalc.analyze(
        "attention",
        "h100",
        batch=4,
        heads=2,
        kv_heads=2,
        seq=2,
        kv_seq=6955,
        head_dim=64,
        causal=True,
        impl="naive",
        dtype="bf16",
    )
    names = [k.name for k in r.expected_kernels]
    assert "probs_v" in names and not any("reduce" in n for n in names)
    pv = next(k for k in r.expected_kernels if k.name == "probs_v")
    assert "k-splits" not in pv.reason and pv.grid == 8  # one tile a head: 4 x 2
    # the same product alone, unbatched, is still cut (the split-K of a single GEMM stands)
    single = roofcalc.analyze("gemm", "h100", m=2, n=64, k=6955, dtype="bf16")
    assert any("k-splits" in k.reason or "slices" in k.reason for k in single.expected_kernels)


def test_naive_attention_of_short_queries_against_its_committed_measurements() -> None:
    """naive-short-rand2 (40 naive attentions, a query of 1-64 over 256-8192 keys, half of the key
    lengths unaligned; one H100): at least 80% within [0.8, 1.25], none outside [0.5, 2], the
    median within [0.9, 1.1] (33 of 40 within, median 1.030; with k-splits for batched products,
    31 and two outside)."""
    ratios = []
    for case in json.loads((H100 / "ops-naive-short-rand2.json").read_text())["cases"]:
        r = roofcalc.analyze("attention", "h100", dtype=case["dtype"], **case["params"])
        assert r.expected_s is not None
        ratios.append(case["median_s"] / r.expected_s)
    assert len(ratios) == 40
    assert sum(0.8 <= x <= 1.25 for x in ratios) >= 0.8 * 40
    assert all(0.5 <= x <= 2 for x in ratios)
    assert 0.9 <= statistics.median(ratios) <= 1.1

"""The engine against the worked numbers of the seed articles (shared/seeds/)."""

from __future__ import annotations

import pytest

from roofcalc import analyze, load_hardware

from .conftest import DATA

SEED002 = DATA / "seed002-h100.yaml"


def test_seed002_ridge() -> None:
    # seed 002 prints "Ridge AI: 298.5 FLOPs/byte" for 1e15 / 3.35e12
    r = analyze("dot", load_hardware(SEED002), n=4096, dtype="fp16")
    assert f"{r.ridge:.1f}" == "298.5"


@pytest.mark.parametrize(
    ("op", "params", "printed_ai", "bound"),
    [
        # seed 002, roofline.c output, "Common LLM operations at typical sizes"
        ("dot", {"n": 4096}, "0.5", "memory"),
        ("gemv", {"m": 4096, "n": 4096}, "1.0", "memory"),
        ("gemm", {"m": 8, "n": 8, "k": 4096}, "4.0", "memory"),
        ("gemm", {"m": 128, "n": 128, "k": 4096}, "63.0", "memory"),
        ("gemm", {"m": 1024, "n": 1024, "k": 4096}, "455.1", "compute"),
        ("softmax", {"rows": 1, "cols": 32000}, "1.2", "memory"),
    ],
)
def test_seed002_table(op: str, params: dict[str, int], printed_ai: str, bound: str) -> None:
    r = analyze(op, load_hardware(SEED002), dtype="fp16", **params)
    assert f"{r.intensity:5.1f}".strip() == printed_ai
    assert r.bound == bound


def test_seed002_softmax_before_rounding() -> None:
    # "AI = 160K / 128K = 1.25" -- exactly 5V FLOPs over 4V bytes
    r = analyze("softmax", load_hardware(SEED002), dtype="fp16", cols=32000)
    assert r.flops == 160_000 and r.bytes == 128_000 and r.intensity == 1.25


def test_seed002_gemv_bytes_exact() -> None:
    # seed 002: bytes = m*n*2 + n*2 + m*2
    r = analyze("gemv", load_hardware(SEED002), dtype="fp16", m=4096, n=4096)
    assert r.bytes == 4096 * 4096 * 2 + 4096 * 2 + 4096 * 2
    assert r.flops == 2 * 4096 * 4096


def test_seed000_h100_ridge() -> None:
    # seed 000: "ridge point = 989e12 / 3.35e12 ~ 295 FLOPs per byte" (dense BF16)
    r = analyze("gemm", "h100", m=64)
    assert round(r.ridge) == 295


@pytest.mark.parametrize(("n", "expected", "digits"), [(64, 10.7, 1), (4096, 683, 0)])
def test_seed000_fp32_square_gemm_is_n_over_6(n: int, expected: float, digits: int) -> None:
    # seed 000: intrinsic intensity of an fp32 N x N x N product is 2N^3 / (3 N^2 * 4) = N/6
    r = analyze("gemm", "h100", m=n, dtype="fp32")
    assert r.intensity == pytest.approx(n / 6)
    assert round(r.intensity, digits) == expected  # the seed's "about 10.7" and "683"


def test_seed004_70b_decode_on_h100() -> None:
    # seed 004: a 70B fp16 model reads 140 GB per decode step; 140/3350 ~ 42 ms at batch 1
    r = analyze("decode", "h100", model="llama-3.1-70b", batch=1, context=1, dtype="fp16")
    assert r.bytes == pytest.approx(140e9, rel=0.01)
    assert r.t_memory_s == pytest.approx(0.042, rel=0.02)
    assert r.bound == "memory"
    # intensity equals the batch size
    assert r.intensity == pytest.approx(1.0, rel=0.01)


def test_seed004_batch_32_per_token() -> None:
    # seed 004: "with a batch of 32 ... the per-token cost drops to ~1.3 ms"
    r = analyze("decode", "h100", model="llama-3.1-70b", batch=32, context=1, dtype="fp16")
    assert r.predicted_s / 32 == pytest.approx(1.3e-3, rel=0.03)
    assert r.intensity == pytest.approx(32, rel=0.02)


def test_seed004_prefill_intensity_is_sequence_length() -> None:
    # seed 004: prefill intensity ~ P; 1024 tokens -> ~1024 FLOP/byte, past the ridge
    r = analyze("prefill", "h100", model="llama-3.1-70b", batch=1, seq=1024, dtype="fp16")
    assert r.intensity == pytest.approx(1024, rel=0.08)
    assert r.bound == "compute"


def test_seed004_naive_score_matrix() -> None:
    # seed 004: N = 8192, score matrix 8192^2 * 2 bytes ~ 134 MB
    r = analyze("attention", "h100", seq=8192, heads=1, head_dim=128, impl="naive", dtype="fp16")
    info = {i.name: i.value for i in r.info}
    assert info["score_matrix_bytes"] == 8192**2 * 2
    assert info["score_matrix_bytes"] == pytest.approx(134e6, rel=0.01)


# seed 001: FP32 GEMM with beta = 1 in its byte counts (reads C). The seed prints memory in
# MiB but divides by GB/s as if they were MB, so its T-memory equals ours / 1.048576.
SEED001 = [
    # name, M, N, K, FMA, AMI, A100 (Tc ms, Tm ms), H200 (Tc ms, Tm ms)
    ("square-pow2", 8192, 8192, 8192, 549_755_813_888, 1024, (56.4, 0.66), (16.4, 0.26)),
    ("square-prime", 10007, 10007, 10007, 1_002_101_470_343, 1251, (102.8, 0.98), (29.9, 0.38)),
    ("skinny-pow2", 32768, 256, 16384, 137_438_953_472, 123, (14.1, 1.37), (4.1, 0.53)),
    ("skinny-prime", 30011, 307, 17497, 161_206_457_369, 147, (16.5, 1.35), (4.8, 0.52)),
]


@pytest.mark.parametrize("row", SEED001, ids=[r[0] for r in SEED001])
def test_seed001_gemm_table(row: tuple) -> None:  # type: ignore[type-arg]
    _, m, n, k, fma, ami, a100, h200 = row
    for hwfile, (tc, tm) in (("seed001-a100.yaml", a100), ("seed001-h200.yaml", h200)):
        r = analyze("gemm", load_hardware(DATA / hwfile), m=m, n=n, k=k, beta=True, dtype="fp32")
        assert r.flops == 2 * fma  # FMA counts exact
        assert round(r.intensity) == ami
        assert round(r.t_compute_s * 1e3, 1) == tc
        assert r.t_memory_s * 1e3 / 1.048576 == pytest.approx(tm, abs=0.006)
        assert r.t_memory_s * 1e3 == pytest.approx(tm, rel=0.06)  # "within a few percent" as printed

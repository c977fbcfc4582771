"""Every op against counts derived by hand in the test."""

from __future__ import annotations

import pytest

from roofcalc import analyze
from roofcalc.errors import DomainError, InputError

from .conftest import run_json


def test_dot() -> None:
    # two n-vectors read, one scalar written; one multiply + one add per element
    r = analyze("dot", "h100", n=1000, dtype="fp32")
    assert (r.flops, r.bytes) == (2000, 1000 * 4 * 2 + 4)


def test_gemv_defaults_square() -> None:
    r = analyze("gemv", "h100", m=300)
    assert r.params["n"] == 300
    assert r.bytes == 300 * 300 * 2 + 300 * 2 + 300 * 2


@pytest.mark.parametrize("beta", [False, True])
def test_gemm_terms(beta: bool) -> None:
    m, n, k = 3, 5, 7
    r = analyze("gemm", "h100", m=m, n=n, k=k, beta=beta, dtype="bf16")
    terms = {b.term: b.bytes for b in r.bytes_breakdown}
    assert terms == {"A": m * k * 2, "B": k * n * 2, "C_read": m * n * 2 if beta else 0, "C_write": m * n * 2}
    assert r.flops == 2 * m * n * k
    assert r.bytes == sum(terms.values())


def test_gemm_n_k_default_to_m() -> None:
    r = analyze("gemm", "h100", m=8192)
    assert r.params == {"m": 8192, "n": 8192, "k": 8192, "beta": False}
    assert r.flops == 2 * 8192**3
    # 1.10 TFLOP and 402.7 MB, as the example prints them
    assert r.bytes == 3 * 8192 * 8192 * 2 == 402_653_184


def test_gemm_fp4_half_bytes_exact() -> None:
    # fp4 is half a byte; an odd element count gives a fractional byte count, not a rounded one
    r = analyze("gemm", "b200", m=3, n=3, k=3, dtype="fp4")
    assert r.bytes == pytest.approx(3 * 9 * 0.5)
    r2 = analyze("gemm", "b200", m=4, n=4, k=4, dtype="fp4")
    assert r2.bytes == 24 and isinstance(r2.bytes, int)


def test_softmax() -> None:
    r = analyze("softmax", "h100", rows=4096, cols=32000)
    assert r.flops == 5 * 4096 * 32000
    assert r.bytes == 2 * 4096 * 32000 * 2


def test_layernorm_convention() -> None:
    # 8 FLOPs per element + 4 per row; x read, y written, gamma and beta read once
    r = analyze("layernorm", "h100", rows=16384, cols=4096)
    assert r.flops == 16384 * (8 * 4096 + 4)
    assert r.bytes == 2 * 16384 * 4096 * 2 + 2 * 4096 * 2


def test_attention_flash_causal_gqa() -> None:
    b, h, hk, s, d = 2, 8, 2, 16, 4
    r = analyze("attention", "h100", batch=b, heads=h, kv_heads=hk, seq=s, head_dim=d, causal=True, impl="flash")
    pairs = sum(i + 1 for i in range(s))  # causal: query i sees keys 0..i
    assert r.flops == 4 * b * h * d * pairs
    terms = {t.term: t.bytes for t in r.bytes_breakdown}
    assert terms["Q"] == terms["O"] == b * h * s * d * 2
    assert terms["K"] == terms["V"] == b * hk * s * d * 2
    assert terms["S_write"] == terms["P_read"] == 0


def test_attention_causal_with_longer_keys() -> None:
    # 2 new queries against 5 keys, aligned to the end: query 0 sees 4 keys, query 1 sees 5
    r = analyze("attention", "h100", heads=1, seq=2, kv_seq=5, head_dim=1, causal=True)
    assert r.flops == 4 * (4 + 5)


def test_attention_naive_materialises_scores() -> None:
    b, h, s, d = 1, 4, 64, 32
    flash = analyze("attention", "h100", batch=b, heads=h, seq=s, head_dim=d, causal=True, impl="flash")
    naive = analyze("attention", "h100", batch=b, heads=h, seq=s, head_dim=d, causal=True, impl="naive")
    # naive computes the whole matrix and masks afterwards
    assert naive.flops == 4 * b * h * d * s * s
    assert naive.bytes - flash.bytes == 4 * b * h * s * s * 2
    assert {i.name for i in flash.info} == {"block_cols", "block_rows"}


def test_attention_flash_tiles_from_sram() -> None:
    # Bc = floor(M / 4d) with M = 233472 B / 2 B = 116736 elements, d = 128 -> 228; Br = min(228, 128)
    r = analyze("attention", "h100", head_dim=128)
    info = {i.name: i.value for i in r.info}
    assert info == {"block_cols": 228, "block_rows": 128}


def _llama8b_weights() -> int:
    d, h, hk, dh, f, v, L = 4096, 32, 8, 128, 14336, 128256, 32
    per_layer = d * h * dh + 2 * d * hk * dh + h * dh * d + 3 * d * f + 2 * d
    return L * per_layer + d + v * d


def test_decode_llama8b_by_hand() -> None:
    B, T = 4, 100
    r = analyze("decode", "h100", model="llama-3.1-8b", batch=B, context=T)
    W = _llama8b_weights()
    # Llama-3.1-8B has 8,030,261,248 parameters (its safetensors index); all but the input
    # embedding table (vocab x hidden) are read every step since the LM head is untied
    assert W == 8_030_261_248 - 128256 * 4096
    kv = 32 * 2 * 8 * 128
    terms = {t.term: t.bytes for t in r.bytes_breakdown}
    assert terms == {
        "weights": W * 2,
        "embeddings": B * 4096 * 2,
        "kv_read": B * kv * T * 2,
        "kv_write": B * kv * 2,
        "activations": B * 32 * 2 * 4096 * 2,
        "logits": B * 128256 * 2,
    }
    linear = 2 * B * (W - 32 * 2 * 4096 - 4096)  # norms hold no matmul FLOPs
    attn = 4 * B * 32 * 32 * 128 * (T + 1)
    norms = 4 * B * 4096 * (2 * 32 + 1)  # RMSNorm: square, sum, rsqrt-scale, weight: 4 per element
    assert r.flops == linear + attn + norms


def test_decode_kv_dtype() -> None:
    a = analyze("decode", "h100", model="llama-3.1-8b", batch=8, context=4096)
    b = analyze("decode", "h100", model="llama-3.1-8b", batch=8, context=4096, kv_dtype="fp8")
    ka = {t.term: t.bytes for t in a.bytes_breakdown}["kv_read"]
    kb = {t.term: t.bytes for t in b.bytes_breakdown}["kv_read"]
    assert ka == 2 * kb


@pytest.mark.parametrize("batch", [1, 8, 64])
def test_decode_intensity_close_to_batch(batch: int) -> None:
    r = analyze("decode", "h100", model="llama-3.1-8b", batch=batch, context=1)
    assert r.intensity == pytest.approx(batch, rel=0.05)


def test_prefill_by_hand() -> None:
    S = 512
    r = analyze("prefill", "h100", model="llama-3.1-8b", seq=S)
    W = _llama8b_weights()
    lin_per_token = W - 32 * 2 * 4096 - 4096 - 128256 * 4096
    norms = 4 * S * 4096 * (2 * 32 + 1)
    assert r.flops == 2 * S * lin_per_token + 2 * 128256 * 4096 + 4 * 32 * 4096 * (S * (S + 1) // 2) + norms


def test_explicit_params_override_preset() -> None:
    r = analyze("decode", "h100", model="llama-3.1-8b", layers=1)
    assert r.params["layers"] == 1 and r.params["hidden"] == 4096


@pytest.mark.parametrize(
    ("op", "params", "exc", "text"),
    [
        # the Python API names parameters, never CLI flags (the CLI prints --m)
        ("gemm", {"m": 0}, InputError, "m: must be at least 1"),
        ("gemm", {"m": -3}, InputError, "m: must be at least 1"),
        ("gemm", {"m": 2**64}, InputError, "absurdly large"),
        ("gemm", {"m": "12x"}, InputError, "not an integer"),
        ("gemm", {"dtype": "fp9"}, InputError, "did you mean"),
        ("gemm", {"q": 3}, InputError, "no parameter 'q'"),
        ("gemm", {"dtype": "fp4"}, DomainError, "h100 has no fp4 peak"),
        ("attention", {"heads": 32, "kv_heads": 5}, InputError, "must divide"),
        ("decode", {}, InputError, "needs layers (or model)"),
        ("decode", {"model": "llama-9"}, InputError, "unknown model"),
    ],
)
def test_bad_params(op: str, params: dict[str, object], exc: type, text: str) -> None:
    with pytest.raises(exc, match=None) as ei:
        analyze(op, "h100", **params)
    assert text in str(ei.value)


def test_fp8_on_a100_is_domain_error() -> None:
    with pytest.raises(DomainError, match="a100 has no fp8 peak"):
        analyze("gemm", "a100", dtype="fp8")


def test_huge_sizes_stay_exact() -> None:
    # 2^60 cubed overflows float precision (and 2*m*n*k is far past 2^53): the count stays exact
    m = 2**60
    r = analyze("gemm", "h100", m=m)
    assert r.flops == 2 * m**3 and isinstance(r.flops, int)
    assert r.bytes == 3 * m * m * 2


@pytest.mark.parametrize(("cols", "kernels"), [(4096, ["layer_norm"]), (2172, ["layer_norm"]),
                                               (2171, ["row_moments", "row_normalize"]), (33, ["row_moments", "row_normalize"])])  # fmt: skip
def test_layernorm_takes_the_vectorized_kernel_only_on_rows_of_a_multiple_of_4(cols: int, kernels: list[str]) -> None:
    """ATen's layer_norm (layer_norm_kernel.cu) runs vectorized_layer_norm_kernel when the row is a
    multiple of vec_size = 4 elements, else RowwiseMomentsCUDAKernel (512 threads a row) and
    LayerNormForwardCUDAKernel (256 threads a row): validation/expected/h200/kernels/ln-fallback/."""
    res = run_json("op", "layernorm", "--rows", "2048", "--cols", str(cols), "--dtype", "fp16", "--hw", "h200")
    got = [(k["name"], k["grid"]) for k in res["expected_kernels"]]
    assert got == [(name, 2048) for name in kernels]
    # the bound does not change with the path: x read once, y written once, scale and shift read
    assert res["bytes"] == 2 * 2048 * cols * 2 + 2 * cols * 2

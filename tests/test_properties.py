"""Properties of the roofline engine over random ops, sizes, dtypes and hardware."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from roofcalc import analyze
from roofcalc.errors import DomainError
from roofcalc.hardware import hardware_names

DIMS = st.integers(1, 2**20)
OPS: dict[str, Any] = {
    "dot": st.fixed_dictionaries({"n": DIMS}),
    "gemv": st.fixed_dictionaries({"m": DIMS, "n": DIMS}),
    "gemm": st.fixed_dictionaries({"m": DIMS, "n": DIMS, "k": DIMS, "beta": st.booleans()}),
    "softmax": st.fixed_dictionaries({"rows": DIMS, "cols": DIMS}),
    "layernorm": st.fixed_dictionaries({"rows": DIMS, "cols": DIMS}),
    "attention": st.fixed_dictionaries(
        {
            "batch": st.integers(1, 64),
            "heads": st.sampled_from([8, 32]),
            "kv_heads": st.sampled_from([1, 8]),
            "seq": st.integers(1, 2**16),
            "head_dim": st.sampled_from([64, 128]),
            "impl": st.sampled_from(["flash", "naive"]),
        }
    ),
    "decode": st.fixed_dictionaries(
        {
            "model": st.sampled_from(["llama-3.1-8b", "mixtral-8x7b", "llama-2-7b"]),
            "batch": st.integers(1, 4096),
            "context": st.integers(0, 4000),
            "gpus": st.sampled_from([1, 2, 4]),
        }
    ),
    "prefill": st.fixed_dictionaries(
        {
            "model": st.sampled_from(["llama-3.1-8b", "qwen2.5-7b"]),
            "batch": st.integers(1, 64),
            "seq": st.integers(1, 8192),
        }
    ),
}
CASE = st.sampled_from(sorted(OPS)).flatmap(lambda op: st.tuples(st.just(op), OPS[op]))
HW = st.sampled_from(hardware_names())
DTYPE = st.sampled_from(["bf16", "fp16", "fp32", "fp8", "fp4", "tf32"])


def _try(op: str, hw: str, **params: Any) -> Any:
    try:
        return analyze(op, hw, **params)
    except DomainError:
        return None  # the dtype the part lacks, or no interconnect figure: nothing to check


@settings(max_examples=120, deadline=None)
@given(CASE, HW, DTYPE)
def test_roofline_bounds(case: tuple[str, dict[str, Any]], hw: str, dtype: str) -> None:
    op, params = case
    r = _try(op, hw, dtype=dtype, **params)
    if r is None:
        return
    eps = 1 + 1e-12
    assert r.attainable_flops_per_s <= min(r.peak_flops_per_s, r.bandwidth_bytes_per_s * r.intensity) * eps
    assert r.predicted_s * eps >= r.t_compute_s and r.predicted_s * eps >= r.t_memory_s
    assert r.predicted_s * eps >= r.flops / r.peak_flops_per_s
    assert r.predicted_s * eps >= r.bytes / r.bandwidth_bytes_per_s
    if r.bound == "interconnect":  # the all-reduces take longer than the GPU's own work (several GPUs)
        assert r.t_interconnect_s > max(r.t_compute_s, r.t_memory_s)
    else:
        assert (r.bound == "compute") == (r.t_compute_s >= r.t_memory_s)
    assert 0 < r.fraction_of_peak <= 1 + 1e-12
    assert (
        sum(b.bytes for b in r.bytes_breakdown) == r.bytes
        or abs(sum(b.bytes for b in r.bytes_breakdown) - r.bytes) <= 1e-9 * r.bytes
    )


@settings(max_examples=80, deadline=None)
@given(DIMS, DIMS, DIMS, st.booleans(), st.sampled_from(["bf16", "fp32", "fp8"]))
def test_gemm_scales_exactly(m: int, n: int, k: int, beta: bool, dtype: str) -> None:
    a = analyze("gemm", "b200", m=m, n=n, k=k, beta=beta, dtype=dtype)
    b = analyze("gemm", "b200", m=2 * m, n=n, k=k, beta=beta, dtype=dtype)
    assert b.flops == 2 * a.flops  # exact integers, however large
    ta = {t.term: t.bytes for t in a.bytes_breakdown}
    tb = {t.term: t.bytes for t in b.bytes_breakdown}
    assert tb["A"] == 2 * ta["A"] and tb["B"] == ta["B"] and tb["C_write"] == 2 * ta["C_write"]


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 2048), st.integers(1, 8000))
def test_decode_bytes_grow_with_batch(batch: int, context: int) -> None:
    a = analyze("decode", "h200", model="llama-3.1-8b", batch=batch, context=context)
    b = analyze("decode", "h200", model="llama-3.1-8b", batch=batch + 1, context=context)
    assert b.flops > a.flops and b.bytes > a.bytes and b.intensity >= a.intensity * (1 - 1e-12)

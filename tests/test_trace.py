"""`roofcalc trace`: reading PyTorch profiler traces, linking kernels to ops, FLOPs and bytes per
op kind, the report against the roofline, and hostile input.

The fixtures are tests/data/traces/*.json(.gz), written by tests/data/traces/make_fixtures.py;
every expected FLOP and byte count below is derived by hand from the shapes that script writes,
and every expected time from the H100's hardware file (hardware/h100.yaml: memory
bandwidth 3.35e12 B/s, bf16 dense peak 989.4e12 FLOP/s, NVLink 900e9 B/s both ways).
"""

from __future__ import annotations

import gzip
import json
import math
import os
from functools import cache
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from roofcalc.trace import analysis, reader
from roofcalc.trace.analysis import TraceReport, analyze_trace, kernel_inventory
from roofcalc.trace.model import Comm, Trace
from roofcalc.trace.opcost import Cost, Unknown, causal_pairs, comm_cost, op_cost
from roofcalc.trace.reader import TraceError, read_trace

TRACES = Path(__file__).parent / "data" / "traces"
DECODE = TRACES / "decode-eager.json"
PREFILL = TRACES / "prefill-sdpa.json"
GRAPH = TRACES / "cuda-graph-replay.json"
TP2 = TRACES / "tp2-allreduce.json"
TRITON = TRACES / "triton-unknown.json.gz"
FIXTURES = [DECODE, PREFILL, GRAPH, TP2, TRITON]

BW = 3.35e12  # h100 memory bandwidth, B/s
BF16_PEAK = 989.4e12  # h100 bf16 dense, FLOP/s
LINK_ONE_WAY = 900e9 / 2  # h100 NVLink, one direction (as roofline.py sends an all-reduce)
BF16 = "c10::BFloat16"


@cache
def h100() -> Any:
    from roofcalc.hardware import load_hardware

    return load_hardware("h100")


@cache
def report(path: Path) -> TraceReport:
    return analyze_trace(read_trace(path), h100(), top=0)


def raw_events(path: Path) -> list[dict[str, Any]]:
    """The fixture's events, read with the standard library alone (an independent reading)."""
    data = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    doc = json.loads(data)
    return doc["traceEvents"] if isinstance(doc, dict) else doc


def row(r: TraceReport, name: str) -> Any:
    return next(o for o in r.ops if o.name == name)


# ------------------------------------------------------------------ FLOPs and bytes by hand


def cost(name: str, dims: list[Any], types: list[str], concrete: list[str] | None = None, **kw: Any) -> Cost:
    c = op_cost(name, dims, types, concrete or [""] * len(dims), **kw)
    assert isinstance(c, Cost), c
    return c


def test_mm_addmm_bmm_baddbmm_matmul_linear() -> None:
    # mm(a[m,k], b[k,n]) = 2mkn FLOPs, (mk + kn + mn) elements
    c = cost("aten::mm", [[8, 2048], [2048, 4096]], [BF16, BF16])
    assert (c.flops, c.bytes, c.dtype, c.kind) == (
        2 * 8 * 2048 * 4096,
        (8 * 2048 + 2048 * 4096 + 8 * 4096) * 2,
        "bf16",
        "matmul",
    )
    # addmm(bias[n], a[m,k], b[k,n]) = 2mkn FLOPs, (mk + kn + mn + n) elements
    c = cost("aten::addmm", [[6144], [4, 2048], [2048, 6144], [], []], [BF16, BF16, BF16, "Scalar", "Scalar"])
    assert (c.flops, c.bytes) == (2 * 4 * 2048 * 6144, (4 * 2048 + 2048 * 6144 + 4 * 6144 + 6144) * 2)
    # bmm(a[b,m,k], b[b,k,n]) = 2bmkn FLOPs, b(mk + kn + mn) elements, fp32: 4 bytes each
    c = cost("aten::bmm", [[64, 1, 128], [64, 128, 513]], ["float", "float"])
    assert (c.flops, c.bytes, c.dtype) == (2 * 64 * 128 * 513, 64 * (128 + 128 * 513 + 513) * 4, "fp32")
    # baddbmm(c[b,m,n], a, b): the input c read as well
    c = cost("aten::baddbmm", [[16, 32, 32], [16, 32, 64], [16, 64, 32], [], []], [BF16] * 3 + ["Scalar"] * 2)
    assert (c.flops, c.bytes) == (2 * 16 * 32 * 64 * 32, (16 * 32 * 32 + 16 * (32 * 64 + 64 * 32 + 32 * 32)) * 2)
    # matmul([2,3,5,7], [7,11]): batch 6 broadcast, out [2,3,5,11]
    c = cost("aten::matmul", [[2, 3, 5, 7], [7, 11]], [BF16, BF16])
    assert (c.flops, c.bytes) == (2 * 6 * 5 * 7 * 11, (2 * 3 * 5 * 7 + 7 * 11 + 6 * 5 * 11) * 2)
    # linear(x[4,1,2048], w[8192,2048], bias[8192]): m = 4
    c = cost("aten::linear", [[4, 1, 2048], [8192, 2048], [8192]], [BF16] * 3)
    assert (c.flops, c.bytes) == (2 * 4 * 2048 * 8192, (4 * 2048 + 8192 * 2048 + 4 * 8192 + 8192) * 2)
    c = cost("aten::linear", [[4, 1, 2048], [8192, 2048], []], [BF16, BF16, ""])  # no bias
    assert c.bytes == (4 * 2048 + 8192 * 2048 + 4 * 8192) * 2


def test_attention_sdpa_and_its_variants() -> None:
    b, h, hk, s, t, d = 2, 32, 8, 1024, 1024, 128
    q, kv = [b, h, s, d], [b, hk, t, d]
    types = [BF16, BF16, BF16, "", "Scalar", "Scalar", "", "Scalar"]
    # not causal: 4*b*h*s*t*d FLOPs (Q K^T and P V, 2 FLOPs a multiply-add); q + k + v + out read/written once
    c = cost(
        "aten::scaled_dot_product_attention",
        [q, kv, kv, [], [], [], [], []],
        types,
        ["", "", "", "", "0.", "False", "", "True"],
    )
    assert c.flops == 4 * b * h * s * t * d
    assert c.bytes == (b * h * s * d + 2 * b * hk * t * d + b * h * s * d) * 2
    # causal, s = t: the pairs kept are s(s+1)/2, not quite half of s*t: 4bhd*s(s+1)/2
    # (ops/attention.yaml counts the same; halving 4bhstd would give 4bhd*s*s/2, 0.1% less here)
    c = cost(
        "aten::scaled_dot_product_attention",
        [q, kv, kv, [], [], [], [], []],
        types,
        ["", "", "", "", "0.", "True", "", "True"],
    )
    assert c.flops == 4 * b * h * d * (s * (s + 1) // 2)
    assert abs(c.flops / (4 * b * h * s * t * d / 2) - 1) < 1.01 / s
    # a mask given: the full s*t pairs, plus the mask read
    c = cost(
        "aten::scaled_dot_product_attention",
        [q, kv, kv, [s, t], [], [], [], []],
        [BF16] * 4 + types[4:],
        ["", "", "", "", "0.", "False", "", "True"],
    )
    assert c.flops == 4 * b * h * s * t * d
    assert c.bytes == (2 * b * h * s * d + 2 * b * hk * t * d + s * t) * 2
    # the flash path: [b,h,s,d] with is_causal 5th; its kernel entry [b,s,h,d] with is_causal 9th
    c = cost(
        "aten::_scaled_dot_product_flash_attention",
        [q, q, q, [], [], [], []],
        [BF16] * 3 + ["Scalar"] * 3 + [""],
        ["", "", "", "0.", "True", "False", ""],
    )
    assert c.flops == 4 * b * h * d * (s * (s + 1) // 2)
    bshd = [b, s, h, d]
    concrete = ["", "", "", "", "", "1024", "1024", "0.", "True", "False", "", "", "", "", ""]
    c = cost("aten::_flash_attention_forward", [bshd, bshd, bshd] + [[]] * 12, [BF16] * 3 + [""] * 12, concrete)
    assert c.flops == 4 * b * h * d * (s * (s + 1) // 2)
    assert c.bytes == 4 * b * s * h * d * 2
    # efficient attention: custom_mask_type (10th) 0 = none
    c = cost(
        "aten::_efficient_attention_forward",
        [[b, s, h, d], [b, t, hk, d], [b, t, hk, d]] + [[]] * 11,
        [BF16] * 3 + [""] * 11,
        [""] * 9 + ["0"] + [""] * 4,
    )
    assert c.flops == 4 * b * h * s * t * d
    # cudnn (torch 2.11's innermost op of SDPA on Hopper): [b,h,s,d], is_causal 11th
    concrete = ["", "", "", "", "", "", "1024", "1024", "False", "0.", "True", "False", "0.08"]
    c = cost(
        "aten::_cudnn_attention_forward", [q, kv, kv] + [[]] * 10, [BF16] * 3 + [""] * 3 + ["Scalar"] * 7, concrete
    )
    assert c.flops == 4 * b * h * d * (s * (s + 1) // 2)
    # decode: one query over 1024 keys, head_dim of V different from Q's
    c = cost(
        "aten::scaled_dot_product_attention",
        [[b, h, 1, d], [b, h, t, d], [b, h, t, 64], [], [], [], [], []],
        types,
        ["", "", "", "", "0.", "False", "", "False"],
    )
    assert c.flops == 2 * b * h * 1 * t * (d + 64)


def test_causal_pairs() -> None:
    # top-left (torch SDPA): query i sees keys 0..i; bottom-right (FlashAttention): the last query sees all
    assert causal_pairs(4, 4, "top-left") == causal_pairs(4, 4, "bottom-right") == 1 + 2 + 3 + 4
    assert causal_pairs(2, 5, "top-left") == 1 + 2
    assert causal_pairs(2, 5, "bottom-right") == 4 + 5
    assert causal_pairs(5, 2, "top-left") == 1 + 2 + 2 + 2 + 2
    assert causal_pairs(5, 2, "bottom-right") == 1 + 2


def test_softmax_and_norms() -> None:
    x = [4, 16, 1, 513]
    n = 4 * 16 * 513
    # softmax: 5 FLOPs an element (ops/softmax.yaml), read once and write once
    c = cost("aten::_softmax", [x, [], []], [BF16, "Scalar", "Scalar"], ["", "-1", "False"])
    assert (c.flops, c.bytes, c.kind) == (5 * n, 2 * n * 2, "softmax")
    c = cost("aten::_softmax", [x, [], []], [BF16, "Scalar", "Scalar"], ["", "-1", "True"])  # half_to_float: fp32 out
    assert c.bytes == n * 2 + n * 4
    # layer_norm (ops/layernorm.yaml): rows*(8*cols + 4) FLOPs; x, y, weight and bias
    c = cost(
        "aten::layer_norm",
        [[4, 1, 2048], [], [2048], [2048], [], []],
        [BF16, "ScalarList", BF16, BF16, "Scalar", "Scalar"],
        ["", "[2048]", "", "", "1e-05", "True"],
    )
    assert (c.flops, c.bytes, c.kind) == (4 * (8 * 2048 + 4), (2 * 4 * 2048 + 2 * 2048) * 2, "norm")
    # native_layer_norm also writes the mean and rstd: fp32, one a row each
    c = cost(
        "aten::native_layer_norm",
        [[4, 1, 2048], [], [2048], [2048], []],
        [BF16, "ScalarList", BF16, BF16, "Scalar"],
        ["", "[2048]", "", "", "1e-05"],
    )
    assert c.bytes == (2 * 4 * 2048 + 2 * 2048) * 2 + 2 * 4 * 4
    # rms_norm: rows*(4*cols + 3) FLOPs; x, y, weight; _fused_rms_norm also its rstd
    c = cost(
        "aten::rms_norm",
        [[2, 3, 4096], [], [4096], []],
        [BF16, "ScalarList", BF16, "Scalar"],
        ["", "[4096]", "", "1e-06"],
    )
    assert (c.flops, c.bytes) == (6 * (4 * 4096 + 3), (2 * 6 * 4096 + 4096) * 2)
    c = cost(
        "aten::_fused_rms_norm",
        [[2, 3, 4096], [], [4096], []],
        [BF16, "ScalarList", BF16, "Scalar"],
        ["", "[4096]", "", "1e-06"],
    )
    assert c.bytes == (2 * 6 * 4096 + 4096) * 2 + 6 * 4


def test_elementwise() -> None:
    # add(a[4,1,2048], b[4,1,2048]): 1 FLOP an element; a, b read and the output written
    c = cost("aten::add", [[4, 1, 2048], [4, 1, 2048], []], [BF16, BF16, "Scalar"], ["", "", "1"])
    assert (c.flops, c.bytes, c.kind) == (8192, 3 * 8192 * 2, "elementwise")
    # broadcast: mul(x[4,1,2048], s[4,1,1]) writes [4,1,2048]
    c = cost("aten::mul", [[4, 1, 2048], [4, 1, 1]], [BF16, BF16])
    assert (c.flops, c.bytes) == (8192, (8192 + 4 + 8192) * 2)
    # a tensor times a Scalar: the Scalar is no tensor
    c = cost("aten::mul", [[1000], []], ["float", "Scalar"], ["", "0.5"])
    assert (c.flops, c.bytes) == (1000, 2 * 1000 * 4)
    # bf16 + fp32 (same shape) promotes to fp32
    c = cost("aten::add", [[10], [10], []], [BF16, "float", "Scalar"])
    assert c.bytes == 10 * 2 + 10 * 4 + 10 * 4
    # silu: 4 FLOPs an element, gelu 5 (opcost.ELEMENTWISE_FLOPS)
    assert cost("aten::silu", [[3, 100]], [BF16]).flops == 4 * 300
    assert cost("aten::gelu", [[3, 100], []], [BF16, ""], ["", "none"]).flops == 5 * 300
    # in place: the first input is read and written
    c = cost("aten::add_", [[4, 2048], [4, 2048], []], [BF16, BF16, "Scalar"])
    assert c.bytes == 3 * 8192 * 2
    # comparisons write bools
    c = cost("aten::le", [[64, 64], [64, 64]], ["long int", "long int"])
    assert c.bytes == 2 * 4096 * 8 + 4096 * 1
    # an expanded input (stride 0) is read once: [3,8,4,64] expanded from [3,8,1,64]
    c = op_cost(
        "aten::mul",
        [[3, 8, 4, 64], [3, 8, 4, 64]],
        [BF16, BF16],
        ["", ""],
        strides=[[512, 64, 0, 1], [2048, 256, 64, 1]],
    )
    assert isinstance(c, Cost) and c.bytes == (3 * 8 * 64 + 2 * 3 * 8 * 4 * 64) * 2


def test_copies_gathers_reductions() -> None:
    # copy_(dst bf16, src fp32): read 4 B, write 2 B an element
    c = cost("aten::copy_", [[1, 2000, 2048], [1, 2000, 2048], []], [BF16, "float", "Scalar"], ["", "", "False"])
    assert (c.flops, c.bytes, c.kind) == (0, 4096000 * (4 + 2), "copy")
    # _to_copy to bfloat16 (ScalarType code 15)
    c = cost(
        "aten::_to_copy",
        [[100], [], [], [], [], [], []],
        ["float", "Scalar", "", "", "", "", ""],
        ["", "15", "", "", "", "False", ""],
    )
    assert c.bytes == 100 * (4 + 2)
    # cat: the element size read from the kernel's name (OpaqueType<2u>)
    shapes = [[4, 16, 512, 128], [4, 16, 1, 128]]
    kernel = "void at::native::(anonymous namespace)::CatArrayBatchedCopy<at::native::(anonymous namespace)::OpaqueType<2u>, unsigned int, 4, 64, 64>(...)"
    c = cost("aten::cat", [shapes, []], ["TensorList", "Scalar"], ["", "2"], kernels=[kernel])
    assert c.bytes == 2 * (4 * 16 * 512 * 128 + 4 * 16 * 128) * 2
    u = op_cost("aten::cat", [shapes, []], ["TensorList", "Scalar"], ["", "2"], kernels=["mystery"])
    assert isinstance(u, Unknown) and "element type" in u.reason
    # index_select(weight[50304,2048], 0, index[4]): 4 rows read and written, the index read
    c = cost("aten::index_select", [[50304, 2048], [], [4]], [BF16, "Scalar", "long int"], ["", "0", ""])
    assert c.bytes == 2 * 4 * 2048 * 2 + 4 * 8
    # embedding(weight[V,D], indices[3,5])
    c = cost("aten::embedding", [[1000, 64], [3, 5], [], [], []], [BF16, "long int", "Scalar", "Scalar", "Scalar"])
    assert c.bytes == 2 * 15 * 64 * 2 + 15 * 8
    # gather with an expanded index [2000,4096] of strides [1,0]: 2000 indices read, not 8 M
    c = op_cost(
        "aten::gather",
        [[128256, 4096], [], [2000, 4096], [], [2000, 4096]],
        [BF16, "Scalar", "long int", "Scalar", BF16],
        ["", "0", "", "False", ""],
        strides=[[4096, 1], [], [1, 0], [], [4096, 1]],
    )
    assert isinstance(c, Cost) and c.bytes == 2 * 2000 * 4096 * 2 + 2000 * 8
    # mean over the last dim of [4,1,2048]: n FLOPs; n read, 4 written
    c = cost("aten::mean", [[4, 1, 2048], [], [], []], [BF16, "ScalarList", "Scalar", ""], ["", "[-1]", "True", ""])
    assert (c.flops, c.bytes, c.kind) == (8192, (8192 + 4) * 2, "reduction")
    c = cost("aten::sum", [[10, 10], []], ["float", ""])  # no dims: a full reduction, one element out
    assert c.bytes == (100 + 1) * 4
    c = cost("aten::argmax", [[4, 50304], [], []], [BF16, "Scalar", "Scalar"], ["", "-1", "False"])
    assert c.bytes == 4 * 50304 * 2 + 4 * 8  # int64 indices out
    # index_put_ with accumulate: the values read, the targets read and written
    c = cost(
        "aten::index_put_", [[100, 8], [[5]], [5, 8], []], [BF16, "GenericList", BF16, "Scalar"], ["", "", "", "True"]
    )
    assert c.bytes == 3 * 40 * 2
    assert cost("aten::fill_", [[7, 7], []], ["float", "Scalar"]).bytes == 49 * 4


def test_collectives() -> None:
    # ring all-reduce: 2(n-1)/n of the buffer sent per GPU
    c = comm_cost(Comm("allreduce", 32768, 32768, "BFloat16", 2))
    assert isinstance(c, Cost) and (c.interconnect_bytes, c.kind) == (2 * 1 * 32768 * 2 // 2, "communication")
    c = comm_cost(Comm("allreduce", 1000, 1000, "Float", 8))
    assert isinstance(c, Cost) and c.interconnect_bytes == 2 * 7 * 4000 // 8
    # all-gather: (n-1)/n of the gathered whole (Out msg nelems); reduce-scatter: of the input
    c = comm_cost(Comm("_allgather_base", 250, 1000, "Half", 4))
    assert isinstance(c, Cost) and c.interconnect_bytes == 3 * 2000 // 4
    c = comm_cost(Comm("reduce_scatter_tensor", 1000, 250, "Half", 4))
    assert isinstance(c, Cost) and c.interconnect_bytes == 3 * 2000 // 4
    assert isinstance(comm_cost(Comm("allreduce", 10, 10, "Quaternion", 2)), Unknown)
    assert isinstance(comm_cost(Comm("barrier", 0, 0, "Float", 2)), Unknown)


@pytest.mark.parametrize(
    ("name", "dims", "types", "why"),
    [
        ("mylib::fused_rope", [[1, 2]], [BF16], "no FLOP and byte model"),
        ("aten::arange", [[], []], ["Scalar", ""], "no FLOP and byte model"),
        ("aten::mm", [[4, 8], [9, 16]], [BF16, BF16], "do not multiply"),
        ("aten::mm", [[4, 8, 1], [8, 16]], [BF16, BF16], "dimensions"),
        ("aten::mm", [[4, 8], [8, 16]], ["c10::Quaternion", BF16], "not a tensor of a known dtype"),
        ("aten::add", [[3], [4]], [BF16, BF16], "do not broadcast"),
        ("aten::_flash_attention_forward", [[10, 4, 64], [10, 4, 64], [10, 4, 64]], [BF16] * 3, "variable-length"),
        ("aten::mm", None, None, "record_shapes"),
    ],
)
def test_unknown_ops_say_why(name: str, dims: Any, types: Any, why: str) -> None:
    u = op_cost(name, dims, types, None)
    assert isinstance(u, Unknown) and why in u.reason


# ------------------------------------------------------------------ the fixtures


def test_every_kernel_is_accounted_for() -> None:
    """The rows' GPU times add up to the sum of every kernel, memcpy and memset in the file
    (summed here from the raw JSON), to the last bit a float sum allows."""
    for path in FIXTURES:
        r = report(path)
        gpu = [e for e in raw_events(path) if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
        total = math.fsum(e["dur"] for e in gpu) * 1e-6
        assert r.summary.kernels == len(gpu)
        assert r.summary.kernel_s == pytest.approx(total, rel=1e-12)
        assert math.fsum(o.gpu_s for o in r.ops) == pytest.approx(total, rel=1e-12)
        assert math.fsum(k.gpu_s for k in r.kinds) == pytest.approx(total, rel=1e-12)
        assert sum(o.kernels for o in r.ops) == len(gpu)
        # one stream each (the all-reduce's waits for it): busy = the kernels' sum
        assert r.summary.gpu_busy_s == pytest.approx(total, rel=1e-9)
        events = [e for e in raw_events(path) if e.get("ph") == "X"]
        wall = (max(e["ts"] + e["dur"] for e in events) - min(e["ts"] for e in events)) * 1e-6
        assert r.summary.wall_s == pytest.approx(wall, rel=1e-12)
        s = r.summary
        assert s.at_bound_s == pytest.approx(s.bound_s + s.unknown_s)
        assert s.speed_of_light_fraction == pytest.approx(s.at_bound_s / s.wall_s)
        assert s.idle_s == pytest.approx(s.wall_s - s.gpu_busy_s)


def test_decode_step_by_hand() -> None:
    r = report(DECODE)
    # the three addmm calls (qkv, fc1, fc2), memory-bound: their bytes over 3.35e12 B/s
    qkv = (6144 + 4 * 2048 + 2048 * 6144 + 4 * 6144) * 2
    fc1 = (8192 + 4 * 2048 + 2048 * 8192 + 4 * 8192) * 2
    fc2 = (2048 + 4 * 8192 + 8192 * 2048 + 4 * 2048) * 2
    addmm = row(r, "aten::addmm")
    assert (addmm.calls, addmm.bytes, addmm.limiter) == (3, qkv + fc1 + fc2, "memory")
    assert addmm.flops == 2 * 4 * (2048 * 6144 + 2048 * 8192 + 8192 * 2048)
    assert addmm.bound_s == pytest.approx((qkv + fc1 + fc2) / BW, rel=1e-12)
    assert addmm.gpu_s == pytest.approx((11.904 + 16.64 + 17.216) * 1e-6, rel=1e-12)
    assert addmm.lost_s == pytest.approx(addmm.gpu_s - addmm.bound_s)
    assert addmm.fraction == pytest.approx(addmm.bound_s / addmm.gpu_s)
    # the mm launched a memset and a GEMM: one call, both kernels' time
    mm = row(r, "aten::mm")
    assert (mm.calls, mm.kernels) == (1, 2)
    assert mm.gpu_s == pytest.approx((0.992 + 6.112) * 1e-6)
    assert mm.bound_s == pytest.approx((4 * 2048 + 2048 * 2048 + 4 * 2048) * 2 / BW)
    # most time lost: addmm, first in the table
    assert r.ops[0].name == "aten::addmm" == r.summary.most_lost
    # no model: top-k sampling (two kernels, one call), and the token ids' copy from the host
    topk = row(r, "aten::topk")
    assert (topk.kind, topk.calls, topk.kernels, topk.bound_s) == ("unknown", 1, 2, None)
    assert topk.unknown_s == pytest.approx((9.6 + 3.2) * 1e-6)
    copy = row(r, "aten::copy_")
    assert copy.bound_s is None and "host" in (copy.reason or "")
    kinds = {k.kind for k in r.kinds}
    assert {"matmul", "softmax", "norm", "elementwise", "copy", "reduction"} <= kinds
    assert r.hardware == "h100" and r.trace_devices == ["NVIDIA H100 80GB HBM3"]
    # the top calls: ranked by time lost, the largest first
    lost = [c.lost_s for c in r.top_calls]
    assert lost == sorted(lost, reverse=True) and r.top_calls[0].op == "aten::addmm"


def test_prefill_attention_by_hand() -> None:
    r = report(PREFILL)
    s, h, d, hk = 2048, 32, 128, 8
    flash = row(r, "aten::_flash_attention_forward")
    assert flash.flops == 4 * h * d * (s * (s + 1) // 2)
    assert flash.limiter == "compute"
    assert flash.bound_s == pytest.approx(flash.flops / BF16_PEAK, rel=1e-12)
    eff = row(r, "aten::_efficient_attention_forward")  # GQA, not causal
    assert eff.flops == 4 * h * s * s * d
    assert eff.bytes == (2 * s * h * d + 2 * s * hk * d) * 2
    addmm = row(r, "aten::addmm")  # [2048,4096] x [4096,12288]: compute-bound
    assert addmm.bound_s == pytest.approx(2 * 2048 * 4096 * 12288 / BF16_PEAK, rel=1e-12)
    assert {o.kind for o in r.ops} == {"matmul", "attention"}
    assert r.summary.unknown_s == 0


def test_cuda_graph_kernels_have_no_op_and_are_kept() -> None:
    r = report(GRAPH)
    graph = [o for o in r.ops if o.kind == "graph"]
    assert sum(o.kernels for o in graph) == 8
    assert all(o.bound_s is None and "CUDA graph" in (o.reason or "") for o in graph)
    assert row(r, "nvjet_tst_64x8_64x16_4x1_v_bz_TNT").calls == 4
    assert any("replayed by CUDA graphs" in n for n in r.notes)
    assert r.summary.modelled_s == 0 and r.summary.unknown_s == pytest.approx(r.summary.kernel_s)
    inv = kernel_inventory(read_trace(GRAPH), h100())
    assert [k.link for k in inv].count("graph") == 8
    assert all(k.op is None for k in inv if k.link == "graph")


def test_tp2_all_reduce() -> None:
    r = report(TP2)
    ar = row(r, "nccl:allreduce")
    sent = 2 * (2 - 1) * (8 * 4096 * 2) // 2  # ring: 2(n-1)/n of 64 KiB
    assert (ar.kind, ar.interconnect_bytes, ar.limiter) == ("communication", sent, "interconnect")
    assert ar.bound_s == pytest.approx(sent / LINK_ONE_WAY, rel=1e-12)
    assert r.summary.communication_s == pytest.approx(18.3e-6)
    assert r.summary.communication_exposed_s == pytest.approx(18.3e-6)  # nothing runs beside it
    assert row(r, "aten::mm").bound_s == pytest.approx((8 * 2048 + 2048 * 4096 + 8 * 4096) * 2 / BW)


def test_unknown_ops_are_listed_with_their_time() -> None:
    r = report(TRITON)
    triton = row(r, "triton_poi_fused_add_mul_0")  # launched by cuLaunchKernel with no op around it
    rope = row(r, "mylib::fused_rope")  # a custom op: no model
    assert triton.unknown_s == pytest.approx(3.3e-6) and triton.bound_s is None
    assert rope.unknown_s == pytest.approx(4.7e-6) and rope.kind == "unknown"
    assert r.summary.unknown_s == pytest.approx(8.0e-6)
    assert "1 GPU activity has no launch and no op in the trace" in r.notes
    assert r.summary.most_lost == "aten::mm"


def test_kernel_inventory() -> None:
    inv = kernel_inventory(read_trace(DECODE), h100())
    assert len(inv) == 22
    assert [k.start_us for k in inv] == sorted(k.start_us for k in inv)
    qkv = next(k for k in inv if k.op == "aten::addmm")
    assert qkv.input_dims == [[6144], [4, 2048], [2048, 6144], [], []]
    assert (qkv.dtype, qkv.grid, qkv.block, qkv.registers_per_thread, qkv.shared_memory_bytes) == (
        "bf16",
        [96, 1, 1],
        [128, 1, 1],
        90,
        98304,
    )
    assert (qkv.op_kind, qkv.link, qkv.duration_us) == ("matmul", "launch", 11.904)
    # the occupancy solver: 128 threads, 90 registers, 96 KiB of shared memory -> 2 blocks (smem), 8 of 64 warps
    assert (qkv.blocks_per_sm, qkv.occupancy) == (2, 8 / 64)
    assert qkv.waves == pytest.approx(96 / (2 * 132))
    mm = [k for k in inv if k.op == "aten::mm"]
    assert len(mm) == 2 and mm[0].call == mm[1].call and mm[0].category == "gpu_memset"
    assert {k.op_kind for k in inv if k.op == "aten::topk"} == {"unknown"}
    assert all(k.blocks_per_sm is None for k in kernel_inventory(read_trace(DECODE)))  # no hardware: no occupancy


def test_reading_in_tiny_chunks_changes_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The sliding buffer: values split across reads (7 bytes at a time, gzip too) decode the same."""
    whole = {p: read_trace(p) for p in (DECODE, TRITON)}
    monkeypatch.setattr(reader, "READ_BYTES", 7)
    for p, t in whole.items():
        small = read_trace(p)
        assert (small.kernels, small.cpu_ops, small.launches, small.events) == (
            t.kernels,
            t.cpu_ops,
            t.launches,
            t.events,
        )


# ------------------------------------------------------------------ real traces (an H200, torch 2.11)

REAL = Path(__file__).resolve().parent.parent / "validation" / "traces" / "h200" / "hf1" / "traces"


@pytest.mark.parametrize(
    "name",
    ["hf-sdpa-llama-1b-prefill-b1-s500.json.gz", "hf-eager-qwen-0.5b-decode-b3-c1000.json.gz", "triton-add.json.gz"],
)
def test_real_traces(name: str) -> None:
    """Traces torch.profiler wrote on an H200 (validation/traces/README.md): every kernel
    accounted for, every launch linked to its op (the user's Triton kernel excepted), nearly all
    GPU time modelled, and no call much faster than its bound (data in the L2 cache can beat the
    DRAM bound a little: the worst of the 36 traces is 1.12x)."""
    path = REAL / name
    if not path.exists():
        pytest.skip(f"{path} is not in this checkout")
    from roofcalc.hardware import load_hardware

    trace = read_trace(path)
    assert trace.device_names == ["NVIDIA H200"]
    r = analyze_trace(trace, load_hardware("h200"), top=0)
    gpu = [e for e in raw_events(path) if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    assert r.summary.kernel_s == pytest.approx(math.fsum(e["dur"] for e in gpu) * 1e-6, rel=1e-12)
    assert math.fsum(o.gpu_s for o in r.ops) == pytest.approx(r.summary.kernel_s, rel=1e-12)
    links = [k.link for k in kernel_inventory(trace)]
    assert links.count("launch") == len(links) - (name == "triton-add.json.gz")
    assert all(c.fraction <= 1.25 for c in r.top_calls)
    if name == "triton-add.json.gz":
        assert row(r, "add_kernel").bound_s is None and row(r, "aten::mm").bound_s is not None
    else:
        assert r.summary.unknown_s < 0.02 * r.summary.kernel_s
    if "sdpa" in name:
        assert row(r, "aten::_cudnn_attention_forward").kind == "attention"


# ------------------------------------------------------------------ the command


@cache
def _group() -> click.Group:
    from roofcalc.cli import RoofcalcGroup
    from roofcalc.commands.trace_command import trace_cmd

    g = RoofcalcGroup(name="roofcalc")
    g.add_command(trace_cmd)
    return g


def invoke(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(_group(), ["trace", *args], env=env)


def one_line_error(res: Any, code: int = 2) -> str:
    assert res.exit_code == code, (res.exit_code, res.output[-600:])
    assert "Traceback" not in res.output and "internal error" not in res.output
    # (a usage error adds click's "Usage:" and "Try" lines, as everywhere in roofcalc)
    lines = [ln for ln in res.stderr.splitlines() if ln.strip() and not ln.startswith(("Usage:", "Try "))]
    assert len(lines) == 1, res.stderr
    assert lines[0].startswith("Error: ") and len(lines[0]) < 400
    assert res.stdout == ""
    return lines[0]


def test_cli_summary_first_then_table_in_100_columns() -> None:
    res = invoke(str(DECODE), "--hw", "h100", env={"COLUMNS": "100"})
    assert res.exit_code == 0, res.output
    lines = res.stdout.splitlines()
    assert lines[0].startswith("step ") and " wall · GPU busy " in lines[0] and "speed of light" in lines[0]
    # the fixture's GPU is idle 186 of 290 us: the host loses the most, then aten::addmm among the ops
    assert "most time lost: the GPU waits for the host 186 us" in res.stdout
    assert "of the ops, aten::addmm" in res.stdout
    assert all(len(ln) <= 100 for ln in lines)
    table = next(i for i, ln in enumerate(lines) if ln.startswith("op "))
    assert lines[table + 2].split()[0] == "aten::addmm"
    for ln in lines:  # a time is never split from its unit
        assert not ln.rstrip().endswith(tuple("0123456789"))


def test_cli_json_and_top() -> None:
    res = invoke(str(PREFILL), "--json", "--top", "2")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    assert doc["version"] == 1 and doc["hardware"] == "h100"
    assert len(doc["top_calls"]) == 2 and len(doc["ops"]) == 4
    assert doc["summary"]["accounted_s"] == pytest.approx(doc["summary"]["kernel_s"])
    assert doc["top_calls"][0]["lost_s"] >= doc["top_calls"][1]["lost_s"]
    res = invoke(str(DECODE), "--top", "3")
    assert "and 13 more ops" in res.stdout
    one_line_error(invoke(str(DECODE), "--top", "-1"))


def test_cli_hardware_from_the_trace_or_named() -> None:
    doc = json.loads(invoke(str(TP2), "--json").stdout)
    assert doc["hardware"] == "h100" and "from the trace's device name" in doc["notes"][0]
    doc = json.loads(invoke(str(TP2), "--json", "--hw", "h200").stdout)
    assert doc["hardware"] == "h200" and "the trace ran on NVIDIA H100 80GB HBM3 (h100)" in doc["notes"][0]
    assert "unknown hardware" in one_line_error(invoke(str(TP2), "--hw", "h1000"))


def test_cli_no_kernels_is_exit_1(tmp_path: Path) -> None:
    p = tmp_path / "cpu-only.json"
    p.write_text(
        json.dumps(
            {"traceEvents": [{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1, "dur": 2}]}
        )
    )
    assert "no GPU kernels" in one_line_error(invoke(str(p)), code=1)


# ------------------------------------------------------------------ hostile input

EV = {"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 10.0, "dur": 2.0, "args": {"correlation": 1}}


def doc(*events: Any, **top: Any) -> bytes:
    return json.dumps({"traceEvents": list(events), **top}).encode()


def ev(**changes: Any) -> dict[str, Any]:
    e = json.loads(json.dumps(EV))
    for k, v in changes.items():
        if k.startswith("args_"):
            e["args"][k[5:].replace("_", " ")] = v
        else:
            e[k] = v
    return e


def cpu(**args: Any) -> dict[str, Any]:
    return {"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 1, "ts": 1.0, "dur": 5.0, "args": args}


VALID = doc(ev())
DEEP = b'{"traceEvents": [{"ph": "X", "ts": 1, "dur": 1, "args": {"x": ' + b"[" * 100 + b"]" * 100 + b"}}]}"
HOSTILE: dict[str, tuple[bytes, str]] = {
    # truncated and malformed JSON
    "truncated-in-event": (VALID[: len(VALID) // 2], "truncated"),
    "truncated-after-event": (b'{"traceEvents": [' + json.dumps(EV).encode() + b",", "truncated"),
    "truncated-before-events": (b'{"traceEvents": ', "truncated"),
    "truncated-object": (b'{"traceEvents": []', "truncated"),
    "truncated-key": (b'{"traceEv', "truncated"),
    "not-json": (b"hello world", "not a Chrome trace"),
    "binary": (b"\x7fELF\x02\x01\x01" + bytes(range(256)), "not UTF-8"),
    "latin-1": ('{"traceEvents": [{"name": "caf\xe9"}]}'.encode("latin-1"), "not UTF-8"),
    "top-level-number": (b"42", "not a Chrome trace"),
    "top-level-string": (b'"traceEvents"', "not a Chrome trace"),
    "no-trace-events": (b'{"schemaVersion": 1}', "no 'traceEvents'"),
    "trace-events-not-list": (b'{"traceEvents": {"a": 1}}', "not a list"),
    "trace-events-twice": (b'{"traceEvents": [], "traceEvents": []}', "appears twice"),
    "data-after-object": (VALID + b" {}", "extra data"),
    "missing-comma": (b'{"traceEvents": [{"ph": "i"} {"ph": "i"}]}', "expecting ','"),
    "comma-before-bracket": (b'{"traceEvents": [{"ph": "i"},]}', "comma before"),
    "bad-literal": (b'{"traceEvents": [{"ph": "X", "ts": tru}]}', "not JSON"),
    # depth and numbers
    "deep-event": (DEEP, "nested deeper than 64"),
    "deep-top-level": (b'{"x": ' + b"[" * 5000 + b"]" * 5000 + b', "traceEvents": []}', "nested deeper than 64"),
    "deep-bare": (b"[" * 200000, "nested deeper than 64"),
    "huge-digits": (b'{"traceEvents": [{"ph": "X", "ts": 1' + b"0" * 5000 + b', "dur": 1}]}', "too many digits"),
    "huge-int-ts": (doc(ev(ts=10**30)), "'ts'"),
    # wrong types and values in every field read
    "event-number": (doc(5), "not an object"),
    "event-list": (doc([EV]), "not an object"),
    "event-string": (doc("X"), "not an object"),
    "ph-missing": (doc({"ts": 1, "dur": 1}), "'ph' is missing"),
    "ph-number": (doc(ev(ph=1)), "'ph'"),
    "dur-string": (doc(ev(dur="3")), "'dur' is the string '3'"),
    "dur-nan": (b'{"traceEvents": [{"ph": "X", "ts": 1, "dur": NaN}]}', "'dur' is NaN"),
    "dur-negative": (doc(ev(dur=-1.0)), "'dur' is -1.0"),
    "dur-1e400": (b'{"traceEvents": [{"ph": "X", "ts": 1, "dur": 1e400}]}', "'dur' is infinite"),
    "dur-missing": (doc({"ph": "X", "ts": 1}), "'dur' is missing"),
    "dur-bool": (doc(ev(dur=True)), "'dur' is a boolean"),
    "ts-missing": (doc({"ph": "X", "dur": 1}), "'ts' is missing"),
    "ts-infinity": (b'{"traceEvents": [{"ph": "X", "ts": -Infinity, "dur": 1}]}', "'ts' is infinite"),
    "ts-list": (doc(ev(ts=[1])), "'ts' is a list"),
    "cat-number": (doc(ev(cat=3)), "'cat'"),
    "name-missing": (doc({k: v for k, v in EV.items() if k != "name"}), "'name' is missing"),
    "name-number": (doc(ev(name=12)), "'name'"),
    "args-list": (doc(ev(args=[1])), "'args' is a list"),
    "pid-list": (doc(cpu() | {"pid": [1]}), "'pid'"),
    "tid-float": (doc(cpu() | {"tid": 1.5}), "'tid'"),
    "correlation-string": (doc(ev(args_correlation="7")), "'correlation' is the string"),
    "correlation-negative": (doc(ev(args_correlation=-7)), "out of range"),
    "grid-short": (doc(ev(args_grid=[1, 2])), "'grid'"),
    "block-string": (doc(ev(args_block=["128", 1, 1])), "'block'"),
    "registers-huge": (doc(ev(args_registers_per_thread=10**9)), "out of range"),
    "shared-memory-float": (doc(ev(args_shared_memory=1.5)), "'shared memory'"),
    "dims-not-list": (doc(cpu(**{"Input Dims": "[[1]]"})), "'Input Dims'"),
    "dims-negative": (doc(cpu(**{"Input Dims": [[4, -1]]})), "out of range"),
    "dims-float": (doc(cpu(**{"Input Dims": [[4, 1.5]]})), "'Input Dims' holds the number 1.5"),
    "dims-deep": (doc(cpu(**{"Input Dims": [[[[1]]]]})), "'Input Dims' holds a list"),
    "strides-string": (doc(cpu(**{"Input Strides": [["1"]]})), "'Input Strides'"),
    "types-number": (doc(cpu(**{"Input type": [1]})), "'Input type' holds"),
    "concrete-not-list": (doc(cpu(**{"Concrete Inputs": "x"})), "'Concrete Inputs'"),
    "collective-number": (doc(cpu(**{"Collective name": 5})), "'Collective name'"),
    "nelems-negative": (doc(cpu(**{"Collective name": "allreduce", "In msg nelems": -4})), "out of range"),
    "device-properties-string": (b'{"deviceProperties": "H100", "traceEvents": []}', "'deviceProperties'"),
    "device-name-number": (b'{"deviceProperties": [{"name": 7}], "traceEvents": []}', "'name'"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_hostile_trace_is_one_line_exit_2(tmp_path: Path, case: str) -> None:
    data, needle = HOSTILE[case]
    p = tmp_path / f"{case}.json"
    p.write_bytes(data)
    line = one_line_error(invoke(str(p)))
    assert str(p) in line and needle in line, line


def test_hostile_gzip(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a gzip bomb: 4 MiB of JSON whitespace in 4 KiB, against a cap lowered to 1 MiB
    monkeypatch.setattr(reader, "MAX_TRACE_BYTES", 1 << 20)
    bomb = tmp_path / "bomb.json.gz"
    bomb.write_bytes(gzip.compress(b'{"traceEvents": [' + b" " * (4 << 20) + b"]}", mtime=0))
    assert bomb.stat().st_size < 8192
    assert "decompresses to more than 1 MiB of JSON" in one_line_error(invoke(str(bomb)))
    monkeypatch.undo()
    good = gzip.compress(VALID, mtime=0)
    cases = {
        "truncated": (good[: len(good) - 12], "gzip stream is truncated"),
        "corrupt": (good[:12] + bytes(b ^ 0xFF for b in good[12:20]) + good[20:], "corrupt gzip data"),
        "bad-crc": (good[:-8] + b"\0\0\0\0" + good[-4:], "corrupt gzip data"),
        "trailing-garbage": (good + b"garbage", "data after the end of the gzip stream"),
        "not-json-inside": (gzip.compress(b"\x00\x01\x02", mtime=0), "not a Chrome trace"),
    }
    for name, (data, needle) in cases.items():
        p = tmp_path / f"{name}.json.gz"
        p.write_bytes(data)
        assert needle in one_line_error(invoke(str(p))), name
    # two members, zero padding after them: read as one
    p = tmp_path / "members.json.gz"
    half = len(VALID) // 2
    p.write_bytes(gzip.compress(VALID[:half], mtime=0) + gzip.compress(VALID[half:], mtime=0) + b"\0" * 64)
    assert len(read_trace(p).kernels) == 1


def test_hostile_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    assert "not a regular file (a FIFO)" in one_line_error(invoke(str(fifo)))
    assert "not a regular file (a directory)" in one_line_error(invoke(str(tmp_path)))
    assert "not a regular file (a character device)" in one_line_error(invoke("/dev/null"))
    assert "no such file" in one_line_error(invoke(str(tmp_path / "missing.json")))
    empty = tmp_path / "empty.json"
    empty.write_bytes(b"")
    assert "empty file" in one_line_error(invoke(str(empty)))
    blank = tmp_path / "blank.json"
    blank.write_bytes(b" \n\t\r\n ")
    assert "only whitespace" in one_line_error(invoke(str(blank)))
    big = tmp_path / "big.json"
    big.write_bytes(doc(ev(), ev(), ev(), ev()))
    monkeypatch.setattr(reader, "MAX_TRACE_BYTES", 100)
    assert "over the 100 B limit" in one_line_error(invoke(str(big)))
    monkeypatch.setattr(reader, "MAX_TRACE_BYTES", 2**31)
    monkeypatch.setattr(reader, "MAX_VALUE_CHARS", 50)
    monkeypatch.setattr(reader, "READ_BYTES", 16)
    assert "over 50 characters" in one_line_error(invoke(str(big)))
    monkeypatch.setattr(reader, "MAX_VALUE_CHARS", 1 << 20)
    monkeypatch.setattr(reader, "MAX_KEPT", 3)
    assert "over 3 ops, launches and kernels" in one_line_error(invoke(str(big)))


def test_truncated_anywhere_is_refused(tmp_path: Path) -> None:
    """A {"traceEvents": [...]} trace cut at any of 60 places is refused, never half-read."""
    data = DECODE.read_bytes()
    p = tmp_path / "cut.json"
    for i in range(1, 61):
        p.write_bytes(data[: len(data) * i // 61])
        with pytest.raises(TraceError, match=r"truncated|ends inside|not JSON"):
            read_trace(p)


def test_accepted_forms(tmp_path: Path) -> None:
    """Chrome's array format (a bare list, its ']' optional, a trailing comma at the end), a
    byte-order mark, CRLF line ends, events missing optional fields, unknown phases and keys."""
    k = json.dumps(EV)
    for text in (f"[{k}]", f"[{k}", f"[{k},\n", f"\ufeff[{k}]", f'{{"traceEvents":\r\n[{k}]\r\n}}'):
        p = tmp_path / "ok.json"
        p.write_text(text, encoding="utf-8")
        t = read_trace(p)
        assert len(t.kernels) == 1, text
    p.write_text(
        json.dumps(
            [
                {"ph": "M", "name": "process_name"},
                {"ph": "i", "ts": 3},
                {"ph": "X", "ts": 1, "dur": 0},
                {"ph": "X", "cat": "kernel", "name": "k", "ts": 1, "dur": 1},
            ]
        )
    )
    t = read_trace(p)
    assert (len(t.kernels), t.kernels[0].corr, t.layout, t.events) == (1, None, "array", 4)
    assert isinstance(read_trace(p), Trace)
    # null where an input has no shape, type or value is read as [] and ""
    p.write_text(
        json.dumps(
            [
                cpu(
                    **{
                        "Input Dims": [[2, 3], None, [3, 4]],
                        "Input type": ["float", None, "float"],
                        "Concrete Inputs": [None, "", ""],
                    }
                )
            ]
        )
    )
    (op,) = read_trace(p).cpu_ops[(1, 1)]
    assert (op.dims, op.types, op.concrete) == ([[2, 3], [], [3, 4]], ["float", "", "float"], ["", "", ""])


def test_json_output_has_no_nan(tmp_path: Path) -> None:
    """A zero-duration kernel (fraction infinite): JSON writes null, never NaN or Infinity."""
    p = tmp_path / "zero.json"
    ops = [cpu(**{"Input Dims": [[4, 8], [8, 16]], "Input type": [BF16, BF16], "External id": 5})]
    launch = {
        "ph": "X",
        "cat": "cuda_runtime",
        "name": "cudaLaunchKernel",
        "pid": 1,
        "tid": 1,
        "ts": 2.0,
        "dur": 1.0,
        "args": {"correlation": 9},
    }
    kernel = ev(dur=0.0, args_correlation=9)
    p.write_bytes(doc(*ops, launch, kernel))
    res = invoke(str(p), "--json")
    assert res.exit_code == 0, res.output
    d = json.loads(res.stdout)
    assert d["top_calls"][0]["fraction"] is None and d["ops"][0]["name"] == "aten::mm"


def test_public_names() -> None:
    import roofcalc.trace as rt

    assert {"analyze_trace", "kernel_inventory", "KernelRecord"} <= set(analysis.__all__)
    assert rt.read_trace is read_trace and rt.kernel_inventory is kernel_inventory


def test_a_real_tensor_parallel_trace() -> None:
    """One rank of a TP=2 step on two H200s (validation/traces/h200x2/tp2): the NCCL all-reduces are
    read as communication, every kernel is accounted for and the GPU time is reproduced."""
    path = (
        REAL.parent.parent.parent
        / "h200x2"
        / "tp2"
        / "rank0"
        / "traces"
        / "reference-eager-llama-8b-decode-b3-c1000.json.gz"
    )
    if not path.exists():
        pytest.skip(f"{path} is not in this checkout")
    from roofcalc.hardware import load_hardware

    trace = read_trace(path)
    r = analyze_trace(trace, load_hardware("h200"), top=0)
    gpu = [e for e in raw_events(path) if e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")]
    assert r.summary.kernel_s == pytest.approx(math.fsum(e["dur"] for e in gpu) * 1e-6, rel=1e-12)
    assert math.fsum(o.gpu_s for o in r.ops) == pytest.approx(r.summary.kernel_s, rel=1e-12)
    comm = row(r, "nccl:allreduce")
    # the llama-8b step: one all-reduce after attention and one after the MLP, in each of 32 layers
    assert comm.kind == "communication" and comm.calls == 64
    assert r.summary.communication_s > 0

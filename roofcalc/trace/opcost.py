"""FLOPs and compulsory bytes of one profiled op, from the shapes and dtypes the profiler recorded.

Pure functions: the op's name (``aten::addmm``), its "Input Dims", "Input type" and "Concrete
Inputs" go in; a :class:`Cost` (FLOPs, bytes, the dtype whose peak bounds it, and the formula with
its values) or an :class:`Unknown` (with the reason) comes out. The conventions are those of the
op files, so that ``roofcalc op`` and ``roofcalc trace`` count alike:

* GEMMs: 2 FLOPs per multiply-add, 2*m*k*n; bytes: every operand read once and the output
  written once (addmm(bias[n], a[m,k], b[k,n]): (n + m*k + k*n + m*n) * element size).
* attention (ops/attention.yaml): 2*(d + dv) FLOPs per (query, key) pair and head (Q K^T and
  P V; the softmax's few FLOPs left out); a causal mask computes only the pairs it keeps:
  s*(s+1)/2 for s queries over s keys (torch's SDPA aligns a non-square causal mask to the top
  left, FlashAttention's own entry points to the bottom right; both are counted as they are).
  Bytes: Q, K, V (and a mask) read once, O written once.
* softmax (ops/softmax.yaml): 5 FLOPs per element (max, subtract, exp, sum, divide); read once,
  write once.
* layer norm (ops/layernorm.yaml): rows*(8*cols + 4) FLOPs; x read once, y written once, the
  weight and bias read; native_layer_norm also writes its mean and rstd (fp32, a value per row).
  RMS norm: rows*(4*cols + 3) FLOPs (square, accumulate, scale, weight; a division, the epsilon
  and a rsqrt per row); _fused_rms_norm also writes its rstd.
* elementwise: FLOPs per output element from ``ELEMENTWISE_FLOPS``; every tensor input read
  once, the (broadcast) output written once.
* copies, gathers and reductions: what is read and written, no FLOPs (a reduction: one FLOP per
  input element).

Counts are exact integers. Where a count needs something the profiler did not record, the
smaller honest figure is taken and said in the formula (the bound must never exceed a
measurement): a reduction whose dims are not recorded writes at least one element.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .model import Comm

# The profiler's "Input type" strings: (roofcalc dtype whose peak applies, or None; bytes per element)
TORCH_DTYPES: dict[str, tuple[str | None, int]] = {
    "c10::BFloat16": ("bf16", 2),
    "c10::Half": ("fp16", 2),
    "float": ("fp32", 4),
    "double": ("fp64", 8),
    "c10::Float8_e4m3fn": ("fp8", 1),
    "c10::Float8_e5m2": ("fp8", 1),
    "c10::Float8_e4m3fnuz": ("fp8", 1),
    "c10::Float8_e5m2fnuz": ("fp8", 1),
    "c10::Float8_e8m0fnu": (None, 1),
    "c10::Float4_e2m1fn_x2": ("fp4", 1),  # two fp4 values a byte: one element of the tensor
    "signed char": ("int8", 1),
    "unsigned char": (None, 1),
    "bool": (None, 1),
    "short int": (None, 2),
    "int": (None, 4),
    "long int": (None, 8),
    "unsigned short": (None, 2),
    "unsigned int": (None, 4),
    "unsigned long": (None, 8),
    "c10::complex<c10::Half>": (None, 4),
    "c10::complex<float>": (None, 8),
    "c10::complex<double>": (None, 16),
}
FLOATING = {"bf16", "fp16", "fp32", "fp64", "fp8", "fp4"}

# c10::ScalarType codes (as "Concrete Inputs" writes a dtype argument) -> bytes per element
SCALAR_TYPE_BYTES = {0: 1, 1: 1, 2: 2, 3: 4, 4: 8, 5: 2, 6: 4, 7: 8, 8: 4, 9: 8, 10: 16, 11: 1, 15: 2, 23: 1, 24: 1}
SCALAR_TYPE_DTYPE = {5: "fp16", 6: "fp32", 7: "fp64", 15: "bf16", 23: "fp8", 24: "fp8", 1: "int8"}

# FLOPs per output element of the elementwise ops (in-place variants, name_, alike)
ELEMENTWISE_FLOPS = {
    "add": 1,
    "sub": 1,
    "rsub": 1,
    "mul": 1,
    "div": 1,
    "neg": 1,
    "rsqrt": 1,
    "sqrt": 1,
    "reciprocal": 1,
    "pow": 1,
    "exp": 1,
    "cos": 1,
    "sin": 1,
    "tanh": 1,
    "relu": 1,
    "silu": 4,  # x / (1 + exp(-x)): negate, exp, add, divide
    "sigmoid": 3,  # 1 / (1 + exp(-x)): negate, exp, add (and the reciprocal: counted with the divide)
    "gelu": 5,  # x/2 * (1 + erf(x / sqrt 2)): scale, erf, add, multiply, halve
    "where": 1,
    # comparisons: a bool (1 byte) out
    "eq": 1,
    "ne": 1,
    "lt": 1,
    "le": 1,
    "gt": 1,
    "ge": 1,
}
COMPARISONS = {"eq", "ne", "lt", "le", "gt", "ge"}

# Comm dtypes as record_param_comms writes them ("BFloat16", "Float"...) -> bytes per element
COMM_DTYPE_BYTES = {
    "bfloat16": 2,
    "half": 2,
    "float16": 2,
    "float": 4,
    "float32": 4,
    "double": 8,
    "float64": 8,
    "long": 8,
    "int64": 8,
    "int": 4,
    "int32": 4,
    "short": 2,
    "int16": 2,
    "char": 1,
    "int8": 1,
    "byte": 1,
    "uint8": 1,
    "bool": 1,
    "float8_e4m3fn": 1,
    "float8_e5m2": 1,
}

MAX_COUNT = 2**100  # FLOPs or bytes beyond this are a corrupt shape, not an op


@dataclass(frozen=True)
class Cost:
    kind: str
    flops: int
    bytes: int
    dtype: str | None  # the roofcalc dtype whose peak bounds the FLOPs; None: no FLOP peak applies
    formula: str
    interconnect_bytes: int = 0  # collectives: bytes each GPU sends


@dataclass(frozen=True)
class Unknown:
    kind: str
    reason: str


class _Refuse(Exception):
    """Shapes that do not fit the op: the op becomes Unknown with this reason."""


# ------------------------------------------------------------------ arguments


class _Args:
    """The op's inputs as the profiler recorded them (lists of unequal length are padded)."""

    def __init__(
        self,
        dims: Sequence[Any] | None,
        types: Sequence[str] | None,
        concrete: Sequence[str] | None,
        strides: Sequence[Any] | None = None,
    ) -> None:
        self.dims = list(dims or [])
        self.types = list(types or [])
        self.concrete = list(concrete or [])
        self.strides = list(strides or [])

    def type(self, i: int) -> str:
        return self.types[i] if i < len(self.types) else ""

    def is_tensor(self, i: int) -> bool:
        return self.type(i) in TORCH_DTYPES and i < len(self.dims) and _is_shape(self.dims[i])

    def shape(self, i: int, ndim: int | tuple[int, ...] | None = None, what: str = "input") -> list[int]:
        if not self.is_tensor(i):
            raise _Refuse(f"{what} (input {i}) is not a tensor of a known dtype ({self.type(i) or 'no type'})")
        s: list[int] = self.dims[i]
        allowed = (ndim,) if isinstance(ndim, int) else ndim
        if allowed is not None and len(s) not in allowed:
            want = " or ".join(str(a) for a in allowed)
            raise _Refuse(f"{what} has {len(s)} dimensions {_fmt(s)}; expected {want}")
        return s

    def optional(self, i: int) -> list[int] | None:
        return self.dims[i] if self.is_tensor(i) else None

    def rd(self, i: int) -> int:
        """Elements of input i that must be read: its size, or less where it is expanded (a
        stride of 0 repeats its storage): the extent of its storage, from its strides."""
        shape: list[int] = self.dims[i]
        st = self.strides[i] if i < len(self.strides) else None
        return _read(shape, st)

    def elt(self, i: int) -> int:
        return TORCH_DTYPES[self.type(i)][1]

    def dtype(self, i: int) -> str | None:
        return TORCH_DTYPES[self.type(i)][0] if self.type(i) in TORCH_DTYPES else None

    def text(self, i: int) -> str:
        return self.concrete[i] if i < len(self.concrete) else ""

    def flag(self, i: int) -> bool:
        return self.text(i).strip() in ("True", "true", "1")

    def int_list(self, i: int) -> list[int] | None:
        """A list of ints written by the profiler as text ('[4096]', '[-1]'), or None."""
        m = re.fullmatch(r"\s*\[\s*(-?\d{1,12}(?:\s*,\s*-?\d{1,12})*)?\s*\]\s*", self.text(i))
        if m is None:
            return None
        return [int(x) for x in m.group(1).split(",")] if m.group(1) else []

    def integer(self, i: int) -> int | None:
        t = self.text(i).strip()
        return int(t) if re.fullmatch(r"-?\d{1,12}", t) else None

    def tensor_list(self, i: int) -> list[list[int]] | None:
        d = self.dims[i] if i < len(self.dims) else None
        if isinstance(d, list) and all(isinstance(s, list) and _is_shape(s) for s in d):
            return d
        return None

    def rd_list(self, i: int) -> int:
        """Elements read from a TensorList input (each tensor's storage extent, as rd)."""
        shapes = self.tensor_list(i) or []
        st = self.strides[i] if i < len(self.strides) else None
        return sum(_read(s, st[j] if isinstance(st, list) and j < len(st) else None) for j, s in enumerate(shapes))


def _is_shape(s: Any) -> bool:
    return isinstance(s, list) and all(type(x) is int for x in s)


def _numel(shape: Sequence[int]) -> int:
    return math.prod(shape)


def _read(shape: list[int], strides: Any) -> int:
    n = _numel(shape)
    if n == 0 or not isinstance(strides, list) or len(strides) != len(shape) or not _is_shape(strides):
        return n
    extent: int = 1 + sum((d - 1) * s for d, s in zip(shape, strides, strict=True))
    return min(n, extent)


def _fmt(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(x) for x in shape) + "]"


def _broadcast(shapes: list[list[int]]) -> list[int]:
    nd = max((len(s) for s in shapes), default=0)
    out = []
    for i in range(nd):
        sizes = {s[len(s) - nd + i] for s in shapes if len(s) - nd + i >= 0} - {1}
        if len(sizes) > 1:
            raise _Refuse("shapes " + " and ".join(_fmt(s) for s in shapes) + " do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return out


def _dim(d: int | None, ndim: int, what: str) -> int:
    if d is None or not -ndim <= d < ndim:
        raise _Refuse(f"{what}: dim {d} is not recorded or out of range for {ndim} dimensions")
    return d % ndim


# ------------------------------------------------------------------ matmuls


def _mm(a: _Args) -> Cost:
    m, k = a.shape(0, 2, "a")
    k2, n = a.shape(1, 2, "b")
    if k != k2:
        raise _Refuse(f"a {_fmt([m, k])} and b {_fmt([k2, n])} do not multiply")
    e = a.elt(0)
    return Cost(
        "matmul",
        2 * m * k * n,
        a.rd(0) * e + a.rd(1) * a.elt(1) + m * n * e,
        a.dtype(0),
        f"mm m={m} k={k} n={n}: 2*m*k*n FLOPs; (m*k + k*n + m*n)*{e} B",
    )


def _addmm(a: _Args) -> Cost:
    a.shape(0, None, "bias")
    m, k = a.shape(1, 2, "a")
    k2, n = a.shape(2, 2, "b")
    if k != k2:
        raise _Refuse(f"a {_fmt([m, k])} and b {_fmt([k2, n])} do not multiply")
    e = a.elt(1)
    return Cost(
        "matmul",
        2 * m * k * n,
        a.rd(0) * a.elt(0) + a.rd(1) * e + a.rd(2) * a.elt(2) + m * n * e,
        a.dtype(1),
        f"addmm m={m} k={k} n={n} bias={_fmt(a.dims[0])}: 2*m*k*n FLOPs; (bias + m*k + k*n + m*n)*{e} B",
    )


def _bmm_shapes(a: _Args, i: int) -> tuple[int, int, int, int]:
    b, m, k = a.shape(i, 3, "a")
    b2, k2, n = a.shape(i + 1, 3, "b")
    if b != b2 or k != k2:
        raise _Refuse(f"a {_fmt([b, m, k])} and b {_fmt([b2, k2, n])} do not multiply batch by batch")
    return b, m, k, n


def _bmm(a: _Args) -> Cost:
    b, m, k, n = _bmm_shapes(a, 0)
    e = a.elt(0)
    return Cost(
        "matmul",
        2 * b * m * k * n,
        a.rd(0) * e + a.rd(1) * a.elt(1) + b * m * n * e,
        a.dtype(0),
        f"bmm batch={b} m={m} k={k} n={n}: 2*batch*m*k*n FLOPs; batch*(m*k + k*n + m*n)*{e} B",
    )


def _baddbmm(a: _Args) -> Cost:
    a.shape(0, None, "input")
    b, m, k, n = _bmm_shapes(a, 1)
    e = a.elt(1)
    return Cost(
        "matmul",
        2 * b * m * k * n,
        a.rd(0) * a.elt(0) + a.rd(1) * e + a.rd(2) * a.elt(2) + b * m * n * e,
        a.dtype(1),
        f"baddbmm batch={b} m={m} k={k} n={n}: 2*batch*m*k*n FLOPs; (input + batch*(m*k + k*n + m*n))*{e} B",
    )


def _matmul(a: _Args) -> Cost:
    x, y = a.shape(0, None, "a"), a.shape(1, None, "b")
    if not x or not y:
        raise _Refuse("matmul of a zero-dimensional tensor")
    m, k = (1, x[0]) if len(x) == 1 else (x[-2], x[-1])
    k2, n = (y[0], 1) if len(y) == 1 else (y[-2], y[-1])
    if k != k2:
        raise _Refuse(f"a {_fmt(x)} and b {_fmt(y)} do not multiply")
    batch = _numel(_broadcast([x[:-2], y[:-2]]))
    e = a.elt(0)
    return Cost(
        "matmul",
        2 * batch * m * k * n,
        a.rd(0) * e + a.rd(1) * a.elt(1) + batch * m * n * e,
        a.dtype(0),
        f"matmul batch={batch} m={m} k={k} n={n}: 2*batch*m*k*n FLOPs; (a + b + batch*m*n)*{e} B",
    )


def _linear(a: _Args) -> Cost:
    x = a.shape(0, None, "input")
    n, k = a.shape(1, 2, "weight")
    if not x or x[-1] != k:
        raise _Refuse(f"input {_fmt(x)} and weight {_fmt([n, k])} do not multiply")
    m = _numel(x) // k if k else 0
    bias = a.optional(2) is not None
    e = a.elt(0)
    return Cost(
        "matmul",
        2 * m * k * n,
        a.rd(0) * e + a.rd(1) * a.elt(1) + m * n * e + (a.rd(2) * a.elt(2) if bias else 0),
        a.dtype(0),
        f"linear m={m} k={k} n={n}{' with bias' if bias else ''}: 2*m*k*n FLOPs; "
        f"(m*k + n*k + m*n{' + n' if bias else ''})*{e} B",
    )


# ------------------------------------------------------------------ attention


def causal_pairs(s: int, t: int, align: str) -> int:
    """(query, key) pairs a causal mask keeps: s queries over t keys, the mask's diagonal
    from the top left (torch SDPA) or ending at the bottom right (FlashAttention's kernels)."""
    if align == "top-left":
        return s * (s + 1) // 2 if s <= t else t * (t + 1) // 2 + (s - t) * t
    return s * t - s * (s - 1) // 2 if s <= t else t * (t + 1) // 2


def _attention(
    layout: str, causal_at: int, mask_at: int | None, align: str, mask_type: bool = False
) -> Callable[[_Args], Cost]:
    def cost(a: _Args) -> Cost:
        if layout == "bhsd":  # [..., heads, seq, dim]: any leading dims
            q = a.shape(0, (3, 4), "query")
            k = a.shape(1, len(q), "key")
            v = a.shape(2, len(q), "value")
            s, d, t, dv = q[-2], q[-1], k[-2], v[-1]
            if k[-1] != d or v[-2] != t:
                raise _Refuse(f"query {_fmt(q)}, key {_fmt(k)} and value {_fmt(v)} do not fit")
            bh = _numel(q[:-2])
        else:  # [batch, seq, heads, dim] (FlashAttention's own entry points)
            q = a.shape(0, 4, "query (a 3-dimensional query is a variable-length batch)")
            k = a.shape(1, 4, "key")
            v = a.shape(2, 4, "value")
            s, d, t, dv = q[1], q[3], k[1], v[3]
            if k[3] != d or v[1] != t:
                raise _Refuse(f"query {_fmt(q)}, key {_fmt(k)} and value {_fmt(v)} do not fit")
            bh = q[0] * q[2]
        has_mask = mask_at is not None and a.optional(mask_at) is not None
        if mask_type:  # _efficient_attention_forward: 0 none, 1 causal from the top left, 2 from the bottom right
            mt = a.integer(causal_at) or 0
            causal, kind = mt in (1, 2), ("top-left" if mt == 1 else "bottom-right")
        else:
            causal, kind = a.flag(causal_at), align
        causal = causal and not has_mask
        pairs = causal_pairs(s, t, kind) if causal else s * t
        e = a.elt(0)
        mask_bytes = a.rd(mask_at) * a.elt(mask_at) if has_mask and mask_at is not None else 0
        shown = f"batch*heads={bh} s={s} t={t} d={d}" + (f" dv={dv}" if dv != d else "")
        how = f"causal ({kind}): {pairs} pairs" if causal else "pairs = s*t"
        return Cost(
            "attention",
            2 * bh * pairs * (d + dv),
            (a.rd(0) + a.rd(1) + a.rd(2) + bh * s * dv) * e + mask_bytes,
            a.dtype(0),
            f"attention {shown}, {how}: 2*batch*heads*pairs*(d + dv) FLOPs; (q + k + v + out)*{e} B"
            + (" + mask" if mask_bytes else ""),
        )

    return cost


# ------------------------------------------------------------------ softmax and norms


def _softmax(half_to_float_at: int | None) -> Callable[[_Args], Cost]:
    def cost(a: _Args) -> Cost:
        x = a.shape(0, None, "input")
        n, e = _numel(x), a.elt(0)
        eo = 4 if half_to_float_at is not None and a.flag(half_to_float_at) else e
        return Cost(
            "softmax", 5 * n, a.rd(0) * e + n * eo, a.dtype(0), f"softmax {_fmt(x)}: 5*n FLOPs; n*({e} + {eo}) B"
        )

    return cost


def _rows_cols(a: _Args, weight_at: int) -> tuple[int, int]:
    x = a.shape(0, None, "input")
    normalized = a.int_list(1)
    w = a.optional(weight_at)
    if normalized:
        cols = _numel(normalized)
    elif w is not None:
        cols = _numel(w)
    elif x:
        cols = x[-1]
    else:
        raise _Refuse("a zero-dimensional input")
    if cols == 0 or _numel(x) % cols:
        raise _Refuse(f"input {_fmt(x)} does not split into rows of {cols}")
    return _numel(x) // cols, cols


def _layer_norm(native: bool) -> Callable[[_Args], Cost]:
    def cost(a: _Args) -> Cost:
        rows, cols = _rows_cols(a, 2)
        e = a.elt(0)
        params = sum(a.rd(i) * a.elt(i) for i in (2, 3) if a.optional(i) is not None)
        stats = 2 * rows * (8 if e == 8 else 4) if native else 0
        return Cost(
            "norm",
            rows * (8 * cols + 4),
            a.rd(0) * e + rows * cols * e + params + stats,
            a.dtype(0),
            f"layer_norm rows={rows} cols={cols}: rows*(8*cols + 4) FLOPs; (2*rows*cols)*{e} B + weight, bias"
            + (" + mean, rstd" if native else ""),
        )

    return cost


def _rms_norm(fused: bool) -> Callable[[_Args], Cost]:
    def cost(a: _Args) -> Cost:
        rows, cols = _rows_cols(a, 2)
        e = a.elt(0)
        params = a.rd(2) * a.elt(2) if a.optional(2) is not None else 0
        stats = rows * (8 if e == 8 else 4) if fused else 0
        return Cost(
            "norm",
            rows * (4 * cols + 3),
            a.rd(0) * e + rows * cols * e + params + stats,
            a.dtype(0),
            f"rms_norm rows={rows} cols={cols}: rows*(4*cols + 3) FLOPs; (2*rows*cols)*{e} B + weight"
            + (" + rstd" if fused else ""),
        )

    return cost


# ------------------------------------------------------------------ elementwise, copies, reductions


def _elementwise(base: str, inplace: bool) -> Callable[[_Args], Cost]:
    per = ELEMENTWISE_FLOPS[base]

    def cost(a: _Args) -> Cost:
        tensors = [i for i in range(len(a.dims)) if a.is_tensor(i)]
        if not tensors:
            raise _Refuse("no tensor input of a known dtype")
        if inplace:
            out_i = tensors[0]
            out, eo = a.dims[out_i], a.elt(out_i)
        else:
            out = _broadcast([a.dims[i] for i in tensors])
            dimmed = [i for i in tensors if a.dims[i]] or tensors
            floating = [i for i in dimmed if a.dtype(i) in FLOATING] or dimmed
            if base == "where":  # where(condition, a, b): the values decide the output's type
                floating = [i for i in floating if i > 0] or floating
            out_i = max(floating, key=a.elt)
            eo = 1 if base in COMPARISONS else a.elt(out_i)
        n = _numel(out)
        read = sum(a.rd(i) * a.elt(i) for i in tensors)
        return Cost(
            "elementwise",
            per * n,
            read + n * eo,
            a.dtype(out_i),
            f"{base}{'_' if inplace else ''} out={_fmt(out)}: {per}*n FLOPs; inputs + n*{eo} B",
        )

    return cost


def _copy(a: _Args) -> Cost:
    dst, src = a.shape(0, None, "destination"), a.shape(1, None, "source")
    b = a.rd(1) * a.elt(1) + _numel(dst) * a.elt(0)
    return Cost(
        "copy", 0, b, None, f"copy_ {_fmt(src)} -> {_fmt(dst)}: read {a.rd(1)} x {a.elt(1)} B, write n*{a.elt(0)} B"
    )


def _to_copy(a: _Args) -> Cost:
    x = a.shape(0, None, "input")
    n, e = _numel(x), a.elt(0)
    eo = e
    if a.is_tensor(1):  # to(other)
        eo = a.elt(1)
    elif (code := a.integer(1)) is not None and code in SCALAR_TYPE_BYTES and a.type(1).startswith("Scalar"):
        eo = SCALAR_TYPE_BYTES[code]
    return Cost("copy", 0, a.rd(0) * e + n * eo, None, f"to {_fmt(x)}: n*({e} + {eo}) B")


_ELT_IN_NAME = re.compile(r"OpaqueType<(\d+)u?>")
_DTYPE_IN_NAME = (
    ("c10::BFloat16", 2),
    ("__nv_bfloat16", 2),
    ("c10::Half", 2),
    ("__half", 2),
    ("double", 8),
    ("float", 4),
)


def _element_size_from_kernels(kernels: Sequence[str]) -> int | None:
    """A tensor list's element size: the profiler records none, the kernel's name often does."""
    for k in kernels:
        if m := _ELT_IN_NAME.search(k):
            return int(m.group(1))
    for k in kernels:
        for token, size in _DTYPE_IN_NAME:
            if token in k:
                return size
    return None


def _cat(kernels: Sequence[str]) -> Callable[[_Args], Cost]:
    def cost(a: _Args) -> Cost:
        shapes = a.tensor_list(0)
        if shapes is None:
            raise _Refuse("the tensors to concatenate are not recorded")
        e = _element_size_from_kernels(kernels)
        if e is None:
            raise _Refuse("the profiler records no element type for a tensor list, nor does the kernel's name")
        n = sum(_numel(s) for s in shapes)
        return Cost(
            "copy",
            0,
            a.rd_list(0) * e + n * e,
            None,
            f"cat {len(shapes)} tensors, n={n}: 2*n*{e} B (element size from the kernel's name)",
        )

    return cost


def _index_select(a: _Args) -> Cost:
    x = a.shape(0, None, "input")
    idx = a.shape(2, (0, 1), "index")
    d = _dim(a.integer(1), len(x), "index_select")
    rows = _numel(idx)
    out = _numel(x) // x[d] * rows if x[d] else 0
    e = a.elt(0)
    return Cost(
        "copy",
        0,
        2 * out * e + a.rd(2) * a.elt(2),
        None,
        f"index_select {_fmt(x)} dim {d}, {rows} indices: out={out}; 2*out*{e} + index B",
    )


def _gather(a: _Args) -> Cost:
    x = a.shape(0, None, "input")
    idx = a.shape(2, None, "index")
    out = _numel(idx)
    e = a.elt(0)
    return Cost(
        "copy",
        0,
        2 * out * e + a.rd(2) * a.elt(2),
        None,
        f"gather from {_fmt(x)}, index {_fmt(idx)}: 2*out*{e} + index B",
    )


def _embedding(a: _Args) -> Cost:
    v, d = a.shape(0, 2, "weight")
    idx = a.shape(1, None, "indices")
    out = _numel(idx) * d
    e = a.elt(0)
    return Cost(
        "copy",
        0,
        2 * out * e + a.rd(1) * a.elt(1),
        None,
        f"embedding {_fmt([v, d])}[{_fmt(idx)}]: 2*out*{e} + indices B",
    )


def _index_put(accumulate_at: int) -> Callable[[_Args], Cost]:
    def cost(a: _Args) -> Cost:
        vals = a.shape(2, None, "values")
        n, e = a.rd(2), a.elt(2)
        times = 3 if a.flag(accumulate_at) else 2
        return Cost(
            "copy",
            n if times == 3 else 0,
            times * n * e,
            a.dtype(2) if times == 3 else None,
            f"index_put_ values {_fmt(vals)}: {times}*n*{e} B (indices: their dtype is not recorded)",
        )

    return cost


def _fill(a: _Args) -> Cost:
    x = a.shape(0, None, "input")
    return Cost("copy", 0, _numel(x) * a.elt(0), None, f"fill {_fmt(x)}: n*{a.elt(0)} B written")


def _reduction(out_bytes: int | None) -> Callable[[_Args], Cost]:
    """sum, mean (the output in the input's dtype) and argmax, argmin (int64 indices out)."""

    def cost(a: _Args) -> Cost:
        x = a.shape(0, None, "input")
        n, e = _numel(x), a.elt(0)
        eo = out_bytes or e
        dims = a.int_list(1)
        single = a.integer(1)
        if dims is None and single is not None:
            dims = [single]
        if dims is not None and x:
            reduced = {_dim(d, len(x), "reduction") for d in dims} if dims else set(range(len(x)))
            out = _numel([s for i, s in enumerate(x) if i not in reduced])
            note = f"out={out}"
        else:
            out, note = 1, "dims not recorded: at least 1 element written"
        return Cost(
            "reduction",
            n,
            a.rd(0) * e + out * eo,
            a.dtype(0),
            f"reduction {_fmt(x)}, {note}: n FLOPs; n*{e} + out*{eo} B",
        )

    return cost


# ------------------------------------------------------------------ the table


def _table() -> dict[str, Callable[[_Args], Cost]]:
    t: dict[str, Callable[[_Args], Cost]] = {
        "mm": _mm,
        "addmm": _addmm,
        "bmm": _bmm,
        "baddbmm": _baddbmm,
        "matmul": _matmul,
        "linear": _linear,
        "scaled_dot_product_attention": _attention("bhsd", 5, 3, "top-left"),
        "_scaled_dot_product_flash_attention": _attention("bhsd", 4, None, "top-left"),
        "_scaled_dot_product_efficient_attention": _attention("bhsd", 6, 3, "top-left"),
        "_scaled_dot_product_cudnn_attention": _attention("bhsd", 6, 3, "top-left"),
        "_scaled_dot_product_flash_attention_for_cpu": _attention("bhsd", 4, None, "top-left"),
        "_cudnn_attention_forward": _attention("bhsd", 10, 3, "top-left"),
        "_flash_attention_forward": _attention("bshd", 8, None, "bottom-right"),
        "_efficient_attention_forward": _attention("bshd", 9, 3, "top-left", mask_type=True),
        "softmax": _softmax(None),
        "_softmax": _softmax(2),
        "log_softmax": _softmax(None),
        "_log_softmax": _softmax(2),
        "layer_norm": _layer_norm(native=False),
        "native_layer_norm": _layer_norm(native=True),
        "rms_norm": _rms_norm(fused=False),
        "_fused_rms_norm": _rms_norm(fused=True),
        "copy_": _copy,
        "to": _to_copy,
        "_to_copy": _to_copy,
        "cat": _cat(()),  # replaced per call: the element size comes from its kernels
        "index_select": _index_select,
        "gather": _gather,
        "embedding": _embedding,
        "index_put_": _index_put(3),
        "_index_put_impl_": _index_put(3),
        "fill_": _fill,
        "zero_": _fill,
        "mean": _reduction(None),
        "sum": _reduction(None),
        "argmax": _reduction(8),
        "argmin": _reduction(8),
    }
    for base in ELEMENTWISE_FLOPS:
        t[base] = _elementwise(base, inplace=False)
        t[base + "_"] = _elementwise(base, inplace=True)
    return t


_KNOWN = _table()
_KIND_SETS = {
    "matmul": {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear"},
    "reduction": {"mean", "sum", "argmax", "argmin"},
    "copy": {
        "copy_",
        "to",
        "_to_copy",
        "cat",
        "index_select",
        "gather",
        "embedding",
        "index_put_",
        "_index_put_impl_",
        "fill_",
        "zero_",
    },
}


def _kind(bare_name: str) -> str:
    for kind, names in _KIND_SETS.items():
        if bare_name in names:
            return kind
    for word in ("attention", "softmax", "norm"):
        if word in bare_name:
            return word
    return "elementwise"


KINDS: dict[str, str] = {n: _kind(n) for n in _KNOWN}  # bare aten name -> kind, for the ops with a model


def bare(name: str) -> str | None:
    """'aten::mm' -> 'mm'; None for ops outside aten (custom ops, record_function ranges)."""
    return name[6:] if name.startswith("aten::") else None


def kind_of(name: str) -> str:
    b = bare(name)
    return KINDS.get(b, "unknown") if b is not None else "unknown"


def op_cost(
    name: str,
    dims: Sequence[Any] | None,
    types: Sequence[str] | None,
    concrete: Sequence[str] | None,
    kernels: Sequence[str] = (),
    strides: Sequence[Any] | None = None,
) -> Cost | Unknown:
    """FLOPs and compulsory bytes of one call of ``name`` with the recorded inputs ("Input
    Dims", "Input type", "Concrete Inputs", and "Input Strides" where recorded: an expanded
    input is read once). ``kernels``: the names of the kernels it launched (a tensor list's
    element size is read from them)."""
    b = bare(name)
    if b is None or b not in _KNOWN:
        return Unknown("unknown", "no FLOP and byte model for this op")
    kind = KINDS[b]
    if dims is None or types is None:
        return Unknown(kind, "the trace has no shapes for it (profile with record_shapes=True)")
    fn = _cat(kernels) if b == "cat" else _KNOWN[b]
    try:
        cost = fn(_Args(dims, types, concrete, strides))
    except _Refuse as e:
        return Unknown(kind, str(e))
    if not 0 <= cost.flops <= MAX_COUNT or not 0 <= cost.bytes <= MAX_COUNT:
        return Unknown(kind, "shapes too large to be real")
    return cost


# ------------------------------------------------------------------ collectives

_COLLECTIVE_FACTOR: list[tuple[tuple[str, ...], str]] = [
    (("allreduce", "all_reduce"), "allreduce"),
    (("allgather", "all_gather"), "allgather"),
    (("reduce_scatter", "reducescatter"), "reduce_scatter"),
    (("alltoall", "all_to_all"), "all_to_all"),
    (("broadcast",), "broadcast"),
    (("send",), "send"),
    (("recv",), "recv"),
]


def collective_of(text: str) -> str | None:
    t = text.lower().replace("-", "_")
    for keys, canon in _COLLECTIVE_FACTOR:
        if any(k in t for k in keys):
            return canon
    return None


def comm_cost(comm: Comm) -> Cost | Unknown:
    """Bytes each GPU sends for one collective (ring algorithms, as the op files count them):
    all-reduce 2*(n-1)/n of the buffer; all-gather and reduce-scatter (n-1)/n of the whole;
    all-to-all (n-1)/n; broadcast, send and recv the buffer once."""
    coll = collective_of(comm.collective)
    if coll is None:
        return Unknown("communication", f"no byte model for the collective {comm.collective!r}")
    e = COMM_DTYPE_BYTES.get((comm.dtype or "").lower().removeprefix("torch."))
    if e is None:
        return Unknown("communication", f"unknown dtype {comm.dtype!r} of the collective")
    n = comm.group_size
    if n is None or n < 1:
        return Unknown("communication", "the group size is not recorded")
    nin, nout = comm.in_nelems, comm.out_nelems
    size = nout if coll == "allgather" else nin
    if size is None:
        size = nin if nin is not None else nout
    if size is None:
        return Unknown("communication", "the message size is not recorded")
    total = size * e
    if coll == "allreduce":
        sent, how = 2 * (n - 1) * total // n, "2*(n-1)/n * size"
    elif coll in ("allgather", "reduce_scatter", "all_to_all"):
        sent, how = (n - 1) * total // n, "(n-1)/n * size"
    else:
        sent, how = (total if n > 1 else 0), "size"
    return Cost(
        "communication",
        0,
        0,
        None,
        f"{coll} of {size} elements ({e} B each) over {n} GPUs: {how} = {sent} B sent per GPU",
        interconnect_bytes=sent,
    )


__all__ = [
    "ELEMENTWISE_FLOPS",
    "KINDS",
    "TORCH_DTYPES",
    "Cost",
    "Unknown",
    "bare",
    "causal_pairs",
    "collective_of",
    "comm_cost",
    "kind_of",
    "op_cost",
]

#!/usr/bin/env python3
"""Time roofcalc's single ops (dot, gemv, gemm, softmax, layernorm, attention) through PyTorch.

Stand-alone: needs only torch and the standard library (it runs on GPU machines that
have neither roofcalc nor pydantic). Each case is one PyTorch call, timed with CUDA
events around the call after an L2 flush, checked once against a float64 reference on a
slice, and written to a JSON file that is rewritten atomically after every case.

    python validation/bench/ops_bench.py --out ops.json              # ~100 cases on cuda:0
    python validation/bench/ops_bench.py --only '^gemm-bf16' --out g.json
    python validation/bench/ops_bench.py --device cpu --smoke --out /tmp/ops.json

Case "params" use roofcalc's parameter names (ops/*.yaml) so that each record can be fed
back to `roofcalc op NAME --param value ...`.
"""

from __future__ import annotations

import argparse
import contextlib
import math
import platform
import re
import shlex
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

import torch
import torch.nn.functional as F
from benchlib import (busy_issue_s, device_info, driver_version, event_time, percentile, queued_times,
                      sdpa_default_backend, selected_env, short_err, sleep_cycles_per_s, utc_now, write_json_atomic)

SCHEMA = 1
DTYPES = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
# Relative-error thresholds for "verified" (norm-wise error against a float64 reference
# computed from the same, already rounded, inputs).
TOL = {"fp32": 1e-5, "tf32": 5e-3, "bf16": 3e-2, "fp16": 3e-2}
ELEM = {"fp32": 4, "tf32": 4, "bf16": 2, "fp16": 2}

FLUSH_BYTES = 256 << 20           # L2 flush buffer (H100/H200 L2 is 50 MB: > 2x L2)
SMOKE_FLUSH_BYTES = 8 << 20
TARGET_TIMED_S = 0.5              # cap on timed work per case (reps x op time)
MIN_REPS, MAX_REPS, WARMUP = 5, 50, 3
MEM_SAFETY = 0.85                 # use at most this fraction of the free device memory


# --------------------------------------------------------------------------- cases
# A case is a dict: label, op, dtype, params (roofcalc names), mem (bytes it needs, an
# estimate used to skip what cannot fit) and build: a function of the device that
# allocates the inputs and returns (fn, check, impl, ctx). fn runs the op and returns
# its output; check(out) returns the relative error against a float64 reference;
# ctx() is a context manager entered around warm-up, timing and the check (the TF32
# switch, the SDPA backend).

Build = Callable[[torch.device], tuple[Callable[[], Any], Callable[[Any], float], str,
                                       Callable[[], Any]]]


def rnd(shape: tuple[int, ...], dtype: torch.dtype, dev: torch.device) -> torch.Tensor:
    # Random inputs (never zeros), generated directly in the target dtype on the device.
    return torch.randn(shape, dtype=dtype, device=dev)


def rel_norm_err(out: torch.Tensor, ref: torch.Tensor) -> float:
    out = out.double()
    ref = ref.double()
    den = ref.norm().item()
    return (out - ref).norm().item() / (den if den > 0 else 1.0)


@contextlib.contextmanager
def tf32_mode(enabled: bool):
    """Set torch.backends.cuda.matmul.allow_tf32 for the case and restore it after."""
    old = torch.backends.cuda.matmul.allow_tf32
    torch.backends.cuda.matmul.allow_tf32 = enabled
    try:
        yield
    finally:
        torch.backends.cuda.matmul.allow_tf32 = old


def dot_case(n: int, dt: str) -> dict[str, Any]:
    def build(dev: torch.device):
        x, y = rnd((n,), DTYPES[dt], dev), rnd((n,), DTYPES[dt], dev)

        def fn():
            return torch.dot(x, y)

        def check(out):
            # A dot of random vectors cancels: scale the error by sum |x_i y_i| (the
            # condition-aware denominator) instead of by |result|. float64 in chunks.
            ref = 0.0
            mag = 0.0
            for i in range(0, n, 1 << 24):
                p = x[i:i + (1 << 24)].double() * y[i:i + (1 << 24)].double()
                ref += p.sum().item()
                mag += p.abs().sum().item()
            return abs(out.double().item() - ref) / max(mag, 1e-300)

        return fn, check, "torch.dot(x, y)", lambda: tf32_mode(False)

    return {"label": f"dot-{dt}-{n}", "op": "dot", "dtype": dt, "params": {"n": n},
            "mem": 2 * n * ELEM[dt], "build": build}


def gemv_case(m: int, n: int, dt: str) -> dict[str, Any]:
    def build(dev: torch.device):
        a, x = rnd((m, n), DTYPES[dt], dev), rnd((n,), DTYPES[dt], dev)

        def fn():
            return torch.mv(a, x)

        def check(out):
            r = min(m, 512)
            return rel_norm_err(out[:r], a[:r].double() @ x.double())

        return fn, check, "torch.mv(A, x), A (m, n) contiguous", lambda: tf32_mode(False)

    return {"label": f"gemv-{dt}-{m}x{n}", "op": "gemv", "dtype": dt, "params": {"m": m, "n": n},
            "mem": (m * n + n + m) * ELEM[dt], "build": build}


def gemm_case(m: int, n: int, k: int, dt: str) -> dict[str, Any]:
    def build(dev: torch.device):
        a, b = rnd((m, k), DTYPES[dt], dev), rnd((k, n), DTYPES[dt], dev)

        def fn():
            return torch.matmul(a, b)

        def check(out):
            r, c = min(m, 128), min(n, 256)
            return rel_norm_err(out[:r, :c], a[:r].double() @ b[:, :c].double())

        tf32 = dt == "tf32"
        impl = f"torch.matmul(a (m,k), b (k,n)) contiguous, allow_tf32={tf32}"
        return fn, check, impl, lambda: tf32_mode(tf32)

    return {"label": f"gemm-{dt}-{m}x{n}x{k}", "op": "gemm", "dtype": dt,
            "params": {"m": m, "n": n, "k": k},
            "mem": (m * k + k * n + m * n) * ELEM[dt], "build": build}


def softmax_case(rows: int, cols: int, dt: str) -> dict[str, Any]:
    def build(dev: torch.device):
        x = rnd((rows, cols), DTYPES[dt], dev)

        def fn():
            return torch.softmax(x, dim=-1)

        def check(out):
            r = min(rows, 64)
            return rel_norm_err(out[:r], torch.softmax(x[:r].double(), dim=-1))

        return fn, check, "torch.softmax(x, dim=-1)", contextlib.nullcontext

    return {"label": f"softmax-{dt}-{rows}x{cols}", "op": "softmax", "dtype": dt,
            "params": {"rows": rows, "cols": cols, "impl": "torch"},  # impl: ops/softmax.yaml
            "mem": 2 * rows * cols * ELEM[dt], "build": build}


def layernorm_case(rows: int, cols: int, dt: str) -> dict[str, Any]:
    def build(dev: torch.device):
        x = rnd((rows, cols), DTYPES[dt], dev)
        w = 1.0 + 0.1 * rnd((cols,), DTYPES[dt], dev)
        b = 0.1 * rnd((cols,), DTYPES[dt], dev)

        def fn():
            return F.layer_norm(x, (cols,), w, b)

        def check(out):
            r = min(rows, 64)
            ref = F.layer_norm(x[:r].double(), (cols,), w.double(), b.double())
            return rel_norm_err(out[:r], ref)

        return fn, check, "F.layer_norm(x, (cols,), weight, bias), eps 1e-5", contextlib.nullcontext

    return {"label": f"layernorm-{dt}-{rows}x{cols}", "op": "layernorm", "dtype": dt,
            "params": {"rows": rows, "cols": cols}, "mem": 2 * rows * cols * ELEM[dt],
            "build": build}


def attention_ref_err(q, k, v, out, causal: bool) -> float:
    """float64 reference on a slice: batch 0, first and last head, the last <= 32 queries."""
    _, h, s, d = q.shape
    hk, skv = k.shape[1], k.shape[2]
    g = h // hk
    heads = sorted({0, h - 1})
    rows = torch.arange(max(0, s - 32), s, device=q.device)
    qs = q[0, heads][:, rows].double()                      # (nh, r, d)
    kh = [hh // g for hh in heads]                          # GQA: head hh reads kv head hh // g
    ks, vs = k[0, kh].double(), v[0, kh].double()           # (nh, skv, d)
    sc = qs @ ks.transpose(-1, -2) / math.sqrt(d)
    if causal:  # aligned to the bottom right (the queries are the last of the keys), as the op models
        cols = torch.arange(skv, device=q.device)
        sc = sc.masked_fill(cols[None, None, :] > rows[None, :, None] + (skv - s), float("-inf"))
    ref = torch.softmax(sc, dim=-1) @ vs
    return rel_norm_err(out[0, heads][:, rows], ref)


def attention_case(batch: int, heads: int, kv_heads: int, seq: int, kv_seq: int, head_dim: int,
                   causal: bool, impl: str, dt: str = "bf16", decode: bool = False) -> dict[str, Any]:
    e = ELEM[dt]
    qo = 2 * batch * heads * seq * head_dim * e
    kv = 2 * batch * kv_heads * kv_seq * head_dim * e
    if impl == "naive":
        g = heads // kv_heads
        # scores, scaled scores, masked scores, probabilities, repeated K and V
        mem = qo + kv + 4 * batch * heads * seq * kv_seq * e + (kv * g if g > 1 else 0) + seq * kv_seq
    else:
        mem = qo + kv

    def build(dev: torch.device):
        dtype = DTYPES[dt]
        q = rnd((batch, heads, seq, head_dim), dtype, dev)
        k = rnd((batch, kv_heads, kv_seq, head_dim), dtype, dev)
        v = rnd((batch, kv_heads, kv_seq, head_dim), dtype, dev)
        gqa = kv_heads < heads

        def check(out):
            return attention_ref_err(q, k, v, out, causal)

        if impl == "flash":
            from torch.nn.attention import SDPBackend, sdpa_kernel

            if causal and seq != kv_seq:
                # is_causal=True aligns the mask to the top left (query i sees keys 0..i); the op
                # (and a prompt over a cache) aligns it to the bottom right
                from torch.nn.attention.bias import causal_lower_right

                bias = causal_lower_right(seq, kv_seq)

                def fn():
                    return F.scaled_dot_product_attention(q, k, v, attn_mask=bias, enable_gqa=gqa)

                args = f"attn_mask=causal_lower_right({seq}, {kv_seq}), enable_gqa={gqa}"
            else:

                def fn():
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)

                args = f"is_causal={causal}, enable_gqa={gqa}"
            default = sdpa_default_backend(q, k, v, causal, gqa)
            try:  # force the flash backend; if it refuses these inputs, take the default
                with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                    fn()
                return fn, check, (f"F.scaled_dot_product_attention({args}) [backend flash, forced; "
                                   f"the default would pick {default}]"), \
                    lambda: sdpa_kernel(SDPBackend.FLASH_ATTENTION)
            except (RuntimeError, TypeError) as err:
                why = str(err).strip().splitlines()[0][:120] if str(err).strip() else type(err).__name__
                return fn, check, (f"F.scaled_dot_product_attention({args}) [backend {default}, default; "
                                   f"flash refused: {why}]"), contextlib.nullcontext

        if impl == "sdpa":  # SDPA as called plainly: its default backend (cuDNN's on H100/H200)
            assert not causal or seq == kv_seq, "impl sdpa: is_causal is top-left aligned; give kv_seq = seq"

            def fn():
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=gqa)

            default = sdpa_default_backend(q, k, v, causal, gqa)
            return fn, check, (f"F.scaled_dot_product_attention(is_causal={causal}, enable_gqa={gqa}) "
                               f"[backend {default}, default]"), contextlib.nullcontext

        # naive: every intermediate in device memory, as the op file's impl=naive describes
        g = heads // kv_heads
        scale = 1.0 / math.sqrt(head_dim)
        # bottom-right aligned: query i sees keys up to kv_seq - seq + i
        mask = torch.ones(seq, kv_seq, dtype=torch.bool, device=dev).triu(kv_seq - seq + 1) if causal else None

        def fn():
            kk = k.repeat_interleave(g, dim=1) if g > 1 else k
            vv = v.repeat_interleave(g, dim=1) if g > 1 else v
            s = q @ kk.transpose(-1, -2) * scale
            if mask is not None:
                s = s.masked_fill(mask, float("-inf"))
            p = torch.softmax(s, dim=-1)
            return p @ vv

        parts = (["k,v repeat_interleave to heads"] if g > 1 else []) + \
            ["s = q @ k^T * scale"] + (["masked_fill(-inf) precomputed mask"] if causal else []) + \
            ["p = softmax(s, -1)", "o = p @ v"]
        return fn, check, "naive: " + "; ".join(parts), contextlib.nullcontext

    kind = "decode" if decode else impl
    tag = f"b{batch}h{heads}kv{kv_heads}"
    if decode:
        label = f"attn-decode-{dt}-{tag}-ctx{kv_seq}-d{head_dim}"
    else:
        label = f"attn-{kind}-{dt}-{tag}-s{seq}" + (f"-kv{kv_seq}" if kv_seq != seq else "") + \
            f"-d{head_dim}" + ("-causal" if causal else "")
    params = {"batch": batch, "heads": heads, "kv_heads": kv_heads, "seq": seq, "kv_seq": kv_seq,
              "head_dim": head_dim, "causal": causal, "impl": impl}
    return {"label": label, "op": "attention", "dtype": dt, "params": params, "mem": mem,
            "build": build}


def full_cases() -> list[dict[str, Any]]:
    cs: list[dict[str, Any]] = []
    for n in (4096, 65536, 1 << 20, 1 << 24, 1 << 27):
        for dt in ("fp32", "bf16"):
            cs.append(dot_case(n, dt))
    for m, n in ((1024, 1024), (4096, 4096), (8192, 8192), (16384, 16384), (4096, 14336),
                 (14336, 4096), (128256, 4096)):
        cs.append(gemv_case(m, n, "bf16"))
    for m, n in ((4096, 4096), (8192, 8192)):
        cs.append(gemv_case(m, n, "fp32"))
    bf16_aligned = [(s, s, s) for s in (128, 256, 512, 1024, 2048, 4096, 8192)] + [
        (16, 4096, 4096), (64, 4096, 4096), (4096, 4096, 128), (8192, 8192, 1024),
        (2304, 2304, 8192), (3072, 3072, 3072), (5120, 5120, 5120), (1536, 1536, 12288),
        (128, 128, 65536), (4096, 14336, 4096), (4096, 4096, 14336), (2048, 128256, 4096),
        (8192, 128256, 4096), (1000, 1000, 1000)]   # 1000 is a multiple of 8: aligned control
    bf16_odd = [(10007, 4096, 4096), (4095, 4096, 4096), (4096, 4096, 4095), (6143, 6145, 6147),
                (1001, 1001, 1001), (4097, 4097, 4097), (8191, 8191, 8191), (127, 4096, 4096)]
    for mnk in bf16_aligned + bf16_odd:
        cs.append(gemm_case(*mnk, "bf16"))
    for mnk in ((4096, 4096, 4096), (8192, 8192, 8192), (4095, 4096, 4096)):
        cs.append(gemm_case(*mnk, "fp16"))
    for mnk in ((1024, 1024, 1024), (2048, 2048, 2048), (4096, 4096, 4096), (16, 4096, 4096),
                (16, 8192, 8192), (4097, 4097, 4097)):
        cs.append(gemm_case(*mnk, "fp32"))
    for mnk in ((4096, 4096, 4096), (8192, 8192, 8192), (2048, 2048, 8192)):
        cs.append(gemm_case(*mnk, "tf32"))
    for rc in ((1, 32000), (1, 128000), (1, 1024), (16, 65536), (128, 32768), (1024, 32000),
               (4096, 32000), (4096, 128000), (8192, 1024), (32768, 4096), (65536, 256),
               (2048, 131072)):
        cs.append(softmax_case(*rc, "bf16"))
    for rc in ((4096, 32000), (1, 32000), (8192, 1024)):
        cs.append(softmax_case(*rc, "fp32"))
    for rc in ((1, 4096), (1, 1024), (32, 4096), (4096, 4096), (16384, 8192), (8192, 1024),
               (65536, 1024), (2048, 16384)):
        cs.append(layernorm_case(*rc, "bf16"))
    for rc in ((4096, 4096), (1, 4096)):
        cs.append(layernorm_case(*rc, "fp32"))
    for b, h, hk, s, c in ((1, 32, 8, 1024, False), (1, 32, 8, 4096, False), (1, 32, 8, 4096, True),
                           (1, 32, 8, 8192, True), (4, 32, 32, 2048, True), (8, 16, 16, 512, False),
                           (1, 64, 8, 16384, True)):
        cs.append(attention_case(b, h, hk, s, s, 128, c, "flash"))
    cs.append(attention_case(2, 16, 16, 4096, 4096, 64, True, "flash"))
    for b, h, hk, s, c in ((1, 32, 32, 1024, False), (1, 32, 8, 2048, True), (1, 16, 16, 4096, False),
                           (4, 8, 8, 1024, False)):
        cs.append(attention_case(b, h, hk, s, s, 128, c, "naive"))
    # decode attention: one query against a long KV cache (causal is meaningless at seq=1)
    for b, h, hk, ctx in ((1, 32, 8, 4096), (1, 32, 8, 32768), (16, 32, 8, 4096), (64, 32, 8, 2048),
                          (8, 64, 8, 16384)):
        cs.append(attention_case(b, h, hk, 1, ctx, 128, False, "flash", decode=True))
    return cs


def random_cases(n: int, seed: int, only_kinds: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """A seeded hold-out set: shapes drawn at random (log-uniform sizes, some odd) for every op,
    so the expected-time model can be checked on cases it was not tuned on. only_kinds draws
    from those kinds alone (the default draw, and so every earlier seed's set, is unchanged)."""
    import random

    rng = random.Random(seed)

    def size(lo: int, hi: int, odd_share: float = 0.25) -> int:
        v = int(round(2 ** rng.uniform(math.log2(lo), math.log2(hi))))
        if rng.random() >= odd_share:
            v = max(8, v // 8 * 8)
        return max(lo, v)

    kinds = ["dot", "gemv", "gemm", "gemm", "gemm", "softmax", "layernorm", "flash", "naive", "decode"]
    if only_kinds:
        unknown = sorted(set(only_kinds) - set(kinds))
        if unknown:
            raise ValueError(f"unknown kinds {unknown}; known: {sorted(set(kinds))}")
        kinds = [k for k in kinds if k in only_kinds]
    cs: list[dict[str, Any]] = []
    seen: set[str] = set()
    repeats = 0
    while len(cs) < n:
        if repeats > 10_000:  # some kinds have few distinct cases (naive attention: 36)
            raise ValueError(f"only {len(cs)} distinct cases of {sorted(set(kinds))} found; ask for fewer")
        kind = rng.choice(kinds)
        if kind == "dot":
            c = dot_case(size(1024, 1 << 27, 0.0), rng.choice(("fp32", "bf16")))
        elif kind == "gemv":
            c = gemv_case(size(512, 65536), size(512, 16384), rng.choice(("bf16", "bf16", "fp32")))
        elif kind == "gemm":
            dt = rng.choice(("bf16", "bf16", "bf16", "fp16", "fp32", "tf32"))
            hi = 8192 if dt in ("bf16", "fp16") else 4096
            c = gemm_case(size(16, hi), size(64, hi), size(64, hi), dt)
        elif kind == "softmax":
            c = softmax_case(size(1, 16384, 0.0), size(256, 131072), rng.choice(("bf16", "bf16", "fp32")))
        elif kind == "layernorm":
            c = layernorm_case(size(1, 32768, 0.0), rng.choice((1024, 2048, 3072, 4096, 5120, 8192, 12288)),
                               rng.choice(("bf16", "bf16", "fp32")))
        elif kind == "flash":
            hk = rng.choice((8, 16, 32))
            h = hk * rng.choice((1, 2, 4))
            s = rng.choice((512, 1024, 2048, 3072, 4096, 8192))
            c = attention_case(rng.choice((1, 2, 4)), h, hk, s, s, rng.choice((64, 128)), rng.random() < 0.6, "flash")
        elif kind == "naive":
            h = rng.choice((8, 16, 32))
            s = rng.choice((512, 1024, 2048))
            c = attention_case(rng.choice((1, 2)), h, h, s, s, 128, rng.random() < 0.5, "naive")
        else:
            c = attention_case(rng.choice((1, 2, 4, 8, 16, 32)), 32, 8, 1, size(512, 32768, 0.0), 128, False,
                               "flash", decode=True)
        if c["label"] in seen:
            repeats += 1
            continue
        repeats = 0
        seen.add(c["label"])
        c["label"] = "rand-" + c["label"]
        cs.append(c)
    return cs


def wide_random_cases(n: int, seed: int) -> list[dict[str, Any]]:
    """A seeded hold-out drawn wider than random_cases, as users send shapes: every size
    log-uniform from 1 (GEMM dimensions 1-16384, a tiny m with a deep k or a tiny k included), half
    of them odd, every dtype, softmax and LayerNorm down to one row and odd widths, attention with
    any GQA ratio, odd sequence lengths, a query shorter than its keys, causal or not, and decode
    over contexts from 1 token. Memory per case stays under about 8 GB (a naive attention's scores
    are materialised)."""
    import random

    rng = random.Random(seed)

    def size(lo: int, hi: int, odd_share: float = 0.5) -> int:
        v = int(round(2 ** rng.uniform(math.log2(lo), math.log2(hi))))
        if rng.random() >= odd_share and v >= 16:
            v = v // 8 * 8
        return max(lo, min(hi, v))

    kinds = ["dot", "gemv", "gemm", "gemm", "gemm", "gemm", "softmax", "layernorm", "flash", "naive", "decode"]
    cs: list[dict[str, Any]] = []
    seen: set[str] = set()
    tries = 0
    while len(cs) < n and tries < 100 * n:
        tries += 1
        kind = rng.choice(kinds)
        if kind == "dot":
            c = dot_case(size(1, 1 << 27), rng.choice(("fp32", "bf16", "fp16")))
        elif kind == "gemv":
            c = gemv_case(size(1, 65536), size(1, 32768), rng.choice(("bf16", "fp16", "fp32")))
        elif kind == "gemm":
            dt = rng.choice(("bf16", "fp16", "fp32", "tf32"))
            m, nn, k = size(1, 16384), size(1, 16384), size(1, 16384)
            if m * nn * k > 2**40 or (m * k + k * nn + m * nn) * 4 > 6e9:
                continue
            c = gemm_case(m, nn, k, dt)
        elif kind == "softmax":
            rows, cols = size(1, 16384), size(2, 131072)
            if rows * cols > 2**30:
                continue
            c = softmax_case(rows, cols, rng.choice(("bf16", "fp16", "fp32")))
        elif kind == "layernorm":
            rows, cols = size(1, 32768), size(8, 16384)
            if rows * cols > 2**30:
                continue
            c = layernorm_case(rows, cols, rng.choice(("bf16", "fp16", "fp32")))
        elif kind in ("flash", "naive"):
            hk = rng.choice((1, 2, 4, 8, 16, 32))
            h = hk * rng.choice((1, 2, 4, 8)) if kind == "flash" else hk
            kvs = size(1, 8192)
            s = kvs if rng.random() < 0.7 else size(1, kvs)
            b = rng.choice((1, 2, 3, 4, 8))
            if kind == "naive" and 6 * b * h * s * kvs * 2 > 8e9:
                continue
            c = attention_case(b, h, hk, s, kvs, rng.choice((64, 128)), rng.random() < 0.5, kind)
        else:
            hk = rng.choice((1, 2, 4, 8))
            c = attention_case(rng.choice((1, 2, 4, 8, 16, 32, 64)), hk * rng.choice((1, 4, 8)), hk, 1,
                               size(1, 65536), 128, False, "flash", decode=True)
        if c["label"] in seen:
            continue
        seen.add(c["label"])
        c["label"] = "wide-" + c["label"]
        cs.append(c)
    return cs


def paths_cases() -> list[dict[str, Any]]:
    """Softmax over each kernel PyTorch's host_softmax dispatches to (aten/src/ATen/native/cuda/
    SoftMax.cu, torch 2.11): softmax_warp_forward (rows of at most 2048 elements and 8 KiB),
    cunn_SoftMaxForwardReg (ceil(cols / 1024) < 10 values per thread), cunn_SoftMaxForwardSmem
    (the row fits the 48 KiB of shared memory a block gets by default, cols a multiple of the
    16-byte vector) and cunn_SoftMaxForward (three passes over global memory), either side of
    each boundary, fp32 and bf16, at three row counts; and small fp32 gemv (cuBLAS)."""
    cs: list[dict[str, Any]] = []
    for dt, cols in (("fp32", (1100, 1608, 2500, 4000, 4816, 6000, 8192, 9216, 9218, 9220, 12000, 12290, 30000)),
                     ("bf16", (2100, 3000, 4816, 8192, 9216, 9224, 12000, 20000, 20004, 24000, 24600, 40000))):
        for rows in (64, 1024, 8192):
            for c in cols:
                cs.append(softmax_case(rows, c, dt))
    for m in (512, 1024, 2048, 4096):
        for n in (512, 1024, 2048):
            cs.append(gemv_case(m, n, "fp32"))
    return cs


def l2_cases() -> list[dict[str, Any]]:
    """Three-pass softmax (cunn_SoftMaxForward, re-reading each row twice) over 2048 rows whose
    rows in flight (2 blocks of one row on each of 132 SMs) span 13-51 MB: where the L2 stops
    holding a row between its passes."""
    cs: list[dict[str, Any]] = []
    for cols in (12400, 16000, 20000, 22000, 24000, 26000, 27000, 28000, 29000, 30000, 31000, 32000,
                 33000, 34000, 36000, 40000, 48000):
        cs.append(softmax_case(2048, cols, "fp32"))
        cs.append(softmax_case(2048, 2 * cols + 1, "bf16"))   # odd: never the shared-memory kernel
    return cs


def l2_layernorm_cases() -> list[dict[str, Any]]:
    """LayerNorm (one 128-thread block per row, 16 on an SM, each row read twice) whose rows in
    flight span 17-52 MB: where the L2 stops holding a row for its second read."""
    cs = [layernorm_case(16384, cols, "bf16") for cols in (4096, 5120, 6144, 7168, 8192, 9216, 10240, 12288)]
    cs += [layernorm_case(8192, cols, "fp32") for cols in (2048, 2560, 3072, 3584, 4096, 4608, 5120, 6144)]
    return cs


def skinny_cases() -> list[dict[str, Any]]:
    """Skinny products where cuBLAS picks its own path (development data, 2026-11-27): fp32 gemv
    over a grid of few rows (1-99) and long rows (300-24000); 16-bit GEMMs with m = 1 and a deep
    k; fp32 GEMMs with a tiny n or k. Their kernels are read with kernel_shapes.py --plan skinny."""
    cs: list[dict[str, Any]] = []
    for m in (1, 2, 3, 5, 9, 17, 33, 65, 99):
        for n in (348, 1942, 6000, 13728, 24034):
            cs.append(gemv_case(m, n, "fp32"))
    for dt in ("fp16", "bf16"):
        for n, k in ((3237, 9959), (6219, 3136), (1024, 1024), (4096, 4096), (512, 16000), (16000, 512)):
            cs.append(gemm_case(1, n, k, dt))
            cs.append(gemm_case(5, n, k, dt))
    for m, n, k in ((2864, 9, 48), (1808, 5, 106), (5491, 10, 19), (4536, 4, 15088), (7392, 6614, 4),
                    (1121, 4, 40), (32, 2648, 2), (837, 48, 24), (43, 56, 13336), (4, 8, 9552)):
        cs.append(gemm_case(m, n, k, "fp32"))
    return cs


def tall_cases() -> list[dict[str, Any]]:
    """Tall products with a tiny n (development data, 2026-11-27): fp32 GEMMs of 2-9 columns over
    a grid of rows (700-5000) and depths (20-5700), and a few unaligned 16-bit GEMMs with few rows
    and a deep k. Their kernels are read with kernel_shapes.py --plan tall."""
    cs: list[dict[str, Any]] = []
    for n in (2, 4, 9):
        for m in (700, 2300, 5000):
            for k in (20, 100, 500, 1700, 5700):
                cs.append(gemm_case(m, n, k, "fp32"))
    for m, n, k in ((11, 6, 3104), (5, 2, 2680), (2, 420, 2396), (6, 3908, 7), (30, 10, 4000)):
        for dt in ("bf16", "fp16"):
            cs.append(gemm_case(m, n, k, dt))
    return cs


def _log_sizes(rng: Any) -> Callable[[int, int], int]:
    """Sizes log-uniform in [lo, hi] from ``rng``, half of those from 16 up rounded down to a
    multiple of 8 (the draws of the plans tall-rand* and small*-rand*; each draw takes two numbers
    from rng, as the plans did when they each had a copy of this)."""

    def size(lo: int, hi: int) -> int:
        v = int(round(2 ** rng.uniform(math.log2(lo), math.log2(hi))))
        if rng.random() >= 0.5 and v >= 16:
            v = v // 8 * 8
        return max(lo, min(hi, v))

    return size


def tall_random_cases(seed: int, n: int = 60) -> list[dict[str, Any]]:
    """FP32 GEMMs of 17-16384 rows, 2-16 columns and a depth of 1-16384, each log-uniform, half of
    them odd (as wide_random_cases draws sizes): the domain of the GEMM choice map
    (roofcalc/expected/choice.py). Seed 1 is development data; seed 2 a hold-out (HOLDOUT.md)."""
    import random

    size = _log_sizes(random.Random(seed))
    cs: list[dict[str, Any]] = []
    seen: set[tuple[int, int, int]] = set()
    while len(cs) < n:
        shape = (size(17, 16384), size(2, 16), size(1, 16384))
        if shape not in seen:
            seen.add(shape)
            cs.append(gemm_case(*shape, "fp32"))
    return cs


def flash_dev_cases() -> list[dict[str, Any]]:
    """FlashAttention through SDPA (development data, 2026-11-27): tiny prompts (1-64 queries and
    keys) causal or not, and square prompts of 256-3056 tokens, causal or not, at head sizes 64 and
    128 and a few batch and head counts, for their kernels (kernel_shapes.py --plan flash-dev) and
    times."""
    cs: list[dict[str, Any]] = []
    for d in (64, 128):
        for causal in (False, True):
            for b, h, hk in ((1, 8, 8), (4, 32, 8), (8, 64, 8)):
                for s in (1, 2, 8, 16, 32, 64):
                    cs.append(attention_case(b, h, hk, s, s, d, causal, "flash"))
            for b, h, hk in ((1, 8, 8), (2, 8, 4), (1, 2, 1), (4, 16, 4), (8, 32, 32)):
                for s in (256, 512, 688, 1024, 1760, 3056):
                    cs.append(attention_case(b, h, hk, s, s, d, causal, "flash"))
    return cs


def sdpa_random_cases(seed: int, n: int = 48) -> list[dict[str, Any]]:
    """SDPA called plainly (impl sdpa: its default backend, cuDNN's flash forward on H100/H200):
    batch 1-8, 4-64 query heads, KV heads dividing them, head size 64 or 128, bf16 or fp16, 64-16,000
    tokens log-uniform, causal three times in four (then keys = queries), else 64-16,000 keys of
    their own; each call kept under about 8 x 32 heads x 8,192^2 scores at head size 128."""
    import math
    import random

    rng = random.Random(seed)
    cs: list[dict[str, Any]] = []
    while len(cs) < n:
        h = rng.randint(4, 64)
        kv = rng.choice([k for k in range(1, h + 1) if h % k == 0 and k <= 16])
        s = int(round(math.exp(rng.uniform(math.log(64), math.log(16000)))))
        causal = rng.random() < 0.75
        skv = s if causal else int(round(math.exp(rng.uniform(math.log(64), math.log(16000)))))
        b = rng.randint(1, 8)
        d = rng.choice((64, 128))
        if b * h * s * skv * d > 8 * 32 * 8192 * 8192 * 128:
            continue
        cs.append(attention_case(b, h, kv, s, skv, d, causal, "sdpa", rng.choice(("bf16", "fp16"))))
    return cs


def small_side_random_cases(seed: int, n: int = 80, dtypes: tuple[str, ...] = ("fp32", "tf32")) -> list[dict[str, Any]]:
    """fp32 and tf32 GEMMs with one side of 2-16 (few rows or few columns, either at random), the
    other side and the depth log-uniform in 1-16384, half of them odd: the domain of the widened
    GEMM choice map (roofcalc/expected/choice.py). Seed 1 is development data; seed 2 a hold-out."""
    import random

    rng = random.Random(seed)
    size = _log_sizes(rng)
    cs: list[dict[str, Any]] = []
    seen: set[tuple[int, int, int, str]] = set()
    while len(cs) < n:
        small, other, k = size(2, 16), size(1, 16384), size(1, 16384)
        m, nn = (small, other) if rng.random() < 0.5 else (other, small)
        dt = rng.choice(dtypes)
        if (m, nn, k, dt) not in seen:
            seen.add((m, nn, k, dt))
            cs.append(gemm_case(m, nn, k, dt))
    return cs


def layernorm_random_cases(seed: int, n: int = 60) -> list[dict[str, Any]]:
    """LayerNorm with few to many rows (1-256, log-uniform) of 1-16384 elements (log-uniform, half
    of them a multiple of 8 from 16 up, as the plans' sizes are drawn), fp32, bf16 or fp16: the
    two-kernel path (rows not a multiple of 4 elements) and the vectorized one. Seed 1 a hold-out."""
    import random

    rng = random.Random(seed)
    size = _log_sizes(rng)
    cs: list[dict[str, Any]] = []
    seen: set[tuple[int, int, str]] = set()
    while len(cs) < n:
        rows, cols, dt = size(1, 256), size(1, 16384), rng.choice(("fp32", "bf16", "fp16"))
        if (rows, cols, dt) not in seen:
            seen.add((rows, cols, dt))
            cs.append(layernorm_case(rows, cols, dt))
    return cs


def vector_side_random_cases(seed: int, n: int = 60) -> list[dict[str, Any]]:
    """GEMMs with one row or one column (either at random), the other side and the depth
    log-uniform in 1-16384 (half of those from 16 up a multiple of 8), fp32 with TF32 off or on:
    cuBLAS's GEMV kernels (kernels/vec1). Seed 1 a hold-out."""
    import random

    rng = random.Random(seed)
    size = _log_sizes(rng)
    cs: list[dict[str, Any]] = []
    seen: set[tuple[int, int, int, str]] = set()
    while len(cs) < n:
        other, k = size(2, 16384), size(1, 16384)
        m, nn = (other, 1) if rng.random() < 0.5 else (1, other)
        dt = rng.choice(("fp32", "tf32"))
        if (m, nn, k, dt) not in seen:
            seen.add((m, nn, k, dt))
            cs.append(gemm_case(m, nn, k, dt))
    return cs


def row_random_cases(seed: int, n: int = 60) -> list[dict[str, Any]]:
    """One-row GEMMs (x @ B: m = 1), the columns log-uniform in 2-16384 and the depth in 1-16384
    (half of those from 16 up a multiple of 8), fp32 with TF32 off or on: cuBLAS's column-walking
    GEMV kernels (roofcalc/expected/choice.py row_shapes). Plan row-rand1 (seed 101) a hold-out,
    row-rand2 and row-rand3 (seeds 102, 103) development data (HOLDOUT.md); not seeds 1 and 2, whose first sizes are
    vec-rand1's (the same generator's draws)."""
    import random

    rng = random.Random(seed)
    size = _log_sizes(rng)

    def draw() -> tuple[int, int, int, str]:
        nn, k = size(2, 16384), size(1, 16384)
        return 1, nn, k, rng.choice(("fp32", "tf32"))

    return _distinct_gemms(n, draw)


def column_random_cases(seed: int, n: int = 60) -> list[dict[str, Any]]:
    """One-column GEMMs (A @ x: n = 1), the rows log-uniform in 1-16384 (a dot product at 1) and
    the depth in 1-16384 (half of those from 16 up a multiple of 8), fp32 with TF32 off or on:
    cuBLAS's GEMV kernels (roofcalc/expected/choice.py column_shapes). Plan col-rand1 (seed 101) a
    hold-out, col-rand2 (seed 102) development data (HOLDOUT.md)."""
    import random

    rng = random.Random(seed)
    size = _log_sizes(rng)

    def draw() -> tuple[int, int, int, str]:
        m, k = size(1, 16384), size(1, 16384)
        return m, 1, k, rng.choice(("fp32", "tf32"))

    return _distinct_gemms(n, draw)


def naive_short_random_cases(seed: int, n: int = 40) -> list[dict[str, Any]]:
    """Naive attention of a short query over long keys: query length log-uniform in 1-64, key length
    in 256-8192 (half of them any size, half a multiple of 8), batch 1-8, 1-32 heads (no GQA), head
    dim 64 or 128, causal or not, bf16: the batched GEMMs of a key length whose rows are not
    16-byte aligned (kernels/naive1). Plan naive-short-rand1 (seed 101) a hold-out, naive-short-rand2
    (seed 102) development data (HOLDOUT.md)."""
    import random

    rng = random.Random(seed)
    size = _log_sizes(rng)
    cs: list[dict[str, Any]] = []
    seen: set[tuple[int, ...]] = set()
    while len(cs) < n:
        s, kv = size(1, 64), size(256, 8192)
        b, h, d, causal = rng.choice((1, 2, 3, 4, 8)), rng.choice((1, 2, 4, 8, 16, 32)), rng.choice((64, 128)), rng.random() < 0.5
        key = (b, h, s, kv, d, int(causal))
        if key not in seen and 6 * b * h * s * kv * 2 <= 8e9:
            seen.add(key)
            cs.append(attention_case(b, h, h, s, kv, d, causal, "naive"))
    return cs


def _distinct_gemms(n: int, draw: Callable[[], tuple[int, int, int, str]]) -> list[dict[str, Any]]:
    """n GEMM cases of distinct (m, n, k, dtype), each from ``draw`` (which takes its numbers
    from the plan's seeded generator, in the order the plan draws them)."""
    cs: list[dict[str, Any]] = []
    seen: set[tuple[int, int, int, str]] = set()
    while len(cs) < n:
        shape = draw()
        if shape not in seen:
            seen.add(shape)
            cs.append(gemm_case(*shape))
    return cs


def shallow_random_cases(seed: int, n: int = 80) -> list[dict[str, Any]]:
    """GEMMs of large outputs and a shallow depth: both sides log-uniform in 512-16384 and the
    depth in 1-512 (half of each from 16 up a multiple of 8), any of fp32, tf32, bf16 and fp16:
    where the stores of the output, not the k-loop, take most of a kernel's time (the stores of
    a pre-Hopper kernel's waves, roofcalc/expected/gemm.py). Seed 1 a hold-out (HOLDOUT.md)."""
    return _large_output_cases(seed, n, 512, 512)


def flat_random_cases(seed: int, n: int = 80) -> list[dict[str, Any]]:
    """GEMMs of large outputs and a depth of 1-32: both sides log-uniform in 65-16384 and the depth
    in 1-32 (half of each from 16 up a multiple of 8), any of fp32, tf32, bf16 and fp16: the choice
    map's shallow plane (roofcalc/expected/choice.py shallow_shapes). Seeds 1 and 3 hold-outs, seed
    2 development data (HOLDOUT.md)."""
    return _large_output_cases(seed, n, 65, 32)


def _large_output_cases(seed: int, n: int, side_lo: int, k_hi: int) -> list[dict[str, Any]]:
    """n GEMMs of both sides log-uniform in side_lo-16384 and a depth in 1-k_hi, any dtype."""
    import random

    rng = random.Random(seed)
    size = _log_sizes(rng)

    def draw() -> tuple[int, int, int, str]:
        m, nn, k = size(side_lo, 16384), size(side_lo, 16384), size(1, k_hi)
        return m, nn, k, rng.choice(("fp32", "tf32", "bf16", "fp16"))

    return _distinct_gemms(n, draw)


def _small_side_draw(rng: Any, size: Callable[[int, int], int], lo: int, hi: int, k_hi: int) -> Callable[[], tuple[int, int, int, str]]:
    """A draw of one side in lo-hi (rows or columns, either at random), the other in 1-16384 and
    the depth in 1-k_hi, any of the four dtypes."""

    def draw() -> tuple[int, int, int, str]:
        small, other, k = size(lo, hi), size(1, 16384), size(1, k_hi)
        m, nn = (small, other) if rng.random() < 0.5 else (other, small)
        return m, nn, k, rng.choice(("fp32", "tf32", "bf16", "fp16"))

    return draw


def mid_side_random_cases(seed: int, n: int = 80) -> list[dict[str, Any]]:
    """GEMMs with one side of 17-64 (rows or columns, either at random), the other side and the
    depth log-uniform in 1-16384 (half of each from 16 up a multiple of 8), any of fp32, tf32, bf16
    and fp16: the sides the GEMM choice map reaches up to 64 (roofcalc/expected/choice.py
    MAP_MAX_SMALL). Seed 1 a hold-out (HOLDOUT.md)."""
    import random

    rng = random.Random(seed)
    return _distinct_gemms(n, _small_side_draw(rng, _log_sizes(rng), 17, 64, 16384))


def tiny_depth_random_cases(seed: int, n: int = 80) -> list[dict[str, Any]]:
    """GEMMs of a depth of 1-16 (log-uniform), one side of 2-64 and the other of 1-16384 (either
    at random, log-uniform, half of those from 16 up a multiple of 8), any of fp32, tf32, bf16 and
    fp16: the depths the GEMM choice map measured below 16 (kernels/choice9, not kept). Seed 1 a
    hold-out (HOLDOUT.md)."""
    import random

    rng = random.Random(seed)
    return _distinct_gemms(n, _small_side_draw(rng, _log_sizes(rng), 2, 64, 16))

PLANS = {"fixed": full_cases, "flash-dev": flash_dev_cases, "ln-rand1": lambda: layernorm_random_cases(1),
         "sdpa-rand1": lambda: sdpa_random_cases(1), "sdpa-rand2": lambda: sdpa_random_cases(2),
         "vec-rand1": lambda: vector_side_random_cases(1),
         "shallow-rand1": lambda: shallow_random_cases(1),
         "flat-rand1": lambda: flat_random_cases(1), "flat-rand2": lambda: flat_random_cases(2),
         "flat-rand3": lambda: flat_random_cases(3),
         "mid-rand1": lambda: mid_side_random_cases(1),
         "tinyk-rand1": lambda: tiny_depth_random_cases(1),
         "row-rand1": lambda: row_random_cases(101), "row-rand2": lambda: row_random_cases(102),
         "row-rand3": lambda: row_random_cases(103),
         "col-rand1": lambda: column_random_cases(101), "col-rand2": lambda: column_random_cases(102),
         "naive-short-rand1": lambda: naive_short_random_cases(101),
         "naive-short-rand2": lambda: naive_short_random_cases(102),
         "small-rand1": lambda: small_side_random_cases(1), "small-rand2": lambda: small_side_random_cases(2),
         "small16-rand1": lambda: small_side_random_cases(1, dtypes=("bf16", "fp16")),
         "small16-rand2": lambda: small_side_random_cases(2, dtypes=("bf16", "fp16")),
         "small16-rand3": lambda: small_side_random_cases(3, dtypes=("bf16", "fp16")), "paths": paths_cases, "l2": l2_cases, "l2-layernorm": l2_layernorm_cases,
         "skinny": skinny_cases, "tall": tall_cases,
         "tall-rand1": lambda: tall_random_cases(1), "tall-rand2": lambda: tall_random_cases(2),
         "tall-rand3": lambda: tall_random_cases(3), "small-rand3": lambda: small_side_random_cases(3),
         "small16-rand4": lambda: small_side_random_cases(4, dtypes=("bf16", "fp16")),
         "small16-rand5": lambda: small_side_random_cases(5, dtypes=("bf16", "fp16")),
         "small-rand4": lambda: small_side_random_cases(4),
         "small16-rand6": lambda: small_side_random_cases(6, dtypes=("bf16", "fp16")),
         "small-rand5": lambda: small_side_random_cases(5), "tall-rand4": lambda: tall_random_cases(4),
         "small16-rand7": lambda: small_side_random_cases(7, dtypes=("bf16", "fp16"))}


def smoke_cases() -> list[dict[str, Any]]:
    """Tiny shapes covering every op, dtype and code path (odd sizes, GQA, causal, decode)."""
    cs = [dot_case(4096, "fp32"), dot_case(1 << 20, "bf16"),
          gemv_case(256, 256, "bf16"), gemv_case(255, 129, "fp32"),
          gemm_case(128, 128, 128, "bf16"), gemm_case(127, 129, 131, "bf16"),
          gemm_case(64, 256, 4096, "bf16"), gemm_case(128, 128, 128, "fp16"),
          gemm_case(129, 127, 125, "fp32"), gemm_case(128, 128, 256, "tf32"),
          softmax_case(1, 32000, "bf16"), softmax_case(33, 1001, "fp32"),
          layernorm_case(1, 1024, "bf16"), layernorm_case(65, 4096, "fp32"),
          attention_case(1, 8, 2, 256, 256, 64, True, "flash"),
          attention_case(2, 4, 4, 128, 128, 32, False, "flash"),
          attention_case(1, 8, 2, 256, 256, 64, True, "naive"),
          attention_case(1, 4, 4, 128, 128, 64, False, "naive"),
          attention_case(2, 8, 2, 1, 1024, 64, False, "flash", decode=True)]
    return cs


# --------------------------------------------------------------------------- timing

class Timer:
    """CUDA: events around the op after an L2 flush. CPU: perf_counter (smoke tests).

    pacing "repeat" (the default from ops-wide46 on): the flush repeated until the GPU is
    busy for longer than the host takes to issue the op and its events, so the op's kernels are
    queued before the GPU reaches its start event, as roofcalc's event timing assumes, whatever the
    host's speed; the op finds the L2 as one flush leaves it. pacing "flush" (the sets measured
    before): the flush alone; where the host takes longer to issue a multi-kernel op than the flush
    keeps the GPU busy, the GPU waits for the host inside the timed span
    (validation/traces/h100/naive-pacing2). pacing "spin": the flush, then a ``torch.cuda._sleep``
    spin of the same length (validation/expected/h100/ops-wide43-spin: single-kernel ops up to
    1.4 us slower after the idle spin than after a flush)."""

    def __init__(self, dev: torch.device, flush_bytes: int, pacing: str = "repeat"):
        self.dev = dev
        self.cuda = dev.type == "cuda"
        self.pacing = pacing
        # A separate buffer, written before every rep: evicts the op's inputs from L2.
        self.flush = torch.empty(flush_bytes // 4, dtype=torch.int32, device=dev)
        self.cycles_per_s = sleep_cycles_per_s() if self.cuda else 0.0
        self.flush_s = 0.0  # the GPU's time for one flush
        if self.cuda:
            for _ in range(3):
                self.flush.zero_()
            self.flush_s = statistics.median(event_time(self.flush.zero_) for _ in range(5))

    def sync(self) -> None:
        if self.cuda:
            torch.cuda.synchronize(self.dev)

    def wall(self, fn: Callable[[], Any]) -> float:
        self.sync()
        t0 = time.perf_counter()
        fn()
        self.sync()
        return time.perf_counter() - t0

    def issue(self, fn: Callable[[], Any]) -> float | None:
        """The host's time to issue one call with the GPU busy (None on the CPU)."""
        if not self.cuda:
            return None
        cycles = int(2e-3 * self.cycles_per_s)
        return busy_issue_s(fn, lambda: torch.cuda._sleep(cycles))

    def lead_s(self, issue_s: float | None) -> float:
        """How long the GPU must be busy before the start event: twice the host's issue of the
        op and of its two events (40 us allowed for them), and 20 us more; 0 under "flush"."""
        if self.pacing == "flush" or issue_s is None:
            return 0.0
        return 2.0 * (issue_s + 40e-6) + 20e-6

    def reps(self, fn: Callable[[], Any], n: int, lead_s: float = 0.0) -> list[float]:
        if not self.cuda:
            out = []
            for _ in range(n):
                self.flush.zero_()
                t0 = time.perf_counter()
                fn()
                out.append(time.perf_counter() - t0)
            return out
        # the flushes (or the spin) are enqueued before each start event: not timed
        if lead_s > 0 and self.pacing == "spin":
            cycles = int(lead_s * self.cycles_per_s)

            def spun() -> None:
                self.flush.zero_()
                torch.cuda._sleep(cycles)

            return queued_times(fn, spun, n)
        k = max(1, math.ceil(lead_s / max(self.flush_s, 1e-6)))

        def flushes() -> None:
            for _ in range(k):
                self.flush.zero_()

        if self.pacing == "repeat":
            # one untimed pass of the same loop first (ops-wide50 and 51 on): in ops-wide46 and 47
            # the first 18-36 repetitions of three cases waited 300-3400 us each for the host, the
            # rest none (benchlib.queued_times now also records its events once before timing)
            queued_times(fn, flushes, min(n, 10))
        return queued_times(fn, flushes, n)


def run_case(case: dict[str, Any], dev: torch.device, timer: Timer) -> dict[str, Any]:
    rec: dict[str, Any] = {"op": case["op"], "dtype": case["dtype"], "params": case["params"],
                           "label": case["label"]}
    fn, check, impl, ctx = case["build"](dev)
    rec["impl"] = impl
    with torch.no_grad(), ctx():
        if dev.type == "cuda":
            rec["allow_tf32"] = torch.backends.cuda.matmul.allow_tf32
        fn()                                    # warm-up 1 (library init, heuristics)
        t_est = timer.wall(fn)                  # warm-up 2, timed by the wall clock
        for _ in range(max(0, WARMUP - 2)):
            fn()
        n = max(MIN_REPS, min(MAX_REPS, int(TARGET_TIMED_S / max(t_est, 1e-7))))
        issue = timer.issue(fn)
        lead = timer.lead_s(issue)
        times = timer.reps(fn, n, lead)
        retries = 0
        # A flushed op's repetitions take the same time unless the GPU waited for the host: the
        # host's issue during timing outlasted the lead it was measured for (ops-wide58: a tiny
        # GEMM at 4.4 us in half its repetitions, 83 us median). Time it again with four times the
        # lead, up to twice (from ops-wide58-rerun on; `lead_retries` in the record).
        while (timer.pacing == "repeat" and issue is not None and retries < 2
               and percentile(times, 90) > 2 * percentile(times, 10) + 10e-6):
            retries += 1
            lead *= 4
            times = timer.reps(fn, n, lead)
        out = fn()
        timer.sync()
        err = float(check(out))
    del out
    rec.update({
        "median_s": percentile(times, 50), "p10_s": percentile(times, 10),
        "p90_s": percentile(times, 90), "min_s": min(times), "reps": len(times),
        "times_s": [round(t, 9) for t in times],
        "rel_err": err, "verified": bool(err <= TOL[case["dtype"]]),
        "tolerance": TOL[case["dtype"]],
    })
    if issue is not None:
        rec["host_issue_s"] = issue
        rec["lead_s"] = lead
        rec["lead_retries"] = retries
    return rec


def free_bytes(dev: torch.device) -> int | None:
    if dev.type != "cuda":
        return None
    torch.cuda.empty_cache()
    free, _total = torch.cuda.mem_get_info(dev)
    return int(free)


def fmt_t(s: float | None) -> str:
    if s is None:
        return "-"
    if s < 1e-3:
        return f"{s * 1e6:.1f}us"
    return f"{s * 1e3:.3f}ms"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="ops.json", help="JSON output file (rewritten after each case)")
    ap.add_argument("--budget-s", type=float, default=240.0,
                    help="stop starting new cases after this many seconds (default 240)")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--smoke", action="store_true", help="tiny shapes, every code path (CPU test)")
    ap.add_argument("--only", default=None, help="regular expression on the case labels")
    ap.add_argument("--list", action="store_true", help="print the case labels and exit")
    ap.add_argument("--random", type=int, default=0, metavar="N",
                    help="N seeded random cases (a hold-out set) instead of the fixed plan")
    ap.add_argument("--seed", type=int, default=1, help="seed of --random")
    ap.add_argument("--wide", action="store_true",
                    help="--random draws from the widened generator (wide_random_cases: sizes from 1, every dtype, GQA)")
    ap.add_argument("--kinds", default="", help="--random draws only these kinds (comma-separated, e.g. softmax)")
    ap.add_argument("--pacing", choices=("repeat", "spin", "flush"), default="repeat",
                    help="repeat (default): the flush repeated until the GPU outlasts the host's issue of the op, so "
                         "the op is queued before the GPU reaches it; flush: the flush alone (the sets before ops-wide43-spin); "
                         "spin: the flush, then a GPU spin (ops-wide43-spin)")
    ap.add_argument("--plan", choices=sorted(PLANS), default="fixed",
                    help="the fixed cases (default) or another named plan (paths: softmax's kernels, small fp32 gemv)")
    args = ap.parse_args(argv)

    if args.kinds and not args.random:
        ap.error("--kinds restricts a --random draw: give --random N too")
    if args.plan != "fixed" and (args.random or args.smoke):
        ap.error("--plan names a set of its own: not with --random or --smoke")
    kinds = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
    try:
        if args.wide and not args.random:
            raise ValueError("--wide is a kind of --random draw: give --random N too")
        cases = (
            smoke_cases() if args.smoke
            else wide_random_cases(args.random, args.seed) if args.random and args.wide
            else random_cases(args.random, args.seed, kinds) if args.random
            else PLANS[args.plan]()
        )
    except ValueError as e:
        ap.error(str(e))
    labels = [c["label"] for c in cases]
    dup = sorted({x for x in labels if labels.count(x) > 1})
    if dup:
        sys.exit(f"duplicate case labels: {dup}")
    if args.only:
        rx = re.compile(args.only)
        cases = [c for c in cases if rx.search(c["label"])]
    if args.list:
        for c in cases:
            print(c["label"])
        print(f"{len(cases)} cases")
        return 0

    if args.device == "cuda" and not torch.cuda.is_available():
        sys.exit("--device cuda but torch.cuda.is_available() is False (use --device cpu --smoke)")
    dev = torch.device("cuda", torch.cuda.current_device()) if args.device == "cuda" else torch.device("cpu")
    torch.manual_seed(0)

    timer = Timer(dev, SMOKE_FLUSH_BYTES if args.smoke else FLUSH_BYTES, args.pacing)
    result: dict[str, Any] = {
        "schema": SCHEMA, "kind": "ops", "date": utc_now(),
        "command": shlex.join(sys.argv if argv is None else ["ops_bench.py", *argv]),
        "python_executable": sys.executable,
        "device": device_info(dev), "driver": driver_version(), "torch": torch.__version__,
        "cuda": torch.version.cuda, "python": platform.python_version(), "env": selected_env(),
        "settings": {"budget_s": args.budget_s, "smoke": args.smoke, "only": args.only,
                     "target_timed_s": TARGET_TIMED_S, "min_reps": MIN_REPS, "max_reps": MAX_REPS,
                     "warmup": WARMUP, "flush_bytes": SMOKE_FLUSH_BYTES if args.smoke else FLUSH_BYTES,
                     "timing": (("cuda events around each call, L2 flushed before each rep"
                                 + {"repeat": ", the flush repeated until the GPU is busy for twice the host's issue "
                                              "of the call (host_issue_s) and 100 us more (lead_s), so the call is "
                                              "queued before the GPU reaches it",
                                    "spin": ", then a GPU spin of twice the host's issue of the call (host_issue_s) "
                                            "and 100 us more, so the call is queued before the GPU reaches it",
                                    "flush": ""}[args.pacing])
                                if dev.type == "cuda" else "time.perf_counter (cpu)"),
                     "pacing": args.pacing,
                     "flush_s": round(timer.flush_s, 9),
                     "rel_err": ("norm-wise |out - ref| / |ref| on a slice, ref in float64 from the "
                                 "same inputs; dot: |out - ref| / sum|x_i y_i|")},
        "cases": [], "skipped": [],
    }
    if dev.type == "cuda":
        result["cudnn"] = torch.backends.cudnn.version()
    write_json_atomic(args.out, result)

    t_start = time.perf_counter()
    print(f"# ops_bench: {len(cases)} cases on {result['device']['name']}, torch {torch.__version__}, "
          f"budget {args.budget_s:.0f}s -> {args.out}", flush=True)
    print(f"{'label':<46} {'median':>10} {'p10':>10} {'p90':>10} {'reps':>4} {'rel_err':>8}  ok",
          flush=True)
    n_ok = n_bad = n_fail = 0
    for i, case in enumerate(cases):
        elapsed = time.perf_counter() - t_start
        if elapsed > args.budget_s:
            for c in cases[i:]:
                result["skipped"].append({"label": c["label"], "reason": f"budget ({args.budget_s:.0f}s) spent"})
            print(f"# budget spent after {elapsed:.0f}s: {len(cases) - i} cases skipped", flush=True)
            break
        free = free_bytes(dev)
        if free is not None and case["mem"] > MEM_SAFETY * free:
            why = f"needs ~{case['mem'] / 1e9:.2f} GB, {free / 1e9:.2f} GB free"
            result["skipped"].append({"label": case["label"], "reason": f"memory: {why}"})
            print(f"{case['label']:<46} SKIPPED ({why})", flush=True)
            write_json_atomic(args.out, result)
            continue
        t0 = time.perf_counter()
        try:
            rec = run_case(case, dev, timer)
            ok = rec["verified"]
            n_ok += ok
            n_bad += not ok
            print(f"{case['label']:<46} {fmt_t(rec['median_s']):>10} {fmt_t(rec['p10_s']):>10} "
                  f"{fmt_t(rec['p90_s']):>10} {rec['reps']:>4} {rec['rel_err']:>8.1e}  "
                  f"{'ok' if ok else 'BAD'}", flush=True)
        except Exception as e:
            n_fail += 1
            rec = {"op": case["op"], "dtype": case["dtype"], "params": case["params"],
                   "label": case["label"], "impl": None, "median_s": None, "p10_s": None,
                   "p90_s": None, "min_s": None, "reps": 0, "rel_err": None, "verified": False,
                   "error": short_err(e), "traceback": traceback.format_exc(limit=4)[-2000:]}
            print(f"{case['label']:<46} ERROR {short_err(e)[:160]}", flush=True)
        rec["case_wall_s"] = round(time.perf_counter() - t0, 3)
        result["cases"].append(rec)
        write_json_atomic(args.out, result)
        if dev.type == "cuda":
            torch.cuda.empty_cache()
    result["total_wall_s"] = round(time.perf_counter() - t_start, 2)
    write_json_atomic(args.out, result)
    print(f"# done in {result['total_wall_s']:.1f}s: {n_ok} verified, {n_bad} above tolerance, "
          f"{n_fail} failed, {len(result['skipped'])} skipped -> {args.out}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

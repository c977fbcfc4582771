"""Op timings through PyTorch (cuBLAS, SDPA), run only where torch with CUDA is installed.

Each record: {op, dtype, params, median_s, impl, verified, check}. Inputs are random
(never zeros); outputs are compared with a float32 recomputation on a slice.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


def _median_time(torch: Any, fn: Callable[[], Any], reps: int, warmup: int = 3) -> float:
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a = torch.cuda.Event(enable_timing=True)
        b = torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b) * 1e-3)
    times.sort()
    return float(times[len(times) // 2])


def _rel_err(torch: Any, got: Any, ref: Any) -> float:
    got, ref = got.float(), ref.float()
    return float((got - ref).norm() / ref.norm())


def matmul_ceilings(torch: Any, reps: int) -> list[dict[str, Any]]:
    """The 'large matrix product through the library' ceiling, per dtype (8192^3, random data)."""
    out = []
    n = 8192
    for dtype_name, dt, tf32 in (("bf16", torch.bfloat16, False), ("fp16", torch.float16, False),
                                 ("tf32", torch.float32, True)):
        torch.backends.cuda.matmul.allow_tf32 = tf32
        a = torch.randn(n, n, device="cuda", dtype=dt)
        b = torch.randn(n, n, device="cuda", dtype=dt)
        t = _median_time(torch, functools.partial(torch.matmul, a, b), reps)
        c = torch.matmul(a, b)
        err = _rel_err(torch, c[:64], a[:64].float() @ b.float())
        if not err < 3e-2:
            raise RuntimeError(f"{dtype_name} matmul check failed: relative error {err:.2e}")
        out.append({"name": f"{dtype_name}_matmul_torch", "unit": "FLOP/s", "value": 2 * n**3 / t,
                    "work": 2 * n**3, "median_s": t, "reps": reps, "verified": True})
        del a, b, c
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.cuda.empty_cache()
    return out


def gemm_ops(torch: Any, reps: int) -> list[dict[str, Any]]:
    shapes = [("square", 8192, 8192, 8192), ("square-4k", 4096, 4096, 4096), ("skinny", 32768, 256, 16384),
              ("small", 512, 512, 512), ("odd (not multiples of 8)", 6143, 6145, 6147)]
    out = []
    for label, m, n, k in shapes:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        t = _median_time(torch, functools.partial(torch.matmul, a, b), reps)
        c = torch.matmul(a, b)
        err = _rel_err(torch, c[:32], a[:32].float() @ b.float())
        out.append({"op": "gemm", "label": label, "dtype": "bf16", "params": {"m": m, "n": n, "k": k},
                    "median_s": t, "reps": reps, "impl": "torch.matmul (cuBLAS)", "verified": err < 3e-2,
                    "check": f"rel. error {err:.1e} vs fp32 on 32 rows"})
        del a, b, c
    return out


def attention_ops(torch: Any, reps: int) -> list[dict[str, Any]]:
    import torch.nn.functional as F  # type: ignore[import-not-found]

    out = []
    b, h, s, d = 1, 32, 8192, 128
    q = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
    t = _median_time(torch, lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), reps)
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    # check one head against an fp32 recomputation
    qs, ks, vs = q[0, 0].float(), k[0, 0].float(), v[0, 0].float()
    sc = (qs @ ks.T) / d**0.5
    sc = sc.masked_fill(torch.ones(s, s, device="cuda", dtype=torch.bool).triu(1), float("-inf"))
    err = _rel_err(torch, o[0, 0], torch.softmax(sc, -1) @ vs)
    out.append({"op": "attention", "label": "flash (SDPA), causal", "dtype": "bf16",
                "params": {"batch": b, "heads": h, "seq": s, "head_dim": d, "causal": True, "impl": "flash"},
                "median_s": t, "reps": reps, "impl": "F.scaled_dot_product_attention", "verified": err < 3e-2,
                "check": f"rel. error {err:.1e} vs fp32 on one head"})
    del q, k, v, o, sc
    s = 4096
    q = torch.randn(b * h, s, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(b * h, s, d, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(b * h, s, d, device="cuda", dtype=torch.bfloat16)
    buf = torch.empty(b * h, s, s, device="cuda", dtype=torch.bfloat16)

    def naive() -> Any:
        sc = torch.baddbmm(buf, q, k.transpose(1, 2), beta=0.0, alpha=d**-0.5)  # S written
        p = torch.softmax(sc, dim=-1)  # S read, P written
        return torch.bmm(p, v)  # P read

    t = _median_time(torch, naive, reps)
    sc = torch.baddbmm(buf, q, k.transpose(1, 2), beta=0.0, alpha=d**-0.5)
    pr = torch.softmax(sc, dim=-1)
    phases = {"Q K^T (writes S)": _median_time(torch, lambda: torch.baddbmm(buf, q, k.transpose(1, 2), beta=0.0,
                                                                          alpha=d**-0.5), reps),
              "softmax (reads S, writes P)": _median_time(torch, lambda: torch.softmax(sc, dim=-1), reps),
              "P V (reads P)": _median_time(torch, lambda: torch.bmm(pr, v), reps)}
    del sc, pr
    o = naive()
    ref = torch.softmax((q[0].float() @ k[0].float().T) / d**0.5, -1) @ v[0].float()
    err = _rel_err(torch, o[0], ref)
    out.append({"op": "attention", "label": "naive (explicit matmuls)", "dtype": "bf16",
                "params": {"batch": b, "heads": h, "seq": s, "head_dim": d, "causal": False, "impl": "naive"},
                "median_s": t, "reps": reps, "impl": "baddbmm + softmax + bmm", "verified": err < 3e-2,
                "phases_s": phases,
                "check": f"rel. error {err:.1e} vs fp32 on one head"})
    del q, k, v, o, buf
    torch.cuda.empty_cache()
    return out


def llama_ops(torch: Any, reps: int) -> list[dict[str, Any]]:
    """A Llama-3.1-8B-shaped decode step and prefill, plain PyTorch ops, random weights."""
    import torch.nn.functional as F

    L, d, h, hk, dh, f, V = 32, 4096, 32, 8, 128, 14336, 128256
    bf = torch.bfloat16
    g = torch.Generator(device="cuda").manual_seed(0)

    def w(*shape: int) -> Any:
        return (torch.randn(*shape, device="cuda", dtype=bf, generator=g) * 0.02)

    layers = [{"wq": w(h * dh, d), "wk": w(hk * dh, d), "wv": w(hk * dh, d), "wo": w(d, h * dh), "wg": w(f, d),
               "wu": w(f, d), "wd": w(d, f), "n1": torch.ones(d, device="cuda", dtype=bf),
               "n2": torch.ones(d, device="cuda", dtype=bf)} for _ in range(L)]
    emb, head, nf = w(V, d), w(V, d), torch.ones(d, device="cuda", dtype=bf)

    def rms(x: Any, wt: Any) -> Any:
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(x.dtype) * wt

    def forward(tokens: Any, kcache: list[Any], vcache: list[Any], pos: int, causal: bool) -> Any:
        B, S = tokens.shape
        x = emb[tokens]
        for i, p in enumerate(layers):
            y = rms(x, p["n1"])
            q = (y @ p["wq"].T).view(B, S, h, dh).transpose(1, 2)
            k = (y @ p["wk"].T).view(B, S, hk, dh).transpose(1, 2)
            v = (y @ p["wv"].T).view(B, S, hk, dh).transpose(1, 2)
            kcache[i][:, :, pos:pos + S] = k
            vcache[i][:, :, pos:pos + S] = v
            kk, vv = kcache[i][:, :, :pos + S], vcache[i][:, :, :pos + S]
            a = F.scaled_dot_product_attention(q, kk, vv, is_causal=causal, enable_gqa=True)
            x = x + a.transpose(1, 2).reshape(B, S, h * dh) @ p["wo"].T
            y = rms(x, p["n2"])
            x = x + (F.silu(y @ p["wg"].T) * (y @ p["wu"].T)) @ p["wd"].T
        return rms(x[:, -1], nf) @ head.T

    out = []
    for batch, ctx in ((1, 1024), (32, 1024)):
        kc = [torch.randn(batch, hk, ctx + 1, dh, device="cuda", dtype=bf) for _ in range(L)]
        vc = [torch.randn(batch, hk, ctx + 1, dh, device="cuda", dtype=bf) for _ in range(L)]
        tok = torch.randint(0, V, (batch, 1), device="cuda")
        def step(tok: Any = tok, kc: list[Any] = kc, vc: list[Any] = vc, ctx: int = ctx) -> Any:
            return forward(tok, kc, vc, ctx, False)

        torch.cuda.synchronize()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                step()
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            logits = step()
        t = _median_time(torch, graph.replay, reps)
        ok = bool(torch.isfinite(logits).all()) and float(logits.float().abs().sum()) > 0
        out.append({"op": "decode", "label": f"llama-3.1-8b shape, batch {batch}", "dtype": "bf16",
                    "params": {"model": "llama-3.1-8b", "batch": batch, "context": ctx}, "median_s": t, "reps": reps,
                    "impl": "plain PyTorch ops, replayed as a CUDA graph", "verified": ok,
                    "check": "logits finite and non-zero"})
        del kc, vc, graph, logits
        torch.cuda.empty_cache()
    seq = 2048
    kc = [torch.empty(1, hk, seq, dh, device="cuda", dtype=bf) for _ in range(L)]
    vc = [torch.empty(1, hk, seq, dh, device="cuda", dtype=bf) for _ in range(L)]
    tok = torch.randint(0, V, (1, seq), device="cuda")
    t = _median_time(torch, lambda: forward(tok, kc, vc, 0, True), max(5, reps // 3))
    logits = forward(tok, kc, vc, 0, True)
    ok = bool(torch.isfinite(logits).all()) and float(logits.float().abs().sum()) > 0
    out.append({"op": "prefill", "label": "llama-3.1-8b shape, 2048 tokens", "dtype": "bf16",
                "params": {"model": "llama-3.1-8b", "batch": 1, "seq": seq}, "median_s": t, "reps": max(5, reps // 3),
                "impl": "plain PyTorch ops", "verified": ok, "check": "logits finite and non-zero"})
    del layers, emb, head, kc, vc
    torch.cuda.empty_cache()
    return out

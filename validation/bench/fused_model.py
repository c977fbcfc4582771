"""A serving-engine layout of a Llama-style decoder, small enough to read: the implementation
`impls/fused.yaml` describes, written for measurement (random weights, bf16).

Per layer: one Triton kernel for the residual add + RMSNorm, one QKV GEMM, one Triton kernel that
applies the rotary embedding to q and k and writes k and v into a preallocated cache, flash
attention (PyTorch's SDPA, flash backend) over the cache, the output GEMM, the residual add +
RMSNorm, one gate-up GEMM, one Triton SiLU-times-up kernel and the down GEMM. The final add +
norm, the LM head for the last position and a greedy argmax close the step. Decode is captured
in a CUDA graph (one per shape) by the caller.

Under tensor parallelism (``dist``: llm_bench.Dist of a torchrun world) each rank holds its share
of the query and KV heads, of the MLP and of the vocabulary; the residual stream is all-reduced
after the output and down projections, and the logits are all-gathered, as llm_bench.py's
reference model does.
"""

from __future__ import annotations

import math
from typing import Any

import torch
import torch.nn.functional as F
import triton
import triton.language as tl


@triton.jit
def _add_rmsnorm(x_ptr, res_ptr, w_ptr, out_ptr, res_out_ptr, n, eps, HAS_RES: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    x = tl.load(x_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    if HAS_RES:
        x += tl.load(res_ptr + row * n + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(res_out_ptr + row * n + cols, x.to(tl.bfloat16), mask=mask)
    var = tl.sum(x * x, axis=0) / n
    w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
    y = x * tl.rsqrt(var + eps) * w
    tl.store(out_ptr + row * n + cols, y.to(tl.bfloat16), mask=mask)


@triton.jit
def _rope_cache(qkv_ptr, cos_ptr, sin_ptr, pos_ptr, q_ptr, k_ptr, v_ptr,
                seq, heads, kv_heads, cache_len, qkv_stride,
                D: tl.constexpr, HALF: tl.constexpr):
    # one program per (token, head of q, k): rotate, write q as (b, heads, s, d) and k, v into the cache
    tok = tl.program_id(0)
    h = tl.program_id(1)
    b = tok // seq
    s = tok % seq
    pos = tl.load(pos_ptr + s)
    offs = tl.arange(0, HALF)
    c = tl.load(cos_ptr + pos * HALF + offs)
    sn = tl.load(sin_ptr + pos * HALF + offs)
    base = qkv_ptr + tok * qkv_stride + h * D
    x1 = tl.load(base + offs).to(tl.float32)
    x2 = tl.load(base + HALF + offs).to(tl.float32)
    y1 = (x1 * c - x2 * sn).to(tl.bfloat16)
    y2 = (x2 * c + x1 * sn).to(tl.bfloat16)
    if h < heads:
        dst = q_ptr + ((b * heads + h) * seq + s) * D
        tl.store(dst + offs, y1)
        tl.store(dst + HALF + offs, y2)
    else:
        kh = h - heads
        dst = k_ptr + ((b * kv_heads + kh) * cache_len + pos) * D
        tl.store(dst + offs, y1)
        tl.store(dst + HALF + offs, y2)
        vsrc = qkv_ptr + tok * qkv_stride + (heads + kv_heads + kh) * D
        vdst = v_ptr + ((b * kv_heads + kh) * cache_len + pos) * D
        tl.store(vdst + offs, tl.load(vsrc + offs))
        tl.store(vdst + HALF + offs, tl.load(vsrc + HALF + offs))


@triton.jit
def _silu_mul(gu_ptr, out_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    blk = tl.program_id(1)
    cols = blk * BLOCK + tl.arange(0, BLOCK)
    mask = cols < n
    g = tl.load(gu_ptr + row * 2 * n + cols, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(gu_ptr + row * 2 * n + n + cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(out_ptr + row * n + cols, (g / (1.0 + tl.exp(-g)) * u).to(tl.bfloat16), mask=mask)


class FusedModel:
    """Weights and a preallocated KV cache of batch x cache_len tokens."""

    def __init__(self, cfg: dict[str, Any], batch: int, cache_len: int, device: Any = "cuda", dist: Any = None) -> None:
        world = dist.world if dist is not None else 1
        self.dist = dist if world > 1 else None
        self.h = cfg["hidden_size"]
        self.layers = cfg["num_hidden_layers"]
        heads = cfg["num_attention_heads"]
        kvh = cfg.get("num_key_value_heads") or heads
        self.d = cfg.get("head_dim") or self.h // heads
        self.heads = heads // world
        self.kvh = max(kvh // world, 1)  # replicated when fewer KV heads than ranks
        self.ffn = cfg["intermediate_size"] // world
        self.vocab = -(-cfg["vocab_size"] // world)
        self.eps = 1e-5
        self.batch, self.cache_len = batch, cache_len
        dt = torch.bfloat16
        qkv = (self.heads + 2 * self.kvh) * self.d

        def w(*shape: int) -> torch.Tensor:
            return torch.randn(*shape, device=device, dtype=dt) / math.sqrt(shape[-1])

        self.embed = w(cfg["vocab_size"], self.h)  # every rank embeds its tokens whole
        self.lm_head = w(self.vocab, self.h) if self.dist else (self.embed if cfg.get("tie_word_embeddings") else w(self.vocab, self.h))
        self.lw = [
            dict(ln1=torch.ones(self.h, device=device, dtype=dt), qkv=w(qkv, self.h), o=w(self.h, self.heads * self.d),
                 ln2=torch.ones(self.h, device=device, dtype=dt), gu=w(2 * self.ffn, self.h), down=w(self.h, self.ffn))
            for _ in range(self.layers)
        ]
        self.norm = torch.ones(self.h, device=device, dtype=dt)
        self.k = [torch.zeros(batch, self.kvh, cache_len, self.d, device=device, dtype=dt) for _ in range(self.layers)]
        self.v = [torch.zeros_like(t) for t in self.k]
        theta = float(cfg.get("rope_theta", 10000.0))
        inv = 1.0 / theta ** (torch.arange(0, self.d // 2, device=device, dtype=torch.float32) * 2 / self.d)
        ang = torch.arange(cache_len, device=device, dtype=torch.float32)[:, None] * inv[None]
        self.cos, self.sin = ang.cos().contiguous(), ang.sin().contiguous()

    def _norm(self, x: torch.Tensor, res: torch.Tensor | None, w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        rows = x.shape[0]
        out, res_out = torch.empty_like(x), torch.empty_like(x)
        _add_rmsnorm[(rows,)](x, res if res is not None else x, w, out, res_out, self.h, self.eps,
                              HAS_RES=res is not None, BLOCK=triton.next_power_of_2(self.h), num_warps=8)
        return out, res_out

    def forward(self, ids: torch.Tensor, pos: torch.Tensor, kv_len: int) -> torch.Tensor:
        """ids (batch, seq) at positions pos (seq,), attending to the cache's first kv_len tokens."""
        from torch.nn.attention import SDPBackend, sdpa_kernel

        b, s = ids.shape
        x = F.embedding(ids.reshape(-1), self.embed)
        res = None
        q = torch.empty(b, self.heads, s, self.d, device=ids.device, dtype=x.dtype)
        for i, L in enumerate(self.lw):
            xn, res = self._norm(x, res, L["ln1"])
            qkv = F.linear(xn, L["qkv"])
            _rope_cache[(b * s, self.heads + self.kvh)](
                qkv, self.cos, self.sin, pos, q, self.k[i], self.v[i], s, self.heads, self.kvh, self.cache_len,
                qkv.stride(0), D=self.d, HALF=self.d // 2, num_warps=1)
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                o = F.scaled_dot_product_attention(q, self.k[i][:, :, :kv_len], self.v[i][:, :, :kv_len],
                                                   is_causal=s > 1, enable_gqa=self.kvh != self.heads)
            x = F.linear(o.transpose(1, 2).reshape(b * s, self.heads * self.d), L["o"])
            if self.dist:
                self.dist.all_reduce_(x)
            xn, res = self._norm(x, res, L["ln2"])
            gu = F.linear(xn, L["gu"])
            act = torch.empty(b * s, self.ffn, device=x.device, dtype=x.dtype)
            _silu_mul[(b * s, triton.cdiv(self.ffn, 1024))](gu, act, self.ffn, BLOCK=1024, num_warps=4)
            x = F.linear(act, L["down"])
            if self.dist:
                self.dist.all_reduce_(x)
        xn, _ = self._norm(x, res, self.norm)
        last = xn.view(b, s, self.h)[:, -1]
        logits = F.linear(last, self.lm_head)
        if self.dist:
            logits = self.dist.all_gather_logits(logits)
        return logits.argmax(-1)

#!/usr/bin/env python3
"""Time decode steps and prefills of Llama-shaped decoders in plain PyTorch.

Stand-alone: needs only torch and the standard library (no transformers, no roofcalc).
The model is the Hugging Face Llama architecture written out by hand, with random bf16
weights allocated directly on the GPU:

  embedding -> per layer: RMSNorm -> Wq, Wk, Wv (3 GEMMs; biases for Qwen2.5) -> RoPE
  (rotate_half) -> K, V written into a preallocated KV cache -> F.scaled_dot_product_attention
  -> Wo -> residual add -> RMSNorm -> gate, up (2 GEMMs) -> SiLU(gate) * up -> down ->
  residual add; final RMSNorm -> LM head.

decode:  batch B, C tokens already in the cache (random values); one step = one new token
         per sequence (the cache holds exactly C + 1 positions, so shapes are static), logits
         for the new token. Default: one whole step captured in a CUDA graph, replays timed.
prefill: batch B, S prompt tokens, causal attention over the prompt, K/V written to a cache,
         and LM-head logits for the LAST token of each sequence only (what a serving engine
         samples from; the time is the time to first token). No CUDA graphs.
engines: eager = the plain functions; compiled = torch.compile(dynamic=False) of the
         per-layer function (one compiled function reused by every layer: weights are
         arguments, not module attributes) and of the final norm + head.
tensor parallel (torchrun --nproc-per-node N): Megatron split. Wq/Wk/Wv/gate/up by columns
         (heads, KV heads and ffn per rank), Wo/down by rows with an all-reduce (SUM) after
         each (2 per layer), LM head split by vocabulary with an all-gather of the logits.
         The embedding is replicated. With compiled + TP the compiled regions are the two
         halves of the layer between the all-reduces, which run eagerly (so no collective is
         traced by dynamo); the all-reduces are captured in the CUDA graph with the rest.

    python validation/bench/llm_bench.py --out llm.json                     # 1 GPU plan
    torchrun --nproc-per-node 2 validation/bench/llm_bench.py --out tp2.json   # TP=2 plan
    python validation/bench/llm_bench.py --models llama-3.1-8b --phases decode --engines eager \\
        --batches 1,64 --contexts 8192 --graphs on,off
    python validation/bench/llm_bench.py --device cpu --smoke --out /tmp/llm.json
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import re
import shlex
import statistics
import sys
import time
import traceback
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import torch
import torch.distributed as dist
import torch.nn.functional as F
from benchlib import device_info, driver_version, percentile, probe_ops, sdpa_default_backend, selected_env, short_err, utc_now, write_json_atomic

SCHEMA = 1
DTYPE = torch.bfloat16
RMS_EPS = 1e-5
TARGET_TIMED_S = 1.0          # timed work per case (replays or steps)
MEM_MARGIN_BYTES = 2 << 30    # kept free on the GPU beyond the estimate
PG_TIMEOUT_S = 300            # a rank stuck in a collective aborts after this

# Dimensions copied from roofcalc's models/llm.yaml presets (names as there), plus what
# the architecture needs beyond them: q/k/v biases (Qwen2.5) and the RoPE base.
MODELS: dict[str, dict[str, Any]] = {
    "llama-3.1-8b": {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "head_dim": 128,
                     "ffn": 14336, "vocab": 128256, "qkv_bias": False, "rope_theta": 500000.0},
    "llama-3.1-70b": {"layers": 80, "hidden": 8192, "heads": 64, "kv_heads": 8, "head_dim": 128,
                      "ffn": 28672, "vocab": 128256, "qkv_bias": False, "rope_theta": 500000.0},
    "mistral-7b": {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 8, "head_dim": 128,
                   "ffn": 14336, "vocab": 32000, "qkv_bias": False, "rope_theta": 10000.0},
    "qwen2.5-7b": {"layers": 28, "hidden": 3584, "heads": 28, "kv_heads": 4, "head_dim": 128,
                   "ffn": 18944, "vocab": 152064, "qkv_bias": True, "rope_theta": 1000000.0},
    "llama-2-7b": {"layers": 32, "hidden": 4096, "heads": 32, "kv_heads": 32, "head_dim": 128,
                   "ffn": 11008, "vocab": 32000, "qkv_bias": False, "rope_theta": 10000.0},
    # Llama 3.2 ties its LM head to the embedding; the head here is its own tensor of the same
    # shape (the same bytes read per step; 0.5-0.8 GB more memory). Llama 3.2's RoPE scaling
    # changes the angles, not the kernels, and is left out.
    "llama-3.2-1b": {"layers": 16, "hidden": 2048, "heads": 32, "kv_heads": 8, "head_dim": 64,
                     "ffn": 8192, "vocab": 128256, "qkv_bias": False, "rope_theta": 500000.0},
    "llama-3.2-3b": {"layers": 28, "hidden": 3072, "heads": 24, "kv_heads": 8, "head_dim": 128,
                     "ffn": 8192, "vocab": 128256, "qkv_bias": False, "rope_theta": 500000.0},
    "qwen2.5-14b": {"layers": 48, "hidden": 5120, "heads": 40, "kv_heads": 8, "head_dim": 128,
                    "ffn": 13824, "vocab": 152064, "qkv_bias": True, "rope_theta": 1000000.0},
}


def smoke_dims(cfg: dict[str, Any]) -> dict[str, Any]:
    """Tiny dimensions for --smoke that keep each model's structure (GQA or not, biases)."""
    kv = 4 if cfg["kv_heads"] == cfg["heads"] else 2
    return dict(cfg, layers=2, hidden=64, heads=4, kv_heads=kv, head_dim=16, ffn=128, vocab=256)


# --------------------------------------------------------------------------- distributed

class Dist:
    """Rank, world and the few collectives the benchmark itself needs (not the model's)."""

    def __init__(self, device: str):
        self.world = int(os.environ.get("WORLD_SIZE", "1"))
        self.rank = int(os.environ.get("RANK", "0"))
        self.local = int(os.environ.get("LOCAL_RANK", str(self.rank)))
        if device == "cuda":
            if not torch.cuda.is_available():
                sys.exit("--device cuda but torch.cuda.is_available() is False (use --device cpu --smoke)")
            torch.cuda.set_device(self.local)     # before any NCCL call or graph capture
            self.dev = torch.device("cuda", self.local)
        else:
            self.dev = torch.device("cpu")
        self.backend = None
        if self.world > 1:
            self.backend = "nccl" if self.dev.type == "cuda" else "gloo"
            kw: dict[str, Any] = {"timeout": timedelta(seconds=PG_TIMEOUT_S)}
            if self.dev.type == "cuda":
                kw["device_id"] = self.dev           # binds the communicator to this GPU
            dist.init_process_group(self.backend, **kw)
            # Warm the communicator up before anything is captured in a graph.
            t = torch.ones(1, device=self.dev)
            dist.all_reduce(t)
            self.sync()
            if int(t.item()) != self.world:
                raise RuntimeError(f"warm-up all_reduce gave {t.item()}, expected {self.world}")

    @property
    def tp(self) -> bool:
        return self.world > 1

    def sync(self) -> None:
        if self.dev.type == "cuda":
            torch.cuda.synchronize(self.dev)

    def barrier(self) -> None:
        if not self.tp:
            return
        if self.backend == "nccl":
            dist.barrier(device_ids=[self.local])
        else:
            dist.barrier()
        self.sync()

    def all_true(self, ok: bool) -> bool:
        """Every rank agrees on ok (MIN over ranks)."""
        if not self.tp:
            return ok
        t = torch.tensor([1 if ok else 0], dtype=torch.int32, device=self.dev)
        dist.all_reduce(t, op=dist.ReduceOp.MIN)
        return bool(t.item())

    def from_rank0(self, flag: bool) -> bool:
        if not self.tp:
            return flag
        t = torch.tensor([1 if flag else 0], dtype=torch.int32, device=self.dev)
        dist.broadcast(t, src=0)
        return bool(t.item())

    def gather_obj(self, obj: Any) -> list[Any]:
        if not self.tp:
            return [obj]
        out: list[Any] = [None] * self.world
        dist.all_gather_object(out, obj)
        return out

    # model collectives (called inside the timed step, captured in CUDA graphs)
    def all_reduce_(self, t: torch.Tensor) -> None:
        dist.all_reduce(t)  # SUM, in place

    def all_gather_logits(self, local: torch.Tensor) -> torch.Tensor:
        """(B, V/world) per rank -> (B, world * V/world), rank-major along the vocabulary."""
        local = local.contiguous()
        b, vr = local.shape
        if self.backend == "nccl":
            out = torch.empty((self.world * b, vr), dtype=local.dtype, device=local.device)
            dist.all_gather_into_tensor(out, local)
            return out.view(self.world, b, vr).permute(1, 0, 2).reshape(b, self.world * vr)
        parts = [torch.empty_like(local) for _ in range(self.world)]
        dist.all_gather(parts, local)      # gloo (CPU smoke test)
        return torch.cat(parts, dim=-1)


# --------------------------------------------------------------------------- model math
# Functions of tensors only (weights are arguments), so that one torch.compile of a layer
# function serves every layer of the same shapes.

def rmsnorm(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    # Hugging Face LlamaRMSNorm: in float32, cast back, then times the weight.
    dt = x.dtype
    xf = x.float()
    var = xf.pow(2).mean(-1, keepdim=True)
    xf = xf * torch.rsqrt(var + RMS_EPS)
    return w * xf.to(dt)


def rotate_half(x: torch.Tensor) -> torch.Tensor:
    h = x.shape[-1] // 2
    return torch.cat((-x[..., h:], x[..., :h]), dim=-1)


def apply_rope(q, k, cos, sin):
    return q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin


def qkv_rope(x, attn_norm, wq, bq, wk, bk, wv, bv, cos, sin):
    """RMSNorm, three projections, heads split, RoPE. Returns q, k, v as (B, heads, T, hd)."""
    b, t, _ = x.shape
    hd = cos.shape[-1]
    h = rmsnorm(x, attn_norm)
    q = F.linear(h, wq, bq).view(b, t, -1, hd).transpose(1, 2)
    k = F.linear(h, wk, bk).view(b, t, -1, hd).transpose(1, 2)
    v = F.linear(h, wv, bv).view(b, t, -1, hd).transpose(1, 2)
    q, k = apply_rope(q, k, cos, sin)
    return q, k, v


def decode_attn(x, attn_norm, wq, bq, wk, bk, wv, bv, wo, kc, vc, cos, sin, pos):
    """Decode: x (B, 1, hidden); K/V of the new token written at position pos (a 1-element
    index tensor) of the cache (B, kv_heads, C + 1, hd); attention over the whole cache.
    Returns the Wo output (before the residual add and, with TP, before the all-reduce)."""
    b, t, _ = x.shape
    q, k, v = qkv_rope(x, attn_norm, wq, bq, wk, bk, wv, bv, cos, sin)
    kc[:, :, pos] = k                 # index_put_ at the current position (static shape)
    vc[:, :, pos] = v
    o = F.scaled_dot_product_attention(q, kc, vc, enable_gqa=q.shape[1] != kc.shape[1])
    return F.linear(o.transpose(1, 2).reshape(b, t, -1), wo)


def prefill_attn(x, attn_norm, wq, bq, wk, bk, wv, bv, wo, kc, vc, cos, sin):
    """Prefill: x (B, S, hidden); K/V written to the cache (B, kv_heads, S, hd); causal
    attention over the prompt."""
    b, t, _ = x.shape
    q, k, v = qkv_rope(x, attn_norm, wq, bq, wk, bk, wv, bv, cos, sin)
    kc.copy_(k)
    vc.copy_(v)
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=q.shape[1] != k.shape[1])
    return F.linear(o.transpose(1, 2).reshape(b, t, -1), wo)


def mlp(x, o, mlp_norm, w_gate, w_up, w_down):
    """Residual add of the attention output, RMSNorm, SwiGLU MLP. Returns (x + o, mlp out)
    (the second before its residual add and, with TP, before the all-reduce)."""
    x = x + o
    h = rmsnorm(x, mlp_norm)
    return x, F.linear(F.silu(F.linear(h, w_gate)) * F.linear(h, w_up), w_down)


def decode_layer(x, attn_norm, wq, bq, wk, bk, wv, bv, wo, mlp_norm, w_gate, w_up, w_down,
                 kc, vc, cos, sin, pos):
    o = decode_attn(x, attn_norm, wq, bq, wk, bk, wv, bv, wo, kc, vc, cos, sin, pos)
    x, m = mlp(x, o, mlp_norm, w_gate, w_up, w_down)
    return x + m


def prefill_layer(x, attn_norm, wq, bq, wk, bk, wv, bv, wo, mlp_norm, w_gate, w_up, w_down,
                  kc, vc, cos, sin):
    o = prefill_attn(x, attn_norm, wq, bq, wk, bk, wv, bv, wo, kc, vc, cos, sin)
    x, m = mlp(x, o, mlp_norm, w_gate, w_up, w_down)
    return x + m


def lm_head(x_last, norm_w, head_w):
    """Final RMSNorm and LM head on the last position: (B, hidden) -> (B, vocab / world)."""
    return F.linear(rmsnorm(x_last, norm_w), head_w)


EAGER_FNS = {"decode_layer": decode_layer, "prefill_layer": prefill_layer,
             "decode_attn": decode_attn, "prefill_attn": prefill_attn, "mlp": mlp,
             "lm_head": lm_head}
_COMPILED: dict[str, Callable[..., Any]] = {}


def configure_compile() -> None:
    import torch._dynamo.config as dcfg
    # One compiled entry per (function, shapes): raise the per-function limits so a plan's
    # ~10 shapes never fall back to eager silently.
    for name in ("cache_size_limit", "recompile_limit"):
        if hasattr(dcfg, name):
            setattr(dcfg, name, 256)
    for name in ("accumulated_cache_size_limit", "accumulated_recompile_limit"):
        if hasattr(dcfg, name):
            setattr(dcfg, name, 4096)
    try:
        import torch._inductor.config as icfg
        icfg.fx_graph_cache = True
    except Exception:
        pass


def get_fn(name: str, engine: str, backend: str) -> Callable[..., Any]:
    if engine == "eager":
        return EAGER_FNS[name]
    key = f"{name}/{backend}"
    if key not in _COMPILED:      # one torch.compile object per function, reused by all cases
        _COMPILED[key] = torch.compile(EAGER_FNS[name], dynamic=False, fullgraph=False, backend=backend)
    return _COMPILED[key]


# --------------------------------------------------------------------------- the model

class Model:
    """Random bf16 weights of one tensor-parallel rank, allocated on its device."""

    def __init__(self, name: str, cfg: dict[str, Any], d: Dist, seed: int = 0):
        self.name, self.cfg, self.d = name, cfg, d
        w = d.world
        for key in ("heads", "kv_heads", "ffn"):
            if cfg[key] % w:
                raise ValueError(f"{name}: {key}={cfg[key]} is not divisible by the {w} ranks")
        hd = cfg["head_dim"]
        self.nh, self.nkv, self.ffn = cfg["heads"] // w, cfg["kv_heads"] // w, cfg["ffn"] // w
        self.vocab_r = -(-cfg["vocab"] // w)        # LM head rows per rank (padded if needed)
        dev, hidden = d.dev, cfg["hidden"]
        gen = torch.Generator(device=dev)
        gen.manual_seed(seed * 1000 + d.rank)

        def rnd(*shape: int) -> torch.Tensor:
            return torch.empty(shape, dtype=DTYPE, device=dev).normal_(0.0, 0.02, generator=gen)

        def ones(n: int) -> torch.Tensor:
            return torch.ones(n, dtype=DTYPE, device=dev)

        bias = cfg["qkv_bias"]
        self.emb = rnd(cfg["vocab"], hidden)          # replicated on every rank
        self.layers: list[tuple[Any, ...]] = []
        for _ in range(cfg["layers"]):
            attn = (ones(hidden),
                    rnd(self.nh * hd, hidden), rnd(self.nh * hd) if bias else None,
                    rnd(self.nkv * hd, hidden), rnd(self.nkv * hd) if bias else None,
                    rnd(self.nkv * hd, hidden), rnd(self.nkv * hd) if bias else None,
                    rnd(hidden, self.nh * hd))
            mlp_w = (ones(hidden), rnd(self.ffn, hidden), rnd(self.ffn, hidden), rnd(hidden, self.ffn))
            self.layers.append((attn, mlp_w))
        self.final_norm = ones(hidden)
        self.head = rnd(self.vocab_r, hidden)

    @staticmethod
    def weight_bytes(cfg: dict[str, Any], world: int) -> int:
        h, hd = cfg["hidden"], cfg["head_dim"]
        nh, nkv, ffn = cfg["heads"] // world, cfg["kv_heads"] // world, cfg["ffn"] // world
        per_layer = 2 * h + h * (nh + 2 * nkv) * hd + nh * hd * h + 3 * h * ffn
        if cfg["qkv_bias"]:
            per_layer += (nh + 2 * nkv) * hd
        n = cfg["layers"] * per_layer + cfg["vocab"] * h + h + (-(-cfg["vocab"] // world)) * h
        return 2 * n

    def rope(self, positions: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        hd = self.cfg["head_dim"]
        inv = 1.0 / (self.cfg["rope_theta"] ** (torch.arange(0, hd, 2, device=self.d.dev,
                                                             dtype=torch.float32) / hd))
        f = positions.float()[:, None] * inv[None, :]
        emb = torch.cat((f, f), dim=-1)
        # (1, 1, T, hd): broadcast over batch and heads, as HF's unsqueeze(1)
        return emb.cos().to(DTYPE)[None, None], emb.sin().to(DTYPE)[None, None]


def case_bytes(cfg: dict[str, Any], world: int, phase: str, b: int, n: int) -> int:
    """KV cache + a generous activation estimate for one case (weights not included)."""
    hd = cfg["head_dim"]
    nh, nkv, ffn = cfg["heads"] // world, cfg["kv_heads"] // world, cfg["ffn"] // world
    t = 1 if phase == "decode" else n
    cache_len = n + 1 if phase == "decode" else n
    cache = 2 * cfg["layers"] * b * nkv * cache_len * hd * 2
    act = b * t * (8 * cfg["hidden"] + 3 * ffn + 3 * (nh + 2 * nkv) * hd) * 4
    logits = 4 * b * cfg["vocab"] * 2
    return cache + act + logits


# --------------------------------------------------------------------------- one step

def make_step(model: Model, phase: str, engine: str, b: int, n: int, backend: str):
    """Build the buffers of one case and return (step, info). step() runs one decode step
    (n = context) or one prefill (n = prompt length) and returns the full logits."""
    d, cfg = model.d, model.cfg
    dev, hd = d.dev, cfg["head_dim"]
    gen = torch.Generator(device=dev)
    gen.manual_seed(1234)
    t = 1 if phase == "decode" else n
    tokens = torch.randint(0, cfg["vocab"], (b, t), device=dev, generator=gen)
    if phase == "decode":
        pos = torch.tensor([n], dtype=torch.long, device=dev)   # new token's position
        cos, sin = model.rope(pos)
        cache_len = n + 1
    else:
        pos = None
        cos, sin = model.rope(torch.arange(n, device=dev))
        cache_len = n
    caches = []
    for _ in model.layers:
        kc = torch.empty((b, model.nkv, cache_len, hd), dtype=DTYPE, device=dev)
        vc = torch.empty_like(kc)
        if phase == "decode":      # C tokens already cached: random keys and values
            kc.normal_(generator=gen)
            vc.normal_(generator=gen)
        caches.append((kc, vc))

    head_fn = get_fn("lm_head", engine, backend)
    vocab = cfg["vocab"]
    if d.tp:
        attn_fn = get_fn(f"{phase}_attn", engine, backend)
        mlp_fn = get_fn("mlp", engine, backend)
    else:
        layer_fn = get_fn(f"{phase}_layer", engine, backend)
    extra = (pos,) if phase == "decode" else ()

    def step() -> torch.Tensor:
        x = F.embedding(tokens, model.emb)
        for (attn_w, mlp_w), (kc, vc) in zip(model.layers, caches, strict=True):
            if d.tp:
                o = attn_fn(x, *attn_w, kc, vc, cos, sin, *extra)
                d.all_reduce_(o)                              # after Wo
                x, m = mlp_fn(x, o, *mlp_w)
                d.all_reduce_(m)                              # after down
                x = x + m
            else:
                x = layer_fn(x, *attn_w, *mlp_w, kc, vc, cos, sin, *extra)
        logits = head_fn(x[:, -1, :], model.final_norm, model.head)   # last position only
        if d.tp:
            logits = d.all_gather_logits(logits)
        return logits[:, :vocab]

    # Which SDPA kernel the dispatcher picks for this case's shapes (under --sdpa).
    q = torch.empty((b, model.nh, t, hd), dtype=DTYPE, device=dev)
    if phase == "decode":
        be = sdpa_default_backend(q, caches[0][0], caches[0][1], False, model.nh != model.nkv)
    else:
        kv = torch.empty((b, model.nkv, t, hd), dtype=DTYPE, device=dev)
        be = sdpa_default_backend(q, kv, kv, True, model.nh != model.nkv)
        del kv
    del q
    info = {"sdpa_backend": be, "kv_cache_bytes_per_rank": sum(2 * c[0].numel() * 2 for c in caches)}
    state = {"caches": caches, "tokens": tokens}
    return step, info, state


# --------------------------------------------------------------------------- timing

def host_op_s(reps: int = 7, n: int = 300) -> float | None:
    """The host's cost per op now: the probe's hot loop of x.add_(1) (torch_op_floor), the
    median of `reps` samples of `n` ops (short samples: a stall of the host spoils one, not the
    median); None if its tensor did not hold the sum."""
    rec = probe_ops().torch_op_floor(torch, reps, n)
    return statistics.median(rec["samples_s"]) if rec["verified"] else None


def time_events(fn: Callable[[], Any], groups: int, per: int, d: Dist) -> list[float]:
    """Seconds per call: `groups` groups of `per` back-to-back calls, one event pair each."""
    if d.dev.type != "cuda":
        out = []
        for _ in range(groups):
            t0 = time.perf_counter()
            for _ in range(per):
                fn()
            out.append((time.perf_counter() - t0) / per)
        return out
    ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
          for _ in range(groups)]
    d.sync()
    for a, b in ev:
        a.record()
        for _ in range(per):
            fn()
        b.record()
    d.sync()
    return [a.elapsed_time(b) / 1e3 / per for a, b in ev]


def wall(fn: Callable[[], Any], d: Dist) -> tuple[float, Any]:
    d.sync()
    t0 = time.perf_counter()
    out = fn()
    d.sync()
    return time.perf_counter() - t0, out


class CaseFailed(RuntimeError):
    pass


def stage(d: Dist, what: str, fn: Callable[[], Any]) -> Any:
    """Run one stage of a case on every rank; if it failed on any rank, all ranks stop the
    case here together (so no rank waits alone in a collective of the next stage)."""
    err = None
    out = None
    try:
        out = fn()
    except Exception as e:
        err = f"{what}: {short_err(e)}"
        if os.environ.get("LLM_BENCH_DEBUG"):
            traceback.print_exc()
    if not d.all_true(err is None):
        errs = d.gather_obj(err)
        msgs = [f"rank {r}: {m}" for r, m in enumerate(errs) if m]
        raise CaseFailed("; ".join(msgs) if d.tp else (err or "failed"))
    return out


def run_case(model: Model, case: dict[str, Any], d: Dist, args: argparse.Namespace) -> dict[str, Any]:
    phase, engine, graphs, b = case["phase"], case["engine"], case["graphs"], case["batch"]
    n = case["context"] if phase == "decode" else case["seq"]
    cuda = d.dev.type == "cuda"
    rec: dict[str, Any] = {"notes": []}
    backend = args.compile_backend

    step, info, _state = stage(d, "setup", lambda: make_step(model, phase, engine, b, n, backend))
    rec.update(info)

    # Warm-up; the first call compiles (compiled engine). Before a capture, warm up on a
    # side stream, as the CUDA-graph documentation asks.
    side = torch.cuda.Stream(device=d.dev) if (cuda and graphs) else None

    def warm():
        if side is not None:
            side.wait_stream(torch.cuda.current_stream(d.dev))
            with torch.cuda.stream(side):
                first, _ = wall(step, d)
                for _ in range(2):
                    step()
            torch.cuda.current_stream(d.dev).wait_stream(side)
        else:
            first, _ = wall(step, d)
            for _ in range(2):
                step()
        d.sync()
        return first

    first_call_s = stage(d, "warm-up" + (" (compile)" if engine == "compiled" else ""), warm)
    rec["first_call_s"] = first_call_s

    runner = step
    out_holder: dict[str, Any] = {}
    graph = None
    if graphs and cuda:
        def capture():
            g = torch.cuda.CUDAGraph()
            # thread_local: the NCCL watchdog thread may query events while we capture
            kw = {"capture_error_mode": "thread_local"} if d.tp else {}
            with torch.cuda.graph(g, **kw):
                out_holder["out"] = step()
            return g

        try:
            graph = stage(d, "graph capture", capture)
            runner = graph.replay
        except CaseFailed as e:
            # Fall back to timing the same step without a graph, and say so.
            rec["notes"].append(f"CUDA graph capture failed, timed without graphs: {e}")
            rec["cuda_graphs"] = False
            graph = None
            torch.cuda.empty_cache()
    elif graphs:
        rec["notes"].append("cpu: no CUDA graphs, the step is called directly")

    def estimate():
        for _ in range(2):
            runner()
        t, _ = wall(runner, d)
        return t

    t_est = stage(d, "post-capture warm-up", estimate)
    # Every rank must use the same repetition counts: take rank 0's estimate.
    t_est = d.gather_obj(t_est)[0]
    if graph is not None:
        total = max(10, min(200, int(TARGET_TIMED_S / max(t_est, 1e-6))))
        groups = min(10, total)
        per = max(1, total // groups)
    else:
        lo, hi = (3, 20) if phase == "prefill" else (5, 50)
        groups, per = max(lo, min(hi, int(TARGET_TIMED_S / max(t_est, 1e-6)))), 1

    def timed():
        d.barrier()
        return time_events(runner, groups, per, d)

    # A step without graphs is as fast as its host issues it, and the host's speed moves from
    # one second to the next (validation/expected/h100/host/jitter1/): the probe's hot loop just
    # before and just after the timing gives the host's speed while the steps ran.
    paced = graph is None and cuda
    host_before = stage(d, "host op", host_op_s) if paced else None
    times = stage(d, "timing", timed)
    if paced:
        host_after = stage(d, "host op", host_op_s)
        rec["host_op_s"] = {"before": host_before, "after": host_after}
        if d.tp:
            rec["host_op_s_per_rank"] = d.gather_obj(rec["host_op_s"])

    def check():
        logits = out_holder["out"] if graph is not None else step()
        d.sync()
        lf = logits.float()
        return {"finite": bool(torch.isfinite(lf).all().item()), "logits_shape": list(lf.shape),
                "logits_absmax": float(lf.abs().max().item()), "logits_std": float(lf.std().item())}

    rec["check"] = stage(d, "check", check)
    med = percentile(times, 50)
    rec.update({"median_s": med, "p10_s": percentile(times, 10), "p90_s": percentile(times, 90),
                "min_s": min(times), "reps": len(times), "calls_per_rep": per,
                "times_s": [round(x, 9) for x in times]})
    if d.tp:
        rec["median_s_per_rank"] = d.gather_obj(med)
    if engine == "compiled":
        rec["compile_s"] = max(0.0, first_call_s - med)
    else:
        rec["compile_s"] = None
    tokens = b if phase == "decode" else b * n
    rec["tokens_per_s"] = tokens / med if med > 0 else None
    return rec


# --------------------------------------------------------------------------- plans

def C(model, phase, engine, graphs, batch, n):
    key = "context" if phase == "decode" else "seq"
    return {"model": model, "phase": phase, "engine": engine, "graphs": graphs if phase == "decode" else False,
            "batch": batch, key: n}


def plan_1gpu() -> list[dict[str, Any]]:
    m = "llama-3.1-8b"
    p = []
    for eng in ("eager", "compiled"):
        p += [C(m, "decode", eng, True, b, c) for c in (512, 4096) for b in (1, 8, 32)]
        p += [C(m, "prefill", eng, False, 1, 512), C(m, "prefill", eng, False, 1, 2048),
              C(m, "prefill", eng, False, 4, 1024)]
    p.append(C(m, "decode", "eager", False, 1, 1024))           # no graphs: the launch floor
    # the other presets: cheap eager cases first, the one with a compile last
    p += [C("mistral-7b", "decode", "eager", True, 16, 2048), C("mistral-7b", "prefill", "eager", False, 1, 1024)]
    p.append(C("llama-2-7b", "decode", "eager", True, 1, 2048))
    p += [C("qwen2.5-7b", "decode", e, True, 4, 1024) for e in ("eager", "compiled")]
    return p


def plan_tp() -> list[dict[str, Any]]:
    p = []
    for m, seqs in (("llama-3.1-8b", (512, 2048)), ("llama-3.1-70b", (1024,))):
        for eng in ("eager", "compiled"):
            p += [C(m, "decode", eng, True, b, 1024) for b in (1, 16)]
            p += [C(m, "prefill", eng, False, 1, s) for s in seqs]
    return p


def plan_smoke(tp: bool) -> list[dict[str, Any]]:
    m = "llama-3.1-8b"
    p = [C(m, "decode", e, True, 2, 32) for e in ("eager", "compiled")]
    p += [C(m, "prefill", e, False, 2, 16) for e in ("eager", "compiled")]
    p.append(C(m, "decode", "eager", False, 1, 32))
    if tp:
        p += [C("llama-3.1-70b", "decode", "eager", True, 2, 16), C("llama-3.1-70b", "prefill", "eager", False, 1, 16)]
    p += [C("qwen2.5-7b", "decode", e, True, 2, 16) for e in ("eager", "compiled")]
    p += [C("llama-2-7b", "decode", "eager", True, 1, 16), C("mistral-7b", "prefill", "eager", False, 1, 16)]
    return p


def plan_from_args(a: argparse.Namespace) -> list[dict[str, Any]]:
    ints = lambda s: [int(x) for x in s.split(",") if x]   # noqa: E731
    strs = lambda s: [x.strip() for x in s.split(",") if x.strip()]   # noqa: E731
    graphs = [{"on": True, "off": False}[g] for g in strs(a.graphs or "on")]
    p = []
    for m in strs(a.models or "llama-3.1-8b"):
        for ph in strs(a.phases or "decode,prefill"):
            for e in strs(a.engines or "eager,compiled"):
                if ph == "decode":
                    p += [C(m, ph, e, g, b, c) for g in graphs for c in ints(a.contexts or "1024")
                          for b in ints(a.batches or "1")]
                else:
                    p += [C(m, ph, e, False, b, s) for s in ints(a.seqs or "1024")
                          for b in ints(a.batches or "1")]
    return p


def label(c: dict[str, Any]) -> str:
    eng = c["engine"] + ("+graphs" if c["graphs"] else "")
    n = f"c{c['context']}" if c["phase"] == "decode" else f"s{c['seq']}"
    return f"{c['model']}-{c['phase']}-{eng}-b{c['batch']}-{n}"


# --------------------------------------------------------------------------- main

def command_line(world: int) -> str:
    """argv joined; under torchrun, prefixed with the launcher (reconstructed: torchrun does
    not pass its own arguments on)."""
    cmd = shlex.join(sys.argv)
    if "TORCHELASTIC_RUN_ID" in os.environ or "LOCAL_WORLD_SIZE" in os.environ:
        cmd = f"torchrun --nproc-per-node {os.environ.get('LOCAL_WORLD_SIZE', world)} {cmd}"
    return cmd


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default="llm.json")
    ap.add_argument("--budget-s", type=float, default=300.0,
                    help="stop starting new cases after this many seconds (default 300)")
    ap.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--smoke", action="store_true", help="tiny dimensions, 2 layers (CPU test)")
    ap.add_argument("--models", help=f"comma list of {', '.join(MODELS)}")
    ap.add_argument("--phases", help="decode,prefill")
    ap.add_argument("--engines", help="eager,compiled")
    ap.add_argument("--graphs", help="decode with CUDA graphs: on, off or on,off (default on)")
    ap.add_argument("--batches", help="comma list of batch sizes (default 1)")
    ap.add_argument("--contexts", help="decode: tokens already cached (default 1024)")
    ap.add_argument("--seqs", help="prefill: prompt lengths (default 1024)")
    ap.add_argument("--layers", type=int, help="override every model's layer count (recorded)")
    ap.add_argument("--only", help="regular expression on the case labels")
    ap.add_argument("--compile-backend", default=None,
                    help="torch.compile backend (default inductor; --smoke on the CPU: aot_eager)")
    ap.add_argument("--sdpa", choices=("flash", "default", "cudnn", "efficient", "math"), default="flash",
                    help="SDPA backend: forced for every case (default flash, the kernel roofcalc's "
                         "attention model assumes), or 'default' for PyTorch's own choice")
    ap.add_argument("--list", action="store_true", help="print the plan and exit")
    args = ap.parse_args()
    if args.compile_backend is None:
        args.compile_backend = "aot_eager" if (args.smoke and args.device == "cpu") else "inductor"

    custom = any(getattr(args, k) for k in ("models", "phases", "engines", "graphs", "batches",
                                             "contexts", "seqs"))
    world_env = int(os.environ.get("WORLD_SIZE", "1"))
    if custom:
        plan = plan_from_args(args)
    elif args.smoke:
        plan = plan_smoke(world_env > 1)
    else:
        plan = plan_tp() if world_env > 1 else plan_1gpu()
    for c in plan:
        if c["model"] not in MODELS:
            sys.exit(f"unknown model {c['model']!r}; known: {', '.join(MODELS)}")
        if c["phase"] not in ("decode", "prefill") or c["engine"] not in ("eager", "compiled"):
            sys.exit(f"bad phase or engine in {c}")
    if args.only:
        rx = re.compile(args.only)
        plan = [c for c in plan if rx.search(label(c))]
    if args.list:
        for c in plan:
            print(label(c))
        print(f"{len(plan)} cases")
        return 0

    d = Dist(args.device)
    lead = d.rank == 0
    torch.set_grad_enabled(False)
    configure_compile()

    def cfg_of(name: str) -> dict[str, Any]:
        cfg = dict(MODELS[name])
        if args.smoke:
            cfg = smoke_dims(cfg)
        if args.layers:
            cfg["layers"] = args.layers
        return cfg

    result: dict[str, Any] = {
        "schema": SCHEMA, "kind": "llm", "date": utc_now(),
        "command": command_line(d.world), "python_executable": sys.executable,
        "device": device_info(d.dev), "gpus": d.world,
        "devices": d.gather_obj(device_info(d.dev)) if d.tp else None,
        "driver": driver_version() if lead else None, "torch": torch.__version__,
        "cuda": torch.version.cuda, "python": platform.python_version(), "env": selected_env(),
        "settings": {"budget_s": args.budget_s, "smoke": args.smoke, "layers_override": args.layers,
                     "compile_backend": args.compile_backend, "dtype": "bf16", "sdpa": args.sdpa,
                     "dist_backend": d.backend, "target_timed_s": TARGET_TIMED_S,
                     "timing": ("decode with graphs: cuda events around groups of back-to-back "
                                "replays, per-step time = group time / replays; otherwise events "
                                "around each call; no L2 flush; TP: rank 0's events after a barrier"
                                if d.dev.type == "cuda" else "time.perf_counter (cpu)"),
                     "prefill_logits": "LM head on the last token of each sequence only",
                     "tp_split": ("Megatron: Wq/Wk/Wv/gate/up by columns, Wo/down by rows + "
                                  "all_reduce(SUM) after each (2 per layer), LM head by vocabulary + "
                                  "all_gather of the logits, embedding replicated; compiled engine: "
                                  "the two halves of each layer compiled, all-reduces and the residual "
                                  "add after the MLP all-reduce eager") if d.tp else None},
        "cases": [], "skipped": [],
    }
    if d.dev.type == "cuda":
        result["cudnn"] = torch.backends.cudnn.version()
    if lead:
        write_json_atomic(args.out, result)
        print(f"# llm_bench: {len(plan)} cases, {d.world} rank(s) on {result['device']['name']}, "
              f"torch {torch.__version__}, budget {args.budget_s:.0f}s -> {args.out}", flush=True)
        print(f"{'case':<52} {'median':>10} {'p10':>10} {'p90':>10} {'reps':>4} {'compile':>8}  check",
              flush=True)

    # Force the SDPA backend for the whole run (eager calls, compiled traces and captures).
    if args.sdpa != "default":
        from torch.nn.attention import SDPBackend, sdpa_kernel
        be = {"flash": SDPBackend.FLASH_ATTENTION, "cudnn": SDPBackend.CUDNN_ATTENTION,
              "efficient": SDPBackend.EFFICIENT_ATTENTION, "math": SDPBackend.MATH}[args.sdpa]
        sdpa_ctx = sdpa_kernel(be)
        sdpa_ctx.__enter__()   # held until the process exits

    t_start = time.perf_counter()
    model: Model | None = None
    n_ok = n_fail = 0
    for i, case in enumerate(plan):
        lab = label(case)
        go = d.from_rank0((time.perf_counter() - t_start) <= args.budget_s)
        if not go:
            if lead:
                for c in plan[i:]:
                    result["skipped"].append({"label": label(c), "reason": f"budget ({args.budget_s:.0f}s) spent"})
                print(f"# budget spent: {len(plan) - i} cases skipped", flush=True)
            break
        cfg = cfg_of(case["model"])
        rec: dict[str, Any] = {"label": lab, "model": case["model"], "phase": case["phase"],
                               "engine": case["engine"], "cuda_graphs": case["graphs"], "gpus": d.world,
                               "batch": case["batch"], "config": cfg, "layers": cfg["layers"],
                               "layers_override": bool(args.layers)}
        rec["context" if case["phase"] == "decode" else "seq"] = case.get("context", case.get("seq"))
        t0 = time.perf_counter()
        try:
            # (Re)build the weights when the model changes; free the old ones first.
            if model is None or model.name != case["model"] or model.cfg != cfg:
                model = None
                gc.collect()
                if d.dev.type == "cuda":
                    torch.cuda.empty_cache()
                need = Model.weight_bytes(cfg, d.world)
                if d.dev.type == "cuda":
                    free = torch.cuda.mem_get_info(d.dev)[0]
                    fits = d.all_true(need + MEM_MARGIN_BYTES <= free)
                    if not fits:
                        raise CaseFailed(f"weights need {need / 1e9:.1f} GB per GPU, "
                                         f"{free / 1e9:.1f} GB free (try --layers)")
                tb = time.perf_counter()
                model = stage(d, "build model", lambda name=case["model"], c=cfg: Model(name, c, d))
                d.sync()
                if lead:
                    print(f"# built {case['model']} ({cfg['layers']} layers, "
                          f"{need / 1e9:.1f} GB/rank) in {time.perf_counter() - tb:.1f}s", flush=True)
            if d.dev.type == "cuda":
                gc.collect()
                torch.cuda.empty_cache()
                need = case_bytes(cfg, d.world, case["phase"], case["batch"],
                                  case.get("context", case.get("seq")))
                free = torch.cuda.mem_get_info(d.dev)[0]
                if not d.all_true(need + MEM_MARGIN_BYTES // 2 <= free):
                    raise CaseFailed(f"memory: the case needs ~{need / 1e9:.1f} GB per GPU, "
                                     f"{free / 1e9:.1f} GB free")
            rec.update(run_case(model, case, d, args))
            ok = rec["check"]["finite"]
            n_ok += ok
            if not ok:
                rec["notes"].append("logits not finite")
        except Exception as e:
            n_fail += 1
            rec.update({"median_s": None, "p10_s": None, "p90_s": None, "reps": 0,
                        "compile_s": None, "check": None, "error": short_err(e)})
            if not isinstance(e, CaseFailed):
                rec["traceback"] = traceback.format_exc(limit=6)[-3000:]
        # After an out-of-memory error on any rank, every rank drops the weights and
        # rebuilds them for the next case (agreed, so that all ranks build together).
        oom = "out of memory" in str(rec.get("error", "")).lower()
        if not d.all_true(not oom):
            model = None
        rec["case_wall_s"] = round(time.perf_counter() - t0, 3)
        if d.dev.type == "cuda":
            gc.collect()
            torch.cuda.empty_cache()
        if lead:
            result["cases"].append(rec)
            write_json_atomic(args.out, result)
            if rec.get("error"):
                print(f"{lab:<52} ERROR {rec['error'][:200]}", flush=True)
            else:
                ms = lambda s: f"{s * 1e3:.3f}ms"   # noqa: E731
                comp = f"{rec['compile_s']:.1f}s" if rec["compile_s"] is not None else "-"
                extra = " [no graph: capture failed]" if case["graphs"] and rec.get("cuda_graphs") is False else ""
                print(f"{lab:<52} {ms(rec['median_s']):>10} {ms(rec['p10_s']):>10} {ms(rec['p90_s']):>10} "
                      f"{rec['reps']:>4} {comp:>8}  {'finite' if rec['check']['finite'] else 'NOT FINITE'}"
                      f"{extra}", flush=True)
    model = None
    result["total_wall_s"] = round(time.perf_counter() - t_start, 2)
    if lead:
        write_json_atomic(args.out, result)
        print(f"# done in {result['total_wall_s']:.1f}s: {n_ok} ok, {n_fail} failed, "
              f"{len(result['skipped'])} skipped -> {args.out}", flush=True)
    if d.tp:
        d.barrier()
        dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Host measurements, stand-alone (torch and the standard library only): the probe's hot
loop of one tiny op (roofcalc/probe/torch_ops.py torch_op_floor: x.add_(1) back to back), the
probe's compiled-call floor (torch_compiled_floor: torch.compile'd chains of 1 and 8 GEMM +
Triton links, host cost per kernel and per entry) and
an eager decoder step on tiny dimensions (torch_step_op below: host time per kernel of a
Llama-shaped step; written for the probe, then left out of it: it cost its host 1.3x the real
steps' rate per kernel, see roofcalc/expected/compose.py EAGER_STEP_HOST_FACTOR). Run it on the
machine that times the LLM steps (validation/bench/llm_bench.py), in the same call, to pair
the host's rates with the steps it issued.

    python validation/bench/host_rate.py --out host-rate.json
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib

def torch_step_op(torch, reps, layers=8) :
    """Host time per kernel when Python issues an eager decoder step: a Llama-shaped decode
    step (the ops of validation/bench/llm_bench.py's eager layer: RMSNorm in fp32, three
    projections split into heads, RoPE with rotate_half, the K/V cache written at a position
    tensor, SDPA, the output projection, residual adds, the SwiGLU MLP; final norm and head)
    on dimensions so small that the GPU finishes each kernel before the next is issued.

    A hot loop of one op (torch_op_floor) keeps the interpreter, the dispatcher and the
    caching allocator on one warm path; a step walks through dozens of different ops, views
    and Python frames, and costs its host more per kernel, by a factor that depends on the
    host. The kernels of a step are counted with the profiler.
    """
    F = torch.nn.functional

    d, h, hk, dh, f, vocab, ctx = 256, 4, 2, 64, 512, 1024, 64
    bf = torch.bfloat16
    g = torch.Generator(device="cuda").manual_seed(0)

    def w(*shape):
        return torch.randn(*shape, device="cuda", dtype=bf, generator=g) * 0.05

    one = torch.ones(d, device="cuda", dtype=bf)
    weights = [
        (one, w(h * dh, d), w(hk * dh, d), w(hk * dh, d), w(d, h * dh), one, w(f, d), w(f, d), w(d, f))
        for _ in range(layers)
    ]
    kc = [torch.randn(1, hk, ctx + 1, dh, device="cuda", dtype=bf) for _ in range(layers)]
    vc = [torch.randn(1, hk, ctx + 1, dh, device="cuda", dtype=bf) for _ in range(layers)]
    emb, head, nf = w(vocab, d), w(vocab, d), torch.ones(d, device="cuda", dtype=bf)
    cos = torch.randn(1, 1, 1, dh, device="cuda", dtype=bf)
    sin = torch.randn(1, 1, 1, dh, device="cuda", dtype=bf)
    pos = torch.tensor([ctx], device="cuda")
    tok = torch.randint(0, vocab, (1, 1), device="cuda", generator=g)

    def rms(x, wt):
        xf = x.float()
        xf = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5)
        return wt * xf.to(x.dtype)

    def half(x):
        return torch.cat((-x[..., dh // 2 :], x[..., : dh // 2]), dim=-1)

    def step():
        x = F.embedding(tok, emb)
        for (n1, wq, wk, wv, wo, n2, wg, wu, wd), kci, vci in zip(weights, kc, vc, strict=True):
            y = rms(x, n1)
            q = F.linear(y, wq).view(1, 1, -1, dh).transpose(1, 2)
            k = F.linear(y, wk).view(1, 1, -1, dh).transpose(1, 2)
            v = F.linear(y, wv).view(1, 1, -1, dh).transpose(1, 2)
            q, k = q * cos + half(q) * sin, k * cos + half(k) * sin
            kci[:, :, pos] = k
            vci[:, :, pos] = v
            o = F.scaled_dot_product_attention(q, kci, vci, enable_gqa=True)
            x = x + F.linear(o.transpose(1, 2).reshape(1, 1, -1), wo)
            y = rms(x, n2)
            x = x + F.linear(F.silu(F.linear(y, wg)) * F.linear(y, wu), wd)
        return F.linear(rms(x[:, -1], nf), head)

    # FlashAttention-2, the attention the model's decode and prefill assume (and what
    # llm_bench.py forces): the default backend may pick cuDNN's, whose host cost differs
    attention = importlib.import_module("torch.nn.attention")

    with attention.sdpa_kernel(attention.SDPBackend.FLASH_ATTENTION):
        return _step_rate(torch, step, reps, layers)


def _step_rate(torch, step, reps, layers) :
    for _ in range(5):
        step()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    kernels = sum(1 for e in prof.events() if str(e.device_type).endswith("CUDA") and "Memcpy" not in e.name)
    samples, issue = [], []
    steps = 20
    for _ in range(reps):
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        t1 = time.perf_counter()
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) / (steps * max(kernels, 1)))
        issue.append((t1 - t0) / (steps * max(kernels, 1)))
    logits = step()
    ok = kernels > 0 and bool(torch.isfinite(logits).all())
    return {
        "name": "torch_step_op",
        "layers": layers,
        "kernels_per_step": kernels,
        "steps_per_sample": steps,
        "samples_s": samples,
        "issue_samples_s": issue,
        "verified": ok,
        "check": f"{kernels} kernels per step (profiler); logits "
        + ("finite" if bool(torch.isfinite(logits).all()) else "NOT finite"),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="host-rate.json")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--layers", default="8,32", help="comma list: layers of the tiny step")
    args = ap.parse_args()
    ops = benchlib.probe_ops()
    t0 = time.time()
    floor = ops.torch_op_floor(torch, args.reps)
    try:
        compiled = ops.torch_compiled_floor(torch, args.reps)
    except Exception as e:  # torch.compile unavailable (no Triton, say): keep the op floor
        compiled = {"name": "torch_compiled", "error": f"{type(e).__name__}: {e}"[:300]}
    steps = [torch_step_op(torch, args.reps, layers=int(n)) for n in args.layers.split(",")]
    out = {
        "schema": 1,
        "kind": "host-rate",
        "date": benchlib.utc_now(),
        "command": " ".join([os.path.basename(sys.argv[0])] + sys.argv[1:]),
        "device": benchlib.device_info(torch.device("cuda")),
        "torch": torch.__version__,
        "torch_op": floor,
        "torch_compiled": compiled,
        "torch_step_op": steps,
        "wall_s": time.time() - t0,
    }
    benchlib.write_json_atomic(args.out, out)
    print(f"x.add_(1) hot loop: {statistics.median(floor['samples_s']) * 1e6:.2f} us per op")
    try:
        fit, why = ops.compiled_floor_fit(compiled)
    except ValueError as e:
        fit, why = None, str(e)
    for c in compiled.get("chains", []):
        print(f"compiled chain of {c['links']} link(s), {c['kernels']} kernels: "
              f"{statistics.median(c['samples_s']) * 1e6:.2f} us per call")
    if fit:
        print(f"compiled: {fit[0] * 1e6:.2f} us per kernel, {fit[1] * 1e6:.2f} us per entry ({compiled['check']})")
    else:
        print(f"compiled: no fit ({why})")
    for s in steps:
        print(
            f"tiny step, {s['layers']} layers, {s['kernels_per_step']} kernels: "
            f"{statistics.median(s['samples_s']) * 1e6:.2f} us per kernel "
            f"(issue {statistics.median(s['issue_samples_s']) * 1e6:.2f})"
        )


if __name__ == "__main__":
    main()

"""Which loop of the host tracks an implementation's own Python from one process to the next?

The fused layout's host time per layer ran 28-62 hot-loop op times from one process to the next
(impl-holdout11 to -20: the hot loop of one op, x.add_(1), timed around each case), while
transformers' moved less. One hypothesis: the hot loop runs a few hundred bytes of code and data
over and over, a layer thousands of distinct Python and C++ paths, so a host whose caches are
shared with other work slows a layer more than the loop. This times, in each process, besides the
implementations' own time per layer (impl_bench.host_layer_s):

- ``one_op``: the probe's hot loop of one op (llm_bench.host_op_s), the figure roofcalc reads;
- ``many_ops``: a loop over 40 distinct small PyTorch ops in turn (elementwise, reductions, views
  made contiguous, allocations, a tiny GEMM, norms, softmax), per op;
- ``triton``: a loop of one trivial Triton kernel's launch (the fused layout launches three a
  layer);

and the CPU the process ran on (/proc/self/stat) before and after. One model a process, the
process run several times (host_footprint.sh).

    python3 host_footprint.py --out DIR --models llama-1b-hd64 [--rounds 3]

Writes DIR/host_footprint.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

import torch
import triton
import triton.language as tl

from benchlib import run_header
from impl_bench import host_layer_s
from llm_bench import host_op_s


@triton.jit
def _nop(x_ptr):
    tl.store(x_ptr, tl.load(x_ptr) + 1)


def cpu_now() -> int:
    """The CPU this process last ran on (field 39 of /proc/self/stat)."""
    fields = Path("/proc/self/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[36])


def many_ops() -> list[Any]:
    """40 distinct small ops, each issuing at most one kernel (some none: views), on tiny tensors."""
    F = torch.nn.functional
    a = torch.randn(16, 16, device="cuda")
    b = torch.randn(16, 16, device="cuda")
    w = torch.ones(16, device="cuda")
    idx = torch.arange(8, device="cuda")
    m = a > 0
    return [
        lambda: a + b, lambda: a * b, lambda: a - b, lambda: a / (b.abs() + 1), lambda: a.exp(),
        lambda: a.tanh(), lambda: a.sigmoid(), lambda: a.relu(), lambda: a.neg(), lambda: a.abs(),
        lambda: a.sum(), lambda: a.mean(-1), lambda: a.amax(-1), lambda: a.t().contiguous(),
        lambda: a.view(4, 64).contiguous(), lambda: torch.cat([a, b]), lambda: a.index_select(0, idx),
        lambda: a @ b, lambda: F.softmax(a, -1), lambda: F.layer_norm(a, (16,), w, w),
        lambda: F.gelu(a), lambda: F.silu(a), lambda: a.pow(2), lambda: a.clamp(-1, 1),
        lambda: torch.where(m, a, b), lambda: a.masked_fill(m, 0.0), lambda: torch.zeros_like(a),
        lambda: torch.empty(256, device="cuda"), lambda: a.to(torch.bfloat16), lambda: a.rsqrt(),
        lambda: a.float(), lambda: a.unsqueeze(0).expand(2, 16, 16).contiguous(), lambda: a[:, :8].contiguous(),
        lambda: torch.addmm(a, a, b), lambda: a.cumsum(-1), lambda: a.argmax(-1), lambda: a.square(),
        lambda: a.mul_(1.0), lambda: a.add_(0.0), lambda: F.embedding(idx, a),
    ]


def per_call(fns: list[Any], rounds: int = 50, reps: int = 5) -> float:
    """Seconds per call of ``fns`` in turn: the median of ``reps`` samples of ``rounds`` passes."""
    for _ in range(5):
        for f in fns:
            f()
    torch.cuda.synchronize()
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(rounds):
            for f in fns:
                f()
        torch.cuda.synchronize()
        out.append((time.perf_counter() - t0) / (rounds * len(fns)))
    return statistics.median(out)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--models", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    doc = run_header("roofcalc-host-footprint-1")
    doc["cpu_model"] = next(
        (ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines() if ln.startswith("model name")),
        None,
    )
    doc["affinity"] = sorted(os.sched_getaffinity(0))
    ops = many_ops()
    x = torch.zeros(16, device="cuda")
    cases = []
    with torch.no_grad():
        for name in args.models.split(","):
            for r in range(args.rounds):
                rec: dict[str, Any] = {"model": name, "round": r, "cpu_before": cpu_now()}
                rec["one_op_s"] = host_op_s()
                rec["many_ops_s"] = per_call(ops)
                rec["triton_s"] = per_call([lambda: _nop[(1,)](x)])
                for impl in ("fused", "hf"):
                    rec[f"{impl}_layer_s"] = host_layer_s(impl, name)
                rec["one_op_after_s"] = host_op_s()
                rec["many_ops_after_s"] = per_call(ops)
                rec["cpu_after"] = cpu_now()
                cases.append(rec)
    doc["cases"] = cases
    (out / "host_footprint.json").write_text(json.dumps(doc, indent=1) + "\n")
    print("wrote", out / "host_footprint.json", len(cases), "rounds")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

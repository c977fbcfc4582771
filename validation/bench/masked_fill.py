"""What a causal mask costs in naive attention: Tensor.masked_fill, its clone, and its kernel.

ATen's out-of-place masked_fill is ``self.clone()`` followed by ``masked_fill_`` on the clone
(TensorAdvancedIndexing.cpp). For score matrices S of shape (batch*heads, seq, seq), bf16, with
a precomputed (seq, seq) upper-triangular mask, this records:

- every GPU activity of one ``S.masked_fill(mask, -inf)`` from torch.profiler: kernels and
  memory copies (the profiler lists a device-to-device copy as a memcpy, not a kernel);
- CUDA-event medians, L2 flushed before each repetition, of ``S.masked_fill`` (out of place),
  ``T.masked_fill_`` (in place), ``S.clone()``, and ``torch.softmax(S, -1)``.

    python validation/bench/masked_fill.py --out masked-fill.json
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402

SHAPES = [(8, 512), (32, 512), (16, 1024), (32, 1024), (8, 2048), (32, 2048)]  # (batch*heads, seq)


def activities(fn) -> list[dict]:
    out = []
    for ev in benchlib.profiled_events(fn, ("kernel", "gpu_memcpy", "gpu_memset")):
        a = ev.get("args", {})
        out.append({"category": ev["cat"], "name": ev.get("name"), "duration_s": (ev.get("dur") or 0) * 1e-6,
                    **{k: a[k] for k in ("grid", "block", "registers per thread", "bytes") if k in a}})
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="masked-fill.json")
    ap.add_argument("--reps", type=int, default=30)
    args = ap.parse_args()
    dev = torch.device("cuda")
    flush = torch.empty(2 * torch.cuda.get_device_properties(dev).L2_cache_size, dtype=torch.uint8, device=dev)

    def med(fn) -> float:
        fn()
        return statistics.median(benchlib.event_time(fn, flush.zero_) for _ in range(args.reps))

    cases = []
    t0 = time.time()
    for bh, s in SHAPES:
        S = torch.randn(bh, s, s, device=dev, dtype=torch.bfloat16)
        T = S.clone()
        mask = torch.ones(s, s, dtype=torch.bool, device=dev).triu(1)
        ninf = float("-inf")
        rec = {
            "label": f"bh{bh}-s{s}",
            "params": {"batch_heads": bh, "seq": s, "dtype": "bf16"},
            "score_bytes": S.numel() * S.element_size(),
            "activities": activities(lambda: S.masked_fill(mask, ninf)),
            "median_s": {
                "masked_fill": med(lambda: S.masked_fill(mask, ninf)),
                "masked_fill_": med(lambda: T.masked_fill_(mask, ninf)),
                "clone": med(lambda: S.clone()),
                "softmax": med(lambda: torch.softmax(S, -1)),
            },
            "softmax_activities": activities(lambda: torch.softmax(S, -1)),
        }
        cases.append(rec)
        acts = ", ".join(f"{a['category']}:{a['name'][:40]} {a['duration_s'] * 1e6:.1f}us" for a in rec["activities"])
        ms = " ".join(f"{k}={v * 1e6:.1f}us" for k, v in rec["median_s"].items())
        print(f"{rec['label']:12s} {ms} | {acts}", flush=True)
        del S, T, mask
        torch.cuda.empty_cache()
    benchlib.write_record(args.out, "masked-fill", dev, cases, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

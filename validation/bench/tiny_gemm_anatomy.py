"""Why some tiny 16-bit GEMMs take ~9-10 us between CUDA events where others of the same size take
~5-6 us (a development measurement, twentieth session).

In the committed op sets, GEMMs whose expected time is the launch floor (under 8 us) split in two:
bf16 ones measured above 8.5 us in 154 of 980 H100 cases and fp16 ones in 11 of 940, in the same
sets and processes; within a case the repetitions agree (not the host's jitter). This times a list
of such shapes exactly as ops_bench.py does (run_case: L2 flush, repeat pacing, CUDA events) and
lists, with torch.profiler, the kernels each call launches (names and GPU times), so the two groups
can be told apart by what runs.

    python3 tiny_gemm_anatomy.py --out OUT.json
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import torch
from torch.profiler import ProfilerActivity, profile

import ops_bench

# (dtype, m, n, k): committed cases above 8.5 us with the launch floor expected (H100 and H200
# sets), beside ones of the same kind at 5-6 us, and the slow ones' shapes in the other dtype
SLOW_BF16 = [(1148, 3, 11), (4, 1878, 70), (2368, 4, 9), (4, 1453, 120), (14056, 28, 66), (1144, 29, 80),
             (27, 9, 2), (47, 3, 2), (13, 200, 2), (7968, 13, 8), (120, 903, 66), (114, 9, 3),
             (151, 3355, 4), (81, 2640, 3), (5128, 23, 2), (88, 264, 5), (13, 5754, 4), (4564, 160, 2),
             (2, 136, 185), (4, 554, 181), (11, 78, 8), (5, 11, 220)]
FAST_BF16 = [(8, 16, 32), (64, 12, 10), (83, 1680, 16), (40, 2, 2), (592, 64, 168), (72, 2522, 32),
             (4, 2, 17), (3, 4833, 3), (12, 9, 64), (2, 8, 27), (9633, 1, 16), (4, 1264, 1), (2208, 216, 1),
             (32, 4, 2), (2, 74, 5), (1469, 4, 6)]
CASES = ([("bf16", *s, "slow") for s in SLOW_BF16] + [("bf16", *s, "fast") for s in FAST_BF16]
         + [("fp16", *s, "slow-shape") for s in SLOW_BF16[:12]])


def kernels_per_call(fn, calls: int = 5) -> dict[str, object]:
    """The kernels of ``calls`` calls in one profiler session: per call, their count and, by name,
    how many a call and their mean GPU time (s)."""
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    by: dict[str, list[float]] = {}
    for e in prof.events():
        if e.device_type != torch.autograd.DeviceType.CUDA:
            continue
        t = getattr(e, "device_time_total", None)
        if t is None:
            t = e.cuda_time_total
        by.setdefault(e.name, []).append(t * 1e-6)
    return {
        "per_call": sum(len(v) for v in by.values()) / calls,
        "kernels": {nm: {"per_call": len(v) / calls, "mean_s": statistics.fmean(v)} for nm, v in by.items()},
    }


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    dev = torch.device("cuda")
    timer = ops_bench.Timer(dev, 256 * 2**20)
    out = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
           "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "command": "python3 tiny_gemm_anatomy.py --out OUT.json", "cases": []}
    for dt, m, n, k, group in CASES:
        case = ops_bench.gemm_case(m, n, k, dt)
        rec = ops_bench.run_case(case, dev, timer)
        fn, _, _, ctx = case["build"](dev)
        with torch.no_grad(), ctx():
            for _ in range(3):
                fn()
            try:
                per = kernels_per_call(fn)
            except Exception as e:  # the timing stands without the profile
                per = {"error": repr(e)[:300]}
        rec.pop("times_s", None)
        rec["group"] = group
        rec["profile"] = per
        out["cases"].append(rec)
        ks = per.get("kernels", {})
        print(f"{group:10s} {dt} {m}x{n}x{k}: {rec['median_s'] * 1e6:6.1f} us, {per.get('per_call')} kernel(s): "
              + "; ".join(f"{nm[:70]} x{v['per_call']:.1f} {v['mean_s'] * 1e6:.2f}" for nm, v in ks.items()), flush=True)
    with open(args.out, "w") as f:
        json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

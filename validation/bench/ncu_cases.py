"""Instructions executed by the kernels of selected op cases, for the issue-rate term.

Run under Nsight Compute; only the op calls are profiled (inside the NVTX range "case"):

    ncu --csv --page raw --nvtx --nvtx-include "case/" --clock-control none \
        --metrics smsp__inst_executed.sum,gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum \
        python3 validation/bench/ncu_cases.py --plan plan.json > ncu.csv

`--cases paths --only REGEX` picks from another of ops_bench.py's plans instead of PICK.

The script first writes the plan (case labels and how many kernels each launches, from
torch.profiler, outside the NVTX ranges), then runs each case once inside the range, so the
CSV's kernels split into cases in order.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import kernel_shapes  # noqa: E402
import ops_bench  # noqa: E402

PICK = (
    r"^layernorm-(bf16|fp32)-(65536x1024|16384x8192|4096x4096|2048x16384)$",
    r"^softmax-(bf16|fp32)-(32768x4096|4096x32000|8192x1024|65536x256|2048x131072)$",
    r"^attn-naive-bf16-(b1h32kv8-s2048-d128-causal|b1h16kv16-s4096-d128)$",
    r"^gemv-fp32-(4096x4096|8192x8192)$",
    r"^dot-(bf16|fp32)-134217728$",
)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--plan", default="plan.json")
    ap.add_argument("--cases", choices=sorted(ops_bench.PLANS), default="fixed",
                    help="which of ops_bench.py's plans to pick from")
    ap.add_argument("--only", default=None, help="regular expression on the labels, instead of PICK")
    args = ap.parse_args()
    dev = torch.device("cuda")
    pick = (args.only,) if args.only else PICK
    cases = [c for c in ops_bench.PLANS[args.cases]() if any(re.search(p, c["label"]) for p in pick)]
    plan = []
    for c in cases:
        fn, _check, impl, ctx = c["build"](dev)
        with ctx():
            fn()
            torch.cuda.synchronize()
            ks = kernel_shapes.kernels_of(fn, dev)
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_push("case")
            fn()
            torch.cuda.synchronize()
            torch.cuda.nvtx.range_pop()
        plan.append({"label": c["label"], "op": c["op"], "dtype": c["dtype"], "params": c["params"],
                     "kernels": [k["name"] for k in ks]})
        del fn
        torch.cuda.empty_cache()
    with open(args.plan, "w") as f:
        json.dump(plan, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Why a tiny naive attention measures 2-5x its kernels under ops_bench.py's timing: each case's
time four ways, and the pieces of the timing pattern.

- queued: ops_bench.py's pattern (flush, start event, op, end event, 50 times back to back, one sync);
- synced: the same with a sync before each repetition (flush, start, op, end, sync);
- graph: the op's kernels alone, replayed from a CUDA graph, between events;
- host: the host's time to issue one call of the op (perf_counter around it, the GPU kept busy);
- flush: the 256 MiB flush alone between events, and the host's time to issue it.

    python3 naive_pacing.py --out DIR

Writes DIR/naive_pacing.json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import torch

import ops_bench
from benchlib import capture, event_time, queued_times, run_header

CASES = [  # batch, heads, kv_heads, seq, kv_seq, head_dim, causal
    (8, 4, 4, 13, 13, 64, True),
    (4, 2, 2, 40, 40, 128, False),
    (3, 2, 2, 24, 24, 64, True),
    (8, 32, 32, 7, 92, 64, True),
    (1, 32, 8, 512, 512, 128, True),
]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    dev = torch.device("cuda")
    flush = torch.empty(ops_bench.FLUSH_BYTES // 4, dtype=torch.int32, device=dev)
    doc: dict[str, Any] = {**run_header("roofcalc-naive-pacing-1"), "cases": []}

    def host_time(fn: Any, n: int = 30) -> float:
        ts = []
        for _ in range(n):
            torch.cuda.synchronize()
            flush.zero_()  # the GPU busy while the host issues
            t0 = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t0)
        torch.cuda.synchronize()
        return statistics.median(ts)

    doc["flush_gpu_s"] = statistics.median(event_time(flush.zero_) for _ in range(20))
    doc["flush_host_s"] = host_time(flush.zero_)
    doc["event_record_host_s"] = host_time(lambda: torch.cuda.Event(enable_timing=True).record())
    for b, h, hk, s, skv, d, causal in CASES:
        case = ops_bench.attention_case(b, h, hk, s, skv, d, causal, "naive")
        fn, _check, what, _ctx = case["build"](dev)
        for _ in range(3):
            fn()
        g = capture(fn)
        rec = {
            "label": case["label"], "impl": what,
            "queued_s": statistics.median(queued_times(fn, flush.zero_, 50)),
            "synced_s": statistics.median(event_time(fn, flush.zero_) for _ in range(30)),
            "graph_s": statistics.median(event_time(g.replay) for _ in range(30)),
            "host_s": host_time(fn),
        }
        doc["cases"].append(rec)
        print(json.dumps(rec), flush=True)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "naive_pacing.json").write_text(json.dumps(doc, indent=1))
    print({k: v for k, v in doc.items() if k.endswith("_s")})
    return 0


if __name__ == "__main__":
    sys.exit(main())

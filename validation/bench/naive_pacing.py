"""Why a tiny naive attention measures 2-5x its kernels under ops_bench.py's timing: each case's
time four ways, and the pieces of the timing pattern.

- queued: ops_bench.py's pattern (flush, start event, op, end event, 50 times back to back, one sync);
- synced: the same with a sync before each repetition (flush, start, op, end, sync);
- graph: the op's kernels alone, replayed from a CUDA graph, between events;
- host: the host's time to issue one call of the op (perf_counter around it, the GPU kept busy);
- flush: the 256 MiB flush alone between events, and the host's time to issue it;
- with --wide, the hold-outs' naive cases (WIDE_CASES), each also three queued runs with the
  host's time to enqueue one repetition (flush, events, op) and the host's issue of one call with
  the GPU idle.

    python3 naive_pacing.py --out DIR [--wide]

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
from benchlib import busy_issue_s, capture, event_time, queued_times, run_header

# naive attentions of the H100 hold-outs ops-wide42..45: some measured at their kernels' time,
# others 2-9x it (validation/expected/h100/report-ops-wide4*-registry.json)
WIDE_CASES = [  # batch, heads, kv_heads, seq, kv_seq, head_dim, causal
    (8, 1, 1, 2, 2, 64, True),
    (1, 2, 2, 1, 1, 64, False),
    (4, 16, 16, 2, 64, 128, True),
    (8, 1, 1, 265, 265, 128, False),
    (4, 16, 16, 100, 100, 128, False),
    (4, 32, 32, 16, 16, 64, True),
    (1, 8, 8, 16, 16, 64, True),
    (3, 1, 1, 5, 5, 64, False),
    (2, 2, 2, 16, 16, 64, False),
    (8, 16, 16, 48, 48, 64, False),
    (1, 16, 16, 3, 976, 128, True),
    (4, 4, 4, 24, 24, 64, True),
]

CASES = [  # batch, heads, kv_heads, seq, kv_seq, head_dim, causal
    (8, 4, 4, 13, 13, 64, True),
    (4, 2, 2, 40, 40, 128, False),
    (3, 2, 2, 24, 24, 64, True),
    (8, 32, 32, 7, 92, 64, True),
    (1, 32, 8, 512, 512, 128, True),
]


def _idle_host(fn: Any) -> float:
    """The host's time to issue one call with the GPU idle."""
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    t = time.perf_counter() - t0
    torch.cuda.synchronize()
    return t


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True)
    ap.add_argument("--wide", action="store_true", help="the hold-outs' naive cases (WIDE_CASES), three queued runs each")
    args = ap.parse_args()
    dev = torch.device("cuda")
    flush = torch.empty(ops_bench.FLUSH_BYTES // 4, dtype=torch.int32, device=dev)
    doc: dict[str, Any] = {**run_header("roofcalc-naive-pacing-1"), "cases": []}

    def host_time(fn: Any, n: int = 30) -> float:
        return busy_issue_s(fn, flush.zero_, n)  # the GPU busy with a flush while the host issues

    doc["flush_gpu_s"] = statistics.median(event_time(flush.zero_) for _ in range(20))
    doc["flush_host_s"] = host_time(flush.zero_)
    doc["event_record_host_s"] = host_time(lambda: torch.cuda.Event(enable_timing=True).record())
    def enqueue_per_iter(fn: Any, n: int = 50) -> tuple[float, float]:
        """The queued pattern's host time per repetition (enqueue only) and its median event time."""
        starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for a, z in zip(starts, ends, strict=True):
            flush.zero_()
            a.record()
            fn()
            z.record()
        host = (time.perf_counter() - t0) / n
        torch.cuda.synchronize()
        return host, statistics.median(a.elapsed_time(z) * 1e-3 for a, z in zip(starts, ends, strict=True))

    for b, h, hk, s, skv, d, causal in WIDE_CASES if args.wide else CASES:
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
        if args.wide:
            runs = [enqueue_per_iter(fn) for _ in range(3)]
            rec["enqueue_per_iter_s"] = [r[0] for r in runs]
            rec["queued_runs_s"] = [r[1] for r in runs]
            rec["idle_host_s"] = statistics.median(_idle_host(fn) for _ in range(20))
        doc["cases"].append(rec)
        print(json.dumps(rec), flush=True)
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "naive_pacing.json").write_text(json.dumps(doc, indent=1))
    print({k: v for k, v in doc.items() if k.endswith("_s")})
    return 0


if __name__ == "__main__":
    sys.exit(main())

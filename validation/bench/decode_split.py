"""Where the time of a split-KV decode attention goes: the split kernel, the combine kernel and
the gaps around them, as ops_bench.py times the op.

FlashAttention-2 (PyTorch's flash backend) runs a decode step (one query per sequence) as
``flash_fwd_splitkv_kernel`` over key splits and then ``flash_fwd_splitkv_combine_kernel``,
which merges the splits' partial outputs. For a sweep of batch sizes and KV lengths this
records, per case:

- the CUDA-event median of the op, each repetition after an L2-evicting flush, all
  repetitions enqueued back to back (benchlib.queued_times, as ops_bench.py times);
- the same repetitions under torch.profiler: every kernel's duration and its start relative to
  the end of the kernel before it (the flush, then the split kernel), medians over repetitions;
- the same without the flush (warm L2), for contrast;
- the number of splits (the split kernel's grid.y) and the combine kernel's template
  arguments (rows per block, log2 of the largest split count it was compiled for).

    python3 validation/bench/decode_split.py --out decode-split.json

With ``--ncu`` it instead runs each case once inside the NVTX range "case", after a flush, for
Nsight Compute to profile the kernels (as validation/bench/ncu_cases.py does):

    ncu --csv --page raw --nvtx --nvtx-include "case/" --clock-control none --cache-control none \
        --section WarpStateStats --section SpeedOfLight --section LaunchStats \
        python3 validation/bench/decode_split.py --ncu --batches 1,2 --contexts 512,4096
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import ops_bench  # noqa: E402

BATCHES = (1, 2, 4, 8)
CONTEXTS = (128, 256, 512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 16384, 32768)


def profiled_reps(fn, before, n: int) -> list[list[dict]]:
    """Kernels of n repetitions of (before, fn), enqueued back to back: one list per repetition
    of fn's kernels, each with its duration and the gap since the kernel before it ended (the
    flush's kernel, or the previous repetition's last kernel)."""
    width = len(benchlib.profiled_events(fn, ("kernel",)))

    def loop():
        for _ in range(n):
            if before is not None:
                before()
            fn()

    evs = sorted(benchlib.profiled_events(loop, ("kernel",)), key=lambda e: float(e["ts"]))
    ours: list[dict] = []
    prev_end = None
    for ev in evs:
        start, dur = float(ev["ts"]), float(ev.get("dur") or 0)
        if "flash" in (ev.get("name") or ""):
            a = ev.get("args", {})
            ours.append({"name": ev.get("name"), "duration_s": dur * 1e-6,
                         "gap_s": None if prev_end is None else (start - prev_end) * 1e-6,
                         "grid": a.get("grid"), "registers per thread": a.get("registers per thread")})
        prev_end = start + dur
    return [ours[i:i + width] for i in range(0, len(ours) - width + 1, width)]


def summarise(reps: list[list[dict]]) -> list[dict]:
    """Per kernel position: name, grid, median duration and median gap."""
    out = []
    for i in range(len(reps[0]) if reps else 0):
        col = [r[i] for r in reps]
        gaps = [k["gap_s"] for k in col if k["gap_s"] is not None]
        out.append({"name": col[0]["name"], "grid": col[0]["grid"],
                    "registers per thread": col[0]["registers per thread"],
                    "duration_s": statistics.median(k["duration_s"] for k in col),
                    "duration_min_s": min(k["duration_s"] for k in col),
                    "gap_s": statistics.median(gaps) if gaps else None, "reps": len(col)})
    return out


def specs(args) -> list[tuple]:
    """(batch, heads, kv_heads, seq, kv_seq, head_dim, causal): the decode sweep, then --extra."""
    out = [(b, 32, 8, 1, ctx, args.head_dim, False)
           for b in map(int, args.batches.split(",")) for ctx in map(int, args.contexts.split(","))]
    for e in args.extra or []:
        b, h, kv, sq, skv, d, causal = e.split(",")
        out.append((int(b), int(h), int(kv), int(sq), int(skv), int(d), causal in ("1", "true", "causal")))
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="decode-split.json")
    ap.add_argument("--reps", type=int, default=30)
    ap.add_argument("--batches", default=",".join(map(str, BATCHES)))
    ap.add_argument("--contexts", default=",".join(map(str, CONTEXTS)))
    ap.add_argument("--head-dim", type=int, default=128)
    ap.add_argument("--extra", action="append", help="another case: batch,heads,kv_heads,seq,kv_seq,head_dim,causal")
    ap.add_argument("--ncu", action="store_true", help="run each case once in the NVTX range 'case'")
    args = ap.parse_args()
    dev = torch.device("cuda")
    flush = torch.empty(ops_bench.FLUSH_BYTES // 4, dtype=torch.int32, device=dev)
    cases = [ops_bench.attention_case(b, h, kv, sq, skv, d, causal, "flash", decode=sq == 1)
             for b, h, kv, sq, skv, d, causal in specs(args)]
    t0 = time.time()
    records = []
    # timings first, for every case: once torch.profiler has run, the host issues ops more
    # slowly for a while, and an op whose flush is shorter than its issue time waits for it
    for phase in (("ncu",) if args.ncu else ("time", "profile")):
        for i, c in enumerate(cases):
            fn, _check, impl, ctx_mgr = c["build"](dev)
            with torch.no_grad(), ctx_mgr():
                for _ in range(3):
                    fn()
                if phase == "ncu":
                    flush.zero_()
                    torch.cuda.synchronize()
                    torch.cuda.nvtx.range_push("case")
                    fn()
                    torch.cuda.synchronize()
                    torch.cuda.nvtx.range_pop()
                    print(c["label"], flush=True)
                elif phase == "time":
                    times = benchlib.queued_times(fn, flush.zero_, args.reps)
                    records.append({"label": c["label"], "op": c["op"], "dtype": c["dtype"], "params": c["params"],
                                    "impl": impl, "median_s": statistics.median(times),
                                    "times_s": [round(t, 9) for t in times]})
                else:
                    rec = records[i]
                    rec["flushed"] = summarise(profiled_reps(fn, flush.zero_, args.reps))
                    rec["warm"] = summarise(profiled_reps(fn, None, args.reps))
                    split = next((k for k in rec["flushed"] if "splitkv_kernel" in k["name"]), None)
                    comb = next((k for k in rec["flushed"] if "combine" in k["name"]), None)
                    targs = re.search(r">, (\d+), (\d+), (true|false)>\(", comb["name"]) if comb else None
                    rec["splits"] = split["grid"][1] if split and split["grid"] else 1
                    rec["combine_rows_per_block"] = int(targs.group(1)) if targs else None
                    rec["combine_log_max_splits"] = int(targs.group(2)) if targs else None
                    ks = " ".join(f"{k['name'].split('<')[0].split('::')[-1][-12:]}={k['duration_s'] * 1e6:.2f}"
                                  f"(+{(k['gap_s'] or 0) * 1e6:.2f})" for k in rec["flushed"])
                    print(f"{c['label']:44s} splits={rec['splits']:3d} op={rec['median_s'] * 1e6:7.2f}us | {ks}",
                          flush=True)
                    benchlib.write_record(args.out, "decode-split", dev, records, t0)
            del fn
            torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Decode attention on its own and inside a decode step: does FlashAttention-2's decode kernel
take the same time in a CUDA-graph-replayed step as after a flush on its own, and at what SM
clock does each run?

For llm_bench.py's Llama-3.1-8B shapes (32 query heads, 8 KV heads, head_dim 128; SDPA's flash
backend forced, as llm_bench.py runs it) and a few (batch, context) pairs, records per case:

- ``op``: the SDPA call as ops_bench.py times it (a 256 MB write before each of 30 repetitions,
  CUDA events, median) and its kernels' profiled durations;
- ``loop``: the SDPA call captured 16 times in one CUDA graph over 16 distinct K/V buffers (no
  reuse through the L2), replayed for about a second: time per call, with the SM clock and the
  board power (NVML) sampled during the replays;
- ``step``: llm_bench.py's decode step (32 layers, eager engine) captured in a CUDA graph and
  replayed for about a second: step time with NVML samples, and one profiled replay: the
  durations of its flash kernels (median over the layers).

    python3 validation/bench/decode_attn_context.py --out decode-attn-context.json
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import threading
import time
from typing import Any

import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib  # noqa: E402
import llm_bench  # noqa: E402

CASES = ((1, 1024), (16, 1024), (32, 2048), (48, 3000), (64, 1024))
FLUSH_BYTES = 256 << 20


class Sampler:
    """NVML samples (SM clock, power) every 20 ms on a thread while a block runs."""

    def __init__(self) -> None:
        try:
            import pynvml  # type: ignore[import-not-found]

            pynvml.nvmlInit()
            self.nv, self.h = pynvml, self._handle(pynvml)
        except Exception:
            self.nv = None
        self.samples: list[tuple[float, float]] = []
        self._stop = threading.Event()

    @staticmethod
    def _handle(nv: Any) -> Any:
        """NVML's handle of the GPU torch uses: by PCI address (NVML ignores CUDA_VISIBLE_DEVICES)."""
        p = torch.cuda.get_device_properties(torch.cuda.current_device())
        try:
            return nv.nvmlDeviceGetHandleByPciBusId(f"{p.pci_domain_id:08X}:{p.pci_bus_id:02X}:{p.pci_device_id:02X}.0")
        except Exception:
            return nv.nvmlDeviceGetHandleByIndex(torch.cuda.current_device())

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                clk = float(self.nv.nvmlDeviceGetClockInfo(self.h, self.nv.NVML_CLOCK_SM))
                pw = self.nv.nvmlDeviceGetPowerUsage(self.h) / 1000.0
                self.samples.append((clk, pw))
            except Exception:
                pass
            time.sleep(0.02)

    def __enter__(self) -> Sampler:
        if self.nv is not None:
            self._t = threading.Thread(target=self._run, daemon=True)
            self._t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self.nv is not None:
            self._t.join()

    def summary(self) -> dict[str, Any] | None:
        if not self.samples:
            return None
        # drop the first fifth: the clock settles after the replays start
        s = self.samples[len(self.samples) // 5 :] or self.samples
        return {"sm_clock_mhz_median": statistics.median(c for c, _ in s),
                "power_w_median": statistics.median(p for _, p in s), "samples": len(s)}


def replay_for(g: torch.cuda.CUDAGraph, seconds: float) -> tuple[float, Sampler]:
    """Replay g back to back for about ``seconds``; median time of one replay, NVML samples."""
    g.replay()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    g.replay()
    e.record()
    e.synchronize()
    one = max(s.elapsed_time(e) * 1e-3, 1e-6)
    n = max(3, int(seconds / one))
    times = []
    with Sampler() as smp:
        evs = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(n)]
        for a, b in evs:
            a.record()
            g.replay()
            b.record()
        torch.cuda.synchronize()
        times = [a.elapsed_time(b) * 1e-3 for a, b in evs]
    return statistics.median(times[n // 5 :]), smp


def flash_durations(fn) -> dict[str, float]:
    """Median duration per flash kernel name (the split or forward kernel, the combine) in fn."""
    by: dict[str, list[float]] = {}
    for ev in benchlib.profiled_events(fn, ("kernel",)):
        name = ev.get("name", "")
        if "flash" not in name:
            continue
        key = "combine" if "combine" in name else "split" if "splitkv" in name else "fwd"
        by.setdefault(key, []).append(float(ev.get("dur") or 0) * 1e-6)
    return {k: statistics.median(v) for k, v in by.items()}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="decode-attn-context.json")
    ap.add_argument("--seconds", type=float, default=1.0)
    args = ap.parse_args()
    from torch.nn.attention import SDPBackend, sdpa_kernel

    ctx = sdpa_kernel(SDPBackend.FLASH_ATTENTION)
    ctx.__enter__()  # held until the process exits
    torch.set_grad_enabled(False)
    dev = torch.device("cuda")
    d = llm_bench.Dist("cuda")
    name = "llama-3.1-8b"
    cfg = dict(llm_bench.MODELS[name])
    model = llm_bench.Model(name, cfg, d)
    flush = torch.empty(FLUSH_BYTES // 4, dtype=torch.int32, device=dev)
    h, hk, hd = cfg["heads"], cfg["kv_heads"], cfg["head_dim"]
    records = []
    t0 = time.time()
    for b, c in CASES:
        rec: dict[str, Any] = {"batch": b, "context": c, "heads": h, "kv_heads": hk, "head_dim": hd}
        try:
            n_kv = c + 1  # the step attends over its cache: the context and the new token
            q = torch.randn(b, h, 1, hd, dtype=torch.bfloat16, device=dev)
            kv_bytes = 2 * b * hk * n_kv * hd * 2
            copies = 16
            ks = [torch.randn(b, hk, n_kv, hd, dtype=torch.bfloat16, device=dev) for _ in range(copies)]
            vs = [torch.randn_like(k) for k in ks]

            def op(i: int = 0):
                return F.scaled_dot_product_attention(q, ks[i], vs[i], enable_gqa=True)

            times = benchlib.queued_times(op, flush.zero_, 30)
            rec["op"] = {"median_s": statistics.median(times), "kernels": flash_durations(op)}
            # a graph of 16 calls over distinct buffers, replayed back to back
            def calls() -> None:
                for i in range(copies):
                    op(i)

            g = benchlib.capture(calls, warm=1)
            per, smp = replay_for(g, args.seconds)
            rec["loop"] = {"per_call_s": per / copies, "nvml": smp.summary(), "kv_bytes": kv_bytes,
                           "kernels": flash_durations(g.replay)}
            del g, ks, vs
            torch.cuda.empty_cache()
            # the decode step
            step, _info, _state = llm_bench.make_step(model, "decode", "eager", b, c, "inductor")
            gs = benchlib.capture(step)
            per, smp = replay_for(gs, args.seconds)
            rec["step"] = {"replay_s": per, "nvml": smp.summary(), "kernels": flash_durations(gs.replay)}
            del gs, step, _state
            torch.cuda.empty_cache()
        except Exception as e:  # keep going
            rec["error"] = f"{type(e).__name__}: {e}"[:300]
        records.append(rec)
        print(f"b{b} c{c}: " + "; ".join(
            f"{k} " + ", ".join(f"{kk}={vv}" for kk, vv in (rec.get(k) or {}).items() if kk != "kv_bytes")
            for k in ("op", "loop", "step")) + (f" ERROR {rec['error']}" if "error" in rec else ""), flush=True)
    benchlib.write_record(args.out, "decode-attn-context", dev, records, t0)
    return 0


if __name__ == "__main__":
    sys.exit(main())

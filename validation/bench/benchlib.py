"""Helpers the bench scripts share: the record's metadata (date, device, driver, environment),
the atomic JSON write, percentiles. Imported by the scripts beside it (torch and the standard
library only: these run on the GPU machine as they are)."""

from __future__ import annotations

import datetime as _dt
import functools
import importlib.util
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

import torch

@functools.cache
def probe_ops() -> Any:
    """roofcalc/probe/torch_ops.py by its path (it needs only torch, not roofcalc's
    dependencies): the probe's own hot loops, for the host's figures."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "roofcalc", "probe", "torch_ops.py")
    spec = importlib.util.spec_from_file_location("torch_ops", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def utc_now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def device_info(dev: torch.device) -> dict[str, Any]:
    if dev.type == "cuda":
        p = torch.cuda.get_device_properties(dev)
        return {
            "name": p.name,
            "cc": f"{p.major}.{p.minor}",
            "sm_count": p.multi_processor_count,
            "l2_bytes": getattr(p, "L2_cache_size", None),
            "total_mem_bytes": p.total_memory,
        }
    return {"name": platform.processor() or platform.machine() or "cpu", "cc": None,
            "sm_count": None, "l2_bytes": None, "total_mem_bytes": None,
            "cpu_threads": torch.get_num_threads()}


def driver_version() -> str | None:
    try:
        r = subprocess.run(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
                           capture_output=True, text=True, timeout=20)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = r.stdout.strip().splitlines()
    return lines[0].strip() if r.returncode == 0 and lines else None


ENV_PREFIXES = ("NCCL_", "TORCH_", "PYTORCH_", "CUDA_", "NVSHMEM_", "CUBLAS", "CUDNN")
ENV_ALWAYS = ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS",
              "CUDA_VISIBLE_DEVICES", "OMP_NUM_THREADS", "WORLD_SIZE", "LOCAL_WORLD_SIZE")


def run_header(schema: str) -> dict[str, Any]:
    """What a measurement file records of its run: schema, UTC date, the command, the device, the
    driver (nvidia-smi's name and driver_version) and torch's version."""
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                         capture_output=True, text=True).stdout.strip()
    return {
        "schema": schema,
        "date": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "command": "python3 " + " ".join(sys.argv),
        "device": torch.cuda.get_device_name(),
        "nvidia_smi": smi,
        "torch": torch.__version__,
    }


def selected_env() -> dict[str, str | None]:
    env: dict[str, str | None] = {k: os.environ.get(k) for k in ENV_ALWAYS}
    env.update({k: v for k, v in os.environ.items() if k.startswith(ENV_PREFIXES)})
    return dict(sorted(env.items()))


def write_json_atomic(path: str, obj: Any) -> None:
    tmp = f"{path}.tmp.{os.getpid()}"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def event_time(fn: Callable[[], Any], before: Callable[[], Any] | None = None) -> float:
    """Seconds of one call of fn between two CUDA events; ``before`` (a flush, a sleep kernel that
    keeps the GPU busy while the host dispatches fn) is enqueued first and not timed."""
    torch.cuda.synchronize()
    if before is not None:
        before()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    fn()
    e.record()
    e.synchronize()
    return s.elapsed_time(e) * 1e-3


def capture(fn: Callable[[], Any], warm: int = 2) -> torch.cuda.CUDAGraph:
    """fn captured in a CUDA graph, after ``warm`` calls on a side stream (as the CUDA-graph
    documentation asks before a capture)."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(warm):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g


def queued_times(fn: Callable[[], Any], before: Callable[[], Any], n: int) -> list[float]:
    """Seconds of n calls of fn, each between two CUDA events with ``before`` (a flush) enqueued
    ahead of its start event, all n enqueued back to back and synchronized once at the end, as
    a benchmark loop enqueues its repetitions."""
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n)]
    # a torch Event is created in the driver at its first record: recorded once here, untimed,
    # so that no timed span waits for an event's creation (in ops-wide46 and 47 the first 18-36
    # repetitions of three cases measured 300-3400 us, the rest a few us)
    for ev in (*starts, *ends):
        ev.record()
    torch.cuda.synchronize()
    for s, e in zip(starts, ends, strict=True):
        before()
        s.record()
        fn()
        e.record()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) * 1e-3 for s, e in zip(starts, ends, strict=True)]


def sleep_cycles_per_s() -> float:
    """Clock cycles per second of ``torch.cuda._sleep`` (a kernel that spins for a number of
    cycles and touches no memory) on this GPU, timed once between events."""
    torch.cuda._sleep(1000)
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    torch.cuda._sleep(4_000_000)
    e.record()
    e.synchronize()
    return 4e6 / (s.elapsed_time(e) * 1e-3)


def busy_issue_s(fn: Callable[[], Any], busy: Callable[[], Any], n: int = 5) -> float:
    """The host's time to issue one call of fn (perf_counter around it, no sync) while the GPU
    works on what ``busy`` enqueues first (a flush, a ``torch.cuda._sleep``): the median of n."""
    out = []
    for _ in range(n):
        torch.cuda.synchronize()
        busy()
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    torch.cuda.synchronize()
    return statistics.median(out)


def profiled_events(fn: Callable[[], Any], categories: tuple[str, ...]) -> list[dict[str, Any]]:
    """The GPU activities of one call of fn whose category is in ``categories`` ("kernel",
    "gpu_memcpy", "gpu_memset"), from torch.profiler's Chrome trace (its kernel events carry the
    launch shape: grid, block, registers per thread, shared memory)."""
    import tempfile

    from torch.profiler import ProfilerActivity, profile

    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile("r", suffix=".json", delete=False) as f:
        path = f.name
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            trace = json.load(f)
    finally:
        os.unlink(path)
    return [ev for ev in trace.get("traceEvents", []) if ev.get("cat") in categories]


def write_record(path: str, kind: str, dev: torch.device, cases: list[dict[str, Any]], t0: float) -> None:
    """The JSON record of a measuring script: what ran (this command line), where, when."""
    doc = {"schema": 1, "kind": kind, "date": utc_now(), "command": " ".join(sys.argv),
           "device": device_info(dev), "torch": torch.__version__, "cases": cases, "wall_s": time.time() - t0}
    write_json_atomic(path, doc)


def percentile(xs: list[float], q: float) -> float:
    """Linear-interpolated percentile, q in [0, 100]."""
    s = sorted(xs)
    if len(s) == 1:
        return s[0]
    pos = (len(s) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def short_err(e: BaseException) -> str:
    msg = f"{type(e).__name__}: {e}".strip()
    return msg if len(msg) <= 600 else msg[:600] + " ..."


SDPA_NAMES = {-1: "error", 0: "math", 1: "flash", 2: "efficient", 3: "cudnn", 4: "overrideable"}


def sdpa_default_backend(q, k, v, causal: bool, gqa: bool) -> str:
    """Which backend F.scaled_dot_product_attention picks by default for these inputs."""
    try:
        i = torch._fused_sdp_choice(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=causal,
                                    scale=None, enable_gqa=gqa)
        return SDPA_NAMES.get(int(i), str(i))
    except Exception as e:
        return f"unknown ({type(e).__name__})"

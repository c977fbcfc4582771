"""Op timings through PyTorch (cuBLAS, SDPA), run only where torch with CUDA is installed.

Each record: {op, dtype, params, median_s, impl, verified, check}. Inputs are random
(never zeros); outputs are compared with a float32 (or float64) recomputation on a slice.
Timings keep every sample (``samples_s``) so that the report can show the spread.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Callable
from typing import Any

# GPU clock cycles of the sleep kernel enqueued before a start event (about 0.5 ms): the host's
# dispatch of what is timed (10 to 30 us for a cuBLAS call from Python, a few ops for the
# small-kernel floors, more on a slow host) then happens while the GPU is still busy, and the
# events time only the GPU's work, as in a busy program.
BUSY_CYCLES = 1_000_000
# repetitions of the flushed-op floor, enqueued back to back as validation/bench/ops_bench.py
# enqueues its (at most 50 per case)
FLUSHED_REPS = 50


def _timed_once(torch: Any, fn: Callable[[], Any]) -> tuple[float, Any]:
    """One call between two CUDA events: (seconds, what fn returned)."""
    a = torch.cuda.Event(enable_timing=True)
    b = torch.cuda.Event(enable_timing=True)
    a.record()
    out = fn()
    b.record()
    b.synchronize()
    return a.elapsed_time(b) * 1e-3, out


def _sample_times(torch: Any, fn: Callable[[], Any], reps: int, warmup: int = 3, busy: bool = False) -> list[float]:
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        if busy:
            torch.cuda._sleep(BUSY_CYCLES)
        times.append(_timed_once(torch, fn)[0])
    return times


def _median_time(torch: Any, fn: Callable[[], Any], reps: int, warmup: int = 3) -> float:
    times = sorted(_sample_times(torch, fn, reps, warmup))
    return float(times[len(times) // 2])


def _median(xs: list[float]) -> float:
    s = sorted(xs)
    return float(s[len(s) // 2])


def _rel_err(torch: Any, got: Any, ref: Any) -> float:
    got, ref = got.float(), ref.float()
    return float((got - ref).norm() / ref.norm())


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:300]


def _set_tf32(torch: Any, on: bool) -> None:
    torch.backends.cuda.matmul.allow_tf32 = on


def torch_kernel_floors(torch: Any, reps: int, n: int = 200) -> dict[str, Any]:
    """What the smallest PyTorch kernel (x.add_(1) on one element) costs the GPU, with the host
    out of the way: queued on a stream the GPU is busy with (a sleep kernel before the start
    event; the time of the same events with nothing between them subtracted), and as a node of
    a CUDA graph of n of them (the graph's time over n). The probe's own floors use an empty
    kernel that stores one int; PyTorch's kernels carry more (a load, TensorIterator's
    arguments), and these are the floors its kernels meet."""
    x = torch.zeros(1, device="cuda", dtype=torch.float32)
    x.add_(1)
    torch.cuda.synchronize()

    def busy(fn: Callable[[], Any]) -> list[float]:
        return _sample_times(torch, fn, reps, busy=True)

    nothing = busy(lambda: None)
    one = busy(lambda: x.add_(1))
    # as a benchmark times one op: the L2 flushed by writing a buffer 4x its size before the
    # start event, the op's data cold, and the repetitions enqueued back to back with one sync
    # at the end (flush, start, op, end, flush, ...). Enqueued that way a small op costs about
    # 0.7 us more than with a sync before each repetition once the queue is deep (50
    # repetitions, as the ops benchmark enqueues them; with 9 the difference was not seen):
    # validation/expected/h100/kernels/timing-pattern.json.
    flush = torch.empty(int(torch.cuda.get_device_properties(0).L2_cache_size), device="cuda", dtype=torch.float32)
    queued_reps = max(reps, FLUSHED_REPS)
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(queued_reps + 3)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(queued_reps + 3)]
    torch.cuda.synchronize()
    for a, b in zip(starts, ends, strict=True):
        flush.zero_()
        a.record()
        x.add_(1)
        b.record()
    torch.cuda.synchronize()
    flushed = [a.elapsed_time(b) * 1e-3 for a, b in zip(starts[3:], ends[3:], strict=True)]
    del flush
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(n):
            x.add_(1)
    nodes = [t / n for t in _sample_times(torch, graph.replay, reps)]
    # the small kernels real models run: eager RMSNorm of one 4096-element bf16 row in fp32,
    # seven kernels of a few KiB each
    row = torch.randn(1, 4096, device="cuda", dtype=torch.bfloat16)
    weight = torch.randn(4096, device="cuda", dtype=torch.bfloat16)
    normed = torch.empty(1, 4096, device="cuda", dtype=torch.float32)

    def rmsnorm() -> None:
        h = row.float()
        r = torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6)
        torch.mul(h * r, weight, out=normed)

    per_call = 7  # one kernel each: float(), pow, mean, + eps, rsqrt, h * r, * weight
    rmsnorm()
    torch.cuda.synchronize()
    small_queued = [(t - _median(nothing)) / per_call for t in busy(rmsnorm)]
    small_graph = torch.cuda.CUDAGraph()
    calls = max(1, n // per_call)
    with torch.cuda.graph(small_graph):
        for _ in range(calls):
            rmsnorm()
    small_nodes = [t / (calls * per_call) for t in _sample_times(torch, small_graph.replay, reps)]
    ref = row.double() * torch.rsqrt(row.double().pow(2).mean(-1, keepdim=True) + 1e-6) * weight.double()
    small_ok = bool(torch.allclose(normed.double(), ref, rtol=1e-3, atol=1e-3))
    del small_graph
    # one add before, 3 + reps queued ones (warm-up included), 3 + queued_reps after a flush,
    # 3 + reps replays of n (the capture runs none)
    want = 1 + (3 + reps) + (3 + queued_reps) + (3 + reps) * n
    got = float(x.item())
    return {
        "name": "torch_kernel",
        "nothing_samples_s": nothing,
        "queued_samples_s": one,
        "graph_node_samples_s": nodes,
        "flushed_samples_s": flushed,
        "nodes_per_graph": n,
        "small_kernels": "eager RMSNorm of a 1 x 4096 bf16 row in fp32, 7 kernels per call",
        "busy_cycles": BUSY_CYCLES,
        "small_queued_samples_s": small_queued,
        "small_graph_node_samples_s": small_nodes,
        "verified": got == want and small_ok,
        "check": f"the tensor holds {got:.0f} (expected {want}); the RMSNorm "
        + ("matches float64" if small_ok else "does NOT match float64"),
    }


def torch_op_floor(torch: Any, reps: int, n: int = 1000, gap_s: float = 0.0) -> dict[str, Any]:
    """Per op when tiny PyTorch ops are issued back to back: n x.add_(1) on a 1-element tensor.

    Host wall clock from the first issue to the end of the last kernel (synchronized), divided
    by n: what eager PyTorch code pays per op when the GPU work is negligible.

    gap_s: a pause between samples, so that they spread over seconds. On some hosts the CPU
    switches between two speeds within seconds (validation/traces/h200/host-state1: the hot loop
    about 1.4x slower in the slow state), and back-to-back samples, a few tens of milliseconds in
    all, catch one state; spread, their median is the state the host spent most of those seconds
    in, and their 10th and 90th percentiles show both. The benchmarks that time the loop around a
    case leave it at 0: they want the state the case ran in.
    """
    x = torch.zeros(1, device="cuda", dtype=torch.float32)
    for _ in range(100):
        x.add_(1)
    torch.cuda.synchronize()
    samples = []
    for i in range(reps):
        if i and gap_s > 0:
            time.sleep(gap_s)
        t0 = time.perf_counter()
        for _ in range(n):
            x.add_(1)
        torch.cuda.synchronize()
        samples.append((time.perf_counter() - t0) / n)
    want = 100 + reps * n  # exact in float32 (< 2**24)
    got = float(x.item())
    return {
        "name": "torch_op",
        "kernels_per_sample": n,
        "gap_s": gap_s,
        "samples_s": samples,
        "verified": got == want,
        "check": f"the tensor holds {got:.0f} (expected {want})",
    }


# Chains of (x @ w).relu() + 1 compiled by torch.compile: each link is one cuBLAS GEMM called
# from Inductor's generated code and one Triton kernel (the ReLU and the add fuse), as the
# compiled layer of an LLM step alternates GEMMs with fused elementwise kernels.
COMPILED_LINKS = (1, 8)


def _kernels_per_call(torch: Any, fn: Callable[[], Any]) -> int:
    """GPU kernels one call of fn launches, counted by torch.profiler."""
    profiler = torch.profiler
    torch.cuda.synchronize()
    with profiler.profile(activities=[profiler.ProfilerActivity.CUDA]) as prof:
        fn()
        torch.cuda.synchronize()
    names = [e.name for e in prof.events() if getattr(e, "device_type", None) == torch.autograd.DeviceType.CUDA]
    return sum(1 for name in names if not name.startswith(("Memcpy", "Memset")))


def torch_compiled_floor(torch: Any, reps: int, n: int = 500) -> dict[str, Any]:
    """What the host pays to call a torch.compile'd function, per kernel and per entry.

    Two compiled functions of tiny tensors (the GPU's work is negligible), a chain of 1 and of
    8 links (COMPILED_LINKS), each called n times back to back from Python and timed by the
    host clock to the end of the last kernel; their kernels counted by the profiler. The
    difference of the two per-call times over the difference of their kernel counts is the
    host's cost per kernel launched from compiled code; what is left of the short chain's time
    is the cost of entering the compiled function (guards and wrappers).
    """
    x = torch.randn(16, 64, device="cuda", dtype=torch.float32)
    w = torch.randn(64, 64, device="cuda", dtype=torch.float32) / 8.0
    out: dict[str, Any] = {"name": "torch_compiled", "calls_per_sample": n, "chains": []}
    ok = True
    checks = []
    for links in COMPILED_LINKS:

        def chain(x: Any, w: Any, links: int = links) -> Any:
            for _ in range(links):
                x = (x @ w).relu() + 1.0
            return x

        fn = torch.compile(chain, dynamic=False, fullgraph=True)
        got = fn(x, w)  # compiles
        want = chain(x.double(), w.double())
        err = float(((got.double() - want).norm() / want.norm()).item())
        ok = ok and err < 1e-3
        checks.append(f"{links} link(s): relative error {err:.1e}")
        for _ in range(20):
            fn(x, w)
        kernels = _kernels_per_call(torch, lambda: fn(x, w))
        samples = []
        for _ in range(reps):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(n):
                fn(x, w)
            torch.cuda.synchronize()
            samples.append((time.perf_counter() - t0) / n)
        out["chains"].append({"links": links, "kernels": kernels, "samples_s": samples})
    out["verified"] = ok
    out["check"] = "; ".join(checks) + " (against float64)"
    return out


def positive_seconds(xs: Any, where: str) -> list[float]:
    """A non-empty list of positive, finite seconds (not booleans), else ValueError."""
    if not isinstance(xs, list) or not xs:
        raise ValueError(f"{where} is not a non-empty list of seconds")
    for x in xs:
        if isinstance(x, bool) or not isinstance(x, int | float) or not 0 < x < float("inf"):
            raise ValueError(f"{where} holds {x!r}, not a positive number of seconds")
    return [float(x) for x in xs]


def compiled_floor_fit(raw: Any) -> tuple[tuple[float, float] | None, str]:
    """((host seconds per kernel, per entry), "") from torch_compiled_floor's record: the slope and
    intercept of the per-call time (medians) against the kernels per call, through the shortest
    and the longest chain; (None, why) where the
    record gives no fit (unverified, one chain, a slope or entry not above zero). A malformed
    record raises ValueError."""
    if not isinstance(raw, dict):
        raise ValueError("torch_compiled is not an object")
    if "error" in raw and "chains" not in raw:  # the measurement failed (no Triton, say)
        return None, f"its measurement failed ({str(raw['error'])[:120]})"
    chains = raw.get("chains")
    if not isinstance(chains, list) or not all(isinstance(c, dict) for c in chains):
        raise ValueError("torch_compiled.chains is not a list of objects")
    if not isinstance(raw.get("verified"), bool):
        raise ValueError("torch_compiled.verified is not true or false")
    rows = []
    for i, c in enumerate(chains):
        n = c.get("kernels")
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"torch_compiled.chains[{i}].kernels is not a positive whole number of kernels")
        rows.append((n, _median(positive_seconds(c.get("samples_s"), f"torch_compiled.chains[{i}].samples_s"))))
    if not raw["verified"]:
        return None, "its results did not match float64"
    rows.sort()
    if len(rows) < 2 or rows[-1][0] == rows[0][0]:
        return None, "it timed fewer than two chain lengths"
    (n_lo, t_lo), (n_hi, t_hi) = rows[0], rows[-1]
    per_kernel = (t_hi - t_lo) / (n_hi - n_lo)
    entry = t_lo - per_kernel * n_lo
    if per_kernel <= 0 or entry <= 0:
        return None, "its longer chain was not slower by a positive amount per kernel over a positive entry"
    return (per_kernel, entry), ""


def _fp8_operands(torch: Any, m: int, n: int, k: int) -> tuple[Any, Any, Any]:
    a = (torch.randn(m, k, device="cuda") * 0.5).to(torch.float8_e4m3fn)
    b = (torch.randn(n, k, device="cuda") * 0.5).to(torch.float8_e4m3fn).t()  # k x n, column-major
    one = torch.ones((), device="cuda", dtype=torch.float32)
    return a, b, one


def _fp8_gemm(torch: Any, m: int, n: int, k: int, reps: int, fast: bool) -> tuple[list[float], bool, str]:
    a, b, one = _fp8_operands(torch, m, n, k)

    def fn() -> Any:
        c = torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16, use_fast_accum=fast)
        return c[0] if isinstance(c, tuple) else c  # (out, amax) before PyTorch 2.5

    times = _sample_times(torch, fn, reps)
    c = fn()
    err = _rel_err(torch, c[:32], a[:32].float() @ b.float())
    return times, err < 3e-2, f"rel. error {err:.1e} vs fp32 on 32 rows"


def _int8_gemm(torch: Any, m: int, n: int, k: int, reps: int) -> tuple[list[float], bool, str]:
    a = torch.randint(-8, 9, (m, k), device="cuda", dtype=torch.int8)
    b = torch.randint(-8, 9, (n, k), device="cuda", dtype=torch.int8).t()  # k x n, column-major
    times = _sample_times(torch, lambda: torch._int_mm(a, b), reps)
    c = torch._int_mm(a, b)
    ref = a[:16].double() @ b.double()  # exact: |sum| < 2**53
    ok = bool(torch.equal(c[:16].double(), ref))
    return times, ok, "exact against float64 on 16 rows" if ok else "differs from float64 on 16 rows"


def matmul_ceilings(torch: Any, reps: int, skipped: list[str] | None = None) -> list[dict[str, Any]]:
    """The 'large matrix product through the library' ceiling, per dtype (8192^3, random data).

    bf16, fp16 and tf32 through torch.matmul; fp8 e4m3 through torch._scaled_mm (the faster
    of plain and fast accumulation) and int8 through torch._int_mm, where the GPU and this
    PyTorch have them. A dtype that fails is left out and said in ``skipped``.
    """
    out: list[dict[str, Any]] = []
    n = 8192
    cc = torch.cuda.get_device_capability()
    for dtype_name in ("bf16", "fp16", "tf32", "fp8", "int8"):
        try:
            rec = _one_ceiling(torch, dtype_name, n, reps, cc)
        except Exception as e:  # report, keep the rest
            if skipped is not None:
                skipped.append(f"{dtype_name} matrix-product ceiling (PyTorch): {_first_line(e)}")
            rec = None
        finally:
            _set_tf32(torch, False)
            torch.cuda.empty_cache()
        if rec is not None:
            out.append(rec)
    return out


def _one_ceiling(torch: Any, dtype_name: str, n: int, reps: int, cc: tuple[int, int]) -> dict[str, Any] | None:
    flops = 2 * n**3
    impl = "torch.matmul (cuBLAS)"
    if dtype_name in ("bf16", "fp16", "tf32"):
        dt = {"bf16": torch.bfloat16, "fp16": torch.float16, "tf32": torch.float32}[dtype_name]
        _set_tf32(torch, dtype_name == "tf32")
        a = torch.randn(n, n, device="cuda", dtype=dt)
        b = torch.randn(n, n, device="cuda", dtype=dt)
        times = _sample_times(torch, functools.partial(torch.matmul, a, b), reps)
        c = torch.matmul(a, b)
        err = _rel_err(torch, c[:64], a[:64].double() @ b.double())
        if not err < 3e-2:
            raise RuntimeError(f"{dtype_name} matmul check failed: relative error {err:.2e}")
        check = f"rel. error {err:.1e} vs float64 on 64 rows"
    elif dtype_name == "fp8":
        if cc < (8, 9) or not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
            return None
        times, check = [], ""
        for fast in (False, True):
            tt, ok, chk = _fp8_gemm(torch, n, n, n, reps, fast)
            if not ok:
                raise RuntimeError(f"fp8 _scaled_mm check failed ({chk})")
            if not times or _median(tt) < _median(times):
                times, check = tt, chk + (", fast accumulation" if fast else "")
                impl = "torch._scaled_mm e4m3 -> bf16 (cuBLASLt)" + (", use_fast_accum" if fast else "")
    else:
        if cc < (7, 5) or not hasattr(torch, "_int_mm"):
            return None
        times, ok, check = _int8_gemm(torch, n, n, n, reps)
        if not ok:
            raise RuntimeError(f"int8 _int_mm check failed ({check})")
        impl = "torch._int_mm s8 -> s32 (cuBLASLt)"
    t = _median(times)
    return {
        "name": f"{dtype_name}_matmul_torch",
        "unit": "FLOP/s",
        "value": flops / t,
        "work": flops,
        "median_s": t,
        "reps": reps,
        "verified": True,
        "samples_s": times,
        "instruction": impl,
        "check": check,
    }


def p2p_copy(torch: Any, quick: bool, src: int = 0, dst: int = 1) -> dict[str, Any]:
    """Peer-to-peer copy bandwidth: ``b.copy_(a)`` from cuda:src to cuda:dst, 1 GiB (256 MiB quick).

    Host clock around each copy with both devices synchronized before and after; the copy is
    checked (destination zeroed first, then the byte sums and a strided sample compared).
    """
    nbytes = (256 if quick else 1024) << 20
    a = torch.randint(0, 256, (nbytes,), dtype=torch.uint8, device=f"cuda:{src}")
    b = torch.empty(nbytes, dtype=torch.uint8, device=f"cuda:{dst}")
    peer = bool(torch.cuda.can_device_access_peer(src, dst))

    def sync() -> None:
        torch.cuda.synchronize(src)
        torch.cuda.synchronize(dst)

    b.copy_(a)
    sync()
    samples = []
    for _ in range(3 if quick else 7):
        sync()
        t0 = time.perf_counter()
        b.copy_(a)
        sync()
        samples.append(time.perf_counter() - t0)
    b.zero_()
    sync()
    b.copy_(a)
    sync()
    ok = int(a.sum(dtype=torch.int64)) == int(b.sum(dtype=torch.int64)) and bool(
        torch.equal(a[::4099].cpu(), b[::4099].cpu())
    )
    out = {"bytes": nbytes, "src": src, "dst": dst, "peer_access": peer, "samples_s": samples, "verified": ok}
    del a, b
    torch.cuda.empty_cache()
    return out


# (label, dtype, m, n, k): the GEMM terms of the expected-time model. Aligned 8192^3 rates per
# dtype are the matmul ceilings above.
GEMM_SHAPES: list[tuple[str, str, int, int, int]] = [
    ("m not a multiple of 8", "bf16", 8191, 8192, 8192),
    ("k not a multiple of 8", "bf16", 8192, 8192, 8191),
    ("n not a multiple of 8", "bf16", 8192, 8191, 8192),
    ("odd (not multiples of 8)", "bf16", 6143, 6145, 6147),
    # leading dimensions in multiples of 4 or 8 bytes, not 16: cuBLAS's cp.async "align2" kernels
    ("k a multiple of 2, not of 8", "bf16", 8192, 8192, 8190),
    ("n a multiple of 2, not of 8", "bf16", 8192, 8190, 8192),
    ("k a multiple of 4, not of 8", "bf16", 8192, 8192, 8188),
    ("small", "bf16", 512, 512, 512),
    ("small", "bf16", 1024, 1024, 1024),
    ("skinny", "bf16", 16, 8192, 8192),
    # the same through F.linear (x @ W^T, W stored out x in, as nn.Linear keeps it): the
    # layout of decode's projections, reported beside it (cuBLAS streams both alike on H100
    # and H200: validation/expected/*/kernels/skinny-linear.json), so one figure serves both
    ("skinny linear", "bf16", 16, 8192, 8192),
    # one 128x128 tile, one k-block: the fixed cost of a library GEMM kernel (timed per GEMM in
    # a CUDA graph of GRAPH_GEMMS of them, so the launch and event floors are out)
    ("one tile in a graph", "bf16", 128, 128, 128),
    # 1024 x 1024 GEMMs of one k-block, per node of a CUDA graph, on the TMA path and on each of
    # cuBLAS's pre-Hopper paths (one kernel each on an H100 and an H200:
    # validation/expected/*/kernels/gemm-floors.json): what a pre-Hopper kernel adds to the
    # fixed cost (expected.gemm_kernel_floor_extra_s)
    ("one k-block in a graph", "bf16", 1024, 1024, 64),
    ("one k-block in a graph", "fp32", 1024, 1024, 8),
    ("one k-block in a graph", "tf32", 1024, 1024, 16),
    ("one k-block in a graph", "bf16", 1024, 1024, 31),
    ("one k-block in a graph", "bf16", 1024, 1024, 30),
    # torch.mv, y = A x with A m x k (n = 1): aligned, cuBLASLt streams A with its GEMM kernels;
    # with m or k not a multiple of 8, cuBLAS's gemv2T/gemvx kernels take it
    # (validation/expected/h200/kernels/kshapes-gemv-seed*.json)
    ("gemv", "bf16", 16384, 1, 16384),
    ("gemv, k not a multiple of 8", "bf16", 16384, 1, 16383),
    ("gemv, m not a multiple of 8", "bf16", 16383, 1, 16384),
    ("gemv, m and k not multiples of 8", "bf16", 12289, 1, 12287),
    ("mid-size", "bf16", 3072, 3072, 3072),
    ("mid-size", "bf16", 2304, 2304, 8192),
    ("m not a multiple of 16", "fp8", 8191, 8192, 8192),
    ("k not a multiple of 16", "fp8", 8192, 8192, 8184),
    ("CUDA cores (tf32 off)", "fp32", 8192, 8192, 8192),
    ("CUDA cores (tf32 off)", "fp32", 4096, 4096, 4096),
]


def dirty_writeback(torch: Any, reps: int) -> dict[str, Any]:
    """What the L2's dirty lines cost a streaming read: a sum over 4x the L2 timed after a
    flush that writes (zero_ of a buffer 4x the L2: every line left dirty, the usual way
    benchmarks flush) and after one that reads (clean lines). Both with the GPU kept busy
    before the start event, so only the GPU's time is timed."""
    l2 = int(torch.cuda.get_device_properties(0).L2_cache_size)
    n = 4 * l2 // 4
    flush = torch.empty(n, device="cuda", dtype=torch.float32)
    other = torch.ones(n, device="cuda", dtype=torch.float32)
    x = torch.ones(n, device="cuda", dtype=torch.float32)
    out: dict[str, Any] = {"name": "l2_dirty_writeback", "l2_bytes": l2, "read_bytes": 4 * n}
    ok = True
    for mode in ("clean", "dirty"):
        samples = []
        for _ in range(reps + 2):
            if mode == "dirty":
                flush.zero_()
            else:
                other.sum()
            torch.cuda._sleep(BUSY_CYCLES)
            seconds, got = _timed_once(torch, x.sum)
            samples.append(seconds)
            ok = ok and float(got.item()) == float(n)
        out[f"{mode}_samples_s"] = samples[2:]
        out[f"{mode}_median_s"] = _median(samples[2:])
    out["verified"] = ok
    out["check"] = f"each sum of {n:,} ones is {n:,}" if ok else "a sum was wrong"
    del flush, other, x
    return out


GRAPH_GEMMS = 200


def _gemm_tolerance(dtype_name: str) -> float:
    """Relative error a GEMM result may have against float64: fp32 tight enough to prove TF32 was off."""
    return 1e-4 if dtype_name == "fp32" else 3e-2


def _graph_gemm(
    torch: Any, m: int, n: int, k: int, reps: int, dtype_name: str = "bf16"
) -> tuple[list[float], bool, str]:
    """Time per GEMM (bf16; fp32 with TF32 off; tf32) when GRAPH_GEMMS of them are replayed
    from one CUDA graph."""
    dt = torch.bfloat16 if dtype_name == "bf16" else torch.float32
    _set_tf32(torch, dtype_name == "tf32")
    try:
        a = torch.randn(m, k, device="cuda", dtype=dt)
        b = torch.randn(k, n, device="cuda", dtype=dt)
        c = torch.empty(m, n, device="cuda", dtype=dt)
        torch.mm(a, b, out=c)  # cuBLAS picks and loads its kernel outside the capture
        torch.cuda.synchronize()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            for _ in range(GRAPH_GEMMS):
                torch.mm(a, b, out=c)
        times = [t / GRAPH_GEMMS for t in _sample_times(torch, graph.replay, reps)]
        err = _rel_err(torch, c.double(), a.double() @ b.double())
    finally:
        _set_tf32(torch, False)
    del a, b, c, graph
    tol = _gemm_tolerance(dtype_name)
    return times, err < tol, f"rel. error {err:.1e} vs float64 (limit {tol:g})"


def gemm_efficiency(torch: Any, reps: int) -> list[dict[str, Any]]:
    """GEMM shapes below the ceiling: odd, small, skinny, GEMV, mid-size, fp8 unaligned, fp32 SGEMM.

    A shape the library refuses (fp8 with k not a multiple of 16) is recorded with its error.
    fp32 rows are checked against float64 tightly enough (1e-4) to prove TF32 was off.
    """
    out: list[dict[str, Any]] = []
    cc = torch.cuda.get_device_capability()
    for label, dtype_name, m, n, k in GEMM_SHAPES:
        rec: dict[str, Any] = {"label": label, "dtype": dtype_name, "m": m, "n": n, "k": k, "reps": reps}
        try:
            if dtype_name == "fp8":
                if cc < (8, 9) or not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
                    continue
                times, ok, check = _fp8_gemm(torch, m, n, k, reps, True)
                rec["impl"] = "torch._scaled_mm e4m3 -> bf16, use_fast_accum"
            elif label == "skinny linear":
                a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
                w = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
                times = _sample_times(torch, functools.partial(torch.nn.functional.linear, a, w), reps, busy=True)
                c = torch.nn.functional.linear(a, w)
                rows = min(32, m)
                err = _rel_err(torch, c[:rows], a[:rows].double() @ w.double().T)
                ok, check = err < 3e-2, f"rel. error {err:.1e} vs float64 on {rows} rows (limit 3e-2)"
                rec["impl"] = "torch.nn.functional.linear (cuBLAS, x @ W^T)"
                del a, w, c
            elif label.startswith("gemv"):
                a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
                x = torch.randn(k, device="cuda", dtype=torch.bfloat16)
                times = _sample_times(torch, functools.partial(torch.mv, a, x), reps, busy=True)
                y = torch.mv(a, x)
                rows = min(32, m)
                err = _rel_err(torch, y[:rows], a[:rows].double() @ x.double())
                ok, check = err < 3e-2, f"rel. error {err:.1e} vs float64 on {rows} rows (limit 3e-2)"
                rec["impl"] = "torch.mv (cuBLAS)"
                del a, x, y
            elif label in ("one tile in a graph", "one k-block in a graph"):
                times, ok, check = _graph_gemm(torch, m, n, k, reps, dtype_name)
                rec["impl"] = f"torch.mm into one output, {GRAPH_GEMMS} per CUDA graph; time per GEMM" + (
                    ", allow_tf32=False" if dtype_name == "fp32" else ""
                )
            else:
                dt = torch.bfloat16 if dtype_name == "bf16" else torch.float32
                _set_tf32(torch, False)
                a = torch.randn(m, k, device="cuda", dtype=dt)
                b = torch.randn(k, n, device="cuda", dtype=dt)
                times = _sample_times(torch, functools.partial(torch.matmul, a, b), reps, busy=True)
                c = torch.matmul(a, b)
                rows = min(32, m)
                err = _rel_err(torch, c[:rows], a[:rows].double() @ b.double())
                tol = _gemm_tolerance(dtype_name)
                ok = err < tol
                check = f"rel. error {err:.1e} vs float64 on {rows} rows (limit {tol:g})"
                rec["impl"] = "torch.matmul (cuBLAS)" + (", allow_tf32=False" if dtype_name == "fp32" else "")
                del a, b, c
            rec.update(samples_s=times, median_s=_median(times), verified=ok, check=check)
        except Exception as e:  # e.g. a shape the library refuses: recorded, not fatal
            rec.update(error=_first_line(e), verified=False)
        finally:
            torch.cuda.empty_cache()
        out.append(rec)
    return out


def gemm_ops(torch: Any, reps: int) -> list[dict[str, Any]]:
    shapes = [
        ("square", 8192, 8192, 8192),
        ("square-4k", 4096, 4096, 4096),
        ("skinny", 32768, 256, 16384),
        ("small", 512, 512, 512),
        ("odd (not multiples of 8)", 6143, 6145, 6147),
    ]
    out = []
    for label, m, n, k in shapes:
        a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(k, n, device="cuda", dtype=torch.bfloat16)
        t = _median_time(torch, functools.partial(torch.matmul, a, b), reps)
        c = torch.matmul(a, b)
        err = _rel_err(torch, c[:32], a[:32].float() @ b.float())
        out.append(
            {
                "op": "gemm",
                "label": label,
                "dtype": "bf16",
                "params": {"m": m, "n": n, "k": k},
                "median_s": t,
                "reps": reps,
                "impl": "torch.matmul (cuBLAS)",
                "verified": err < 3e-2,
                "check": f"rel. error {err:.1e} vs fp32 on 32 rows",
            }
        )
        del a, b, c
    return out


def attention_ops(torch: Any, reps: int) -> list[dict[str, Any]]:
    import torch.nn.functional as F  # type: ignore[import-not-found]

    out = []
    b, h, s, d = 1, 32, 8192, 128
    q = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(b, h, s, d, device="cuda", dtype=torch.bfloat16)
    t = _median_time(torch, lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), reps)
    o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    # check one head against an fp32 recomputation
    qs, ks, vs = q[0, 0].float(), k[0, 0].float(), v[0, 0].float()
    sc = (qs @ ks.T) / d**0.5
    sc = sc.masked_fill(torch.ones(s, s, device="cuda", dtype=torch.bool).triu(1), float("-inf"))
    err = _rel_err(torch, o[0, 0], torch.softmax(sc, -1) @ vs)
    out.append(
        {
            "op": "attention",
            "label": "flash (SDPA), causal",
            "dtype": "bf16",
            "params": {"batch": b, "heads": h, "seq": s, "head_dim": d, "causal": True, "impl": "flash"},
            "median_s": t,
            "reps": reps,
            "impl": "F.scaled_dot_product_attention",
            "verified": err < 3e-2,
            "check": f"rel. error {err:.1e} vs fp32 on one head",
        }
    )
    del q, k, v, o, sc
    s = 4096
    q = torch.randn(b * h, s, d, device="cuda", dtype=torch.bfloat16)
    k = torch.randn(b * h, s, d, device="cuda", dtype=torch.bfloat16)
    v = torch.randn(b * h, s, d, device="cuda", dtype=torch.bfloat16)
    buf = torch.empty(b * h, s, s, device="cuda", dtype=torch.bfloat16)

    def naive() -> Any:
        sc = torch.baddbmm(buf, q, k.transpose(1, 2), beta=0.0, alpha=d**-0.5)  # S written
        p = torch.softmax(sc, dim=-1)  # S read, P written
        return torch.bmm(p, v)  # P read

    t = _median_time(torch, naive, reps)
    sc = torch.baddbmm(buf, q, k.transpose(1, 2), beta=0.0, alpha=d**-0.5)
    pr = torch.softmax(sc, dim=-1)
    phases = {
        "Q K^T (writes S)": _median_time(
            torch, lambda: torch.baddbmm(buf, q, k.transpose(1, 2), beta=0.0, alpha=d**-0.5), reps
        ),
        "softmax (reads S, writes P)": _median_time(torch, lambda: torch.softmax(sc, dim=-1), reps),
        "P V (reads P)": _median_time(torch, lambda: torch.bmm(pr, v), reps),
    }
    del sc, pr
    o = naive()
    ref = torch.softmax((q[0].float() @ k[0].float().T) / d**0.5, -1) @ v[0].float()
    err = _rel_err(torch, o[0], ref)
    out.append(
        {
            "op": "attention",
            "label": "naive (explicit matmuls)",
            "dtype": "bf16",
            "params": {"batch": b, "heads": h, "seq": s, "head_dim": d, "causal": False, "impl": "naive"},
            "median_s": t,
            "reps": reps,
            "impl": "baddbmm + softmax + bmm",
            "verified": err < 3e-2,
            "phases_s": phases,
            "check": f"rel. error {err:.1e} vs fp32 on one head",
        }
    )
    del q, k, v, o, buf
    torch.cuda.empty_cache()
    return out


def llama_ops(torch: Any, reps: int) -> list[dict[str, Any]]:
    """A Llama-3.1-8B-shaped decode step and prefill, plain PyTorch ops, random weights."""
    import torch.nn.functional as F

    L, d, h, hk, dh, f, V = 32, 4096, 32, 8, 128, 14336, 128256
    bf = torch.bfloat16
    g = torch.Generator(device="cuda").manual_seed(0)

    def w(*shape: int) -> Any:
        return torch.randn(*shape, device="cuda", dtype=bf, generator=g) * 0.02

    layers = [
        {
            "wq": w(h * dh, d),
            "wk": w(hk * dh, d),
            "wv": w(hk * dh, d),
            "wo": w(d, h * dh),
            "wg": w(f, d),
            "wu": w(f, d),
            "wd": w(d, f),
            "n1": torch.ones(d, device="cuda", dtype=bf),
            "n2": torch.ones(d, device="cuda", dtype=bf),
        }
        for _ in range(L)
    ]
    emb, head, nf = w(V, d), w(V, d), torch.ones(d, device="cuda", dtype=bf)

    def rms(x: Any, wt: Any) -> Any:
        return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(x.dtype) * wt

    def forward(tokens: Any, kcache: list[Any], vcache: list[Any], pos: int, causal: bool) -> Any:
        B, S = tokens.shape
        x = emb[tokens]
        for i, p in enumerate(layers):
            y = rms(x, p["n1"])
            q = (y @ p["wq"].T).view(B, S, h, dh).transpose(1, 2)
            k = (y @ p["wk"].T).view(B, S, hk, dh).transpose(1, 2)
            v = (y @ p["wv"].T).view(B, S, hk, dh).transpose(1, 2)
            kcache[i][:, :, pos : pos + S] = k
            vcache[i][:, :, pos : pos + S] = v
            kk, vv = kcache[i][:, :, : pos + S], vcache[i][:, :, : pos + S]
            a = F.scaled_dot_product_attention(q, kk, vv, is_causal=causal, enable_gqa=True)
            x = x + a.transpose(1, 2).reshape(B, S, h * dh) @ p["wo"].T
            y = rms(x, p["n2"])
            x = x + (F.silu(y @ p["wg"].T) * (y @ p["wu"].T)) @ p["wd"].T
        return rms(x[:, -1], nf) @ head.T

    out = []
    for batch, ctx in ((1, 1024), (32, 1024)):
        kc = [torch.randn(batch, hk, ctx + 1, dh, device="cuda", dtype=bf) for _ in range(L)]
        vc = [torch.randn(batch, hk, ctx + 1, dh, device="cuda", dtype=bf) for _ in range(L)]
        tok = torch.randint(0, V, (batch, 1), device="cuda")

        def step(tok: Any = tok, kc: list[Any] = kc, vc: list[Any] = vc, ctx: int = ctx) -> Any:
            return forward(tok, kc, vc, ctx, False)

        torch.cuda.synchronize()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(2):
                step()
        torch.cuda.current_stream().wait_stream(s)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph):
            logits = step()
        t = _median_time(torch, graph.replay, reps)
        ok = bool(torch.isfinite(logits).all()) and float(logits.float().abs().sum()) > 0
        out.append(
            {
                "op": "decode",
                "label": f"llama-3.1-8b shape, batch {batch}",
                "dtype": "bf16",
                "params": {"model": "llama-3.1-8b", "batch": batch, "context": ctx},
                "median_s": t,
                "reps": reps,
                "impl": "plain PyTorch ops, replayed as a CUDA graph",
                "verified": ok,
                "check": "logits finite and non-zero",
            }
        )
        del kc, vc, graph, logits
        torch.cuda.empty_cache()
    seq = 2048
    kc = [torch.empty(1, hk, seq, dh, device="cuda", dtype=bf) for _ in range(L)]
    vc = [torch.empty(1, hk, seq, dh, device="cuda", dtype=bf) for _ in range(L)]
    tok = torch.randint(0, V, (1, seq), device="cuda")
    t = _median_time(torch, lambda: forward(tok, kc, vc, 0, True), max(5, reps // 3))
    logits = forward(tok, kc, vc, 0, True)
    ok = bool(torch.isfinite(logits).all()) and float(logits.float().abs().sum()) > 0
    out.append(
        {
            "op": "prefill",
            "label": "llama-3.1-8b shape, 2048 tokens",
            "dtype": "bf16",
            "params": {"model": "llama-3.1-8b", "batch": 1, "seq": seq},
            "median_s": t,
            "reps": max(5, reps // 3),
            "impl": "plain PyTorch ops",
            "verified": ok,
            "check": "logits finite and non-zero",
        }
    )
    del layers, emb, head, kc, vc
    torch.cuda.empty_cache()
    return out


def profiled_kernels(torch: Any, calls: list[Any], block: bool = False) -> list[list[dict[str, Any]]]:
    """Each call's kernels in launch order (name, grid, its block if asked, profiled duration): the
    calls run once (cuBLAS picks and caches its kernel on the first), then once each under the
    profiler with a sleep kernel between them to tell their kernels apart."""
    import json
    import os
    import tempfile

    from torch.profiler import ProfilerActivity, profile  # type: ignore[import-not-found]

    for c in calls:
        c()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for c in calls:
            torch.cuda._sleep(1000)
            c()
        torch.cuda._sleep(1000)
        torch.cuda.synchronize()
    fd, path = tempfile.mkstemp(suffix=".json")
    os.close(fd)
    try:
        prof.export_chrome_trace(path)
        with open(path) as f:
            events = json.load(f).get("traceEvents", [])
    finally:
        os.unlink(path)
    groups: list[list[dict[str, Any]]] = []
    for e in sorted((e for e in events if e.get("cat") == "kernel"), key=lambda e: e.get("ts", 0)):
        if "spin_kernel" in str(e.get("name")):
            groups.append([])
        elif groups:
            a = e.get("args") or {}
            rec = {"name": e.get("name"), "grid": a.get("grid")}
            if block:
                rec["block"] = a.get("block")
            rec["duration_s"] = (e.get("dur") or 0) * 1e-6
            groups[-1].append(rec)
    if len(groups) != len(calls) + 1:
        raise RuntimeError(f"the profiler's trace holds {len(groups) - 1} calls' kernels, not {len(calls)}")
    return groups[:-1]


def refined_choices(torch: Any, records: list[dict[str, Any]], choice: Any) -> list[dict[str, Any]]:
    """The records of a choice sweep and, after them, those of its refinement: choice.REFINE_PASSES
    passes, each sweeping the middles of the large sides between which cuBLAS's kernel changed
    (choice.refine_shapes, over every record so far). ``choice`` is roofcalc/expected/choice.py
    (passed in: a bench script loads it by its path, without the package's pydantic)."""
    out = list(records)
    for _ in range(choice.REFINE_PASSES):
        shapes = choice.refine_shapes(got[0] for r in out if (got := choice.record_choice(r)) is not None)
        if not shapes:
            break
        out += gemm_choices(torch, shapes)
    return out


def gemm_choices(
    torch: Any, shapes: dict[str, list[tuple[int, int, int]]] | None = None, block: bool = False
) -> list[dict[str, Any]]:
    """Which kernels cuBLAS runs for products with a small side (few rows or few columns): FP32 with
    TF32 off and on, bf16 and fp16, over a grid of shapes per dtype (roofcalc/expected/choice.py
    grid_shapes): each shape's torch.matmul once to warm cuBLAS's heuristic, then every shape once
    under the profiler, a sleep kernel between shapes to tell their kernels apart. Each record:
    dtype, m, n, k and the kernels (name, grid, each one's block if asked, profiled duration) in
    launch order."""
    if shapes is None:
        from ..expected.choice import DTYPES, column_shapes, grid_shapes, row_shapes, shallow_shapes

        # the vector planes' kernels are told apart by their launch: every kernel's block is kept
        shapes = {dt: grid_shapes(dt) + row_shapes(dt) + column_shapes(dt) + shallow_shapes(dt) for dt in DTYPES}
        block = True
    torch_dtype = {"fp32": torch.float32, "tf32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}
    old = torch.backends.cuda.matmul.allow_tf32
    out: list[dict[str, Any]] = []
    try:
        for dtype, grid in shapes.items():
            if not grid:
                continue
            a_buf = torch.randn(max(m * k for m, _, k in grid), device="cuda", dtype=torch_dtype[dtype])
            b_buf = torch.randn(max(k * n for _, n, k in grid), device="cuda", dtype=torch_dtype[dtype])

            def call(m: int, n: int, k: int, a_buf: Any = a_buf, b_buf: Any = b_buf) -> Any:
                return torch.matmul(a_buf[: m * k].view(m, k), b_buf[: k * n].view(k, n))

            _set_tf32(torch, dtype == "tf32")
            groups = profiled_kernels(torch, [lambda m=m, n=n, k=k: call(m, n, k) for m, n, k in grid], block)
            out += [
                {"dtype": dtype, "m": m, "n": n, "k": k, "kernels": g}
                for (m, n, k), g in zip(grid, groups, strict=True)
            ]
            del a_buf, b_buf, call  # call's defaults hold the buffers too
    finally:
        _set_tf32(torch, old)
    return out

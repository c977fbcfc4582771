"""The probe's report and calibration, computed from raw measurements (no GPU needed).

Every saved report keeps its raw measurements, so ``build_report`` can recompute every
comparison anywhere: from the ceilings, residency and op timings of schema 1 reports, and
from the kernel floors, per-SM bandwidth, latency, wgmma, GEMM-efficiency and interconnect
sections that schema 2 adds. A figure enters the calibration only after its checks pass
(see ``expected_figures``); what is left out is said in the report's notes.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..errors import DomainError
from ..expected import gemm_floor_residue
from ..hardware import GEMM_PATHS, MAX_FIGURE, MIN_FIGURE, Expected, Hardware
from .torch_ops import compiled_floor_fit

SCHEMA_VERSION = 2  # of the report (probe --json)
CALIBRATION_SCHEMA = 2  # of the calibration file (written where the model has a 'schema' field)
IMPOSSIBLE = 1.2  # a measured ceiling above 1.2x its datasheet figure is a measurement error

# measured ceiling -> (hardware field it is compared with, dtype or None)
DATASHEET_OF: dict[str, tuple[str, str | None]] = {
    "dram_read": ("bandwidth", None),
    "dram_write": ("bandwidth", None),
    "dram_copy": ("bandwidth", None),
    "dram_triad": ("bandwidth", None),
    "dram_copy_memcpy": ("bandwidth", None),
    "l2_read": ("none", None),
    "fp32_fma": ("cuda_core", "fp32"),
    "fp64_fma": ("cuda_core", "fp64"),
    "fp16_fma": ("cuda_core", "fp16"),
    "bf16_fma": ("cuda_core", "bf16"),
    "bf16_mma_sync": ("peak", "bf16"),
    "fp16_mma_sync": ("peak", "fp16"),
    "fp8_mma_sync": ("peak", "fp8"),
    "bf16_wgmma": ("peak", "bf16"),
    "fp16_wgmma": ("peak", "fp16"),
    "fp8_wgmma": ("peak", "fp8"),
    "tf32_wgmma": ("peak", "tf32"),
    "int8_wgmma": ("peak", "int8"),
    "bf16_matmul_torch": ("peak", "bf16"),
    "fp16_matmul_torch": ("peak", "fp16"),
    "tf32_matmul_torch": ("peak", "tf32"),
    "fp8_matmul_torch": ("peak", "fp8"),
    "int8_matmul_torch": ("peak", "int8"),
    "launch_overhead": ("launch", None),
}
# which measured ceilings calibrate which tensor/dense peak (the best of them is taken: a hardware
# ceiling, whichever instruction or library reached it)
CALIBRATES = {
    "bf16": ["bf16_mma_sync", "bf16_wgmma", "bf16_matmul_torch"],
    "fp16": ["fp16_mma_sync", "fp16_wgmma", "fp16_matmul_torch"],
    "fp8": ["fp8_mma_sync", "fp8_wgmma", "fp8_matmul_torch"],
    "tf32": ["tf32_wgmma", "tf32_matmul_torch"],
    "int8": ["int8_wgmma", "int8_matmul_torch"],
    "fp32": ["fp32_fma"],
}
# Dense tensor-core work per SM per clock, by compute capability: the datasheet peak over
# (SMs x the clock it assumes). CC 9.0: H100 SXM5 989.4 TFLOP/s bf16 = 132 SMs x 1830 MHz x 4096
# (NVIDIA H100 Tensor Core GPU Architecture whitepaper, Table 3).
TENSOR_PER_CLOCK: dict[str, dict[str, int]] = {
    "9.0": {"bf16": 4096, "fp16": 4096, "tf32": 2048, "fp8": 8192, "int8": 8192}
}
# the environment variables the interconnect section records (read, never set)
NVLS_VARS = ("NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS")
# bf16 shapes with a leading dimension that is not a multiple of 8 elements (16 bytes)
UNALIGNED_LABELS = ("k not a multiple of 8", "n not a multiple of 8", "odd (not multiples of 8)")
# bf16 shapes whose leading dimensions are multiples of 4 or 8 bytes but not of 16
WORD_ALIGNED_LABELS = ("k a multiple of 2, not of 8", "n a multiple of 2, not of 8", "k a multiple of 4, not of 8")


# ------------------------------------------------------------------ models


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True)


class CeilingRow(_Frozen):
    name: str
    unit: str
    datasheet: float | None
    measured: float
    fraction: float | None
    median_s: float
    reps: int
    sm_clock_mhz: float | None = None
    # added in schema 2 (absent from older saved reports)
    instruction: str | None = None
    p10_s: float | None = None
    p90_s: float | None = None


class ResidencyRow(_Frozen):
    name: str
    threads: int
    regs: int
    static_smem: int
    dyn_smem: int
    carveout: int
    expected_limiter: str
    solver_limiters: list[str]
    solver_blocks: int
    runtime_blocks: int
    measured_blocks: int
    agree: bool


class OpRow(_Frozen):
    op: str
    label: str
    dtype: str
    params: dict[str, Any]
    impl: str
    bound: str
    predicted_datasheet_s: float
    predicted_calibrated_s: float
    measured_s: float
    ratio: float
    verified: bool
    note: str | None
    phases_s: dict[str, float] | None = None


class FloorRow(_Frozen):
    name: str
    method: str
    median_s: float
    p10_s: float
    p90_s: float
    samples: int
    kernels_per_sample: int


class CurvePoint(_Frozen):
    sms: int
    read_bytes_per_s: float | None
    read_fraction_of_ceiling: float | None
    copy_bytes_per_s: float | None
    read_config: str | None = None


class InflightPoint(_Frozen):
    sms: int
    threads: int
    unroll: int
    bytes_in_flight_per_sm: int
    bytes_per_s: float
    p10_s: float
    p90_s: float


class PerSMReport(_Frozen):
    read_ceiling_bytes_per_s: float | None
    per_sm_bytes_per_s: float | None
    per_sm_config: str | None
    sms_for_90pct: int | None
    curve: list[CurvePoint]
    inflight: list[InflightPoint]


class LatencyRow(_Frozen):
    name: str
    latency_s: float
    p10_s: float
    p90_s: float
    buffer_bytes: int
    stride_bytes: int
    steps: int
    samples: int


class GemmRow(_Frozen):
    label: str
    dtype: str
    m: int
    n: int
    k: int
    impl: str | None
    median_s: float | None
    p10_s: float | None
    p90_s: float | None
    flops_per_s: float | None
    fraction: float | None  # of this run's calibrated peak for the dtype
    fraction_datasheet: float | None
    verified: bool
    check: str | None = None
    error: str | None = None


class AllReduceRow(_Frozen):
    dtype: str
    bytes: int
    eager_s: float
    eager_p10_s: float
    eager_p90_s: float
    graph_s: float | None
    algbw_bytes_per_s: float
    busbw_bytes_per_s: float
    verified: bool
    graph_note: str | None = None


class InterconnectReport(_Frozen):
    gpus: int
    nccl: str | None
    env: dict[str, str | None]
    allreduce: list[AllReduceRow]
    p2p_bytes_per_s: float | None
    p2p_note: str | None
    complete: bool


class ProbeReport(_Frozen):
    version: int = SCHEMA_VERSION
    date: str
    command: str
    hardware: str
    device: dict[str, Any]
    driver: str | None
    nvcc: str | None
    quick: bool
    ceilings: list[CeilingRow]
    residency: list[ResidencyRow]
    ops: list[OpRow]
    summary: dict[str, Any]
    skipped: list[str]
    notes: list[str]
    raw: dict[str, Any]
    # added in schema 2
    floors: list[FloorRow] = []
    per_sm: PerSMReport | None = None
    latency: list[LatencyRow] = []
    gemm: list[GemmRow] = []
    interconnect: InterconnectReport | None = None
    expected: dict[str, Any] = {}


# ------------------------------------------------------------------ small helpers


def quantile(samples: list[float], q: float) -> float:
    """Linear interpolation between order statistics (numpy's default)."""
    s = sorted(samples)
    pos = q * (len(s) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return s[lo] + (s[hi] - s[lo]) * (pos - lo)


def median(samples: list[float]) -> float:
    """The probe's median: the upper middle sample (what the CUDA side reports too)."""
    s = sorted(samples)
    return s[len(s) // 2]


def spread_text(samples: list[float], fmt: Any) -> str:
    return f"median of {len(samples)}, p10-p90 {fmt(quantile(samples, 0.1))}-{fmt(quantile(samples, 0.9))}"


def _fmt_s(v: float) -> str:
    from ..units import fmt_time

    return str(fmt_time(v))


def _fmt_rate(unit: str) -> Any:
    from ..units import si

    return lambda v: str(si(v, unit))


def _ok_samples(x: Any) -> bool:
    return isinstance(x, list) and len(x) > 0 and all(isinstance(v, (int, float)) and v > 0 for v in x)


def _datasheet(hw: Hardware, name: str) -> float | None:
    kind, dt = DATASHEET_OF.get(name, ("none", None))
    if kind == "bandwidth":
        return hw.bandwidth
    if kind == "cuda_core" and dt in hw.cuda_core_flops_per_s:
        return float(hw.cuda_core_flops_per_s[dt].value)
    if kind == "peak" and dt in hw.peak_flops_per_s:
        return float(hw.peak_flops_per_s[dt].value)
    if kind == "launch" and hw.launch_overhead_s is not None:
        return float(hw.launch_overhead_s.value)
    return None


def _instruction(c: dict[str, Any]) -> str | None:
    if c.get("instruction"):
        return str(c["instruction"])
    name = c["name"]
    if name.endswith("_mma_sync"):
        return {"fp8": "mma.sync.aligned.m16n8k32 (e4m3)"}.get(name.split("_")[0], "mma.sync.aligned.m16n8k16")
    if name.endswith("_matmul_torch"):
        return "torch.matmul (cuBLAS)"
    if name.endswith("_fma"):
        return "FMA chains from registers"
    if name == "launch_overhead":
        return "10,000 empty kernels back to back"
    if name == "dram_copy_memcpy":
        return "cudaMemcpy device to device"
    if name.startswith(("dram_", "l2_")):
        return "16-byte loads/stores, best launch shape"
    return None


def all_ceilings(raw: dict[str, Any]) -> list[dict[str, Any]]:
    return list(raw.get("ceilings", [])) + list(raw.get("torch", {}).get("ceilings", []))


# ------------------------------------------------------------------ sections of the report


def floor_rows(raw: dict[str, Any]) -> list[FloorRow]:
    methods = {
        "event": "one tiny kernel (1 block, 32 threads) alone between two CUDA events",
        "stream": "tiny kernels launched back to back on one stream, per kernel",
        "graph": "a CUDA graph of tiny kernel nodes in sequence, replayed, per node",
        "torch_op": "x.add_(1) on a 1-element tensor, 1000 back to back from Python, per op (host clock)",
    }
    out = []
    for f in [*raw.get("floors", []), *([raw["torch"]["floor"]] if raw.get("torch", {}).get("floor") else [])]:
        if not f.get("verified") or not _ok_samples(f.get("samples_s")):
            continue
        s = f["samples_s"]
        method = methods.get(f["name"], f["name"])
        gap = f.get("gap_s")
        if isinstance(gap, (int, float)) and not isinstance(gap, bool) and 0 < gap < 3600:
            method += f"; samples {gap:g} s apart"
        out.append(
            FloorRow(
                name=f["name"],
                method=method,
                median_s=median(s),
                p10_s=quantile(s, 0.1),
                p90_s=quantile(s, 0.9),
                samples=len(s),
                kernels_per_sample=int(f.get("kernels_per_sample", 1)),
            )
        )
    return out


def _config(r: dict[str, Any]) -> str:
    return f"{r['threads']} threads x {r['unroll']} loads of 16 B"


def per_sm_report(raw: dict[str, Any], hw: Hardware, notes: list[str]) -> PerSMReport | None:
    ps = raw.get("per_sm")
    if not ps:
        return None
    sms = int(raw["device"]["sm_count"])
    limit = IMPOSSIBLE * hw.bandwidth

    def good(rows: list[dict[str, Any]], copy: bool) -> list[tuple[dict[str, Any], float]]:
        out = []
        for r in rows:
            if not r.get("verified") or not _ok_samples(r.get("samples_s")):
                continue
            if r.get("distinct_sms") != r["blocks"]:
                notes.append(
                    f"per-SM bandwidth: {r['blocks']} blocks ran on {r.get('distinct_sms')} SMs; that point is left out"
                )
                continue
            bw = (2.0 if copy else 1.0) * r["bytes"] / median(r["samples_s"])
            if bw > limit:
                notes.append(
                    f"per-SM bandwidth: {bw / 1e12:.2f} TB/s with {r['blocks']} SMs is above "
                    f"{IMPOSSIBLE}x the datasheet bandwidth; that point is left out"
                )
                continue
            out.append((r, bw))
        return out

    reads, copies = good(ps.get("read", []), False), good(ps.get("copy", []), True)
    ceil = next((c["value"] for c in raw.get("ceilings", []) if c["name"] == "dram_read"), None)
    if ceil is None and reads:
        ceil = max(bw for _, bw in reads)
    ks = sorted({r["blocks"] for r, _ in reads} | {r["blocks"] for r, _ in copies})
    curve = []
    for k in ks:
        rk = [(r, bw) for r, bw in reads if r["blocks"] == k]
        ck = [bw for r, bw in copies if r["blocks"] == k]
        best = max(rk, key=lambda t: t[1]) if rk else None
        curve.append(
            CurvePoint(
                sms=k,
                read_bytes_per_s=best[1] if best else None,
                read_fraction_of_ceiling=best[1] / ceil if best and ceil else None,
                copy_bytes_per_s=max(ck) if ck else None,
                read_config=_config(best[0]) if best else None,
            )
        )
    inflight = [
        InflightPoint(
            sms=r["blocks"],
            threads=r["threads"],
            unroll=r["unroll"],
            bytes_in_flight_per_sm=r["threads"] * r["unroll"] * 16,
            bytes_per_s=bw,
            p10_s=quantile(r["samples_s"], 0.1),
            p90_s=quantile(r["samples_s"], 0.9),
        )
        for r, bw in reads
        if r["blocks"] in (1, sms)
    ]
    ones = [(r, bw) for r, bw in reads if r["blocks"] == 1]
    best1 = max(ones, key=lambda t: t[1]) if ones else None
    reach = next(
        (p.sms for p in curve if p.read_fraction_of_ceiling is not None and p.read_fraction_of_ceiling >= 0.9), None
    )
    if curve and reach is None:
        top = max((p.read_fraction_of_ceiling or 0.0) for p in curve)
        notes.append(
            f"per-SM bandwidth: one block per SM never reached 90% of the read ceiling "
            f"(best {top:.0%}); the grid-stride kernels with more blocks per SM did"
        )
    return PerSMReport(
        read_ceiling_bytes_per_s=ceil,
        per_sm_bytes_per_s=best1[1] if best1 else None,
        per_sm_config=_config(best1[0]) if best1 else None,
        sms_for_90pct=reach,
        curve=curve,
        inflight=inflight,
    )


def latency_rows(raw: dict[str, Any], notes: list[str]) -> list[LatencyRow]:
    out = []
    for r in raw.get("latency", []):
        if not r.get("verified") or not _ok_samples(r.get("samples_s")):
            continue
        s = r["samples_s"]
        out.append(
            LatencyRow(
                name=r["name"],
                latency_s=median(s),
                p10_s=quantile(s, 0.1),
                p90_s=quantile(s, 0.9),
                buffer_bytes=r["buffer_bytes"],
                stride_bytes=r["stride_bytes"],
                steps=r["steps"],
                samples=len(s),
            )
        )
    by = {r.name: r for r in out}
    if "dram" in by and "l2" in by and by["dram"].latency_s <= by["l2"].latency_s:
        notes.append("memory latency: the DRAM chase was no slower than the L2 chase; it is not used")
        out = [r for r in out if r.name != "dram"]
    return out


def _peak(doc: dict[str, Any], dt: str) -> float | None:
    fig = doc.get("peak_flops_per_s", {}).get(dt)
    return float(fig["value"]) if fig else None


def gemm_rows(raw: dict[str, Any], hw: Hardware, cal_doc: dict[str, Any]) -> list[GemmRow]:
    out = []
    for c in raw.get("torch", {}).get("ceilings", []):
        dt = c["name"].removesuffix("_matmul_torch")
        n = round((c["work"] / 2) ** (1 / 3))
        peak, ds = _peak(cal_doc, dt), _datasheet(hw, c["name"])
        s = c.get("samples_s")
        out.append(
            GemmRow(
                label="aligned",
                dtype=dt,
                m=n,
                n=n,
                k=n,
                impl=c.get("instruction") or "torch.matmul (cuBLAS)",
                median_s=c["median_s"],
                p10_s=quantile(s, 0.1) if _ok_samples(s) else None,
                p90_s=quantile(s, 0.9) if _ok_samples(s) else None,
                flops_per_s=c["value"],
                fraction=c["value"] / peak if peak else None,
                fraction_datasheet=c["value"] / ds if ds else None,
                verified=True,
                check=c.get("check"),
            )
        )
    for g in raw.get("torch", {}).get("gemm", []):
        dt, m, n, k = g["dtype"], g["m"], g["n"], g["k"]
        s = g.get("samples_s")
        ok = bool(g.get("verified")) and _ok_samples(s) and not g.get("error")
        rate = 2.0 * m * n * k / median(s) if ok and s else None
        peak = _peak(cal_doc, dt)
        ds = float(hw.peak_flops_per_s[dt].value) if dt in hw.peak_flops_per_s else None
        if dt == "fp32" and "fp32" in hw.cuda_core_flops_per_s:
            ds = float(hw.cuda_core_flops_per_s["fp32"].value)
        out.append(
            GemmRow(
                label=g["label"],
                dtype=dt,
                m=m,
                n=n,
                k=k,
                impl=g.get("impl"),
                median_s=median(s) if ok and s else None,
                p10_s=quantile(s, 0.1) if ok and s else None,
                p90_s=quantile(s, 0.9) if ok and s else None,
                flops_per_s=rate,
                fraction=rate / peak if rate and peak else None,
                fraction_datasheet=rate / ds if rate and ds else None,
                verified=ok,
                check=g.get("check"),
                error=g.get("error"),
            )
        )
    return out


def interconnect_report(raw: dict[str, Any], hw: Hardware, notes: list[str]) -> InterconnectReport | None:
    ic = raw.get("interconnect")
    if not ic or not (ic.get("nccl") or ic.get("p2p")):
        return None
    doc = ic.get("nccl") or {}
    n = int(doc.get("world", ic.get("gpus", 0)))
    rows = []
    for r in doc.get("rows", []):
        if not _ok_samples(r.get("eager_samples_s")):
            continue
        e = r["eager_samples_s"]
        t = median(e)
        algbw = r["bytes"] / t
        gs = r.get("graph_samples_s")
        graph_ok = _ok_samples(gs) and bool(r.get("graph_verified"))
        gnote = r.get("graph_error") or (None if graph_ok or gs is None else "the graph's result check failed")
        rows.append(
            AllReduceRow(
                dtype=r["dtype"],
                bytes=r["bytes"],
                eager_s=t,
                eager_p10_s=quantile(e, 0.1),
                eager_p90_s=quantile(e, 0.9),
                graph_s=median(gs) if graph_ok and gs else None,
                algbw_bytes_per_s=algbw,
                busbw_bytes_per_s=algbw * 2 * (n - 1) / n if n > 1 else 0.0,
                verified=bool(r.get("verified")),
                graph_note=gnote,
            )
        )
    if any(not r.verified for r in rows):
        notes.append("interconnect: an all-reduce result check failed; those sizes are not used")
    p2p = ic.get("p2p") or {}
    p2p_bw, p2p_note = None, p2p.get("error")
    if p2p.get("verified") and _ok_samples(p2p.get("samples_s")):
        p2p_bw = p2p["bytes"] / median(p2p["samples_s"])
        p2p_note = (
            f"cuda:{p2p.get('src', 0)} -> cuda:{p2p.get('dst', 1)}, tensor.copy_ of "
            f"{p2p['bytes'] / 2**30:.3g} GiB, {spread_text(p2p['samples_s'], _fmt_s)}; peer access "
            f"{'on' if p2p.get('peer_access') else 'off'}"
        )
    env = dict(doc.get("env", {}))
    return InterconnectReport(
        gpus=n,
        nccl=doc.get("nccl"),
        env=env,
        allreduce=rows,
        p2p_bytes_per_s=p2p_bw,
        p2p_note=p2p_note,
        complete=bool(doc.get("complete")),
    )


# ------------------------------------------------------------------ calibration


def _fig(value: float | int, note: str) -> dict[str, Any]:
    return {"value": value, "source": "probe", "kind": "measured", "note": note}


def calibrated_hardware(
    hw: Hardware, raw: dict[str, Any], meta: dict[str, Any], notes: list[str] | None = None
) -> dict[str, Any]:
    """A hardware document whose ceilings are the probe's measurements (kind: measured)."""
    ceil = {c["name"]: c for c in all_ceilings(raw)}
    doc = hw.model_dump(mode="json", exclude_none=True)
    doc["id"] = f"{hw.id}-measured"
    doc["name"] = f"{hw.name} (measured {meta['date']})"
    doc["aliases"] = []
    doc["sources"]["probe"] = {
        "title": f"roofcalc probe on {raw['device']['name']}, driver {meta.get('driver')}, "
        f"{meta['date']}: {meta['command']}"
    }

    def fig(c: dict[str, Any]) -> dict[str, Any]:
        return {
            "value": c["value"],
            "source": "probe",
            "kind": "measured",
            "note": f"{c['name']}, median of {c['reps']}",
        }

    dram = [ceil[n] for n in ("dram_read", "dram_write", "dram_copy", "dram_triad", "dram_copy_memcpy") if n in ceil]
    if dram:
        doc["memory"]["bandwidth_bytes_per_s"] = fig(max(dram, key=lambda c: c["value"]))
    for dt, names in CALIBRATES.items():
        got = [ceil[n] for n in names if n in ceil]
        if got and dt in doc["peak_flops_per_s"]:
            doc["peak_flops_per_s"][dt] = fig(max(got, key=lambda c: c["value"]))
    for name, dt in (("fp32_fma", "fp32"), ("fp64_fma", "fp64"), ("fp16_fma", "fp16"), ("bf16_fma", "bf16")):
        if name in ceil:
            doc.setdefault("cuda_core_flops_per_s", {})[dt] = fig(ceil[name])
    if "launch_overhead" in ceil:
        doc["launch_overhead_s"] = fig(ceil["launch_overhead"])
    sink = notes if notes is not None else []
    doc["expected"] = _restated_base_expected(hw, doc, sink)
    for name, value in expected_figures(hw, raw, doc, sink).items():
        if isinstance(value, dict) and "value" not in value:
            doc["expected"].setdefault(name, {}).update(value)
        else:
            doc["expected"][name] = value
    doc["expected"] = {k: v for k, v in doc["expected"].items() if v != {}}
    doc["calibration"] = {
        "base": hw.id,
        "device_name": raw["device"]["name"],
        "driver": meta.get("driver"),
        "date": meta["date"],
        "command": meta["command"],
    }
    libs = _libraries(raw)
    if libs:
        doc["calibration"]["libraries"] = libs
    doc["calibration"]["schema_version"] = CALIBRATION_SCHEMA
    return doc


def _libraries(raw: dict[str, Any]) -> dict[str, str]:
    """The libraries the probe's PyTorch timings ran on (torch's version, the CUDA it was built
    for), as a calibration and its choice map record them; "None" (a torch without CUDA) is none."""
    torch_raw: dict[str, Any] = raw["torch"] if isinstance(raw.get("torch"), dict) else {}
    return {k: str(v) for k, v in torch_raw.items() if k in ("torch", "cuda") and v and v != "None"}


def _restated_base_expected(hw: Hardware, doc: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """The registry file's expected figures, fractions restated against this file's measured peaks."""
    base = hw.expected.model_dump(mode="json", exclude_none=True)

    def restate(fig: dict[str, Any], old: float, new: float, what: str) -> dict[str, Any]:
        if old == new:
            return fig
        return {
            "value": fig["value"] * old / new,
            "source": fig["source"],
            "kind": "derived",
            "note": f"registry figure {fig['value']:.3g} of the datasheet {what}, restated against this "
            f"file's measured {what}",
        }

    for key in ("dram_read_fraction", "dram_copy_fraction"):
        if key in base:
            base[key] = restate(
                base[key], hw.bandwidth, float(doc["memory"]["bandwidth_bytes_per_s"]["value"]), "bandwidth"
            )
    for key in ("tensor_fraction", "unaligned_tensor_fraction", "word_aligned_tensor_fraction", "mma_sync_fraction"):
        for dt, fig in list(base.get(key, {}).items()):
            if dt in hw.peak_flops_per_s and dt in doc["peak_flops_per_s"]:
                base[key][dt] = restate(fig, hw.peak(dt), float(doc["peak_flops_per_s"][dt]["value"]), f"{dt} peak")
    if "cuda_core_gemm_fraction" in base and "fp32" in hw.peak_flops_per_s:
        base["cuda_core_gemm_fraction"] = restate(
            base["cuda_core_gemm_fraction"],
            hw.peak("fp32"),
            float(doc["peak_flops_per_s"]["fp32"]["value"]),
            "fp32 peak",
        )
    if any(v for v in base.values()):
        notes.append("calibration: figures under expected: that the probe did not measure are the registry file's")
    return dict(base)


def expected_figures(hw: Hardware, raw: dict[str, Any], doc: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """The figures of the calibration's ``expected:`` section this run measured, each checked.

    A figure is written only if its measurement passed its result check, and only under a
    field the Hardware model has (``Expected.model_fields``); others are named in ``notes``.
    """
    out: dict[str, Any] = {}
    fields = Expected.model_fields
    missing: set[str] = set()

    def put(name: str, value: float | int, note: str, key: str | None = None) -> None:
        if not (MIN_FIGURE <= value <= MAX_FIGURE and math.isfinite(value)):
            notes.append(f"calibration: expected.{name}{'.' + key if key else ''} not written (measured {value!r})")
            return
        if name not in fields:
            if name not in missing:
                missing.add(name)
                notes.append(
                    f"calibration: expected.{name} measured ({value:.4g}{' for ' + key if key else ''}) "
                    "but not written: the hardware model has no such field"
                )
            return
        if key is None:
            out[name] = _fig(value, note)
        else:
            out.setdefault(name, {})[key] = _fig(value, note)

    floors = {f.name: f for f in floor_rows(raw)}
    for name, field in (
        ("event", "event_floor_s"),
        ("stream", "stream_floor_s"),
        ("graph", "graph_floor_s"),
        ("torch_op", "torch_op_floor_s"),
    ):
        f = floors.get(name)
        if f is not None:
            put(field, f.median_s, f"{f.method}; median of {f.samples}, p10-p90 {_fmt_s(f.p10_s)}-{_fmt_s(f.p90_s)}")
    cf = (raw.get("torch") or {}).get("compiled_floor") if isinstance(raw.get("torch"), dict) else None
    if cf is not None:
        try:
            fit, why = compiled_floor_fit(cf)
        except ValueError as e:
            fit, why = None, f"the record is malformed ({e})"
        if fit is None:
            notes.append(f"calibration: the compiled chains gave no fit: {why}")
        else:
            # recorded, not written: the chains' cost per kernel, in ops, does not follow what compiled
            # steps cost (roofcalc/expected/card.py COMPILED_KERNEL_OPS); the model scales its fixed
            # multiples with the op floor measured here
            notes.append(
                f"calibration: the compiled chains took {fit[0] * 1e6:.2f} us a kernel and {fit[1] * 1e6:.1f} us a "
                "call (in the probe's record; not written: compiled code's figures follow the op floor)"
            )
    kf = raw.get("torch", {}).get("kernel_floors")
    if kf and kf.get("verified"):
        small = kf.get("small_queued_samples_s")
        put(
            "queued_kernel_floor_s",
            median(small) if small else median(kf["queued_samples_s"]) - median(kf["nothing_samples_s"]),
            f"per kernel, {kf['small_kernels']}, between two CUDA events with the GPU kept busy before them, "
            f"less the same events with nothing between; median of {len(small)}"
            if small
            else "x.add_(1) on one element between two CUDA events with the GPU kept busy before them, less the "
            f"same events with nothing between; medians of {len(kf['queued_samples_s'])}",
        )
        if kf.get("flushed_samples_s"):
            put(
                "flushed_op_floor_s",
                median(kf["flushed_samples_s"]),
                "x.add_(1) on one element between two CUDA events right after an L2 flush (zero_ of a buffer "
                "4x the L2, enqueued before the start event), repetitions enqueued back to back as benchmarks "
                f"enqueue them; median of {len(kf['flushed_samples_s'])}",
            )
        nodes = kf.get("small_graph_node_samples_s")
        put(
            "torch_graph_node_s",
            median(nodes) if nodes else median(kf["graph_node_samples_s"]),
            f"a CUDA graph of {kf['small_kernels']}, repeated, replayed; time per kernel node, median of {len(nodes)}"
            if nodes
            else f"a CUDA graph of {kf['nodes_per_graph']} x.add_(1) on one element, replayed; time per node, "
            f"median of {len(kf['graph_node_samples_s'])}",
        )
    lat = {r.name: r for r in latency_rows(raw, [])}
    for name, field in (("dram", "dram_latency_s"), ("l2", "l2_latency_s")):
        lr = lat.get(name)
        if lr is not None:
            put(
                field,
                lr.latency_s,
                f"one thread, {lr.steps} dependent loads (ld.global.cg) per walk over a random cycle "
                f"in {lr.buffer_bytes / 2**20:.0f} MiB, {lr.stride_bytes}-byte stride; median of "
                f"{lr.samples} walks, p10-p90 {_fmt_s(lr.p10_s)}-{_fmt_s(lr.p90_s)}",
            )
    ps = per_sm_report(raw, hw, [])
    if ps is not None:
        if ps.per_sm_bytes_per_s:
            put(
                "per_sm_bandwidth_bytes_per_s",
                ps.per_sm_bytes_per_s,
                f"one block alone on one SM streaming its own slice, best of the bytes-in-flight shapes "
                f"({ps.per_sm_config}), median of its samples",
            )
        # Little's law: bytes in flight over the bandwidth they give one SM, where little is in
        # flight (the latency a streaming load sees, issue and loop included)
        small = sorted(
            q.bytes_in_flight_per_sm / (q.bytes_per_s / q.sms)
            for q in ps.inflight
            if q.bytes_per_s and q.bytes_in_flight_per_sm <= 16384
        )
        if small:
            put(
                "loaded_latency_s",
                small[len(small) // 2],
                f"median of {len(small)} per-SM points with <= 16 KiB in flight: bytes in flight / bandwidth",
            )
        for p in ps.curve:
            if p.read_bytes_per_s:
                put(
                    "read_bandwidth_by_sms",
                    p.read_bytes_per_s,
                    f"{p.sms} SMs, one block each, {p.read_config}",
                    key=str(p.sms),
                )
        if ps.sms_for_90pct:
            put(
                "sms_to_saturate_read",
                ps.sms_for_90pct,
                "fewest SMs (one block each) measured at >= 90% of the dram_read ceiling",
            )
    bw = float(doc["memory"]["bandwidth_bytes_per_s"]["value"])
    ceil = {c["name"]: c for c in all_ceilings(raw) if c.get("verified")}
    if "dram_read" in ceil:
        put(
            "dram_read_fraction",
            ceil["dram_read"]["value"] / bw,
            "dram_read (grid-stride 16-byte loads, best launch shape) / memory.bandwidth_bytes_per_s of this file",
        )
    # a kernel that reads and writes streams like the probe's copy kernel (cudaMemcpy's own
    # engine path is faster, but PyTorch's kernels are kernels)
    copy = ceil.get("dram_copy") or ceil.get("dram_copy_memcpy")
    if copy:
        put(
            "dram_copy_fraction",
            copy["value"] / bw,
            f"{copy['name']} (a kernel reading and writing, bytes read + written) / memory.bandwidth_bytes_per_s "
            "of this file",
        )
    if "l2_read" in ceil:
        put(
            "l2_bandwidth_bytes_per_s",
            ceil["l2_read"]["value"],
            f"l2_read: a quarter of the L2 read 64 times per launch by every SM, median of {ceil['l2_read']['reps']}",
        )
    for dt in ("bf16", "fp16", "fp8"):
        c = ceil.get(f"{dt}_mma_sync")
        peak = _peak(doc, dt)
        if c is not None and peak:
            put(
                "mma_sync_fraction",
                c["value"] / peak,
                f"{c['name']} ({_instruction(c)}, 8 accumulators per warp, "
                f"median of {c['reps']}) / peak_flops_per_s.{dt} of this file",
                key=dt,
            )
    clocks = {n: float(c["sm_clock_mhz"]) for n, c in ceil.items() if c.get("sm_clock_mhz")}
    if clocks:
        # under tensor-core load where wgmma ran (the lowest clock: the power limit binds there), else under FMA
        tensor = {n: v for n, v in clocks.items() if n.endswith("_wgmma")}
        pick = min(tensor.items(), key=lambda kv: kv[1]) if tensor else min(clocks.items(), key=lambda kv: kv[1])
        listed = ", ".join(f"{n} {v:.0f}" for n, v in clocks.items())
        put(
            "sustained_sm_clock_mhz",
            round(pick[1], 1),
            f"effective SM clock (clock64 against %globaltimer) during {pick[0]}, the lowest of the "
            f"{'wgmma' if tensor else 'FMA'} runs; all, in MHz: {listed}",
        )
    for c in raw.get("torch", {}).get("ceilings", []):
        dt = c["name"].removesuffix("_matmul_torch")
        peak = _peak(doc, dt)
        if peak and c.get("verified"):
            top = doc["peak_flops_per_s"][dt].get("note", "")
            put(
                "tensor_fraction",
                c["value"] / peak,
                f"{c['name']} ({c.get('instruction') or 'cuBLAS'}, 8192^3, "
                f"median of {c['reps']}) / peak_flops_per_s.{dt} ({top})",
                key=dt,
            )
    rows = gemm_rows(raw, hw, doc)
    for r in rows:
        if r.flops_per_s and r.fraction_datasheet and r.fraction_datasheet > IMPOSSIBLE:
            notes.append(
                f"GEMM {r.dtype} {r.m}x{r.n}x{r.k} ({r.label}) ran above {IMPOSSIBLE}x its datasheet peak; not used"
            )
    usable = [r for r in rows if r.verified and r.flops_per_s and not (r.fraction_datasheet or 0) > IMPOSSIBLE]
    sgemm = [r for r in usable if r.dtype == "fp32" and r.label.startswith("CUDA cores") and r.m == 8192]
    if sgemm and _peak(doc, "fp32"):
        r = sgemm[0]
        put(
            "cuda_core_gemm_fraction",
            (r.flops_per_s or 0.0) / (_peak(doc, "fp32") or 1.0),
            f"torch.matmul fp32 {r.m}x{r.n}x{r.k} with TF32 off ({r.check}) / peak_flops_per_s.fp32 of this file",
        )
    skinny = [r for r in usable if r.dtype == "bf16" and r.label == "skinny" and r.median_s]
    # the GEMM rows are timed with the GPU kept busy before the start event (the host's
    # dispatch is not timed): what is left beside the kernel is one launch gap, a graph node's
    # this run's graph floor where it measured one, else the file's
    floor = (out.get("graph_floor_s") or (doc.get("expected") or {}).get("graph_floor_s") or {}).get("value")
    if skinny and floor and "dram_read" in ceil:
        r = skinny[0]
        moved = (r.m * r.k + r.k * r.n + r.m * r.n) * 2
        body = (r.median_s or 0.0) - float(floor)
        if body > 0:
            put(
                "skinny_gemm_bandwidth_fraction",
                min(moved / body / ceil["dram_read"]["value"], 1.0),
                f"torch.matmul bf16 {r.m}x{r.n}x{r.k} (the weights streamed once; GPU busy before the start "
                "event): bytes / (time - graph floor) / dram_read",
            )
    gemv = [r for r in usable if r.dtype == "bf16" and r.label.startswith("gemv, ") and r.median_s]
    if gemv and floor and "dram_read" in ceil:
        rates = [
            (r.m * r.k + r.k + r.m) * 2 / ((r.median_s or 0.0) - float(floor))
            for r in gemv
            if (r.median_s or 0.0) > float(floor)
        ]
        if rates:
            put(
                "unaligned_gemv_bandwidth_fraction",
                min(median(rates) / ceil["dram_read"]["value"], 1.0),
                "torch.mv bf16 with m or k not a multiple of 8 ("
                + ", ".join(f"{r.m}x{r.k}" for r in gemv)
                + "; cuBLAS's gemv kernels; GPU busy before the start event): median of bytes / "
                "(time - graph floor) / dram_read",
            )
    tile = [r for r in rows if r.dtype == "bf16" and r.label == "one tile in a graph" and r.verified and r.median_s]
    if tile and floor and (tile[0].median_s or 0.0) > float(floor):
        r = tile[0]
        put(
            "gemm_kernel_floor_s",
            (r.median_s or 0.0) - float(floor),
            f"a bf16 {r.m}x{r.n}x{r.k} GEMM (one tile, one k-block) per node of a CUDA graph of "
            "them, less graph_floor_s (an empty kernel's node): a library GEMM kernel's fixed cost",
        )
    # what the model leaves unexplained in each 1024 x 1024 one-k-block GEMM of a graph; on a
    # pre-Hopper path less on the TMA one (both nodes' floors, the graph's and the GEMM's, cancel)
    residue: dict[str, list[tuple[float, GemmRow]]] = {}
    for r in usable:
        if r.label != "one k-block in a graph" or r.dtype not in ("bf16", "fp32", "tf32") or not r.median_s:
            continue
        try:
            path, left = gemm_floor_residue(hw, r.dtype, r.m, r.n, r.k, r.median_s)
        except DomainError as e:  # the base file lacks a figure the model needs for it
            notes.append(f"calibration: GEMM {r.dtype} {r.m}x{r.n}x{r.k} ({r.label}) not used: {e}")
            continue
        residue.setdefault(path, []).append((left, r))

    def middle(found: list[tuple[float, GemmRow]]) -> tuple[float, GemmRow]:
        """Of a path's rows, the one with the median residue (of two, the larger)."""
        return sorted(found, key=lambda x: x[0])[len(found) // 2]

    if "tma" in residue:
        tma, t = middle(residue["tma"])
        for path in GEMM_PATHS:
            if path in residue:
                left, r = middle(residue[path])
                put(
                    "gemm_kernel_floor_extra_s",
                    left - tma,
                    f"{r.dtype} {r.m}x{r.n}x{r.k} per CUDA-graph node less its modelled time ({_fmt_s(left)}), less "
                    f"the same for bf16 {t.m}x{t.n}x{t.k} on the TMA path ({_fmt_s(tma)}); {hw.id}'s figures",
                    key=path,
                )
    wb = raw.get("torch", {}).get("writeback")
    if wb and wb.get("verified") and "dram_read" in ceil:
        extra = float(wb["dirty_median_s"]) - float(wb["clean_median_s"])
        per_read = float(wb["l2_bytes"]) / float(ceil["dram_read"]["value"])
        if extra > 0:
            put(
                "l2_dirty_writeback_fraction",
                extra / per_read,
                f"a sum over {wb['read_bytes'] / 1e6:,.0f} MB after a flush that writes, less the same after one "
                f"that reads ({wb['dirty_median_s'] * 1e6:.1f} - {wb['clean_median_s'] * 1e6:.1f} us), / the "
                f"time to read the L2's {wb['l2_bytes'] / 1e6:.0f} MB at dram_read",
            )
    for field, labels, what in (
        ("unaligned_tensor_fraction", UNALIGNED_LABELS, "with a leading dimension not a multiple of 8"),
        (
            "word_aligned_tensor_fraction",
            WORD_ALIGNED_LABELS,
            "with leading dimensions in multiples of 4 or 8 bytes, not 16",
        ),
    ):
        rows = [r for r in usable if r.dtype == "bf16" and r.label in labels]
        if rows and _peak(doc, "bf16"):
            rate = median([r.flops_per_s or 0.0 for r in rows])
            shapes = ", ".join(f"{r.m}x{r.n}x{r.k}" for r in rows)
            put(
                field,
                rate / (_peak(doc, "bf16") or 1.0),
                f"median rate of the bf16 GEMMs {what} ({shapes}) / peak_flops_per_s.bf16 of this file",
                key="bf16",
            )
    fp8 = [r for r in usable if r.dtype == "fp8" and r.label == "k not a multiple of 16"]
    if fp8 and _peak(doc, "fp8"):
        put(
            "unaligned_tensor_fraction",
            (fp8[0].flops_per_s or 0.0) / (_peak(doc, "fp8") or 1.0),
            f"fp8 {fp8[0].m}x{fp8[0].n}x{fp8[0].k} through torch._scaled_mm / peak_flops_per_s.fp8",
            key="fp8",
        )
    ic = interconnect_report(raw, hw, [])
    if ic is not None:
        _interconnect_figures(ic, hw, put, notes)
    out.update(choice_figures(raw, hw.sm_value("sm_count") or 0, notes))
    return out


def choice_figures(raw: dict[str, Any], sms: int, notes: list[str]) -> dict[str, Any]:
    """The choice map of the probe's FP32 sweep (torch_ops.gemm_choices) and, per kernel family and
    tile, the fixed cost and rate fitted to the shapes that ran it (roofcalc/expected/choice.py)."""
    from ..expected.choice import MAX_ENTRIES, Choice, fit_reduce, fit_tiles, in_shallow_plane, record_choice

    torch_raw: dict[str, Any] = raw["torch"] if isinstance(raw.get("torch"), dict) else {}
    records = torch_raw.get("gemm_choices")
    if not records or not isinstance(records, list) or not sms:
        return {}
    try:
        choices: list[Choice] = []
        reductions: list[tuple[str, int, int, float]] = []
        for r in records:
            got = record_choice(r)
            if got is None:
                continue
            choice, tail = got
            choices.append(choice)
            # a vec entry's reductions are not fitted with the tiled kernels' (their slices are
            # partial sums of another kernel family's launch), nor the shallow plane's (read by
            # their measured times, as its kernels are: the tile figures are the small-side map's)
            red = tail if choice.splits > 1 and not in_shallow_plane(choice.m, choice.n, choice.k) else None
            if red is not None and 1e-8 <= red[2] < 9.99 and red[1] < 10**9:
                reductions.append((red[0], choice.splits, red[1], red[2]))
    except (KeyError, TypeError, ValueError, IndexError, AttributeError, OverflowError) as e:
        notes.append(f"calibration: the GEMM choice sweep is malformed ({type(e).__name__}: {e}); no choice map")
        return {}
    if not choices or len(choices) > MAX_ENTRIES:  # none, or more than a map file holds
        return {}
    libs = _libraries(raw)
    out: dict[str, Any] = {
        "gemm_choice_map": {
            "value": "".join(c.entry() + "\n" for c in choices),  # one block of text: quick to read back
            "source": "probe",
            "kind": "measured",
            "note": f"torch.matmul of row-major operands (fp32 with TF32 off and on, bf16, fp16), {len(choices)} shapes: the "
            "family and tile of each one's first kernel, its z extent and profiled duration (a largek kernel's with the "
            "scal_kernel before it; roofcalc/expected/choice.py)",
            **({"libraries": libs} if libs else {}),
        }
    }
    _put_fitted(
        out,
        ("gemm_choice_floor_s", "gemm_choice_flops_per_sm"),
        fit_tiles((c for c in choices if not in_shallow_plane(c.m, c.n, c.k)), sms),
        "the shapes that ran {key}",
        "least squares in relative error of profiled time = fixed + busiest SM's padded work / rate",
    )
    _put_fitted(
        out,
        ("gemm_reduce_floor_s", "gemm_reduce_slice_s"),
        fit_reduce(reductions, sms),
        "the {key} split-K reductions of one wave",
        "least squares in relative error of profiled time = fixed + slices x per-slice, over one-wave reductions",
    )
    return out


def _put_fitted(
    out: dict[str, Any], names: tuple[str, str], fits: dict[str, tuple[float, float, int]], which: str, how: str
) -> None:
    """Two fitted figures per key (a fixed cost and a rate or step) into ``out[name][key]``, each
    with its fit set (``which`` names the sweep's records it was fitted to) and count, where in
    range."""
    for key, (first, second, n) in fits.items():
        fit_set = f"this probe's GEMM choice sweep, {which.format(key=key)} (expected.gemm_choice_map)"
        for name, value in zip(names, (first, second), strict=True):
            if MIN_FIGURE <= value <= MAX_FIGURE:
                fig = {
                    "value": value,
                    "source": "probe",
                    "kind": "fitted",
                    "fit_set": fit_set,
                    "fit_cases": n,
                    "note": how,
                }
                out.setdefault(name, {})[key] = fig


def _interconnect_figures(ic: InterconnectReport, hw: Hardware, put: Any, notes: list[str]) -> None:
    limit = IMPOSSIBLE * float(hw.interconnect_bytes_per_s.value) if hw.interconnect_bytes_per_s else math.inf
    rows = [r for r in ic.allreduce if r.verified and r.dtype == "bf16"]
    if not rows:
        return
    small = min(rows, key=lambda r: r.bytes)
    how = f"{ic.gpus} GPUs, NCCL {ic.nccl or '?'}, bf16 sum of {small.bytes // 1024} KiB"
    put(
        "allreduce_latency_s",
        small.eager_s,
        f"{how}, eager: batches of back-to-back dist.all_reduce between two "
        f"CUDA events, per call; p10-p90 {_fmt_s(small.eager_p10_s)}-"
        f"{_fmt_s(small.eager_p90_s)}",
    )
    if small.graph_s is not None:
        put("allreduce_graph_latency_s", small.graph_s, f"{how}, 20 calls captured in a CUDA graph, per call")
    big = max(rows, key=lambda r: r.bytes)
    if big.busbw_bytes_per_s > limit:
        notes.append(
            "interconnect: the all-reduce bus bandwidth is above 1.2x the datasheet interconnect figure; not used"
        )
    else:
        put(
            "allreduce_bus_bytes_per_s",
            big.busbw_bytes_per_s,
            f"bf16 all-reduce of {big.bytes / 2**30:.3g} GiB on {ic.gpus} GPUs, eager: algorithm bandwidth x 2(n-1)/n",
        )
    if ic.p2p_bytes_per_s is not None:
        if ic.p2p_bytes_per_s > limit:
            notes.append("interconnect: the peer-to-peer copy is above 1.2x the datasheet figure; not used")
        else:
            put("p2p_bytes_per_s", ic.p2p_bytes_per_s, ic.p2p_note or "peer-to-peer copy")


# ------------------------------------------------------------------ the report


def _op_note(
    row_ratio: float, bound: str, pred: float, label: str, op: str, warnings: list[str], phases: dict[str, float] | None
) -> str | None:
    if 0.5 <= row_ratio <= 2.0:
        return None
    if phases:
        parts = ", ".join(f"{k} {v * 1e6:.0f} us" for k, v in phases.items())
        return f"runs as separate kernels, timed one by one: {parts}"
    eight = [w for w in warnings if "multiple of 8" in w]
    if eight and op == "gemm":
        return eight[0]
    if pred < 50e-6:
        return "small op: launch latency and ramp-up dominate the roofline floor"
    if row_ratio < 0.5 and bound == "compute":
        return "faster than the calibrated compute ceiling: the ceiling came from a slower path"
    return "off by more than 2x: see the validation README"


def _tensor_notes(hw: Hardware, raw: dict[str, Any], ceilings: list[CeilingRow], notes: list[str]) -> None:
    cc = str(raw["device"].get("cc", hw.compute_capability or ""))
    per_clock = TENSOR_PER_CLOCK.get(cc, {})
    sms = int(raw["device"].get("sm_count", 0))
    have = {row.name for row in ceilings}
    wg = [row for row in ceilings if row.name.endswith("_wgmma")]
    for row in wg:
        dt = row.name.removesuffix("_wgmma")
        if row.sm_clock_mhz and dt in per_clock and sms:
            per = row.measured / (sms * row.sm_clock_mhz * 1e6)
            notes.append(
                f"{row.name} ran at an effective SM clock of {row.sm_clock_mhz:.0f} MHz: {per:.0f} "
                f"{'OP' if dt == 'int8' else 'FLOP'} per SM per clock, {per / per_clock[dt]:.1%} of the "
                f"{per_clock[dt]} dense per clock that CC {cc} does"
            )
    if wg:
        parts = []
        for dt in ("bf16", "fp16", "fp8", "tf32", "int8"):
            by = [n for n in (f"{dt}_wgmma", f"{dt}_mma_sync", f"{dt}_matmul_torch") if n in have]
            if by:
                parts.append(f"{dt}: " + ", ".join(by))
        notes.append(
            "tensor cores measured with: wgmma.mma_async (warpgroup MMA, sm_90a) per dtype, mma.sync "
            "(the pre-Hopper path) and cuBLAS through PyTorch; each peak is the best of them (" + "; ".join(parts) + ")"
        )
    elif any(row.name.endswith("_mma_sync") for row in ceilings):
        if hw.cc and hw.cc[0] == 9:
            notes.append(
                "mma.sync is the pre-Hopper tensor-core path: Hopper reaches its full tensor rate only "
                "with wgmma (warpgroup MMA), so the *_mma_sync figures sit below the dense peak"
            )
        if raw.get("wgmma_skipped"):
            notes.append(f"wgmma not measured: {raw['wgmma_skipped']}")


def build_report(
    raw: dict[str, Any], hw: Hardware, meta: dict[str, Any], skipped: list[str], quick: bool
) -> tuple[ProbeReport, dict[str, Any]]:
    """Compare raw measurements with the engines. Returns the report and the calibration doc."""
    from ..occupancy_solver import blocks_per_sm
    from ..roofline import analyze
    from ..specfile import validate

    notes: list[str] = []
    ceilings = []
    for c in all_ceilings(raw):
        ds = _datasheet(hw, c["name"])
        frac = c["value"] / ds if ds else None
        if c["unit"] != "s" and frac is not None and frac > IMPOSSIBLE:
            raise DomainError(
                f"impossible measurement: {c['name']} = {c['value']:.4g} {c['unit']} is "
                f"{frac:.2f}x the datasheet figure; refusing to calibrate"
            )
        if not c.get("verified", False):
            raise DomainError(f"the result check of {c['name']} failed; refusing to calibrate")
        s = c.get("samples_s")
        ceilings.append(
            CeilingRow(
                name=c["name"],
                unit=c["unit"],
                datasheet=ds,
                measured=c["value"],
                fraction=frac,
                median_s=c["median_s"],
                reps=c["reps"],
                sm_clock_mhz=c.get("sm_clock_mhz"),
                instruction=_instruction(c),
                p10_s=quantile(s, 0.1) if s and _ok_samples(s) else None,
                p90_s=quantile(s, 0.9) if s and _ok_samples(s) else None,
            )
        )
    boost = hw.clocks.boost_mhz.value if hw.clocks.boost_mhz else None
    for row in ceilings:
        if row.sm_clock_mhz and boost and row.fraction is not None and not row.name.endswith("_wgmma"):
            at_clock = row.fraction * boost / row.sm_clock_mhz
            notes.append(
                f"{row.name} ran at an effective SM clock of {row.sm_clock_mhz:.0f} MHz (the datasheet rate "
                f"assumes {boost:.0f}); at that clock it reached {at_clock:.1%} of the per-clock peak"
            )
    _tensor_notes(hw, raw, ceilings, notes)
    cal_doc = calibrated_hardware(hw, raw, meta, notes)
    cal = validate(Hardware, cal_doc, "calibration")

    residency = []
    for r in raw.get("occupancy", []):
        blocks, lims = blocks_per_sm(hw, r["threads"], r["regs"], r["dyn_smem"], r["static_smem"], r["carveout"])
        residency.append(
            ResidencyRow(
                name=r["name"],
                threads=r["threads"],
                regs=r["regs"],
                static_smem=r["static_smem"],
                dyn_smem=r["dyn_smem"],
                carveout=r["carveout"],
                expected_limiter=r["expected_limiter"],
                solver_limiters=lims,
                solver_blocks=blocks,
                runtime_blocks=r["runtime_blocks"],
                measured_blocks=r["measured_blocks"],
                agree=blocks == r["runtime_blocks"] == r["measured_blocks"],
            )
        )

    ops = []
    for o in list(raw.get("ops", [])) + list(raw.get("torch", {}).get("ops", [])):
        params = dict(o["params"])
        dr = analyze(o["op"], hw, dtype=o["dtype"], **params)
        cr = analyze(o["op"], cal, dtype=o["dtype"], **params)
        ratio = o["median_s"] / cr.predicted_s
        label = o.get("label", o["op"])
        ops.append(
            OpRow(
                op=o["op"],
                label=label,
                dtype=o["dtype"],
                params=params,
                impl=o["impl"],
                bound=cr.bound,
                predicted_datasheet_s=dr.predicted_s,
                predicted_calibrated_s=cr.predicted_s,
                measured_s=o["median_s"],
                ratio=ratio,
                verified=bool(o["verified"]),
                phases_s=o.get("phases_s"),
                note=_op_note(ratio, cr.bound, cr.predicted_s, label, o["op"], cr.warnings, o.get("phases_s")),
            )
        )
    bad = [o for o in ops if not o.verified]
    if bad:
        raise DomainError(f"the result check of op {bad[0].op} ({bad[0].label}) failed")

    floors = floor_rows(raw)
    per_sm = per_sm_report(raw, hw, notes)
    latency = latency_rows(raw, notes)
    gemm = gemm_rows(raw, hw, cal_doc)
    interconnect = interconnect_report(raw, hw, notes)

    large = sorted(o.ratio for o in ops if o.measured_s > 100e-6)
    summary: dict[str, Any] = {
        "residency_configs": len(residency),
        "residency_agree": sum(r.agree for r in residency),
        "large_ops": len(large),
        "median_ratio_large_ops": large[len(large) // 2] if large else None,
        "ops_off_by_2x": [o.label for o in ops if not 0.5 <= o.ratio <= 2.0],
    }
    for row in ceilings:
        if row.fraction is not None:
            summary[f"{row.name}_fraction"] = row.fraction
    for f in floors:
        summary[f"{f.name}_floor_s"] = f.median_s
    if per_sm is not None:
        summary["per_sm_bandwidth_bytes_per_s"] = per_sm.per_sm_bytes_per_s
        summary["sms_for_90pct_read"] = per_sm.sms_for_90pct
    for r in latency:
        summary[f"{r.name}_latency_s"] = r.latency_s
    expected = {
        k: v
        for k, v in cal_doc.get("expected", {}).items()
        if (isinstance(v, dict) and v.get("source") == "probe")
        or (isinstance(v, dict) and any(isinstance(x, dict) and x.get("source") == "probe" for x in v.values()))
    }
    if interconnect is not None:
        for key in ("allreduce_latency_s", "allreduce_graph_latency_s", "allreduce_bus_bytes_per_s", "p2p_bytes_per_s"):
            if key in expected:
                summary[key] = expected[key]["value"]
    report = ProbeReport(
        date=meta["date"],
        command=meta["command"],
        hardware=hw.id,
        device=raw["device"],
        driver=meta.get("driver"),
        nvcc=meta.get("nvcc"),
        quick=quick,
        ceilings=ceilings,
        residency=residency,
        ops=ops,
        summary=summary,
        skipped=skipped,
        notes=notes,
        raw=raw,
        floors=floors,
        per_sm=per_sm,
        latency=latency,
        gemm=gemm,
        interconnect=interconnect,
        expected=expected,
    )
    return report, cal_doc

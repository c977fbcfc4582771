"""Build, run and compare: the logic behind ``roofcalc probe``.

``run_probe`` needs a GPU and nvcc; ``build_report`` and ``calibrated_hardware`` need
neither: they turn the raw measurements (kept inside every report) into comparisons
with the roofline and occupancy engines, so recorded runs can be re-checked anywhere.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..errors import DomainError, InputError
from ..hardware import Hardware, load_hardware

SCHEMA_VERSION = 1
IMPOSSIBLE = 1.2  # a measured ceiling above 1.2x its datasheet figure is a measurement error

# measured ceiling -> (hardware field it is compared with, dtype or None)
DATASHEET_OF: dict[str, tuple[str, str | None]] = {
    "dram_read": ("bandwidth", None), "dram_write": ("bandwidth", None), "dram_copy": ("bandwidth", None),
    "dram_triad": ("bandwidth", None), "dram_copy_memcpy": ("bandwidth", None), "l2_read": ("none", None),
    "fp32_fma": ("cuda_core", "fp32"), "fp64_fma": ("cuda_core", "fp64"),
    "fp16_fma": ("cuda_core", "fp16"), "bf16_fma": ("cuda_core", "bf16"),
    "bf16_mma_sync": ("peak", "bf16"), "fp16_mma_sync": ("peak", "fp16"), "fp8_mma_sync": ("peak", "fp8"),
    "bf16_matmul_torch": ("peak", "bf16"), "fp16_matmul_torch": ("peak", "fp16"),
    "tf32_matmul_torch": ("peak", "tf32"), "launch_overhead": ("launch", None),
}
# which measured ceilings calibrate which tensor/dense peak (the best of them is taken)
CALIBRATES = {"bf16": ["bf16_mma_sync", "bf16_matmul_torch"], "fp16": ["fp16_mma_sync", "fp16_matmul_torch"],
              "fp8": ["fp8_mma_sync"], "tf32": ["tf32_matmul_torch"], "fp32": ["fp32_fma"]}


class CeilingRow(BaseModel):
    model_config = ConfigDict(frozen=True)
    name: str
    unit: str
    datasheet: float | None
    measured: float
    fraction: float | None
    median_s: float
    reps: int
    sm_clock_mhz: float | None = None


class ResidencyRow(BaseModel):
    model_config = ConfigDict(frozen=True)
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


class OpRow(BaseModel):
    model_config = ConfigDict(frozen=True)
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


class ProbeReport(BaseModel):
    model_config = ConfigDict(frozen=True)
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


# ------------------------------------------------------------------ environment


DEFAULT_NVCC = "/usr/local/cuda/bin/nvcc"


def find_nvcc() -> str:
    for cand in (shutil.which("nvcc"), os.environ.get("CUDA_HOME") and f"{os.environ['CUDA_HOME']}/bin/nvcc",
                 DEFAULT_NVCC):
        if cand and Path(cand).is_file():
            return cand
    raise DomainError("nvcc not found: install the CUDA toolkit or set CUDA_HOME (the probe is built on first use)")


def detect_gpu() -> dict[str, str]:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        raise DomainError("no NVIDIA GPU found: nvidia-smi is not on PATH")
    try:
        out = subprocess.run([smi, "--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise DomainError(f"no NVIDIA GPU found: nvidia-smi failed ({e})") from None
    lines = [ln for ln in out.stdout.splitlines() if ln.strip()]
    if out.returncode != 0 or not lines:
        last = (out.stderr or out.stdout).strip().splitlines()[-1:] or ["no output"]
        raise DomainError(f"no NVIDIA GPU found: nvidia-smi says {last[0]}")
    name, cc, driver = (x.strip() for x in lines[0].split(",")[:3])
    return {"name": name, "cc": cc, "driver": driver}


def nvcc_version(nvcc: str) -> str:
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True)
    lines = [ln for ln in out.stdout.splitlines() if ln.strip()]
    return lines[-1].strip() if lines else "unknown"


def probe_source() -> str:
    from importlib.resources import files

    return files("roofcalc.probe").joinpath("probe.cu").read_text(encoding="utf-8")


def build_probe(nvcc: str, arch: str, cache_dir: Path | None = None) -> Path:
    """Compile probe.cu for ``arch`` (e.g. '90'), cached per source hash, arch and nvcc version."""
    src = probe_source()
    ver = nvcc_version(nvcc)
    key = hashlib.sha256(f"{src}\0{arch}\0{ver}".encode()).hexdigest()[:16]
    root = cache_dir or Path(os.environ.get("ROOFCALC_CACHE", Path.home() / ".cache" / "roofcalc")) / "probe"
    exe = root / f"probe-sm{arch}-{key}"
    if exe.is_file():
        return exe
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        cu = Path(tmp) / "probe.cu"
        cu.write_text(src, encoding="utf-8")
        out_exe = Path(tmp) / "probe"
        cmd = [nvcc, "-O3", "-std=c++17", f"-gencode=arch=compute_{arch},code=sm_{arch}", "-o", str(out_exe), str(cu)]
        res = subprocess.run(cmd, capture_output=True, text=True)
        if res.returncode != 0:
            tail = " | ".join((res.stderr or res.stdout).strip().splitlines()[-4:])
            raise DomainError(f"building the probe with nvcc failed: {tail}")
        os.replace(out_exe, exe)
    return exe


def run_binary(exe: Path, quick: bool, timeout: int = 900) -> dict[str, Any]:
    try:
        res = subprocess.run([str(exe), *(["--quick"] if quick else [])], capture_output=True, text=True,
                             timeout=timeout)
    except subprocess.TimeoutExpired:
        raise DomainError(f"the probe did not finish in {timeout} s") from None
    if res.returncode != 0:
        tail = " | ".join(res.stderr.strip().splitlines()[-3:]) or f"exit code {res.returncode}"
        raise DomainError(f"the probe failed: {tail}")
    try:
        data: dict[str, Any] = json.loads(res.stdout)
    except json.JSONDecodeError:
        raise DomainError("the probe printed something that is not JSON") from None
    return data


def run_torch(quick: bool, reps: int, progress: Callable[[str], None]) -> tuple[dict[str, Any], list[str]]:
    """Ceilings and op timings through PyTorch, where it is installed with CUDA."""
    try:
        import torch  # type: ignore[import-not-found]
    except ImportError:
        return {}, ["PyTorch is not installed: GEMM, attention, decode and prefill timings skipped"]
    if not torch.cuda.is_available():
        return {}, ["PyTorch sees no CUDA device: its timings skipped"]
    from . import torch_ops

    out: dict[str, Any] = {"torch": torch.__version__, "ceilings": [], "ops": []}
    skipped: list[str] = []
    progress("matrix-product ceilings (PyTorch)")
    out["ceilings"] = torch_ops.matmul_ceilings(torch, reps)
    if quick:
        return out, skipped
    for label, fn in (("GEMM shapes", torch_ops.gemm_ops), ("attention", torch_ops.attention_ops),
                      ("Llama decode and prefill", torch_ops.llama_ops)):
        progress(f"{label} (PyTorch)")
        try:
            out["ops"] += fn(torch, reps)
        except Exception as e:  # report, keep the rest
            skipped.append(f"{label}: {type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}")
    return out, skipped


# ------------------------------------------------------------------ comparison (no GPU needed)


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


def calibrated_hardware(hw: Hardware, raw: dict[str, Any], meta: dict[str, Any]) -> dict[str, Any]:
    """A hardware document whose ceilings are the probe's measurements (kind: measured)."""
    ceil = {c["name"]: c for c in _all_ceilings(raw)}
    doc = hw.model_dump(mode="json", exclude_none=True)
    doc["id"] = f"{hw.id}-measured"
    doc["name"] = f"{hw.name} (measured {meta['date']})"
    doc["aliases"] = []
    doc["sources"]["probe"] = {"title": f"roofcalc probe on {raw['device']['name']}, driver {meta.get('driver')}, "
                                        f"{meta['date']}: {meta['command']}"}

    def fig(c: dict[str, Any]) -> dict[str, Any]:
        return {"value": c["value"], "source": "probe", "kind": "measured",
                "note": f"{c['name']}, median of {c['reps']}"}

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
    doc["calibration"] = {"base": hw.id, "device_name": raw["device"]["name"], "driver": meta.get("driver"),
                          "date": meta["date"], "command": meta["command"]}
    return doc


def _all_ceilings(raw: dict[str, Any]) -> list[dict[str, Any]]:
    return list(raw.get("ceilings", [])) + list(raw.get("torch", {}).get("ceilings", []))


def _op_note(row_ratio: float, bound: str, pred: float, label: str, op: str, warnings: list[str],
             phases: dict[str, float] | None) -> str | None:
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


def build_report(raw: dict[str, Any], hw: Hardware, meta: dict[str, Any], skipped: list[str],
                 quick: bool) -> tuple[ProbeReport, dict[str, Any]]:
    """Compare raw measurements with the engines. Returns the report and the calibration doc."""
    from ..occupancy_solver import blocks_per_sm
    from ..roofline import analyze
    from ..specfile import validate

    notes: list[str] = []
    ceilings = []
    for c in _all_ceilings(raw):
        ds = _datasheet(hw, c["name"])
        frac = c["value"] / ds if ds else None
        if c["unit"] != "s" and frac is not None and frac > IMPOSSIBLE:
            raise DomainError(f"impossible measurement: {c['name']} = {c['value']:.4g} {c['unit']} is "
                              f"{frac:.2f}x the datasheet figure; refusing to calibrate")
        if not c.get("verified", False):
            raise DomainError(f"the result check of {c['name']} failed; refusing to calibrate")
        ceilings.append(CeilingRow(name=c["name"], unit=c["unit"], datasheet=ds, measured=c["value"], fraction=frac,
                                   median_s=c["median_s"], reps=c["reps"], sm_clock_mhz=c.get("sm_clock_mhz")))
    boost = hw.clocks.boost_mhz.value if hw.clocks.boost_mhz else None
    for row in ceilings:
        if row.sm_clock_mhz and boost and row.fraction is not None:
            at_clock = row.fraction * boost / row.sm_clock_mhz
            notes.append(f"{row.name} ran at an effective SM clock of {row.sm_clock_mhz:.0f} MHz (the datasheet rate "
                         f"assumes {boost:.0f}); at that clock it reached {at_clock:.1%} of the per-clock peak")
    if any(row.name.endswith("mma_sync") for row in ceilings) and hw.cc and hw.cc[0] == 9:
        notes.append("mma.sync is the pre-Hopper tensor-core path: Hopper reaches its full tensor rate only "
                     "with wgmma (warpgroup MMA), so the *_mma_sync figures sit below the dense peak")
    cal_doc = calibrated_hardware(hw, raw, meta)
    cal = validate(Hardware, cal_doc, "calibration")

    residency = []
    for r in raw.get("occupancy", []):
        blocks, lims = blocks_per_sm(hw, r["threads"], r["regs"], r["dyn_smem"], r["static_smem"], r["carveout"])
        residency.append(ResidencyRow(
            name=r["name"], threads=r["threads"], regs=r["regs"], static_smem=r["static_smem"],
            dyn_smem=r["dyn_smem"], carveout=r["carveout"], expected_limiter=r["expected_limiter"],
            solver_limiters=lims, solver_blocks=blocks, runtime_blocks=r["runtime_blocks"],
            measured_blocks=r["measured_blocks"],
            agree=blocks == r["runtime_blocks"] == r["measured_blocks"]))

    ops = []
    for o in list(raw.get("ops", [])) + list(raw.get("torch", {}).get("ops", [])):
        params = dict(o["params"])
        dr = analyze(o["op"], hw, dtype=o["dtype"], **params)
        cr = analyze(o["op"], cal, dtype=o["dtype"], **params)
        ratio = o["median_s"] / cr.predicted_s
        label = o.get("label", o["op"])
        ops.append(OpRow(op=o["op"], label=label, dtype=o["dtype"], params=params, impl=o["impl"], bound=cr.bound,
                         predicted_datasheet_s=dr.predicted_s, predicted_calibrated_s=cr.predicted_s,
                         measured_s=o["median_s"], ratio=ratio, verified=bool(o["verified"]), phases_s=o.get("phases_s"),
                         note=_op_note(ratio, cr.bound, cr.predicted_s, label, o["op"], cr.warnings,
                                       o.get("phases_s"))))
    bad = [o for o in ops if not o.verified]
    if bad:
        raise DomainError(f"the result check of op {bad[0].op} ({bad[0].label}) failed")

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
    report = ProbeReport(date=meta["date"], command=meta["command"], hardware=hw.id, device=raw["device"],
                         driver=meta.get("driver"), nvcc=meta.get("nvcc"), quick=quick, ceilings=ceilings,
                         residency=residency, ops=ops, summary=summary, skipped=skipped, notes=notes, raw=raw)
    return report, cal_doc


def match_hardware(device_name: str, override: str | None) -> Hardware:
    if override:
        return load_hardware(override)
    try:
        return load_hardware(device_name)
    except InputError:
        raise DomainError(f"the GPU {device_name!r} is not in the registry; pass --hw NAME for the closest part") from None


def run_probe(quick: bool, hw_override: str | None, command: str,
              progress: Callable[[str], None]) -> tuple[ProbeReport, dict[str, Any]]:
    progress("detecting the GPU")
    gpu = detect_gpu()
    nvcc = find_nvcc()
    arch = gpu["cc"].replace(".", "")
    progress(f"building the probe for sm_{arch}")
    exe = build_probe(nvcc, arch)
    progress("measuring ceilings" + ("" if quick else ", residency and ops") + " (probe)")
    raw = run_binary(exe, quick)
    torch_raw, skipped = run_torch(quick, 10 if quick else 20, progress)
    if torch_raw:
        raw["torch"] = torch_raw
    hw = match_hardware(raw["device"]["name"], hw_override)
    meta = {"date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"), "command": command,
            "driver": gpu["driver"], "nvcc": nvcc_version(nvcc)}
    progress("comparing with the engines")
    return build_report(raw, hw, meta, skipped, quick)


def report_from_file(path: str) -> ProbeReport:
    """Re-read a saved report and recompute every comparison from its raw measurements."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path}: no such report")
    try:
        saved = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {e}") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not JSON ({e.msg} at line {e.lineno})") from None
    if not isinstance(saved, dict) or "raw" not in saved:
        raise InputError(f"{path}: not a roofcalc probe report (no 'raw' measurements)")
    hw = load_hardware(saved["hardware"])
    meta = {k: saved.get(k) for k in ("date", "command", "driver", "nvcc")}
    report, _ = build_report(saved["raw"], hw, meta, saved.get("skipped", []), saved.get("quick", False))
    return report


def write_atomic(path: str, text: str) -> None:
    target = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent if str(target.parent) else ".", prefix=".roofcalc-")
    except OSError as e:
        raise InputError(f"{path}: cannot write: {e.strerror}") from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes 0600; give the file the usual mode
        os.replace(tmp, target)
    except OSError as e:
        Path(tmp).unlink(missing_ok=True)
        raise InputError(f"{path}: cannot write: {e.strerror}") from None


def calibration_yaml(doc: dict[str, Any]) -> str:
    import yaml

    head = ("# Written by 'roofcalc probe --save-calibration': the base hardware file with the ceilings\n"
            "# the probe measured (kind: measured). Use it with: roofcalc op ... --calibration THIS_FILE\n")
    return head + yaml.safe_dump(doc, sort_keys=False, width=120)

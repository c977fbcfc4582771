"""Build, run and compare: the logic behind ``roofcalc probe``.

``run_probe`` needs a GPU and nvcc. It builds the CUDA probe (and, on CC 9.0, one wgmma binary
per dtype, in parallel), runs the probe one section per process (a section that fails is
skipped with its reason, except the device-memory ceilings, which every calibration needs),
then the PyTorch timings, then, with two or more GPUs, the NCCL all-reduce in child processes.
The comparison (``report.build_report``) needs neither GPU nor nvcc: recorded runs can be
re-checked anywhere.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import json
import math
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, Protocol, cast, overload

from ..errors import DomainError, InputError
from ..hardware import Hardware, load_hardware
from .report import (
    CALIBRATES,
    CALIBRATION_SCHEMA,
    DATASHEET_OF,
    IMPOSSIBLE,
    NVLS_VARS,
    SCHEMA_VERSION,
    CeilingRow,
    OpRow,
    ProbeReport,
    ResidencyRow,
    build_report,
    calibrated_hardware,
)

__all__ = [
    "CALIBRATES",
    "CALIBRATION_SCHEMA",
    "DATASHEET_OF",
    "IMPOSSIBLE",
    "SCHEMA_VERSION",
    "Build",
    "CeilingRow",
    "OpRow",
    "ProbeReport",
    "Progress",
    "ResidencyRow",
    "build_probe",
    "build_report",
    "calibrated_hardware",
    "calibration_yaml",
    "detect_gpu",
    "find_nvcc",
    "report_from_file",
    "run_probe",
    "write_atomic",
]

# (section of probe.cu, phase label, required, timeout in s, part of --quick)
SECTIONS: list[tuple[str, str, bool, int, bool]] = [
    ("memory", "device-memory and L2 ceilings", True, 240, True),
    ("fma", "FMA ceilings (CUDA cores)", False, 90, True),
    ("mma", "tensor cores: mma.sync", False, 90, True),
    ("floors", "kernel floors and launch overhead", False, 90, True),
    ("per_sm", "per-SM bandwidth", False, 150, False),
    ("latency", "memory latency (pointer chase)", False, 90, False),
    ("residency", "block residency", False, 150, False),
    ("ops", "op kernels", False, 300, False),
]
WGMMA_DTYPES = ("bf16", "fp16", "fp8", "tf32", "int8")  # the order of WGMMA_DT in wgmma.cu
# ceilings added with schema 2: one that fails its check is dropped and said, not fatal
NEW_CEILINGS = {f"{dt}_wgmma" for dt in WGMMA_DTYPES} | {"fp8_matmul_torch", "int8_matmul_torch"}


class Progress(Protocol):
    """Where the runner says how far it has got (see probe/render.py for the displays)."""

    def plan(self, phases: int) -> None: ...

    def phase(self, name: str) -> None: ...

    def detail(self, text: str) -> None: ...


class _CallableProgress:
    """Adapts a plain ``callable(text)`` (one call per phase) to ``Progress``."""

    def __init__(self, fn: Callable[[str], None]) -> None:
        self.fn = fn

    def plan(self, phases: int) -> None:
        pass

    def phase(self, name: str) -> None:
        self.fn(name)

    def detail(self, text: str) -> None:
        pass


class _Timed:
    """Records the wall time of every phase (kept in the raw measurements)."""

    def __init__(self, inner: Progress) -> None:
        self.inner = inner
        self.times: dict[str, float] = {}
        self.current: str | None = None
        self.t0 = time.monotonic()
        self.started = 0

    def plan(self, phases: int) -> None:
        self.inner.plan(phases)

    def phase(self, name: str) -> None:
        self._close()
        self.current, self.t0 = name, time.monotonic()
        self.started += 1
        self.inner.phase(name)

    def detail(self, text: str) -> None:
        self.inner.detail(text)

    def _close(self) -> None:
        if self.current is not None:
            self.times[self.current] = round(self.times.get(self.current, 0.0) + time.monotonic() - self.t0, 2)

    def finish(self) -> dict[str, float]:
        self._close()
        self.current = None
        return self.times


# ------------------------------------------------------------------ environment


DEFAULT_NVCC = "/usr/local/cuda/bin/nvcc"
# the pause between the samples of PyTorch's op floor (torch_ops.torch_op_floor): 25 samples (9 in a
# quick probe) spread over about 4 s, as hosts switch their CPU's speed within seconds
# (validation/traces/h200/host-state1)
TORCH_OP_GAP_S = 0.15


def find_nvcc() -> str:
    for cand in (
        shutil.which("nvcc"),
        os.environ.get("CUDA_HOME") and f"{os.environ['CUDA_HOME']}/bin/nvcc",
        DEFAULT_NVCC,
    ):
        if cand and Path(cand).is_file():
            return cand
    raise DomainError("nvcc not found: install the CUDA toolkit or set CUDA_HOME (the probe is built on first use)")


def detect_gpu() -> dict[str, Any]:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        raise DomainError("no NVIDIA GPU found: nvidia-smi is not on PATH")
    try:
        out = subprocess.run(
            [smi, "--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise DomainError(f"no NVIDIA GPU found: nvidia-smi failed ({e})") from None
    lines = [ln for ln in out.stdout.splitlines() if ln.strip()]
    if out.returncode != 0 or not lines:
        last = (out.stderr or out.stdout).strip().splitlines()[-1:] or ["no output"]
        raise DomainError(f"no NVIDIA GPU found: nvidia-smi says {last[0]}")
    parts = [x.strip() for x in lines[0].split(",")]
    if len(parts) < 3:
        raise DomainError(f"no NVIDIA GPU found: nvidia-smi printed {lines[0]!r}")
    name, cc, driver = parts[:3]
    return {"name": name, "cc": cc, "driver": driver, "count": len(lines)}


def nvcc_version(nvcc: str) -> str:
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True)
    lines = [ln for ln in out.stdout.splitlines() if ln.strip()]
    return lines[-1].strip() if lines else "unknown"


def cuda_source(name: str) -> str:
    from importlib.resources import files

    return files("roofcalc.probe").joinpath(name).read_text(encoding="utf-8")


def probe_source() -> str:
    return cuda_source("probe.cu")


def _cache_root() -> Path:
    from ..registry import cache_root

    root = cache_root()  # with roofcalc's cache off, the binaries go to the temporary folder
    return (root if root is not None else Path(tempfile.gettempdir()) / "roofcalc") / "probe"


class Build:
    """One nvcc compilation, started at once in the background; cached per source, flags and nvcc."""

    def __init__(
        self,
        nvcc: str,
        source: str,
        stem: str,
        gencode: str,
        defines: tuple[str, ...] = (),
        cache_dir: Path | None = None,
        label: str = "the probe",
    ) -> None:
        src = cuda_source(source)
        key = hashlib.sha256(f"{src}\0{gencode}\0{' '.join(defines)}\0{nvcc_version(nvcc)}".encode()).hexdigest()[:16]
        root = cache_dir or _cache_root()
        self.exe = root / f"{stem}-{key}"
        self.label = label
        self.error: str | None = None
        self.proc: subprocess.Popen[str] | None = None
        self.tmp: Path | None = None
        if self.exe.is_file():
            return
        root.mkdir(parents=True, exist_ok=True)
        self.tmp = Path(tempfile.mkdtemp(dir=root))
        cu = self.tmp / source
        cu.write_text(src, encoding="utf-8")
        self.out = self.tmp / stem
        cmd = [nvcc, "-O3", "-std=c++17", f"-gencode={gencode}", *defines, "-o", str(self.out), str(cu)]
        try:
            self.proc = subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, errors="replace"
            )
        except OSError as e:
            self.error = str(e)
            self._cleanup()

    def wait(self) -> Path:
        if self.proc is not None:
            out, err = self.proc.communicate()
            rc = self.proc.returncode
            self.proc = None
            try:
                if rc != 0:
                    self.error = " | ".join((err or out).strip().splitlines()[-4:]) or f"exit code {rc}"
                else:
                    os.replace(self.out, self.exe)
            finally:
                self._cleanup()
        if self.error is not None:
            raise DomainError(f"building {self.label} with nvcc failed: {self.error}")
        return self.exe

    def cancel(self) -> None:
        """Stop a build nobody waits for (and close its pipes); a finished one is left as it is."""
        if self.proc is not None:
            if self.proc.poll() is None:
                self.proc.kill()
            self.proc.communicate()
        self.proc = None
        self._cleanup()

    def _cleanup(self) -> None:
        if self.tmp is not None:
            shutil.rmtree(self.tmp, ignore_errors=True)
            self.tmp = None


def build_probe(nvcc: str, arch: str, cache_dir: Path | None = None) -> Path:
    """Compile probe.cu for ``arch`` (e.g. '90'), cached per source hash, arch and nvcc version."""
    return Build(nvcc, "probe.cu", f"probe-sm{arch}", f"arch=compute_{arch},code=sm_{arch}", cache_dir=cache_dir).wait()


def wgmma_build(nvcc: str, dtype: str, cache_dir: Path | None = None) -> Build:
    """The wgmma binary for one dtype (sm_90a only), started in the background."""
    return Build(
        nvcc,
        "wgmma.cu",
        f"wgmma-{dtype}-sm90a",
        "arch=compute_90a,code=sm_90a",
        (f"-DWGMMA_DT={WGMMA_DTYPES.index(dtype)}",),
        cache_dir=cache_dir,
        label=f"the wgmma probe ({dtype})",
    )


def run_section(cmd: list[str], timeout: float, on_progress: Callable[[str], None]) -> dict[str, Any]:
    """Run one probe binary; stream its '@progress' lines; return the JSON object it prints."""
    with tempfile.TemporaryFile() as out:
        try:
            proc = subprocess.Popen(
                cmd, stdout=out, stderr=subprocess.PIPE, text=True, errors="replace", start_new_session=True
            )
        except OSError as e:
            raise DomainError(f"cannot run {Path(cmd[0]).name}: {e.strerror}") from None
        err_lines: list[str] = []

        def pump() -> None:
            if proc.stderr is None:
                return
            for line in proc.stderr:
                if line.startswith("@progress "):
                    with contextlib.suppress(Exception):  # a display problem never stops a measurement
                        on_progress(line[len("@progress ") :].strip())
                else:
                    err_lines.append(line.rstrip("\n"))

        reader = threading.Thread(target=pump, daemon=True)
        reader.start()
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)  # the binary and anything it started: this call's group
            proc.wait()
            raise DomainError(f"did not finish in {timeout:.0f} s") from None
        finally:
            reader.join(10)
            if proc.stderr is not None and not reader.is_alive():
                proc.stderr.close()
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    if rc != 0:
        tail = " | ".join(ln.strip() for ln in err_lines if ln.strip())
        raise DomainError((tail[-400:] if tail else "") or f"exit code {rc}")
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        raise DomainError("printed something that is not JSON") from None
    if not isinstance(data, dict) or "device" not in data:
        raise DomainError("printed JSON without a 'device' object")
    return data


def _merge(raw: dict[str, Any], data: dict[str, Any]) -> None:
    raw.setdefault("device", data["device"])
    for k, v in data.items():
        if k == "device":
            continue
        if isinstance(v, list):
            raw.setdefault(k, []).extend(v)
        else:
            raw[k] = v


def _drop_unusable(rows: list[dict[str, Any]], hw: Hardware, skipped: list[str]) -> list[dict[str, Any]]:
    """Ceilings added in schema 2 that fail their check or exceed 1.2x the datasheet are said and left out."""
    from .report import _datasheet

    keep = []
    for c in rows:
        if c.get("name") in NEW_CEILINGS:
            ds = _datasheet(hw, c["name"])
            if not c.get("verified"):
                skipped.append(f"{c['name']}: its result check failed; not used")
                continue
            if ds and c["value"] > IMPOSSIBLE * ds:
                skipped.append(
                    f"{c['name']}: {c['value']:.4g} {c['unit']} is {c['value'] / ds:.2f}x the datasheet "
                    "figure, a measurement error; not used"
                )
                continue
        keep.append(c)
    return keep


# ------------------------------------------------------------------ PyTorch and NCCL


def run_torch(quick: bool, reps: int, progress: Progress) -> tuple[dict[str, Any], list[str]]:
    """Ceilings, floors, GEMM efficiency and op timings through PyTorch, where it is installed with CUDA."""
    try:
        import torch  # type: ignore[import-not-found]
    except ImportError:
        return {}, [
            "PyTorch is not installed: its floor, GEMM, attention, decode and prefill timings and the "
            "interconnect (NCCL) part skipped"
        ]
    except Exception as e:  # installed but broken (a missing CUDA library, say)
        return {}, [f"PyTorch cannot be imported ({_one_line(e)}): its timings and the interconnect part skipped"]
    if not torch.cuda.is_available():
        return {}, ["PyTorch sees no CUDA device: its timings and the interconnect part skipped"]
    from . import torch_ops

    out: dict[str, Any] = {
        "torch": torch.__version__,
        "cuda": torch.version.cuda or "",
        "ceilings": [],
        "ops": [],
        "device_count": int(torch.cuda.device_count()),
    }
    skipped: list[str] = []
    progress.phase("PyTorch: op floor and matrix-product ceilings")
    try:
        # samples spread over about 1.5 s (quick) or 4 s, so that a host that switches its speed
        # within seconds is read at the state it spent most of them in, not at one instant's
        out["floor"] = torch_ops.torch_op_floor(torch, 9 if quick else 25, gap_s=TORCH_OP_GAP_S)
    except Exception as e:  # report, keep the rest
        skipped.append(f"PyTorch op floor: {_one_line(e)}")
    if not quick:  # compiles two small functions (seconds): the full probe only
        try:
            out["compiled_floor"] = torch_ops.torch_compiled_floor(torch, 5)
        except Exception as e:  # torch.compile unavailable (no Triton, say): report, keep the rest
            skipped.append(f"PyTorch compiled-call floor: {_one_line(e)}")
    try:
        out["kernel_floors"] = torch_ops.torch_kernel_floors(torch, 9)
    except Exception as e:  # report, keep the rest
        skipped.append(f"PyTorch kernel floors: {_one_line(e)}")
    out["ceilings"] = torch_ops.matmul_ceilings(torch, reps, skipped)
    if quick:
        return out, skipped
    progress.phase("PyTorch: GEMM efficiency (odd, small, skinny, GEMV, mid-size, fp8, fp32)")
    try:
        out["gemm"] = torch_ops.gemm_efficiency(torch, 10)
    except Exception as e:
        skipped.append(f"GEMM efficiency: {_one_line(e)}")
    try:
        out["writeback"] = torch_ops.dirty_writeback(torch, 7)
    except Exception as e:
        skipped.append(f"L2 dirty write-back: {_one_line(e)}")
    progress.phase("PyTorch: cuBLAS's kernel choices for FP32 and TF32 products with a small side")
    try:
        out["gemm_choices"] = torch_ops.gemm_choices(torch)
    except Exception as e:
        skipped.append(f"GEMM choice sweep: {_one_line(e)}")
    if out.get("gemm_choices"):
        try:  # the grid's refinement: a failure keeps the grid
            from ..expected import choice

            out["gemm_choices"] = torch_ops.refined_choices(torch, out["gemm_choices"], choice)
        except Exception as e:
            skipped.append(f"GEMM choice sweep's refinement: {_one_line(e)}")
    for label, fn in (
        ("GEMM shapes", torch_ops.gemm_ops),
        ("attention", torch_ops.attention_ops),
        ("Llama decode and prefill", torch_ops.llama_ops),
    ):
        progress.phase(f"PyTorch: {label}")
        try:
            out["ops"] += fn(torch, reps)
        except Exception as e:  # report, keep the rest
            skipped.append(f"{label}: {_one_line(e)}")
    return out, skipped


def _one_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:300]


def run_interconnect(
    gpus: int, quick: bool, progress: Progress, timeout: int | None = None
) -> tuple[dict[str, Any], list[str]]:
    """NCCL all-reduce (child processes, one per GPU) and a peer-to-peer copy (this process)."""
    from importlib.resources import as_file, files

    ic: dict[str, Any] = {"gpus": gpus, "env": {k: os.environ.get(k) for k in NVLS_VARS}}
    skipped: list[str] = []
    timeout = timeout or (60 if quick else 120)  # about 20-30 s expected: NCCL start-up, then the sizes
    progress.detail(f"NCCL all-reduce on {gpus} GPUs (torch.distributed.run)")
    with tempfile.TemporaryDirectory() as tmp, as_file(files("roofcalc.probe").joinpath("nccl_bench.py")) as script:
        out = Path(tmp) / "nccl.json"
        cmd = [
            sys.executable,
            "-m",
            "torch.distributed.run",
            "--standalone",
            f"--nproc-per-node={gpus}",
            str(script),
            "--out",
            str(out),
            *(["--quick"] if quick else []),
        ]
        reason = None
        try:
            # the environment goes to the children unchanged (NVLink multicast switches included)
            proc = subprocess.Popen(
                cmd,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                errors="replace",
                env=os.environ.copy(),
                start_new_session=True,
            )
        except OSError as e:
            reason, log = f"cannot start {sys.executable}: {e.strerror}", ""
        else:
            try:
                log, _ = proc.communicate(timeout=timeout)
                if proc.returncode != 0:
                    reason = f"exit code {proc.returncode}"
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)  # torchrun and its workers: the group this call started
                log, _ = proc.communicate()
                reason = f"did not finish in {timeout} s"
        ic["log_tail"] = (log or "").splitlines()[-15:]
        if out.is_file():
            try:
                ic["nccl"] = json.loads(out.read_text(encoding="utf-8"))
            except (OSError, json.JSONDecodeError):
                reason = reason or "its output file is not JSON"
        elif reason is None:
            reason = "no output file"
        if reason is not None:
            last = next((ln.strip() for ln in reversed(ic["log_tail"]) if ln.strip()), "")
            kept = "; the sizes measured before that are kept" if "nccl" in ic else ""
            skipped.append(f"interconnect (NCCL all-reduce): {reason}{kept}" + (f" ({last[:200]})" if last else ""))
    progress.detail("peer-to-peer copy GPU 0 -> GPU 1")
    try:
        import torch

        from . import torch_ops

        ic["p2p"] = torch_ops.p2p_copy(torch, quick)
    except Exception as e:
        ic["p2p"] = {"error": _one_line(e)}
        skipped.append(f"peer-to-peer copy: {_one_line(e)}")
    return ic, skipped


# ------------------------------------------------------------------ the probe


def match_hardware(device_name: str, override: str | None) -> Hardware:
    if override:
        return load_hardware(override)
    try:
        return load_hardware(device_name)
    except InputError:
        raise DomainError(
            f"the GPU {device_name!r} is not in the registry; pass --hw NAME for the closest part"
        ) from None


def _as_progress(progress: Progress | Callable[[str], None]) -> Progress:
    if hasattr(progress, "phase"):
        return cast(Progress, progress)
    return _CallableProgress(progress)


def run_probe(
    quick: bool,
    hw_override: str | None,
    command: str,
    progress: Progress | Callable[[str], None],
    save_raw: str | None = None,
) -> tuple[ProbeReport, dict[str, Any]]:
    """Measure, then compare. ``save_raw``: a file rewritten with the raw measurements after every
    phase, so that a run cut short or whose comparison fails can be rebuilt with ``probe --report``."""
    prog = _Timed(_as_progress(progress))
    prog.plan(4 + len(SECTIONS) + (1 if quick else 5))  # refined once the GPU is known
    prog.phase("detecting the GPU")
    gpu = detect_gpu()
    nvcc = find_nvcc()
    hw = match_hardware(gpu["name"], hw_override)
    meta = {
        "date": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": command,
        "driver": gpu["driver"],
        "nvcc": nvcc_version(nvcc),
    }
    arch = gpu["cc"].replace(".", "")
    wgmma = [] if gpu["cc"] != "9.0" else (["bf16"] if quick else list(WGMMA_DTYPES))
    sections = [s for s in SECTIONS if s[4] or not quick]
    prog.plan(3 + len(sections) + bool(wgmma) + (1 if quick else 5) + (1 if gpu["count"] > 1 else 0))
    prog.phase("building the probe with nvcc" + (" (and the wgmma binaries, in the background)" if wgmma else ""))
    q = ["--quick"] if quick else []
    builds: dict[str, Build] = {}
    skipped: list[str] = []
    # the NVLink multicast switches as the machine sets them (read, never changed)
    raw: dict[str, Any] = {"schema": SCHEMA_VERSION, "env": {k: os.environ.get(k) for k in NVLS_VARS}}

    def checkpoint(partial: bool = True) -> None:
        """The raw measurements so far (a run cut short still leaves them for --report)."""
        if save_raw and "device" in raw:
            raw["phase_wall_s"] = dict(prog.times)
            write_atomic(
                save_raw,
                json.dumps(
                    {
                        "version": SCHEMA_VERSION,
                        **meta,
                        "hardware": hw.id,
                        "quick": quick,
                        "partial": partial,
                        "skipped": skipped,
                        "raw": raw,
                    },
                    indent=1,
                )
                + "\n",
            )

    try:
        builds["probe"] = Build(nvcc, "probe.cu", f"probe-sm{arch}", f"arch=compute_{arch},code=sm_{arch}")
        for dt in wgmma:
            builds[dt] = wgmma_build(nvcc, dt)
        exe = builds["probe"].wait()
        for section, label, required, timeout, _ in sections:
            prog.phase(label)
            try:
                data = run_section([str(exe), "--section", section, *q], timeout, prog.detail)
            except DomainError as e:
                if required:
                    raise DomainError(f"the probe failed ({label}): {e}") from None
                skipped.append(f"{label}: {e}")
                continue
            _merge(raw, data)
            checkpoint()
        if wgmma:
            prog.phase("tensor cores: wgmma (sm_90a)")
            variants: dict[str, Any] = {}
            for dt in wgmma:
                prog.detail(f"wgmma {dt}: waiting for its build" if builds[dt].proc else f"wgmma {dt}")
                try:
                    data = run_section([str(builds[dt].wait()), "--dtype", dt, *q], 120, prog.detail)
                except DomainError as e:
                    skipped.append(f"wgmma {dt}: {e}")
                    continue
                raw.setdefault("ceilings", []).extend(_drop_unusable(data.get("ceilings", []), hw, skipped))
                variants[dt] = data.get("variants", [])
                raw["wgmma"] = {"variants": variants}
                checkpoint()
        else:
            raw["wgmma_skipped"] = f"this GPU is CC {gpu['cc']}; wgmma needs sm_90a (CC 9.0)"
    finally:
        for b in builds.values():
            b.cancel()
    try:
        torch_raw, tskipped = run_torch(quick, 10 if quick else 20, prog)
    except Exception as e:  # whatever breaks there, the CUDA measurements above stand
        torch_raw, tskipped = {}, [f"the PyTorch part stopped: {_one_line(e)}"]
    skipped += tskipped
    if torch_raw:
        torch_raw["ceilings"] = _drop_unusable(torch_raw.get("ceilings", []), hw, skipped)
        raw["torch"] = torch_raw
        checkpoint()
        n = int(torch_raw.get("device_count", 1))
        if n >= 2:
            prog.phase(f"interconnect: NCCL all-reduce and peer-to-peer copy ({n} GPUs)")
            try:
                ic, iskipped = run_interconnect(n, quick, prog)
            except Exception as e:
                ic, iskipped = {"gpus": n, "error": _one_line(e)}, [f"interconnect: {_one_line(e)}"]
            raw["interconnect"] = ic
            skipped += iskipped
        else:
            skipped.append(f"interconnect: {n} GPU visible; the all-reduce and peer-to-peer figures need two or more")
    prog.plan(prog.started + 1)  # what was planned and did not run (no PyTorch, say) leaves the count
    prog.phase("comparing with the engines")
    raw["phase_wall_s"] = dict(prog.times)
    checkpoint(partial=False)
    result = build_report(raw, hw, meta, skipped, quick)
    prog.finish()
    return result


def _positive(v: object) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0


# the raw sections the report reads, by the container each must be where present
_RAW_LISTS = ("floors", "latency", "occupancy", "ops")
_RAW_MAPS = ("device", "per_sm", "wgmma")
_TORCH_LISTS = ("ceilings", "ops", "gemm")
_TORCH_MAPS = ("floor", "kernel_floors", "writeback")


def _check_sections(raw: dict[str, Any], path: str) -> None:
    """Each raw section the report reads is the container it reads it as: a list of rows (each a
    mapping, an op row's params a mapping) or a mapping."""
    torch = raw.get("torch", {})
    if not isinstance(torch, dict):
        raise InputError(f"{path}: raw.torch must be a mapping")
    for where, section, lists, maps in (
        ("raw", raw, _RAW_LISTS, _RAW_MAPS),
        ("raw.torch", torch, _TORCH_LISTS, _TORCH_MAPS),
    ):
        for key in lists:
            rows = section.get(key, [])
            if rows is not None and (not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows)):
                raise InputError(f"{path}: {where}.{key} must be a list of rows (mappings)")
            if key == "ops" and any(not isinstance(r.get("params"), dict) for r in rows or []):
                raise InputError(f"{path}: each row of {where}.ops needs its params as a mapping")
        for key in maps:
            if key in section and not isinstance(section[key], dict):
                raise InputError(f"{path}: {where}.{key} must be a mapping")


def _check_raw_rows(raw: dict[str, Any], path: str) -> None:
    """The rows the report reads by key, checked before it reads them: the sections' containers
    (_check_sections), the ceilings (a name and a positive value each) and the PyTorch GEMM rows
    (a label, a dtype and whole positive m, n, k)."""
    _check_sections(raw, path)
    ceilings = raw.get("ceilings", [])
    if not isinstance(ceilings, list) or not all(
        isinstance(c, dict) and isinstance(c.get("name"), str) for c in ceilings
    ):
        raise InputError(f"{path}: raw.ceilings must be a list of rows, each with a name")
    for c in ceilings:
        if not _positive(c.get("value")):
            raise InputError(
                f"{path}: raw.ceilings row {c['name'][:60]!r} needs a positive value (got {c.get('value')!r:.40})"
            )
    torch = raw.get("torch", {})
    gemm = torch.get("gemm", [])
    if not isinstance(gemm, list):
        raise InputError(f"{path}: raw.torch.gemm must be a list of rows")
    for i, g in enumerate(gemm):
        if not isinstance(g, dict) or not isinstance(g.get("label"), str) or not isinstance(g.get("dtype"), str):
            raise InputError(f"{path}: raw.torch.gemm[{i}] needs a label and a dtype")
        for key in ("m", "n", "k"):
            v = g.get(key)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise InputError(f"{path}: raw.torch.gemm[{i}].{key} must be a whole number of at least 1 (got {v!r})")


@overload
def report_from_file(path: str) -> ProbeReport: ...


@overload
def report_from_file(path: str, with_calibration: Literal[True]) -> tuple[ProbeReport, dict[str, Any] | None]: ...


def report_from_file(path: str, with_calibration: bool = False) -> Any:
    """Re-read a saved report (or a --save-raw file) and recompute every comparison from its raw measurements."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{path}: no such report")
    try:
        saved = json.loads(p.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {e}") from None
    except json.JSONDecodeError as e:
        raise InputError(f"{path}: not JSON ({e.msg} at line {e.lineno})") from None
    except RecursionError:
        raise InputError(f"{path}: nested too deeply to be a probe report") from None
    except ValueError as e:  # an integer of too many digits
        raise InputError(f"{path}: not a probe report ({str(e)[:80]})") from None
    if not isinstance(saved, dict) or not isinstance(saved.get("raw"), dict) or "hardware" not in saved:
        raise InputError(f"{path}: not a roofcalc probe report (no 'raw' measurements)")
    skipped = saved.get("skipped", [])
    if not isinstance(skipped, list) or not all(isinstance(x, str) for x in skipped):
        raise InputError(f"{path}: 'skipped' must be a list of lines")
    if "device" not in saved["raw"]:
        raise InputError(f"{path}: the raw measurements have no 'device'")
    _check_raw_rows(saved["raw"], path)
    hw = load_hardware(saved["hardware"])
    meta = {k: saved.get(k) for k in ("date", "command", "driver", "nvcc")}
    report, cal = build_report(saved["raw"], hw, meta, saved.get("skipped", []), saved.get("quick", False))
    return (report, cal) if with_calibration else report


def write_atomic(path: str, text: str) -> None:
    """The report, raw measurements and calibration, written atomically (output.replace_file)."""
    from ..output import replace_file

    replace_file(Path(path), text, label=path)


# text whose lines are printable ASCII: a YAML literal block keeps it as it is
_PRINTABLE_LINES = re.compile(r"[ -~\n]*")


def calibration_yaml(doc: dict[str, Any]) -> str:
    import yaml

    head = (
        f"# Written by 'roofcalc probe --save-calibration' (calibration schema {CALIBRATION_SCHEMA}): the base\n"
        "# hardware file with the ceilings the probe measured (kind: measured) and, under expected:, the\n"
        "# floors, per-SM bandwidth, latency, GEMM and interconnect figures it measured.\n"
        "# Use it with: roofcalc op ... --calibration THIS_FILE\n"
    )

    # libyaml's emitter where PyYAML has it (the map's megabyte of text: seconds in pure Python)
    base = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    class _Dumper(base):  # type: ignore[misc,valid-type]
        """Text of several lines (the GEMM choice map: one entry a line) as a literal block."""

    def block(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
        style = "|" if "\n" in text and _PRINTABLE_LINES.fullmatch(text) else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)

    _Dumper.add_representer(str, block)
    return head + yaml.dump(doc, Dumper=_Dumper, sort_keys=False, width=120)

"""Occupancy (and, for measured kernels, the roofline) of every kernel in a kernel file.

Pure functions over the parsed file and a Hardware object: no I/O, no printing. Occupancy is
the solver's (``roofcalc.occupancy_solver``), fed what the runtime would see:
``cudaFuncGetAttributes``' registers and static shared memory (so the per-block reserve that
cuobjdump and sm_90+ cubins count inside the static figure is taken out again: the solver adds
it), the block size, and the dynamic shared memory of the launch.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict

from ..errors import InputError, RoofcalcError
from ..hardware import Hardware
from ..occupancy_solver import NextBlock, OccupancyResult, Waves, occupancy
from ..output import SCHEMA_VERSION
from .limits import printable
from .models import Format, KernelFile, KernelInfo


class Options(BaseModel):
    """What the user asked on top of the file: used where the file records no launch."""

    model_config = ConfigDict(frozen=True)

    threads: int | None = None
    dynamic_smem_bytes: int | None = None
    grid: int | None = None
    kernel_regex: str | None = None


class Roofline(BaseModel):
    """A measured kernel against the hardware's roofs."""

    model_config = ConfigDict(frozen=True)

    achieved_bandwidth_bytes_per_s: float | None
    bandwidth_fraction: float | None  # of the (calibrated) device-memory bandwidth
    achieved_flops_per_s: float | None
    peak_flops_per_s: float | None  # the roof for flops_dtype (CUDA-core or tensor peak)
    peak_pipe: str | None  # "tensor" or "CUDA cores": which peak_flops_per_s is
    flops_fraction: float | None
    intensity: float | None  # FLOP per DRAM byte
    attainable_flops_per_s: float | None  # min(peak, bandwidth x intensity)
    fraction_of_roof: float | None
    bound: str | None


class KernelResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    version: int = SCHEMA_VERSION
    kernel: str
    mangled: str
    format: Format
    arch: str | None
    registers: int | None
    max_registers: int | None
    spill_store_bytes: int | None
    spill_load_bytes: int | None
    stack_frame_bytes: int | None
    static_smem_bytes: int | None
    static_smem_reported_bytes: int | None
    threads: int | None
    threads_from: str | None
    max_threads: int | None
    dynamic_smem_bytes: int
    barriers: int | None
    grid: int | None
    launchable: bool | None
    reason: str | None
    blocks_per_sm: int | None
    warps_per_sm: int | None
    occupancy: float | None
    limiters: list[str]
    limits: dict[str, int | None]
    next_block: NextBlock | None
    waves: Waves | None
    # Nsight Compute exports only
    launches: int | None = None
    measured_s: float | None = None
    dram_bytes: float | None = None
    dram_bytes_from: str | None = None
    flops: float | None = None
    flops_dtype: str | None = None
    flops_counters: list[str] = []
    roofline: Roofline | None = None
    ncu_blocks_per_sm: int | None = None
    ncu_limits: dict[str, int] | None = None
    ncu_theoretical_occupancy: float | None = None
    achieved_occupancy: float | None = None
    ncu_smem_config_bytes: int | None = None
    ncu_agrees: bool | None = None
    ncu_disagreements: list[str] = []
    notes: list[str]


class KernelsReport(BaseModel):
    model_config = ConfigDict(frozen=True)

    version: int = SCHEMA_VERSION
    file: str
    format: Format
    hardware: str
    hardware_name: str
    calibrated: bool
    kernels: list[KernelResult]
    skipped: list[str]
    notes: list[str]


def runs_on(arch: int | None, suffix: str, hw: Hardware) -> bool:
    """Whether SASS for sm_<arch><suffix> runs on the hardware (same major, minor not above;
    'a' code only on its exact CC)."""
    if arch is None or hw.cc is None:
        return True
    major, minor = divmod(arch, 10)
    if suffix == "a":
        return (major, minor) == hw.cc
    return major == hw.cc[0] and (suffix == "f" or minor <= hw.cc[1])


def _static_smem(k: KernelInfo, hw: Hardware, notes: list[str]) -> int | None:
    reported = k.smem_reported_bytes
    included = k.smem_reserve_included
    if included is None:  # no architecture in the file: the hardware's
        included = hw.cc is not None and hw.cc >= (9, 0)
    if reported is None or not included or reported == 0:
        return reported
    reserve = hw.sm_value("reserved_shared_memory_per_block_bytes") or 0
    what = "cuobjdump's SHARED" if k.format == "cuobjdump" else "the cubin's .nv.shared size"
    if reported < reserve:
        notes.append(
            f"{what} ({reported:,} B) is below the {reserve:,}-byte per-block reserve it includes from "
            "sm_90 on; read as static shared memory as it is"
        )
        return reported
    if reserve:
        notes.append(
            f"static shared memory = {what} - {reserve:,} B: from sm_90 on it includes the per-block "
            "reserve (reserved_shared_memory_per_block_bytes), which cudaFuncGetAttributes leaves out "
            "and the solver adds"
        )
    return reported - reserve


def _launch(k: KernelInfo, opts: Options, notes: list[str]) -> tuple[int | None, str | None, int, int | None]:
    """Threads, where they come from, dynamic shared memory and grid for one kernel."""
    if k.threads is not None:
        threads, source = k.threads, k.threads_from
    elif opts.threads is not None:
        threads, source = opts.threads, "--threads"
    elif k.max_threads is not None:
        threads, source = k.max_threads, "__launch_bounds__"
    else:
        threads, source = None, None
        notes.append("no block size: the file records no launch and no __launch_bounds__; give --threads")
    dyn = k.dynamic_smem_bytes if k.dynamic_smem_bytes is not None else opts.dynamic_smem_bytes or 0
    grid = k.grid if k.grid is not None else opts.grid
    return threads, source, dyn, grid


def _config_carveout(hw: Hardware, config: int) -> int | None:
    """The carveout percentage whose shared-memory configuration is ``config`` bytes (or None)."""
    per_sm = hw.sm_value("shared_memory_per_sm_bytes")
    configs = hw.sm.shared_memory_configs_kib.value if hw.sm.shared_memory_configs_kib else []
    if not per_sm or config // 1024 not in configs or config % 1024:
        return None
    return min(100, config * 100 // per_sm)


def _compare_ncu(
    k: KernelInfo, hw: Hardware, res: OccupancyResult, solve: Callable[[int | None], OccupancyResult], notes: list[str]
) -> tuple[int | None, bool | None, list[str]]:
    m = k.measurement
    if m is None or not m.limits:
        return None, None, []
    ncu_blocks = min(m.limits.values())
    ref = res
    if m.smem_config_bytes is not None and m.smem_config_bytes != res.smem_config_bytes:
        carve = _config_carveout(hw, m.smem_config_bytes)
        if carve is not None:
            ref = solve(carve)
            if ref.blocks_per_sm != res.blocks_per_sm:
                notes.append(
                    f"ncu's launch ran with a {m.smem_config_bytes // 1024} KiB shared-memory configuration "
                    f"(the driver's choice): {ref.blocks_per_sm} blocks per SM there, {res.blocks_per_sm} "
                    "with the largest one; compared with ncu at its configuration"
                )
    cap = hw.sm_value("max_blocks_per_sm") or 2**31  # a limit above the block slots binds nothing; ncu caps there
    diffs = []
    for key, ncu_value in m.limits.items():
        mine = ref.limits.get(key)
        if mine is not None and min(mine, cap) != min(ncu_value, cap):
            diffs.append(f"{key.replace('_', ' ')} limit: ncu {ncu_value}, roofcalc {mine}")
    if ncu_blocks != ref.blocks_per_sm:
        diffs.append(f"blocks per SM: ncu {ncu_blocks}, roofcalc {ref.blocks_per_sm}")
    if (
        m.theoretical_occupancy is not None
        and ref.occupancy is not None
        and abs(m.theoretical_occupancy - ref.occupancy) > 0.005
    ):
        diffs.append(f"theoretical occupancy: ncu {m.theoretical_occupancy:.1%}, roofcalc {ref.occupancy:.1%}")
    return ncu_blocks, not diffs, diffs


def _roofline(k: KernelInfo, hw: Hardware, notes: list[str]) -> Roofline | None:
    m = k.measurement
    if m is None:
        return None
    t = m.measured_s
    if not t:
        notes.append("no gpu__time_duration.sum in the export (profile with --section SpeedOfLight)")
        return None
    bw = m.dram_bytes / t if m.dram_bytes is not None else None
    if m.dram_bytes is None:
        notes.append("no DRAM bytes in the export (add --metrics dram__bytes.sum)")
    fps = m.flops / t if m.flops is not None else None
    peak = None
    if m.flops_dtype is not None:
        table = hw.peak_flops_per_s if m.tensor_flops else (hw.cuda_core_flops_per_s or hw.peak_flops_per_s)
        fig = table.get(m.flops_dtype) or hw.peak_flops_per_s.get(m.flops_dtype)
        peak = float(fig.value) if fig is not None else None
        if peak is None:
            notes.append(f"{hw.id} has no {m.flops_dtype} peak to compare the FLOP rate with")
    elif m.measured_s:
        notes.append(
            "no FLOP counters in the export: FLOP/s unknown (add --metrics "
            "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,... or sm__ops_path_tensor_*)"
        )
    intensity = m.flops / m.dram_bytes if m.flops is not None and m.dram_bytes else None
    attainable = min(peak, hw.bandwidth * intensity) if peak is not None and intensity is not None else None
    return Roofline(
        achieved_bandwidth_bytes_per_s=bw,
        bandwidth_fraction=bw / hw.bandwidth if bw is not None else None,
        achieved_flops_per_s=fps,
        peak_flops_per_s=peak,
        peak_pipe=None if peak is None else ("tensor" if m.tensor_flops else "CUDA cores"),
        flops_fraction=fps / peak if fps is not None and peak else None,
        intensity=intensity,
        attainable_flops_per_s=attainable,
        fraction_of_roof=fps / attainable if fps is not None and attainable else None,
        bound=None
        if intensity is None or peak is None
        else ("memory" if intensity < peak / hw.bandwidth else "compute"),
    )


class SolverInput(BaseModel):
    """What the occupancy solver is given for one kernel: what the CUDA runtime would see."""

    model_config = ConfigDict(frozen=True)

    threads: int
    regs: int | None
    smem: int  # dynamic
    static_smem: int  # as cudaFuncGetAttributes reports it (no per-block reserve)
    barriers: int  # named barriers, at least 1 (the runtime's default)
    grid: int | None


def solver_input(
    k: KernelInfo, hw: Hardware, opts: Options, notes: list[str] | None = None
) -> tuple[SolverInput | None, int | None, str | None]:
    """The solver's input for one kernel (None where the file lacks what it needs), the static
    shared memory, and where the block size came from."""
    notes = [] if notes is None else notes
    static = _static_smem(k, hw, notes)
    threads, source, dyn, grid = _launch(k, opts, notes)
    if threads is None or (k.registers is None and hw.sm.registers_per_sm is not None):
        if k.registers is None:
            notes.append("no register count: occupancy unknown")
        return None, static, source
    regs = max(1, k.registers) if k.registers is not None else None
    most = hw.sm_value("max_registers_per_thread")
    if k.format == "ncu" and regs is not None and most is not None and most < regs <= most + 8 - most % 8:
        regs = most  # ncu's allocation of a kernel at the limit (255 -> 256): the same registers are allocated
    return (
        SolverInput(
            threads=threads, regs=regs, smem=dyn, static_smem=static or 0, barriers=max(1, k.barriers or 0), grid=grid
        ),
        static,
        source,
    )


def analyze_kernel(k: KernelInfo, hw: Hardware, opts: Options) -> KernelResult:
    notes = list(k.notes)
    inp, static, source = solver_input(k, hw, opts, notes)
    threads: int | None
    if inp is not None:
        threads, dyn, grid = inp.threads, inp.smem, inp.grid
    else:
        threads, _, dyn, grid = _launch(k, opts, [])
    res: OccupancyResult | None = None
    launchable: bool | None = None
    reason = None
    ncu_blocks: int | None = None
    agrees: bool | None = None
    diffs: list[str] = []
    if inp is not None:
        si = inp

        def solve(carveout: int | None) -> OccupancyResult:
            return occupancy(hw, si.threads, si.regs, si.smem, si.static_smem, carveout, si.barriers, si.grid)

        try:
            res = solve(None)
        except RoofcalcError as e:
            launchable, reason = False, str(e)
        else:
            launchable, reason = res.launchable, res.reason
            ncu_blocks, agrees, diffs = _compare_ncu(k, hw, res, solve, notes)
            if k.max_threads is not None and si.threads > k.max_threads:
                launchable, reason = (
                    False,
                    (
                        f"{si.threads} threads is over the kernel's __launch_bounds__ maximum of {k.max_threads}: the launch "
                        f"fails (cudaOccupancyMaxActiveBlocksPerMultiprocessor still answers {res.blocks_per_sm})"
                    ),
                )
    m = k.measurement
    if m is not None and m.sm_count is not None and hw.sm_value("sm_count") not in (None, m.sm_count):
        notes.append(f"profiled on a GPU with {m.sm_count} SMs; {hw.id} has {hw.sm_value('sm_count')}")
    return KernelResult(
        kernel=k.display,
        mangled=k.name,
        format=k.format,
        arch=k.arch_label,
        registers=k.registers,
        max_registers=k.max_registers,
        spill_store_bytes=k.spill_store_bytes,
        spill_load_bytes=k.spill_load_bytes,
        stack_frame_bytes=k.stack_frame_bytes,
        static_smem_bytes=static,
        static_smem_reported_bytes=k.smem_reported_bytes,
        threads=threads,
        threads_from=source,
        max_threads=k.max_threads,
        dynamic_smem_bytes=dyn,
        barriers=k.barriers,
        grid=grid,
        launchable=launchable,
        reason=reason,
        blocks_per_sm=res.blocks_per_sm if res else None,
        warps_per_sm=res.warps_per_sm if res else None,
        occupancy=res.occupancy if res else None,
        limiters=list(res.limiters) if res else [],
        limits=dict(res.limits) if res else {},
        next_block=res.next_block if res else None,
        waves=res.waves if res else None,
        launches=m.launches if m else None,
        measured_s=m.measured_s if m else None,
        dram_bytes=m.dram_bytes if m else None,
        dram_bytes_from=m.dram_bytes_from if m else None,
        flops=m.flops if m else None,
        flops_dtype=m.flops_dtype if m else None,
        flops_counters=m.flops_counters if m else [],
        roofline=_roofline(k, hw, notes),
        ncu_blocks_per_sm=ncu_blocks,
        ncu_limits=m.limits if m else None,
        ncu_theoretical_occupancy=m.theoretical_occupancy if m else None,
        achieved_occupancy=m.achieved_occupancy if m else None,
        ncu_smem_config_bytes=m.smem_config_bytes if m else None,
        ncu_agrees=agrees,
        ncu_disagreements=diffs,
        notes=notes,
    )


def analyze_file(kf: KernelFile, hw: Hardware, opts: Options) -> KernelsReport:
    """Every kernel of the file that matches --kernel and can run on the hardware."""
    kernels = kf.kernels
    notes = list(kf.notes)
    skipped: list[str] = []
    if opts.kernel_regex is not None:
        try:
            pattern = re.compile(opts.kernel_regex)
        except re.error as e:
            raise InputError(f"--kernel {opts.kernel_regex[:80]!r} is not a regular expression: {e}") from None
        kernels = [k for k in kernels if pattern.search(k.display) or pattern.search(k.name)]
        if not kernels:
            names = printable(", ".join(sorted({k.display for k in kf.kernels})[:50]))
            names = names if len(names) <= 160 else names[:157] + "..."
            raise InputError(f"no kernel matches --kernel {opts.kernel_regex[:80]!r}; the file has: {names}")
    max_threads = hw.sm_value("max_threads_per_block") or 1024
    if opts.threads is not None and not 1 <= opts.threads <= max_threads:
        raise InputError(f"--threads must be 1..{max_threads} on {hw.id} (got {opts.threads})")
    fits = [k for k in kernels if runs_on(k.arch, k.arch_suffix, hw)]
    cc = hw.compute_capability or hw.gpu_family
    if fits and len(fits) < len(kernels):
        others = sorted({k.arch_label or "?" for k in kernels if k not in fits})
        skipped.append(
            f"{len(kernels) - len(fits)} kernel(s) built for {', '.join(others)}, which cannot run on "
            f"{hw.id} (CC {cc}); pick their hardware with --hw to see them"
        )
        kernels = fits
    elif not fits:
        archs = sorted({k.arch_label or "?" for k in kernels})
        notes.append(
            f"no kernel was built for {hw.id} (CC {cc}): the file has {', '.join(archs)}; the figures "
            "below are for these resources on that hardware"
        )
    for flag, value, field in (
        ("--threads", opts.threads, "threads"),
        ("--smem", opts.dynamic_smem_bytes, "dynamic_smem_bytes"),
        ("--grid", opts.grid, "grid"),
    ):
        if value is not None and all(getattr(k, field) is not None for k in kernels):
            notes.append(f"{flag} ignored: every kernel's launch records it")
    cal = [hw.calibration.device_name, hw.calibration.base] if hw.calibration else []
    known = {n.lower() for n in (hw.name, hw.id, *hw.aliases, *cal)}
    devices = sorted({k.measurement.device for k in kernels if k.measurement and k.measurement.device} - {""})
    others = [d for d in devices if not d.isdigit() and d.lower() not in known]
    if others:
        notes.append(
            f"profiled on {', '.join(others)}; the roofs and the occupancy rules are {hw.id}'s "
            "(pick the profiled part with --hw)"
        )
    results = [analyze_kernel(k, hw, opts) for k in kernels]
    if len(results) > 1:  # a note every kernel carries is said once, for the file
        shared = [n for n in results[0].notes if all(n in r.notes for r in results[1:])]
        notes += shared
        results = [r.model_copy(update={"notes": [n for n in r.notes if n not in shared]}) for r in results]
    return KernelsReport(
        file=kf.path,
        format=kf.format,
        hardware=hw.id,
        hardware_name=hw.name,
        calibrated=hw.calibration is not None,
        kernels=results,
        skipped=skipped,
        notes=notes,
    )

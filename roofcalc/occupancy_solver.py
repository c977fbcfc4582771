"""The SM occupancy solver: pure functions, no I/O, no printing.

It follows the rules of NVIDIA's runtime occupancy calculator (``cuda_occupancy.h``)
with every constant taken from the hardware file:

* registers: regs x warp size rounded up to the allocation unit per warp; warps are
  placed per sub-partition (the register file split in ``sub_partitions``); the
  per-block register check assumes the block's warps rounded up to a multiple of the
  sub-partitions;
* shared memory: static + dynamic + reserved per block, rounded up to the allocation
  unit, against the per-block limit (default, or the opt-in maximum above it); the SM's
  shared-memory configuration is the carveout preference rounded up to the next
  supported configuration, or the smallest one that holds one block;
* warp slots, block slots, and (where the file gives a budget, CC >= 9.0) block barriers.

The kernel is assumed to have opted in (``cudaFuncAttributeMaxDynamicSharedMemorySize``)
to exactly the dynamic shared memory it launches with, as a kernel using more than 48 KB
must.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, NamedTuple

from .errors import DomainError, InputError
from .hardware import Hardware, derived, load_hardware
from .record import Record

LIMITERS = ("registers", "shared_memory", "warps", "blocks", "barriers")
Limiter = Literal["registers", "shared_memory", "warps", "blocks", "barriers"]

_CUDA_FIELDS = (
    "warp_size",
    "max_threads_per_block",
    "max_threads_per_sm",
    "max_blocks_per_sm",
    "registers_per_sm",
    "registers_per_block",
    "max_registers_per_thread",
    "register_allocation_unit",
    "sub_partitions",
    "shared_memory_per_sm_bytes",
    "shared_memory_per_block_bytes",
    "shared_memory_per_block_optin_bytes",
    "reserved_shared_memory_per_block_bytes",
    "shared_memory_allocation_unit_bytes",
    "shared_memory_configs_kib",
)


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _round_up(a: int, b: int) -> int:
    return _ceil_div(a, b) * b


@dataclass(frozen=True, kw_only=True)
class NextBlock(Record):
    """What to change (one thing at a time) to fit one more block per SM."""

    regs_at_most: int | None
    smem_at_most: int | None
    threads_at_most: int | None
    why_not: dict[str, str]
    static_smem_at_most: int | None = None  # the same for static (__shared__) memory


@dataclass(frozen=True, kw_only=True)
class Waves(Record):
    grid: int
    blocks_per_wave: int
    waves: float
    full_waves: int
    tail_blocks: int
    tail_efficiency_loss: float


@dataclass(frozen=True, kw_only=True)
class OccupancyResult(Record):
    version: int = 1
    hardware: str
    threads: int
    regs: int | None
    smem: int
    static_smem: int
    carveout: int
    barriers: int
    launchable: bool
    reason: str | None
    blocks_per_sm: int | None
    warps_per_sm: int | None
    threads_per_sm: int | None
    max_warps_per_sm: int | None
    occupancy: float | None
    limiters: list[Limiter]
    limits: dict[str, int | None]
    limit_notes: dict[str, str]
    warps_per_block: int
    allocated_regs_per_thread: int | None
    allocated_regs_per_warp: int | None
    allocated_regs_per_block: int | None
    allocated_smem_per_block: int
    smem_per_block_limit: int | None
    smem_config_bytes: int | None
    next_block: NextBlock | None
    waves: Waves | None
    notes: list[str]


@dataclass(frozen=True, kw_only=True)
class _Raw(Record):
    """The header's numbers, before presentation."""

    blocks: int
    limits: dict[str, int | None]
    regs_per_warp: int
    regs_per_block: int
    smem_alloc: int
    smem_block_limit: int
    smem_config: int


class _SM(NamedTuple):
    """The SM figures the header's arithmetic reads, as ints (0 or the default where absent)."""

    warp: int
    reg_unit: int
    parts: int
    regs_per_block: int
    regs_per_sm: int
    max_threads_block: int
    max_threads_sm: int
    max_blocks: int
    reserved_smem: int
    smem_unit: int
    smem_per_block: int
    smem_optin: int
    smem_per_sm: int
    smem_configs: tuple[int, ...]  # bytes, ascending
    barriers: int | None


def _sm(hw: Hardware) -> _SM:
    """hw's SM figures, read once per (frozen) hardware object: the solver is asked tens of
    thousands of times per sweep or search."""
    memo = derived(hw)
    sm = memo.get("sm-figures")
    if sm is None:
        v = hw.sm_value
        assert hw.sm.shared_memory_configs_kib is not None
        sm = memo["sm-figures"] = _SM(
            warp=v("warp_size") or 32,
            reg_unit=v("register_allocation_unit") or 1,
            parts=v("sub_partitions") or 1,
            regs_per_block=v("registers_per_block") or 0,
            regs_per_sm=v("registers_per_sm") or 0,
            max_threads_block=v("max_threads_per_block") or 0,
            max_threads_sm=v("max_threads_per_sm") or 0,
            max_blocks=v("max_blocks_per_sm") or 0,
            reserved_smem=v("reserved_shared_memory_per_block_bytes") or 0,
            smem_unit=v("shared_memory_allocation_unit_bytes") or 1,
            smem_per_block=v("shared_memory_per_block_bytes") or 0,
            smem_optin=v("shared_memory_per_block_optin_bytes") or 0,
            smem_per_sm=v("shared_memory_per_sm_bytes") or 0,
            smem_configs=tuple(sorted(k * 1024 for k in hw.sm.shared_memory_configs_kib.value)),
            barriers=v("block_barriers_per_sm"),
        )
    return sm


def _smem_config(hw: Hardware, carveout: int, need: int) -> int:
    """The SM's shared-memory configuration for a carveout preference (bytes)."""
    sm = _sm(hw)
    per_sm = sm.smem_per_sm
    configs = sm.smem_configs
    pref = per_sm if carveout == -1 else (carveout * per_sm) // 100

    def align_up(size: int) -> int:
        for c in configs:
            if size <= c:
                return c
        return configs[-1]

    preferred = align_up(pref)
    return preferred if preferred >= need else align_up(need)


def _raw(hw: Hardware, threads: int, regs: int, smem: int, static_smem: int, carveout: int, barriers: int) -> _Raw:
    """The header's arithmetic for one configuration, remembered per (frozen) hardware object:
    the next-block search and the expected-time model ask the same questions many times."""
    memo = derived(hw)
    key = ("occupancy", threads, regs, smem, static_smem, carveout, barriers)
    if key not in memo:
        memo[key] = _compute_raw(hw, threads, regs, smem, static_smem, carveout, barriers)
    return memo[key]  # type: ignore[no-any-return]


def _compute_raw(
    hw: Hardware, threads: int, regs: int, smem: int, static_smem: int, carveout: int, barriers: int
) -> _Raw:
    sm = _sm(hw)
    warp = sm.warp
    warps_per_block = _ceil_div(threads, warp)

    # registers
    regs_per_warp = _round_up(regs * warp, sm.reg_unit)
    regs_per_block = regs_per_warp * warps_per_block
    parts = sm.parts
    assumed = regs_per_warp * _round_up(warps_per_block, parts)
    reg_block_limit = sm.regs_per_block
    lim_regs: int | None
    if reg_block_limit < assumed or reg_block_limit < regs_per_block or regs > 256:
        lim_regs = 0
    elif regs_per_warp == 0:
        lim_regs = None
    else:
        warps_per_part = (sm.regs_per_sm // parts) // regs_per_warp
        lim_regs = (warps_per_part * parts) // warps_per_block

    # warp slots
    lim_warps = 0 if threads > sm.max_threads_block else (sm.max_threads_sm // warp) // warps_per_block

    # block slots
    lim_blocks = sm.max_blocks

    # shared memory
    reserved = sm.reserved_smem
    total = static_smem + reserved + smem
    alloc = _round_up(total, sm.smem_unit)
    default_block = sm.smem_per_block
    block_limit = sm.smem_optin if total > default_block else default_block
    block_limit += reserved
    lim_smem: int | None
    config = _smem_config(hw, carveout, alloc if alloc <= block_limit else 0)
    if alloc > block_limit:
        lim_smem = 0
    elif alloc == 0:
        lim_smem = None
    else:
        lim_smem = config // alloc

    # block barriers (only where the hardware file gives a budget: CC >= 9.0)
    budget = sm.barriers
    lim_bars = budget // barriers if budget is not None and barriers > 0 else None

    limits = {
        "registers": lim_regs,
        "shared_memory": lim_smem,
        "warps": lim_warps,
        "blocks": lim_blocks,
        "barriers": lim_bars,
    }
    blocks = min(x for x in limits.values() if x is not None)
    return _Raw(
        blocks=blocks,
        limits=limits,
        regs_per_warp=regs_per_warp,
        regs_per_block=regs_per_block,
        smem_alloc=alloc,
        smem_block_limit=block_limit,
        smem_config=config,
    )


def occupancy_fraction(hw: Hardware, threads: int, blocks: int) -> float:
    """Active warps over the SM's warp slots for ``blocks`` resident blocks of ``threads``."""
    warp = hw.sm_value("warp_size") or 32
    max_warps = (hw.sm_value("max_threads_per_sm") or 0) // warp
    return blocks * _ceil_div(threads, warp) / max_warps if max_warps else 0.0


def blocks_per_sm(
    hw: Hardware, threads: int, regs: int, smem: int = 0, static_smem: int = 0, carveout: int = -1, barriers: int = 1
) -> tuple[int, list[str]]:
    """Resident blocks per SM and the binding limits, with no input checks (for tests)."""
    raw = _raw(hw, threads, regs, smem, static_smem, carveout, barriers)
    return raw.blocks, [k for k in LIMITERS if raw.limits[k] == raw.blocks]


def _check_inputs(
    hw: Hardware, threads: int, regs: int | None, smem: int, static_smem: int, carveout: int, barriers: int
) -> None:
    max_threads = hw.sm_value("max_threads_per_block") or 1024
    if not 1 <= threads <= max_threads:
        raise InputError(f"--threads must be 1..{max_threads} on {hw.id} (got {threads})")
    max_regs = hw.sm_value("max_registers_per_thread") or 255
    if regs is not None and not 1 <= regs <= max_regs:
        raise InputError(f"--regs must be 1..{max_regs} (got {regs})")
    if smem < 0 or static_smem < 0:
        raise InputError("shared memory sizes must not be negative")
    static_limit = hw.sm_value("shared_memory_per_block_bytes")
    if static_limit and static_smem > static_limit:
        from .units import fmt_binary

        # CUDA: statically allocated shared memory is limited to 48 KB; more must be dynamic (opt-in)
        raise InputError(
            f"--static-smem {fmt_binary(static_smem)} is over the {fmt_binary(static_limit)} a block may declare "
            "statically; more must be dynamic shared memory (--smem, with the opt-in attribute)"
        )
    optin = hw.sm_value("shared_memory_per_block_optin_bytes")
    if optin is not None and smem + static_smem > optin:
        from .units import fmt_binary

        raise InputError(
            f"shared memory per block {fmt_binary(smem + static_smem)} is over {hw.id}'s "
            f"opt-in limit of {fmt_binary(optin)} ({optin} bytes)"
        )
    if not -1 <= carveout <= 100:
        raise InputError(f"--carveout must be -1 (default) or a percentage 0..100 (got {carveout})")
    if not 0 <= barriers <= 16:
        raise InputError(f"--barriers must be 0..16 (got {barriers})")


def missing_fields(hw: Hardware) -> list[str]:
    """The SM figures of the CUDA rules that ``hw`` lacks (the solver cannot run without them)."""
    return [f for f in _CUDA_FIELDS if getattr(hw.sm, f) is None]


def occupancy(
    hardware: Hardware | str,
    threads: int,
    regs: int | None = None,
    smem: int = 0,
    static_smem: int = 0,
    carveout: int | None = None,
    barriers: int = 1,
    grid: int | None = None,
) -> OccupancyResult:
    """Occupancy of one launch configuration on ``hardware``.

    ``smem`` is the dynamic shared memory per block in bytes, ``static_smem`` the static;
    ``carveout`` the shared-memory carveout preference in percent (None or -1: default).
    """
    hw = load_hardware(hardware)
    carve = -1 if carveout is None else carveout
    _check_inputs(hw, threads, regs, smem, static_smem, carve, barriers)
    if grid is not None and grid < 1:
        raise InputError(f"--grid must be at least 1 (got {grid})")
    if hw.sm.registers_per_sm is None:
        return _unknown_rules(hw, threads, regs, smem, static_smem, carve, barriers)
    missing = missing_fields(hw)
    if missing:
        raise DomainError(f"{hw.id}: the occupancy solver needs sm.{missing[0]}, which the hardware file lacks")
    if regs is None:
        raise InputError("--regs is required on NVIDIA hardware (registers per thread, from ptxas -v)")

    raw = _raw(hw, threads, regs, smem, static_smem, carve, barriers)
    warp = hw.sm_value("warp_size") or 32
    warps_per_block = _ceil_div(threads, warp)
    max_warps = (hw.sm_value("max_threads_per_sm") or 0) // warp
    blocks = raw.blocks
    limiters: list[Limiter] = [k for k in LIMITERS if raw.limits[k] == blocks]  # type: ignore[misc]
    notes = _notes(hw, threads, warp, warps_per_block, carve, raw)
    reason = None
    if blocks == 0:
        reason = _why_not(hw, raw, regs, threads)
    limit_notes: dict[str, str] = {}
    if raw.limits["barriers"] is None:
        limit_notes["barriers"] = "no block-barrier budget on this architecture (applies from CC 9.0)"
    return OccupancyResult(
        hardware=hw.id,
        threads=threads,
        regs=regs,
        smem=smem,
        static_smem=static_smem,
        carveout=carve,
        barriers=barriers,
        launchable=blocks > 0,
        reason=reason,
        blocks_per_sm=blocks,
        warps_per_sm=blocks * warps_per_block,
        threads_per_sm=blocks * threads,
        max_warps_per_sm=max_warps,
        occupancy=occupancy_fraction(hw, threads, blocks) if max_warps else None,
        limiters=limiters,
        limits=dict(raw.limits),  # a copy: the solver's memo keeps raw
        limit_notes=limit_notes,
        warps_per_block=warps_per_block,
        allocated_regs_per_thread=raw.regs_per_warp // warp,
        allocated_regs_per_warp=raw.regs_per_warp,
        allocated_regs_per_block=raw.regs_per_block,
        allocated_smem_per_block=raw.smem_alloc,
        smem_per_block_limit=raw.smem_block_limit,
        smem_config_bytes=raw.smem_config,
        # no advice at the ceiling: a kernel whose warps already fill the SM gains nothing from a block more
        next_block=_next_block(hw, threads, regs, smem, static_smem, carve, barriers, blocks)
        if 0 < blocks * warps_per_block < max_warps
        else None,
        waves=_waves(hw, grid, blocks) if grid is not None else None,
        notes=notes,
    )


def _why_not(hw: Hardware, raw: _Raw, regs: int, threads: int) -> str:
    if raw.limits["registers"] == 0:
        return (
            f"{regs} registers x {threads} threads needs {raw.regs_per_block:,} registers per block "
            f"(allocated per warp); the limit is {hw.sm_value('registers_per_block'):,}"
        )
    if raw.limits["shared_memory"] == 0:
        return (
            f"{raw.smem_alloc:,} bytes of shared memory per block (with the reserved bytes) is over "
            f"the per-block limit of {raw.smem_block_limit:,}"
        )
    if raw.limits["warps"] == 0:
        return f"{threads} threads is over the block limit of {hw.sm_value('max_threads_per_block')}"
    return "a resource limit admits no block"


def _next_block(
    hw: Hardware, threads: int, regs: int, smem: int, static_smem: int, carve: int, barriers: int, blocks: int
) -> NextBlock:
    def nb(t: int = threads, r: int = regs, s: int = smem, st: int = static_smem) -> int:
        return _raw(hw, t, r, s, st, carve, barriers).blocks

    def largest_below(get: Callable[[int], int], top: int) -> int:
        """The largest x in [0, top) with get(x) > blocks, given get(0) > blocks >= get(top)."""
        lo, hi = 0, top
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if get(mid) > blocks:
                lo = mid
            else:
                hi = mid
        return lo

    why: dict[str, str] = {}
    regs_at_most = next((r for r in range(regs - 1, 0, -1) if nb(r=r) > blocks), None)
    if regs_at_most is None:
        why["regs"] = "fewer registers alone does not fit another block"
    smem_at_most: int | None = None
    if smem > 0 and nb(s=0) > blocks:
        smem_at_most = largest_below(lambda s: nb(s=s), smem)
    else:
        why["smem"] = "less dynamic shared memory alone does not fit another block"
    static_at_most: int | None = None
    if static_smem > 0 and nb(st=0) > blocks:
        static_at_most = largest_below(lambda s: nb(st=s), static_smem)
    elif static_smem > 0:
        why["static_smem"] = "less static shared memory alone does not fit another block"
    threads_at_most = next((t for t in range(threads - 1, 0, -1) if nb(t=t) > blocks), None)
    if threads_at_most is None:
        why["threads"] = "fewer threads alone does not fit another block"
    return NextBlock(
        regs_at_most=regs_at_most,
        smem_at_most=smem_at_most,
        threads_at_most=threads_at_most,
        why_not=why,
        static_smem_at_most=static_at_most,
    )


def _waves(hw: Hardware, grid: int, blocks: int) -> Waves | None:
    sms = hw.sm_value("sm_count")
    if not sms or blocks == 0:
        return None
    per_wave = blocks * sms
    full, tail = divmod(grid, per_wave)
    waves_needed = full + (1 if tail else 0)
    return Waves(
        grid=grid,
        blocks_per_wave=per_wave,
        waves=grid / per_wave,
        full_waves=full,
        tail_blocks=tail,
        tail_efficiency_loss=1 - grid / (waves_needed * per_wave),
    )


def _notes(hw: Hardware, threads: int, warp: int, warps_per_block: int, carve: int, raw: _Raw) -> list[str]:
    notes = []
    if threads % warp:
        idle = warps_per_block * warp - threads
        notes.append(
            f"{threads} threads is not a multiple of the warp size ({warp}): the last warp runs "
            f"with {idle} of its {warp} lanes idle"
        )
    parts = hw.sm_value("sub_partitions") or 1
    if warps_per_block % parts:
        notes.append(
            f"{warps_per_block} warps per block do not spread evenly over the {parts} sub-partitions "
            f"(each with its own scheduler): per block, some schedulers get more warps than others"
        )
    if carve != -1:
        per_sm = hw.sm_value("shared_memory_per_sm_bytes") or 0
        pref = carve * per_sm // 100
        notes.append(
            f"carveout {carve}% of {per_sm // 1024} KiB = {pref:,} bytes; the SM runs the "
            f"{raw.smem_config // 1024} KiB shared-memory configuration"
        )
    return notes


def _unknown_rules(
    hw: Hardware, threads: int, regs: int | None, smem: int, static_smem: int, carve: int, barriers: int
) -> OccupancyResult:
    """Parts whose vendor publishes no residency rules (Apple): check only the published limits."""
    per_block = hw.sm_value("shared_memory_per_block_bytes")
    reason = None
    if per_block is not None and smem + static_smem > per_block:
        reason = f"{smem + static_smem} bytes of threadgroup memory is over the {per_block}-byte limit"
    why_regs = hw.unknown.get("registers_per_sm", "the vendor publishes no register-file size")
    limit_notes = {
        "registers": f"unknown: {why_regs}",
        "shared_memory": "unknown: " + hw.unknown.get("shared_memory_per_sm_bytes", "no per-core pool published"),
        "warps": "unknown: " + hw.unknown.get("max_threads_per_sm", "no per-core thread limit published"),
        "blocks": "unknown: " + hw.unknown.get("max_blocks_per_sm", "no per-core block limit published"),
        "barriers": "unknown: not published",
    }
    warp = hw.sm_value("warp_size") or 32
    wpb = _ceil_div(threads, warp)
    notes = [
        f"{hw.name}: only the per-threadgroup limits are published (threads <= "
        f"{hw.sm_value('max_threads_per_block')}, threadgroup memory <= {per_block} bytes); "
        "residency per core cannot be computed"
    ]
    if regs is not None:
        notes.append(f"--regs {regs} ignored: {why_regs}")
    return OccupancyResult(
        hardware=hw.id,
        threads=threads,
        regs=regs,
        smem=smem,
        static_smem=static_smem,
        carveout=carve,
        barriers=barriers,
        launchable=reason is None,
        reason=reason,
        blocks_per_sm=None,
        warps_per_sm=None,
        threads_per_sm=None,
        max_warps_per_sm=None,
        occupancy=None,
        limiters=[],
        limits=dict.fromkeys(LIMITERS),
        limit_notes=limit_notes,
        warps_per_block=wpb,
        allocated_regs_per_thread=None,
        allocated_regs_per_warp=None,
        allocated_regs_per_block=None,
        allocated_smem_per_block=smem + static_smem,
        smem_per_block_limit=per_block,
        smem_config_bytes=None,
        next_block=None,
        waves=None,
        notes=notes,
    )


def sweep_block_sizes(
    hardware: Hardware | str,
    regs: int | None = None,
    smem: int = 0,
    static_smem: int = 0,
    carveout: int | None = None,
    barriers: int = 1,
    grid: int | None = None,
) -> tuple[list[OccupancyResult], int | None]:
    """Every block size from one warp to the block limit, and the size the runtime's
    cudaOccupancyMaxPotentialBlockSize would choose (the largest with the most threads
    resident; None where residency is unknown)."""
    hw = load_hardware(hardware)
    warp = hw.sm_value("warp_size") or 32
    top = hw.sm_value("max_threads_per_block") or 1024
    results = [occupancy(hw, t, regs, smem, static_smem, carveout, barriers, grid) for t in range(warp, top + 1, warp)]
    best: int | None = None
    best_threads = 0
    for r in reversed(results):  # the runtime tries the largest first; ties keep the larger
        if r.threads_per_sm is not None and r.threads_per_sm > best_threads:
            best, best_threads = r.threads, r.threads_per_sm
    return results, best

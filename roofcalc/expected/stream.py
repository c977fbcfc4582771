"""Streaming kernels (memory-bound, elementwise and reductions): Little's law per SM over the
grid's blocks, the read/write mix of DRAM traffic, L2 re-reads and reads of what the kernel
before just wrote, issue-bound and warp-serial arithmetic. Reads the Card's DRAM, L2 and per-SM
bandwidths and latencies, clocks and special-function rate, the CUDA-core rate, and the blocks
per SM the occupancy solver finds."""

from __future__ import annotations

import math
from typing import Literal

from ..hardware import Hardware
from .card import DEPENDENT_ISSUE_CLK, Card, _cuda_rate
from .records import Kernel, KernelEstimate


def _occupancy(hw: Hardware, k: Kernel) -> int:
    from ..occupancy_solver import blocks_per_sm

    bps, _ = blocks_per_sm(hw, k.threads, k.regs, k.smem)
    return max(bps, 1)


def _prior_read(c: Card, k: Kernel, reads: float) -> float:
    """The bytes of its reads that the kernel before it has just written (prior_bytes, at most
    what the kernel reads), where that tensor fits the L2 share re-reads can count on; else 0."""
    prior = min(k.prior_bytes, max(reads, 0.0))
    return prior if 0 < prior <= c.l2_bytes and c.l2_bw else 0.0


def _prior_time(c: Card, prior: float, traffic: float, dram_bw: float, l2_rate: float) -> float:
    """The memory time of a kernel that reads ``prior`` bytes from the L2 (_prior_read): the
    rest of its traffic streams from DRAM beside them, and the L2 carries all of it."""
    return max((traffic - prior) / dram_bw, traffic / min(c.l2_bw, l2_rate))


def _stream(hw: Hardware, c: Card, k: Kernel) -> KernelEstimate:
    """A memory or elementwise/reduction kernel. Bandwidth follows Little's law: what each SM
    keeps in flight (resident blocks x threads x bytes per thread) over the memory latency,
    capped by one SM's saturation bandwidth and by the card's; plus the chain of dependent
    memory round trips of each block (load, reduce, store), wave after wave."""
    bps = _occupancy(hw, k)
    grid = max(k.grid, 1)
    active = min(c.sms, grid)
    resident = min(bps, math.ceil(grid / c.sms))
    waves = grid / (bps * c.sms)
    in_flight = resident * k.threads * k.inflight_bytes
    sm_bw = min(c.per_sm_bw, in_flight / c.loaded_latency) if c.loaded_latency else c.per_sm_bw
    streaming = _streams(c, k, active, k.dram_bytes)
    # Little's law binds on the busiest SM: ceil(grid / sms) blocks' bytes at its in-flight rate
    # (133 blocks on 132 SMs take as long as 132, not half as long for the second block resident)
    bw = min(streaming, sm_bw * grid / math.ceil(grid / c.sms))
    t_mem = k.dram_bytes / bw if k.dram_bytes else 0.0
    reason = f"{grid:,} block(s) of {k.threads} threads, {bps}/SM, on {active} of {c.sms} SMs"
    l2_sm = min(c.per_sm_bw * c.l2_bw / c.dram_bw, in_flight / c.l2_latency) if c.l2_latency else sm_bw
    prior = _prior_read(c, k, k.dram_bytes - k.write_bytes)
    if prior:
        t_mem = _prior_time(c, prior, k.dram_bytes, bw, active * l2_sm)
        reason += "; its input, just written by the kernel before, is read from L2"
    if k.reread_bytes:
        t_mem, why = _reread_time(c, k, min(grid, bps * c.sms), active, t_mem, active * sm_bw, active * l2_sm)
        reason += why
    t_comp, serial = _stream_compute(hw, c, k, bps, active)
    t_lat = math.ceil(waves) * k.passes * c.latency
    if k.in_order:
        # each thread computes an item's offsets, loads it, stores it, then starts the next:
        # the SM's other warps do not hide one warp's arithmetic behind its memory traffic,
        # which streams while no warp issues (Little's law still bounds it)
        body = max(k.dram_bytes / streaming + t_comp, t_mem, t_lat)
        reason += "; offsets, load and store of each item in order: issue adds to memory"
        if body > t_mem:  # Little's law does not bind: the reason names the streaming rate
            bw, in_flight = streaming, 0
    else:
        # an SM's resident blocks overlap one's memory traffic with another's arithmetic:
        # with few of them, part of the shorter phase stays exposed
        body = max(t_mem, t_comp, t_lat) + min(t_mem, t_comp) / max(resident, 1)
    bound: Literal["memory", "compute", "latency"] = (
        "latency" if t_lat >= max(t_mem, t_comp) else "compute" if t_comp > t_mem else "memory"
    )
    if bound == "compute":
        reason += serial
    if bound == "latency":
        reason += f"; {math.ceil(waves)} wave(s) x {k.passes} dependent memory round trip(s)"
    elif bw < c.dram_bw:
        reason += f"; {bw / 1e9:,.0f} GB/s" + (f" ({in_flight / 1024:.0f} KiB in flight per SM)" if in_flight else "")
    return KernelEstimate(
        name=k.name, model="stream", seconds=body, grid=grid, blocks_per_sm=bps, waves=waves, bound=bound, reason=reason
    )


def _streams(c: Card, k: Kernel, active: int, traffic: float) -> float:
    """The card's rate for this traffic (its share of writes) on the SMs the grid uses."""
    return min(mixed_bandwidth(c, traffic, k.write_bytes), active * c.per_sm_bw)


def _reread_time(
    c: Card, k: Kernel, blocks: int, active: int, t_mem: float, dram_rate: float, l2_rate: float
) -> tuple[float, str]:
    """The memory time of a kernel that re-reads its rows (reread_bytes), ``blocks`` of them in
    flight at once, at most ``dram_rate`` from DRAM and ``l2_rate`` from the L2 on its SMs;
    with its reason."""
    working = blocks * k.footprint_bytes
    miss = reread_miss(c, working)
    # the L2 serves the re-reads that hit while DRAM streams the first reads (and the
    # re-reads that miss) of the other blocks: the two overlap, and the L2 carries it all.
    # DRAM then carries more reads per write: the read/write mix of its traffic sets its rate
    from_dram = k.dram_bytes + miss * k.reread_bytes
    t_mem = max(
        t_mem,
        from_dram / min(_streams(c, k, active, from_dram), dram_rate),
        (k.dram_bytes + k.reread_bytes) / min(c.l2_bw, l2_rate),
    )
    if not c.l2_total:
        return t_mem, "; re-reads from DRAM (the part gives no L2 size)"
    if miss <= 0:
        return t_mem, "; re-reads hit L2"
    return t_mem, f"; {miss:.0%} of the re-reads miss L2 ({working / 1e6:.0f} MB in flight)"


def _stream_compute(hw: Hardware, c: Card, k: Kernel, bps: int, active: int) -> tuple[float, str]:
    """A streaming kernel's arithmetic on its ``active`` SMs: FLOPs, special functions and the
    issue of its warp instructions; with the reason's part for a warp-serial kernel ("" else)."""
    rate = hw.peak(k.dtype) if k.pipe == "tensor" else _cuda_rate(hw, k.dtype)
    t_comp = k.flops / (rate * active / c.sms) if k.flops else 0.0
    if k.sfu_ops and c.sfu_per_clk and c.clock_hz:
        t_comp += k.sfu_ops / (c.sfu_per_clk * c.clock_hz * active)
    serial = ""
    if k.instructions and c.boost_hz:
        # every warp instruction takes an issue slot of one of the SM's schedulers
        t_comp = max(t_comp, k.instructions / (c.issue_per_clk * c.boost_hz * active))
    if k.warps and k.instructions and c.boost_hz:
        # a kernel that gives each warp its own serial piece (a warp per row, reduced with
        # shuffles) also waits on each warp: one dependent instruction per DEPENDENT_ISSUE_CLK
        per_warp = k.instructions / k.warps
        warp_waves = math.ceil(k.warps / (bps * math.ceil(k.threads / 32) * c.sms))
        t_warp = per_warp * DEPENDENT_ISSUE_CLK * warp_waves / c.boost_hz
        if t_warp > t_comp:
            t_comp = t_warp
            serial = (
                f"; {k.warps:,} warp(s), each issuing its {per_warp:,.0f} instructions one dependent step at a time"
            )
    return t_comp, serial


def reread_miss(c: Card, working: float) -> float:
    """The share of a kernel's re-reads that miss the L2, with ``working`` bytes of rows in
    flight between a row's passes: none while they fit one L2 partition (c.l2_bytes), all once
    they fill the whole L2, in proportion between (Nsight Compute on an H100: the DRAM reads of
    three-pass softmax rise from 0 to 0.8-0.9 of the re-reads between 23 and 51 MB in flight,
    validation/expected/h100/kernels/l2/)."""
    if working <= c.l2_bytes or not c.l2_bw:
        return 0.0
    if c.l2_total <= c.l2_bytes:
        return 1.0
    return min((working - c.l2_bytes) / (c.l2_total - c.l2_bytes), 1.0)


def mixed_bandwidth(c: Card, total: float, written: float) -> float:
    """The card's streaming bandwidth for a kernel whose bytes are partly writes: the read
    ceiling when it only reads, the copy ceiling when it writes as much as it reads
    (read/write turnarounds on the bus), in between in proportion."""
    if total <= 0 or written <= 0:
        return c.dram_bw
    w = min(written / total, 0.5) * 2  # 0: reads only, 1: half writes
    return 1.0 / ((1 - w) / c.dram_bw + w / c.copy_bw)

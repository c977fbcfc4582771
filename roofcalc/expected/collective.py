"""Collectives over NCCL (all-reduce, all-gather) of tensor parallelism: a latency per call,
then the ring's bytes at the bus bandwidth. Reads allreduce_latency_s,
allreduce_graph_latency_s and allreduce_bus_bytes_per_s."""

from __future__ import annotations

from ..errors import DomainError
from ..hardware import Hardware
from .card import Card
from .records import Kernel, KernelEstimate

COLLECTIVES = ("allreduce", "allgather")


def _collective(hw: Hardware, c: Card, k: Kernel, graph: bool) -> KernelEstimate:
    """NCCL all-reduce (ring: each GPU sends and receives 2(n-1)/n of the message) or
    all-gather ((n-1)/n): a latency per call (graph-captured or eager), then bus bandwidth."""
    e = hw.expected
    lat_fig = (e.allreduce_graph_latency_s if graph else None) or e.allreduce_latency_s
    bus_fig = e.allreduce_bus_bytes_per_s
    if lat_fig is None or bus_fig is None:
        raise DomainError(
            f"{hw.id} gives no all-reduce latency and bus bandwidth (expected.allreduce_*), "
            "which tensor parallelism needs"
        )
    n = max(k.ranks, 2)
    factor = 2 * (n - 1) / n if k.model == "allreduce" else (n - 1) / n
    t = float(lat_fig.value) + k.dram_bytes * factor / float(bus_fig.value)
    why = (
        f"NCCL {k.model.replace('all', 'all-')} of {k.dram_bytes / 1e3:,.1f} KB over {n} GPUs: "
        f"{float(lat_fig.value) * 1e6:.1f} us {'graph-captured' if graph else 'eager'} latency + bytes at "
        f"{float(bus_fig.value) / 1e9:,.0f} GB/s bus bandwidth"
    )
    return KernelEstimate(
        name=k.name,
        model=k.model,
        seconds=t,
        grid=0,
        blocks_per_sm=None,
        waves=0.0,
        bound="latency" if t < 2 * float(lat_fig.value) else "memory",
        reason=why,
    )

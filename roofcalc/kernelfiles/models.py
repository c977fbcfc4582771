"""What a kernel file says about each kernel, before any hardware is involved."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

Format = Literal["ptxas", "cuobjdump", "cubin", "triton", "ncu"]


class Measurement(BaseModel):
    """One kernel's launches in a Nsight Compute export (medians over identical launches)."""

    model_config = ConfigDict(frozen=True)

    launches: int
    ids: list[int]
    measured_s: float | None
    dram_bytes: float | None
    dram_bytes_from: str | None  # the metric(s) the bytes come from
    flops: float | None
    flops_dtype: str | None  # the dtype with the largest share of the counted FLOPs
    flops_counters: list[str]  # the counters summed into ``flops``
    tensor_flops: bool  # some of the FLOPs come from tensor-core counters
    limits: dict[str, int]  # ncu's launch__occupancy_limit_* (solver names: registers, shared_memory, ...)
    theoretical_occupancy: float | None  # fraction, sm__maximum_warps_per_active_cycle_pct / 100
    achieved_occupancy: float | None  # fraction, sm__warps_active.avg.pct_of_peak_sustained_active / 100
    smem_config_bytes: int | None  # launch__shared_mem_config_size
    driver_smem_bytes: int | None  # launch__shared_mem_per_block_driver
    sm_count: int | None
    waves: float | None  # launch__waves_per_multiprocessor
    device: str | None


class KernelInfo(BaseModel):
    """One kernel (one architecture's compile of it) as a file describes it."""

    model_config = ConfigDict(frozen=True)

    name: str  # as the file spells it (mangled for ptxas, cuobjdump, cubins)
    display: str  # demangled where possible
    format: Format
    arch: int | None  # SM version: 90 for sm_90 / CC 9.0
    arch_suffix: str = ""  # "a" for sm_90a, "f" for sm_100f
    registers: int | None
    max_registers: int | None = None  # the cap the compiler worked under (launch bounds, maxrregcount)
    max_threads: int | None = None  # __launch_bounds__ maximum threads per block (or reqntid)
    barriers: int | None = None
    smem_reported_bytes: int | None  # static shared memory as the file reports it
    # the reported figure includes the runtime's per-block reserve (None: unknown, decided by the hardware's CC)
    smem_reserve_included: bool | None = False
    stack_frame_bytes: int | None = None
    spill_store_bytes: int | None = None
    spill_load_bytes: int | None = None
    local_bytes: int | None = None
    threads: int | None = None  # a recorded launch (ncu) or fixed block size (Triton num_warps)
    threads_from: str | None = None
    dynamic_smem_bytes: int | None = None  # recorded (ncu launch, Triton metadata "shared")
    grid: int | None = None
    measurement: Measurement | None = None
    notes: list[str] = []

    @property
    def arch_label(self) -> str | None:
        return None if self.arch is None else f"sm_{self.arch}{self.arch_suffix}"


class KernelFile(BaseModel):
    model_config = ConfigDict(frozen=True)

    path: str
    format: Format
    kernels: list[KernelInfo]
    notes: list[str] = []

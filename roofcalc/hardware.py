"""Hardware specs: pydantic models, the built-in registry and user files.

Each figure in a hardware file carries its value, the key of its source (listed
under ``sources:`` in the same file) and what kind of figure it is (datasheet,
measured, estimate...). Figures nobody publishes are left out and explained
under ``unknown:``; the models make every such field optional.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from .dtypes import DTYPES
from .errors import DomainError, InputError, SpecError, suggest
from .specfile import parse_yaml, read_text, validate

FigureKind = Literal["datasheet", "measured", "estimate", "derived", "documented"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Source(_Strict):
    title: str
    url: str | None = None


class Figure(_Strict):
    """One number with where it came from."""

    value: float | int
    source: str
    kind: FigureKind
    note: str | None = None

    @model_validator(mode="after")
    def _non_negative(self) -> Figure:
        if self.value < 0:
            raise ValueError(f"value must not be negative (got {self.value})")
        return self


class ListFigure(_Strict):
    value: list[int] = Field(min_length=1)
    source: str
    kind: FigureKind
    note: str | None = None


class PositiveFigure(Figure):
    @model_validator(mode="after")
    def _positive(self) -> PositiveFigure:
        if self.value <= 0:
            raise ValueError(f"value must be positive (got {self.value})")
        return self


class Memory(_Strict):
    type: str
    capacity_bytes: PositiveFigure
    bandwidth_bytes_per_s: PositiveFigure
    bus_width_bits: Figure | None = None


class Clocks(_Strict):
    boost_mhz: PositiveFigure | None = None
    memory_mhz: PositiveFigure | None = None


class SMResources(_Strict):
    """Per-SM resources the occupancy solver needs. All optional: Apple publishes few."""

    sm_count: PositiveFigure | None = None
    warp_size: PositiveFigure | None = None
    max_threads_per_block: PositiveFigure | None = None
    max_threads_per_sm: PositiveFigure | None = None
    max_blocks_per_sm: PositiveFigure | None = None
    registers_per_sm: PositiveFigure | None = None
    registers_per_block: PositiveFigure | None = None
    max_registers_per_thread: PositiveFigure | None = None
    register_allocation_unit: PositiveFigure | None = None
    sub_partitions: PositiveFigure | None = None
    shared_memory_per_sm_bytes: PositiveFigure | None = None
    shared_memory_per_block_bytes: PositiveFigure | None = None
    shared_memory_per_block_optin_bytes: PositiveFigure | None = None
    reserved_shared_memory_per_block_bytes: Figure | None = None
    shared_memory_allocation_unit_bytes: PositiveFigure | None = None
    shared_memory_configs_kib: ListFigure | None = None
    block_barriers_per_sm: PositiveFigure | None = None


class Expected(_Strict):
    """Figures the expected-time model uses (what real kernels achieve), beside the peaks.

    Fractions are of the peak figure in the same file: in a registry file the datasheet
    peak, in a calibration file the measured one. Floors are per kernel.
    """

    # launch-to-completion of one tiny kernel timed alone between two CUDA events
    event_floor_s: PositiveFigure | None = None
    # per kernel when tiny kernels are launched back to back on one stream from C++
    stream_floor_s: PositiveFigure | None = None
    # per kernel node when a CUDA graph of tiny kernels is replayed
    graph_floor_s: PositiveFigure | None = None
    # per op when tiny PyTorch ops are issued back to back from Python (host-bound)
    torch_op_floor_s: PositiveFigure | None = None
    # a dependent load that misses L2 (pointer chase over a buffer far larger than L2)
    dram_latency_s: PositiveFigure | None = None
    # read bandwidth one SM reaches on its own with enough bytes in flight
    per_sm_bandwidth_bytes_per_s: PositiveFigure | None = None
    # streaming read, copy: achieved / memory.bandwidth_bytes_per_s of this file
    dram_read_fraction: PositiveFigure | None = None
    dram_copy_fraction: PositiveFigure | None = None
    # large library GEMM, per dtype: achieved / peak_flops_per_s[dtype] of this file
    tensor_fraction: dict[str, PositiveFigure] = {}
    # FP32 GEMM on CUDA cores (cuBLAS SGEMM, large): achieved / peak_flops_per_s.fp32
    cuda_core_gemm_fraction: PositiveFigure | None = None
    # 16-bit GEMM whose leading dimension is not a multiple of 16 bytes (no TMA path):
    # achieved / peak_flops_per_s[dtype]
    unaligned_tensor_fraction: dict[str, PositiveFigure] = {}
    # all-reduce between the GPUs of one node: latency of a small message and bus bandwidth
    allreduce_latency_s: PositiveFigure | None = None
    allreduce_graph_latency_s: PositiveFigure | None = None
    allreduce_bus_bytes_per_s: PositiveFigure | None = None
    p2p_bytes_per_s: PositiveFigure | None = None


class Calibration(_Strict):
    """Present in files written by ``roofcalc probe --save-calibration``."""

    base: str
    device_name: str
    driver: str | None = None
    date: str
    command: str


class Hardware(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9._-]*$")
    name: str
    vendor: str
    aliases: list[str] = []
    compute_capability: str | None = Field(default=None, pattern=r"^\d+\.\d+$")
    gpu_family: str | None = None
    sources: dict[str, Source] = Field(min_length=1)
    peak_flops_per_s: dict[str, PositiveFigure] = Field(min_length=1)
    # Rates of the non-tensor pipes (FP64/FP16 FMA on CUDA cores), which the probe
    # measures from registers; peak_flops_per_s holds the rate an op of that dtype gets.
    cuda_core_flops_per_s: dict[str, PositiveFigure] = {}
    memory: Memory
    l2_bytes: PositiveFigure | None = None
    clocks: Clocks = Clocks()
    interconnect_bytes_per_s: PositiveFigure | None = None
    launch_overhead_s: Figure | None = None
    sm: SMResources = SMResources()
    expected: Expected = Expected()
    unknown: dict[str, str] = {}
    calibration: Calibration | None = None

    @model_validator(mode="after")
    def _check(self) -> Hardware:
        for dt in [*self.peak_flops_per_s, *self.cuda_core_flops_per_s]:
            if dt not in DTYPES:
                raise ValueError(f"peak_flops_per_s: unknown dtype {dt!r}; known: {', '.join(DTYPES)}")
        for path, fig in self.figures():
            if fig.source not in self.sources:
                raise ValueError(f"{path}: source {fig.source!r} is not listed under sources")
        if self.compute_capability is None and self.gpu_family is None:
            raise ValueError("give compute_capability (NVIDIA) or gpu_family (others)")
        return self

    # ------------------------------------------------------------ helpers
    def figures(self) -> list[tuple[str, Figure | ListFigure]]:
        """Every figure in the file with its dotted path, in file order."""
        out: list[tuple[str, Figure | ListFigure]] = []

        def walk(prefix: str, obj: Any) -> None:
            if isinstance(obj, (Figure, ListFigure)):
                out.append((prefix, obj))
            elif isinstance(obj, BaseModel):
                for name in type(obj).model_fields:
                    walk(f"{prefix}.{name}" if prefix else name, getattr(obj, name))
            elif isinstance(obj, dict):
                for k, v in obj.items():
                    walk(f"{prefix}.{k}", v)

        walk("", self)
        return out

    @property
    def cc(self) -> tuple[int, int] | None:
        if self.compute_capability is None:
            return None
        a, b = self.compute_capability.split(".")
        return int(a), int(b)

    @property
    def bandwidth(self) -> float:
        return float(self.memory.bandwidth_bytes_per_s.value)

    def peak(self, dtype: str) -> float:
        fig = self.peak_flops_per_s.get(dtype)
        if fig is None:
            have = ", ".join(self.peak_flops_per_s)
            raise DomainError(f"{self.id} has no {dtype} peak (it has: {have})")
        return float(fig.value)

    def sm_value(self, name: str) -> int | None:
        fig = getattr(self.sm, name)
        if fig is None:
            return None
        return int(fig.value)


# ------------------------------------------------------------------ loading


@functools.cache
def _load_builtin(stem: str) -> Hardware:
    from .registry import builtin_label, read_builtin

    label = builtin_label("hardware", stem)
    data = parse_yaml(read_builtin("hardware", stem), label)
    if isinstance(data, dict):
        data.setdefault("id", stem)
    return validate(Hardware, data, label)


def load_hardware_file(path: str | Path) -> Hardware:
    """Load a user's hardware YAML file."""
    p = Path(path)
    label = str(p)
    if not p.is_file():
        raise InputError(f"{label}: no such hardware file")
    data = parse_yaml(read_text(p), label)
    if "id" not in data:
        stem = p.stem.lower()
        data["id"] = stem if stem and stem[0].isalnum() else "custom"
    return validate(Hardware, data, label)


def load_calibration(path: str | Path, base: str | None = None) -> Hardware:
    """A file written by 'roofcalc probe --save-calibration'; checked against ``base`` if given."""
    cal = load_hardware_file(path)
    if cal.calibration is None:
        raise InputError(f"{path}: not a calibration file (no 'calibration:' section)")
    if base and load_hardware(base).id != cal.calibration.base:
        raise InputError(f"{path}: calibrates {cal.calibration.base}, not {base}")
    return cal


def hardware_names() -> list[str]:
    from .registry import builtin_names

    return builtin_names("hardware")


def all_hardware() -> list[Hardware]:
    return [_load_builtin(s) for s in hardware_names()]


def load_hardware(name_or_path: str | Path | Hardware) -> Hardware:
    """A registry name or alias (``h100``, ``H100-SXM``), or a path to a YAML file."""
    if isinstance(name_or_path, Hardware):
        return name_or_path
    text = str(name_or_path).strip()
    from .registry import is_path

    if isinstance(name_or_path, Path) or is_path(text):
        return load_hardware_file(text)
    key = text.lower()
    stems = hardware_names()
    if key in stems:
        return _load_builtin(key)
    aliases: list[str] = []
    for stem in stems:
        hw = _load_builtin(stem)
        names = [a.lower() for a in hw.aliases]
        if key in names:
            return hw
        aliases.extend(hw.aliases)
    raise InputError(f"unknown hardware {text!r}{suggest(text, stems + aliases)}; see 'roofcalc hw list'")


__all__ = [
    "Expected",
    "Figure",
    "Hardware",
    "SMResources",
    "SpecError",
    "all_hardware",
    "hardware_names",
    "load_hardware",
    "load_hardware_file",
]

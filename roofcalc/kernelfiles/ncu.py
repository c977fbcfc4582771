"""Kernels in a Nsight Compute CSV export of the raw page (``ncu --csv --page raw``).

The layout: anything the profiled program printed, ``==PROF==`` lines, then a header row
(``"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",
"Grid Size","Device","CC"`` and one column per metric, e.g. ``"gpu__time_duration.sum"``), a
units row (empty under the fixed columns; ``"nsecond"``, ``"Kbyte/block"``, ``"register/thread"``,
``"%"``...), and one row per profiled launch. Numbers use ``,`` between thousands; ``n/a`` marks
a metric ncu could not collect. With ``--print-units auto`` (the default) sizes are scaled to
Kbyte = 1,000 bytes with two decimals, so 32,768 bytes print as 32.77; ``--print-units base``
prints exact bytes and nanoseconds.

The metrics read (sections SpeedOfLight, LaunchStats, Occupancy, plus the listed ones):
gpu__time_duration.sum; dram__bytes.sum (or dram__bytes_read.sum + dram__bytes_write.sum);
launch__block_size, launch__grid_size, launch__registers_per_thread,
launch__shared_mem_per_block_static / _dynamic / _driver, launch__shared_mem_config_size,
launch__occupancy_limit_registers / _shared_mem / _warps / _blocks (/ _barriers),
launch__waves_per_multiprocessor, launch__sm_count, sm__maximum_warps_per_active_cycle_pct,
sm__warps_active.avg.pct_of_peak_sustained_active, launch__barrier_count; FLOP counters
(sm[sp]__sass_thread_inst_executed_op_{d,f,h}{add,mul,fma}_pred_on.sum, an FMA counting two,
and sm__ops_path_tensor_src_<dtype>[_dst_<dtype>].sum, which counts tensor-core FLOPs: on an
H200 it read 137,438,953,472 = 2 x 4096^3 for a bf16 4096^3 cuBLAS matmul).

Measured with ncu 2025.3 (CUDA 13.0) on an H200: the raw page prints base units (``byte``,
``ns``) by default; launch__registers_per_thread is the count as allocated, a multiple of 8 and at least
16 (16 for kernels ptxas built with 8 to 11, 40 for 40), which gives the same occupancy; the static shared memory is
cudaFuncGetAttributes' figure (32,768 for 32 KiB, no reserve); launch__shared_mem_config_size is
the configuration the driver chose for the launch (often below the maximum), and the
launch__occupancy_limit_* figures are for that configuration.
"""

from __future__ import annotations

import csv
import re
import statistics
from typing import Any

from ..errors import InputError
from .models import KernelInfo, Measurement

FIXED = (
    "ID",
    "Process ID",
    "Process Name",
    "Host Name",
    "Kernel Name",
    "Context",
    "Stream",
    "Block Size",
    "Grid Size",
    "Device",
    "CC",
)
LIMITS = {
    "launch__occupancy_limit_registers": "registers",
    "launch__occupancy_limit_shared_mem": "shared_memory",
    "launch__occupancy_limit_warps": "warps",
    "launch__occupancy_limit_blocks": "blocks",
    "launch__occupancy_limit_barriers": "barriers",
}
_TIME = {"nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1.0, "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}
_PREFIX = {"": 1.0, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "Ki": 1024.0, "Mi": 1024.0**2, "Gi": 1024.0**3}
_SASS = re.compile(r"^(smsp|sm)__sass_thread_inst_executed_op_([dfh])(add|mul|fma)_pred_on\.sum$")
_TENSOR = re.compile(
    r"^sm__ops_path_tensor_(op_[a-z0-9]+_)?src_([a-z0-9_]+?)(_dst_[a-z0-9]+)?(_sparsity_(?:on|off))?"
    r"\.sum$"
)
_SASS_DTYPE = {"d": "fp64", "f": "fp32", "h": "fp16"}
_TENSOR_DTYPE = {
    "bf16": "bf16",
    "fp16": "fp16",
    "tf32": "tf32",
    "fp64": "fp64",
    "fp32": "fp32",
    "int8": "int8",
    "s8": "int8",
    "u8": "int8",
    "int4": "int4",
}


def find_header(lines: list[str]) -> int | None:
    for i, line in enumerate(lines):
        if line.startswith('"ID",') and '"Kernel Name"' in line:
            return i
    return None


def unit_scale(unit: str) -> float:
    """Multiplier to base units (bytes, seconds, per second) for one ncu unit string."""
    num, _, den = unit.partition("/")
    if num in _TIME:
        scale = _TIME[num]
    else:
        m = re.fullmatch(r"(?:(Ki|Mi|Gi)(?=byte)|(K|M|G|T|P))?([a-z%]+)", num)
        scale = _PREFIX[m.group(1) or m.group(2) or ""] if m else 1.0
    if den in _TIME:
        scale /= _TIME[den]
    return scale


def _number(text: str) -> float | None:
    t = text.strip().replace(",", "")
    try:
        return float(t)
    except ValueError:
        return None  # "n/a", "", "(!) n/a"


def _bytes(text: str, unit: str) -> int | None:
    """An exact byte count where ncu printed a scaled one (32.77 Kbyte/block -> 32,768): the multiple
    of 128 bytes within the printed precision, if there is one."""
    value = _number(text)
    if value is None:
        return None
    scale = unit_scale(unit)
    exact = value * scale
    if scale > 1:
        decimals = len(text.strip().partition(".")[2])
        half = 0.5 * 10.0**-decimals * scale
        snapped = round(exact / 128) * 128
        if abs(snapped - exact) <= half:
            return int(snapped)
    return round(exact)


def _dims(text: str) -> int | None:
    nums = [int(x) for x in re.findall(r"\d+", text.replace(",", " "))] if text else []
    if not nums:
        return None
    out = 1
    for n in nums:
        out *= n
    return out


class _Row:
    def __init__(self, cells: dict[str, str], units: dict[str, str]) -> None:
        self.cells = cells
        self.units = units

    def num(self, metric: str) -> float | None:
        if metric not in self.cells:
            return None
        v = _number(self.cells[metric])
        return None if v is None else v * unit_scale(self.units.get(metric, ""))

    def count(self, metric: str) -> int | None:
        v = self.num(metric)
        return None if v is None else round(v)

    def bytes(self, metric: str) -> int | None:
        return _bytes(self.cells[metric], self.units.get(metric, "")) if metric in self.cells else None


def _flops(row: _Row) -> tuple[float | None, str | None, list[str], bool]:
    by_dtype: dict[str, float] = {}
    tensor: set[str] = set()
    used: list[str] = []
    sass = [c for c in row.cells if _SASS.match(c)]
    prefix = "smsp" if any(c.startswith("smsp__") for c in sass) else "sm"
    for col in sass:
        m = _SASS.match(col)
        value = row.num(col)
        if m is None or m.group(1) != prefix or value is None:
            continue
        dtype = _SASS_DTYPE[m.group(2)]
        if value:
            by_dtype[dtype] = by_dtype.get(dtype, 0.0) + value * (2 if m.group(3) == "fma" else 1)
            used.append(col)
    # one source type has a total (src_fp8), per-destination parts (src_bf16_dst_fp32), and per-
    # instruction or sparsity breakdowns of those: count the widest available, never two levels
    groups: dict[str, list[tuple[str, int]]] = {}
    for col in row.cells:
        if m := _TENSOR.match(col):
            level = 0 if not (m.group(1) or m.group(3) or m.group(4)) else 1 if not (m.group(1) or m.group(4)) else 2
            groups.setdefault(m.group(2), []).append((col, level))
    for src, cols in groups.items():
        top = min(level for _, level in cols)
        chosen = [c for c, level in cols if level == top and not c.endswith("_sparsity_on.sum")]
        dtype = _TENSOR_DTYPE.get(src, "fp8" if "fp8" in src or "e4m3" in src or "e5m2" in src else src)
        for col in chosen:
            value = row.num(col)
            if value:
                by_dtype[dtype] = by_dtype.get(dtype, 0.0) + value
                tensor.add(dtype)
                used.append(col)
    if not used:
        return None, None, [], False
    dominant = max(by_dtype, key=lambda d: by_dtype[d])
    return sum(by_dtype.values()), dominant, used, dominant in tensor


def _dram(row: _Row) -> tuple[float | None, str | None]:
    if (v := row.num("dram__bytes.sum")) is not None:
        return v, "dram__bytes.sum"
    r, w = row.num("dram__bytes_read.sum"), row.num("dram__bytes_write.sum")
    if r is not None and w is not None:
        return r + w, "dram__bytes_read.sum + dram__bytes_write.sum"
    rate, t = row.num("dram__bytes.sum.per_second"), row.num("gpu__time_duration.sum")
    if rate is not None and t is not None:
        return rate * t, "dram__bytes.sum.per_second x gpu__time_duration.sum"
    return None, None


def _median(values: list[float | None]) -> float | None:
    have = [v for v in values if v is not None]
    return statistics.median(have) if have else None


def parse_ncu(text: str, label: str) -> tuple[list[KernelInfo], list[str]]:
    lines = text.splitlines()
    start = find_header(lines)
    if start is None:
        raise InputError(f'{label}: not a Nsight Compute CSV export (no "ID",...,"Kernel Name" header row)')
    body = [ln for ln in lines[start:] if ln.strip() and not ln.startswith("==")]
    rows = list(csv.reader(body))
    header = rows[0]
    if "Metric Name" in header and "Metric Value" in header:
        raise InputError(
            f"{label}: a Nsight Compute details-page export (one metric per row); export the raw "
            "page: ncu --csv --page raw ..."
        )
    missing = [c for c in ("ID", "Kernel Name") if c not in header]
    if missing:
        raise InputError(f"{label}: Nsight Compute header without {missing[0]!r}")
    units: dict[str, str] = {}
    data = rows[1:]
    if data and data[0] and data[0][0] == "":
        units = dict(zip(header, data[0], strict=False))
        data = data[1:]
    notes: list[str] = []
    parsed: list[_Row] = []
    for n, cells in enumerate(data, start=1):
        if len(cells) != len(header):
            where = "its last row" if n == len(data) else f"row {n}"
            raise InputError(
                f"{label}: truncated Nsight Compute export: {where} has {len(cells)} of {len(header)} columns"
            )
        parsed.append(_Row(dict(zip(header, cells, strict=True)), units))
    if not parsed:
        raise InputError(f"{label}: a Nsight Compute export with no kernels (the header but no rows)")
    if any(unit_scale(units.get(c, "")) > 1 for c in header if c.startswith("launch__shared_mem")):
        notes.append(
            "ncu printed shared-memory sizes scaled (Kbyte, two decimals); each was read as the multiple "
            "of 128 bytes within that precision. Export with --print-units base for exact bytes"
        )
    if "launch__registers_per_thread" in header:
        notes.append(
            "ncu's registers per thread are the launch's allocation (a multiple of 8, at least 16), which "
            "can be above ptxas's count; the occupancy is the same"
        )
    groups: dict[tuple[Any, ...], list[_Row]] = {}
    for row in parsed:
        c = row.cells
        key = (
            c["Kernel Name"],
            row.count("launch__block_size") or _dims(c.get("Block Size", "")),
            row.count("launch__grid_size") or _dims(c.get("Grid Size", "")),
            row.count("launch__registers_per_thread"),
            row.bytes("launch__shared_mem_per_block_static"),
            row.bytes("launch__shared_mem_per_block_dynamic"),
            c.get("CC", ""),
        )
        groups.setdefault(key, []).append(row)
    kernels = []
    for (name, threads, grid, regs, static, dynamic, cc), group in groups.items():
        first = group[0]
        flops = [_flops(r) for r in group]
        dram = [_dram(r) for r in group]
        limits = {v: first.count(k) for k, v in LIMITS.items()}
        theo, achieved = (
            first.num("sm__maximum_warps_per_active_cycle_pct"),
            _median([r.num("sm__warps_active.avg.pct_of_peak_sustained_active") for r in group]),
        )
        ccm = re.fullmatch(r"(\d+)\.(\d+)", cc.strip())
        knotes = []
        if regs is None:
            knotes.append("no launch__registers_per_thread in the export (profile with --section LaunchStats)")
        meas = Measurement(
            launches=len(group),
            ids=[int(_number(r.cells["ID"]) or 0) for r in group],
            measured_s=_median([r.num("gpu__time_duration.sum") for r in group]),
            dram_bytes=_median([d[0] for d in dram]),
            dram_bytes_from=dram[0][1],
            flops=_median([f[0] for f in flops]),
            flops_dtype=flops[0][1],
            flops_counters=flops[0][2],
            tensor_flops=flops[0][3],
            limits={k: v for k, v in limits.items() if v is not None},
            theoretical_occupancy=None if theo is None else theo / 100,
            achieved_occupancy=None if achieved is None else achieved / 100,
            smem_config_bytes=first.bytes("launch__shared_mem_config_size"),
            driver_smem_bytes=first.bytes("launch__shared_mem_per_block_driver"),
            sm_count=first.count("launch__sm_count") or first.count("device__attribute_multiprocessor_count"),
            waves=first.num("launch__waves_per_multiprocessor"),
            device=first.cells.get("device__attribute_display_name") or first.cells.get("Device"),
        )
        kernels.append(
            KernelInfo(
                name=name,
                display=name,
                format="ncu",
                arch=int(ccm.group(1)) * 10 + int(ccm.group(2)) if ccm else None,
                registers=regs,
                smem_reported_bytes=static,
                threads=threads,
                threads_from="ncu launch",
                barriers=first.count("launch__barrier_count"),
                dynamic_smem_bytes=dynamic,
                grid=grid,
                measurement=meas,
                notes=knotes,
            )
        )
    return kernels, notes

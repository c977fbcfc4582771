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

Bounds. An export is read only up to ``MAX_NCU_ROWS`` launches and ``MAX_NCU_COLUMNS`` metrics
(checked before the CSV is parsed), a field longer than the csv module's limit is refused, and
a UTF-8 byte-order mark before the first line is accepted (the file is decoded as utf-8-sig).

Numbers: one rule. Every cell read as a number, in every row, must be what ncu writes: a
decimal (thousands separators allowed, an exponent tolerated) of at most ``MAX_NUMBER_CHARS``
characters, or a mark of a metric ncu could not collect (empty, ``n/a``, ``(!) n/a``), which
reads as missing.
Anything else refuses the whole file (exit 2), in one line naming the line and the column:
text where a number belongs, NaN, infinities, negative values, subnormal floats (1e-309), and
values outside the column's range (``RANGES``): a duration must be 1 ns ... 1e6 s, so 0 is
refused (ncu always measures a launch); a byte count 0 or 1 ... 1e18; a FLOP count 0 ... 1e21;
a percentage 0 ... 100; the launch figures (block and grid size, registers, shared memory,
occupancy limits) whole numbers in their ``RANGES`` (bounds from ``roofcalc.kernelfiles.limits``);
a launch may not move more than ``MAX_BYTES_PER_S`` or compute more than ``MAX_FLOPS_PER_S``
(bytes or FLOPs over its duration); and the duration column must carry a time unit. Byte and FLOP counts of 0 are real (a kernel served from L2, one
without floating-point work) and show as 0, with no FLOP/B. So no inf, nan or absurd figure is
ever printed: a file that would give one is refused.
"""

from __future__ import annotations

import csv
import functools
import math
import re
import statistics
from typing import Any

from ..errors import InputError
from ..specfile import BadNumber, _float_or_bad
from ..units import clip
from .limits import (
    MAX_BARRIERS,
    MAX_KERNEL_BYTES,
    MAX_NCU_COLUMNS,
    MAX_NCU_ROWS,
    MAX_THREADS,
    LimitError,
    check_kernel_count,
    checked,
    short,
    shown,
    split_lines,
)
from .limits import count as whole
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
_SASS = re.compile(r"(smsp|sm)__sass_thread_inst_executed_op_([dfh])(add|mul|fma)_pred_on\.sum")
_TENSOR = re.compile(
    r"sm__ops_path_tensor_(op_[a-z0-9]+_)?src_([a-z0-9_]+?)(_dst_[a-z0-9]+)?(_sparsity_(?:on|off))?\.sum"
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

MAX_NUMBER_CHARS = 40  # characters of one number cell (ncu prints at most 20 digits)
MAX_BYTES_PER_S = 1e16  # 10 PB/s: 2,000 times an H200's memory; more is no measurement
MAX_FLOPS_PER_S = 1e19  # 10 EFLOP/s: 2,500 times an H200's dense FP8 peak
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_CC = re.compile(r"([0-9]{1,2})\.([0-9])")

# what each column read as a number is: (least, most, whole number); time in seconds, sizes in bytes
RANGES: dict[str, tuple[float, float, bool]] = {
    "time": (1e-9, 1e6, False),
    "bytes": (0.0, 1e18, False),
    "rate": (0.0, MAX_BYTES_PER_S, False),
    "flops": (0.0, 1e21, False),
    "pct": (0.0, 100.0, False),
    "waves": (0.0, 1e18, False),
    "registers": (0, 256, True),  # ncu counts the allocation: a multiple of 8, at most 256
    "threads": (1, MAX_THREADS, True),
    "grid": (1, 2**63, True),
    "smem": (0, MAX_KERNEL_BYTES, True),
    "limit": (0, 2**31 - 1, True),
    "barriers": (0, MAX_BARRIERS, True),
    "sms": (1, 1 << 20, True),
}
COLUMNS = {
    "gpu__time_duration.sum": "time",
    "dram__bytes.sum": "bytes",
    "dram__bytes_read.sum": "bytes",
    "dram__bytes_write.sum": "bytes",
    "dram__bytes.sum.per_second": "rate",
    "launch__block_size": "threads",
    "launch__grid_size": "grid",
    "launch__registers_per_thread": "registers",
    "launch__shared_mem_per_block_static": "smem",
    "launch__shared_mem_per_block_dynamic": "smem",
    "launch__shared_mem_per_block_driver": "smem",
    "launch__shared_mem_config_size": "smem",
    "launch__sm_count": "sms",
    "device__attribute_multiprocessor_count": "sms",
    "launch__waves_per_multiprocessor": "waves",
    "sm__maximum_warps_per_active_cycle_pct": "pct",
    "sm__warps_active.avg.pct_of_peak_sustained_active": "pct",
    "launch__barrier_count": "barriers",
    **dict.fromkeys(LIMITS, "limit"),
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
    """The value of a cell as ncu prints it (no checks: see _cell)."""
    t = text.strip().replace(",", "")
    if len(t) > MAX_NUMBER_CHARS or not _NUMBER.fullmatch(t):
        return None  # "n/a", "", "(!) n/a"
    return float(t)


def _snap(text: str, exact: float, scale: float) -> int:
    """An exact byte count where ncu printed a scaled one (32.77 Kbyte/block -> 32,768): the multiple
    of 128 bytes within the printed precision, if there is one."""
    if scale > 1:
        decimals = len(text.strip().partition(".")[2])
        half = 0.5 * 10.0 ** -min(decimals, 300) * scale
        snapped = round(exact / 128) * 128
        if abs(snapped - exact) <= half:
            return int(snapped)
    return round(exact)


def _bytes(text: str, unit: str) -> int | None:
    """_snap of a cell in a unit (unchecked: the reader checks each cell first, in _Row)."""
    value, scale = _number(text), unit_scale(unit)
    if value is None or not math.isfinite(value * scale):
        return None
    return _snap(text, value * scale, scale)


def _parse_cell(text: str) -> float | str | None:
    """A cell as a finite, non-negative float in ncu's unit; None where ncu could not collect the
    metric ('', 'n/a', '(!) n/a'); else what is wrong with it (a str)."""
    t = text.strip()
    if not t or t[-3:].lower() == "n/a":
        return None
    t = t.replace(",", "")
    if len(t) > MAX_NUMBER_CHARS:
        return f"a number of {len(t):,} characters (at most {MAX_NUMBER_CHARS})"
    if not _NUMBER.fullmatch(t):
        return "not a number"
    v = _float_or_bad(t, float(t))
    if isinstance(v, BadNumber):
        return v.problem
    return "negative" if v < 0 else v


_cached_cell = functools.lru_cache(maxsize=1 << 16)(_parse_cell)  # exports repeat their figures


class _Columns:
    """Where each column is, and for each column read as a number: its unit's scale and kind."""

    def __init__(self, header: list[str], units: dict[str, str], flop_columns: list[str]) -> None:
        self.index = {c: i for i, c in enumerate(header)}  # a repeated name: the last column, as before
        self.units = units
        # metric, index, scale, least, most, a byte count (0 or at least 1)
        self.numeric: list[tuple[str, int, float, float, float, bool]] = []
        for metric, kind in (*COLUMNS.items(), *((c, "flops") for c in flop_columns)):
            if metric in self.index:
                least, most, _ = RANGES[kind]
                scale = unit_scale(units.get(metric, ""))
                self.numeric.append((metric, self.index[metric], scale, least, most, kind == "bytes"))
        self.scale = {m: scale for m, _, scale, *_ in self.numeric}


class _Row:
    """One profiled launch. Every cell read as a number is checked when the row is made, so a bad
    figure anywhere in the file is refused, whichever launch of a kernel it is in."""

    __slots__ = ("cells", "cols", "values", "where")

    def __init__(self, cells: list[str], cols: _Columns, where: str) -> None:
        self.cells = cells
        self.cols = cols
        self.where = where  # "file:line"
        self.values: dict[str, float] = {}
        cached = _cached_cell
        for metric, i, scale, least, most, is_bytes in cols.numeric:
            text = cells[i]
            v = cached(text) if len(text) <= 64 else _parse_cell(text)  # long cells are not kept
            if v is None:
                continue
            if isinstance(v, str):
                raise self._refuse(metric, text, v)
            v *= scale
            if not least <= v <= most or (is_bytes and 0 < v < 1):
                unit = cols.units.get(metric, "")
                s = " s" if COLUMNS.get(metric) == "time" else ""
                raise self._refuse(
                    metric,
                    cells[i] + (f" {unit}" if unit else ""),
                    f"{v:.3g}{s} is outside {least:g} ... {most:g}{s}, not a figure ncu measures",
                )
            self.values[metric] = v

    def text(self, column: str) -> str | None:
        i = self.cols.index.get(column)
        return None if i is None else self.cells[i]

    def _refuse(self, metric: str, text: str, problem: str) -> InputError:
        return InputError(f"{self.where}: {clip(metric, 60)} is {clip(text.strip(), 30)!r}: {problem}")

    def num(self, metric: str) -> float | None:
        """The cell in base units (bytes, seconds), checked against its column's range."""
        return self.values.get(metric)

    def count(self, metric: str) -> int | None:
        """A whole-number launch figure (block size, registers, limits...)."""
        v = self.values.get(metric)
        if v is None:
            return None
        least, most, _ = RANGES[COLUMNS[metric]]
        return checked(round(v), f"{self.where}: {metric}", "value", int(most), int(least))

    def bytes(self, metric: str) -> int | None:
        """A shared-memory size, exact where ncu printed it scaled."""
        v = self.values.get(metric)
        if v is None:
            return None
        value = _snap(self.text(metric) or "", v, self.cols.scale[metric])
        return checked(value, f"{self.where}: {metric}", "value", MAX_KERNEL_BYTES)

    def dims(self, column: str, kind: str) -> int | None:
        """'(256, 1, 1)' -> 256: the product of one to three whole numbers."""
        text = (self.text(column) or "").strip()
        if not text:
            return None
        parts = text.removeprefix("(").removesuffix(")").split(",")
        if len(parts) > 3:
            raise self._refuse(column, text, "not a size of one to three dimensions")
        out = 1
        for p in parts:
            out *= whole(p.strip(), f"{self.where}: {column}", "dimension", 2**63 - 1)
        least, most, _ = RANGES[kind]
        return checked(out, f"{self.where}: {column}", "size", int(most), int(least))


def _sass_columns(header: list[str]) -> list[tuple[str, str, int]]:
    """(column, dtype, FLOPs per instruction) of the SASS counters, one prefix (smsp__ if present)."""
    sass = [(c, m) for c in header if (m := _SASS.fullmatch(c))]
    prefix = "smsp" if any(m.group(1) == "smsp" for _, m in sass) else "sm"
    return [(c, _SASS_DTYPE[m.group(2)], 2 if m.group(3) == "fma" else 1) for c, m in sass if m.group(1) == prefix]


def _tensor_columns(header: list[str]) -> list[tuple[str, str]]:
    """(column, dtype) of the tensor counters to add up.

    One source type has a total (src_fp8), per-destination parts (src_bf16_dst_fp32), and per-
    instruction or sparsity breakdowns of those: count the widest available, never two levels."""
    groups: dict[str, list[tuple[str, int]]] = {}
    for col in header:
        if m := _TENSOR.fullmatch(col):
            level = 0 if not (m.group(1) or m.group(3) or m.group(4)) else 1 if not (m.group(1) or m.group(4)) else 2
            groups.setdefault(m.group(2), []).append((col, level))
    out = []
    for src, cols in groups.items():
        top = min(level for _, level in cols)
        dtype = _TENSOR_DTYPE.get(src, "fp8" if "fp8" in src or "e4m3" in src or "e5m2" in src else src)
        out += [(c, dtype) for c, level in cols if level == top and not c.endswith("_sparsity_on.sum")]
    return out


def _flops(
    row: _Row, sass: list[tuple[str, str, int]], tensor: list[tuple[str, str]]
) -> tuple[float | None, str | None, list[str], bool]:
    by_dtype: dict[str, float] = {}
    tensor_dtypes: set[str] = set()
    used: list[str] = []
    for col, dtype, per in sass:
        value = row.num(col)
        if value:
            by_dtype[dtype] = by_dtype.get(dtype, 0.0) + value * per
            used.append(col)
    for col, dtype in tensor:
        value = row.num(col)
        if value:
            by_dtype[dtype] = by_dtype.get(dtype, 0.0) + value
            tensor_dtypes.add(dtype)
            used.append(col)
    if not used:
        return None, None, [], False
    dominant = max(by_dtype, key=lambda d: by_dtype[d])
    return sum(by_dtype.values()), dominant, used, dominant in tensor_dtypes


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


def _read_rows(text: str, label: str) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """The header and the (line number, cells) of every row after it, with the bounds checked
    before the CSV is parsed."""
    name = short(label)
    lines = split_lines(text.removeprefix("\ufeff"), label)
    start = find_header(lines)
    if start is None:
        raise InputError(f'{name}: not a Nsight Compute CSV export (no "ID",...,"Kernel Name" header row)')
    columns = lines[start].count(",") + 1
    if columns > MAX_NCU_COLUMNS:
        raise LimitError(
            f"{name}:{start + 1}: a header of {columns:,} columns; roofcalc reads at most {MAX_NCU_COLUMNS:,} metrics"
        )
    numbers = [
        i for i in range(start, len(lines)) if lines[i] and not lines[i].isspace() and not lines[i].startswith("==")
    ]
    if len(numbers) - 2 > MAX_NCU_ROWS:
        raise LimitError(
            f"{name}: more than {MAX_NCU_ROWS:,} profiled launches; roofcalc reads at most that many "
            "(profile fewer with ncu --launch-count or --kernel-name)"
        )
    for i in numbers:
        if lines[i].count(",") > 2 * MAX_NCU_COLUMNS:
            raise LimitError(f"{name}:{i + 1}: a row of more than {2 * MAX_NCU_COLUMNS:,} fields")
    reader = csv.reader(lines[i] for i in numbers)
    rows: list[tuple[int, list[str]]] = []
    try:
        for cells in reader:
            rows.append((numbers[reader.line_num - 1] + 1, cells))
    except csv.Error as e:
        line = numbers[min(reader.line_num, len(numbers)) - 1] + 1
        raise InputError(f"{name}:{line}: unreadable CSV ({clip(e, 80)})") from None
    return rows[0][1], rows[1:]


def parse_ncu(text: str, label: str) -> tuple[list[KernelInfo], list[str]]:
    name = short(label)
    header, data = _read_rows(text, label)
    if "Metric Name" in header and "Metric Value" in header:
        raise InputError(
            f"{name}: a Nsight Compute details-page export (one metric per row); export the raw "
            "page: ncu --csv --page raw ..."
        )
    missing = [c for c in ("ID", "Kernel Name") if c not in header]
    if missing:
        raise InputError(f"{name}: Nsight Compute header without {missing[0]!r}")
    units: dict[str, str] = {}
    if data and data[0][1] and data[0][1][0] == "":
        units = dict(zip(header, data[0][1], strict=False))
        data = data[1:]
    time_unit = units.get("gpu__time_duration.sum", "")
    if "gpu__time_duration.sum" in header and time_unit not in _TIME:
        raise InputError(
            f"{name}: the unit of gpu__time_duration.sum is {clip(time_unit, 30)!r}, not a time unit "
            "(ns, usecond, ...; is the units row under the header missing?)"
        )
    sass, tensor = _sass_columns(header), _tensor_columns(header)
    cols = _Columns(header, units, [c for c, _, _ in sass] + [c for c, _ in tensor])
    notes: list[str] = []
    parsed: list[_Row] = []
    for n, (line, cells) in enumerate(data, start=1):
        if len(cells) != len(header):
            where = "its last row" if n == len(data) else f"row {n}"
            raise InputError(
                f"{name}:{line}: truncated Nsight Compute export: {where} has {len(cells):,} of {len(header):,} columns"
            )
        row = _Row(cells, cols, f"{name}:{line}")
        if not (row.text("Kernel Name") or "").strip():
            raise InputError(f"{name}:{line}: a row without a Kernel Name")
        parsed.append(row)
    if not parsed:
        raise InputError(f"{name}: a Nsight Compute export with no kernels (the header but no rows)")
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
        cc = (row.text("CC") or "").strip()
        ccm = _CC.fullmatch(cc)
        if cc and ccm is None:
            raise InputError(f"{row.where}: CC is {clip(cc, 30)!r}, not a compute capability (9.0)")
        key = (
            row.text("Kernel Name"),
            row.count("launch__block_size") or row.dims("Block Size", "threads"),
            row.count("launch__grid_size") or row.dims("Grid Size", "grid"),
            row.count("launch__registers_per_thread"),
            row.bytes("launch__shared_mem_per_block_static"),
            row.bytes("launch__shared_mem_per_block_dynamic"),
            int(ccm.group(1)) * 10 + int(ccm.group(2)) if ccm else None,
        )
        if key not in groups:
            check_kernel_count(len(groups) + 1, label)
        groups.setdefault(key, []).append(row)
    kernels = []
    for (kname, threads, grid, regs, static, dynamic, arch), group in groups.items():
        first = group[0]
        flops = [_flops(r, sass, tensor) for r in group]
        dram = [_dram(r) for r in group]
        times = [r.num("gpu__time_duration.sum") for r in group]
        for r, t, d, f in zip(group, times, dram, flops, strict=True):
            if t is None:
                continue
            if d[0] is not None and d[0] / t > MAX_BYTES_PER_S:
                raise InputError(
                    f"{r.where}: {d[1]} over gpu__time_duration.sum is {d[0] / t:.3g} B/s, over "
                    f"{MAX_BYTES_PER_S:g} B/s: not a measurement"
                )
            if f[0] is not None and f[0] / t > MAX_FLOPS_PER_S:
                raise InputError(
                    f"{r.where}: the FLOP counters over gpu__time_duration.sum give {f[0] / t:.3g} FLOP/s, over "
                    f"{MAX_FLOPS_PER_S:g}: not a measurement"
                )
        limits = {v: first.count(k) for k, v in LIMITS.items()}
        theo, achieved = (
            first.num("sm__maximum_warps_per_active_cycle_pct"),
            _median([r.num("sm__warps_active.avg.pct_of_peak_sustained_active") for r in group]),
        )
        knotes = []
        if regs is None:
            knotes.append("no launch__registers_per_thread in the export (profile with --section LaunchStats)")
        device = first.text("device__attribute_display_name") or first.text("Device")
        meas = Measurement(
            launches=len(group),
            ids=[
                whole((r.text("ID") or "").strip().replace(",", ""), f"{r.where}: ID", "launch ID", 2**63 - 1)
                for r in group
            ],
            measured_s=_median(list(times)),
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
            device=shown(device.strip()) if device else None,
        )
        kernels.append(
            KernelInfo(
                name=kname,
                display=kname,
                format="ncu",
                arch=arch,
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

"""Kernels in a cubin (a CUDA ELF file), and cubins embedded in fatbins and host binaries.

Where each figure lives (checked on cubins nvcc 13.0 builds for sm_75 ... sm_121):

* the architecture: ``e_flags``. CUDA ELF ABI version 8 (e_ident OSABI 0x41, what nvcc 13.0
  writes) keeps the SM version in bits 8-15 (0x6005a04: sm_90, 0x6006402: sm_100, 0x6007802:
  sm_120); the older ABI (OSABI 0x33, ABI version 7) keeps it in the low byte, as cuobjdump's
  ``EF_CUDA_SM52`` header flags show (not checked here: no older nvcc at hand).
* registers, stack frame: ``.nv.info`` attributes EIATTR_REGCOUNT (0x2f) and
  EIATTR_FRAME_SIZE (0x11), each a symbol index and a 32-bit value (format EIFMT_SVAL);
* per kernel, in ``.nv.info.<kernel>``: EIATTR_MAXREG_COUNT (0x1b, the register cap from
  __launch_bounds__ or -maxrregcount), EIATTR_MAX_THREADS (0x05, __launch_bounds__ x, y, z),
  EIATTR_REQNTID (0x10), and the number of named barriers (0x4c, "used N barriers" in ptxas -v);
* static shared memory: the size of ``.nv.shared.<kernel>``. From sm_90 on, nvcc lays the 1 KiB
  the runtime reserves per block inside that section (the cubin then has a
  ``.nv.shared.reserved.0`` section): a kernel with 32,768 bytes of static shared memory has a
  33,792-byte section, one with none a 1,024-byte one; on sm_80 ... sm_89 the section holds the
  kernel's own bytes only.

Spill bytes are not in the cubin (ptxas -v prints them); the stack frame, which includes them, is.
"""

from __future__ import annotations

import struct

from ..errors import InputError
from ..units import clip
from .elf import EM_CUDA, MAGIC, STT_FUNC, Elf
from .limits import (
    MAX_BARRIERS,
    MAX_ELF_MAGICS,
    MAX_EMBEDDED_CUBINS,
    MAX_KERNEL_BYTES,
    MAX_REGISTERS,
    MAX_THREADS,
    Budget,
    LimitError,
    check_kernel_count,
    checked,
    short,
    shown,
)
from .models import KernelInfo

# SM versions that exist (nvcc --list-gpu-code of CUDA 8 ... 13); anything else in e_flags is damage
KNOWN_SM = {
    20,
    21,
    30,
    32,
    35,
    37,
    50,
    52,
    53,
    60,
    61,
    62,
    70,
    72,
    75,
    80,
    86,
    87,
    88,
    89,
    90,
    100,
    101,
    103,
    110,
    120,
    121,
}

EIATTR_MAX_THREADS = 0x05
EIATTR_REQNTID = 0x10
EIATTR_FRAME_SIZE = 0x11
EIATTR_MAXREG_COUNT = 0x1B
EIATTR_REGCOUNT = 0x2F
EIATTR_NUM_BARRIERS = 0x4C
EIFMT_SVAL = 4

FATBIN_MAGIC = b"\x50\xed\x55\xba"


def cubin_arch(elf: Elf) -> int:
    """The SM version a cubin was built for; InputError for an unknown one."""
    new_abi = elf.abiversion >= 8 or elf.osabi == 0x41
    sm: int = (elf.flags >> 8) & 0xFF if new_abi else elf.flags & 0xFF
    if sm not in KNOWN_SM:
        raise InputError(
            f"{elf.label}: cubin for an unknown architecture (e_flags {elf.flags:#x} reads as "
            f"sm_{sm}; known: sm_{min(KNOWN_SM)} ... sm_{max(KNOWN_SM)})"
        )
    return sm


def _attributes(data: bytes, label: str, budget: Budget, where: str = ".nv.info") -> list[tuple[int, int, bytes]]:
    """(format, attribute, payload) for each record of a .nv.info section."""
    budget.spend_records(len(data) // 4)  # at most one record per 4 bytes
    out = []
    i = 0
    while i + 4 <= len(data):
        fmt, attr, size = data[i], data[i + 1], struct.unpack_from("<H", data, i + 2)[0]
        if fmt == EIFMT_SVAL:
            if i + 4 + size > len(data):
                raise InputError(f"{label}: damaged {where} section (a record runs past its end)")
            out.append((fmt, attr, data[i + 4 : i + 4 + size]))
            i += 4 + size
        else:  # EIFMT_NVAL, EIFMT_BVAL, EIFMT_HVAL: the value sits in the two bytes after the tag
            out.append((fmt, attr, data[i + 2 : i + 4]))
            i += 4
    return out


def _u32s(payload: bytes) -> list[int]:
    return [struct.unpack_from("<I", payload, j)[0] for j in range(0, len(payload) - 3, 4)]


def parse_cubin(elf: Elf) -> list[KernelInfo]:
    """Every kernel (entry function) in one cubin."""
    if elf.machine != EM_CUDA:
        raise InputError(f"{elf.label}: an ELF file for {elf.machine_name}, not a CUDA cubin")
    arch = cubin_arch(elf)
    new_abi = elf.abiversion >= 8 or elf.osabi == 0x41
    by_symbol: dict[int, dict[int, int]] = {}  # symbol index -> attribute -> value (.nv.info)
    for sec in elf.sections:
        if sec.name == ".nv.info":
            for fmt, attr, payload in _attributes(elf.section_data(sec), elf.label, elf.budget):
                if fmt == EIFMT_SVAL and attr in (EIATTR_REGCOUNT, EIATTR_FRAME_SIZE) and len(payload) >= 8:
                    sym_index, value = _u32s(payload)[:2]
                    by_symbol.setdefault(sym_index, {})[attr] = value
    reserve_inside = any(s.name.startswith(".nv.shared.reserved") for s in elf.sections)
    per_section: dict[str, dict[int, bytes]] = {}  # .nv.info.<kernel> records, read once per section
    kernels: list[KernelInfo] = []
    for index, sym in enumerate(elf.symbols):
        info_name = f".nv.info.{sym.name}"
        info_sec = elf.by_name.get(info_name)
        if sym.type != STT_FUNC or (info_sec is None and not sym.other & 0x10):
            continue  # device functions have no .nv.info.<name> section and no entry flag
        check_kernel_count(len(kernels) + 1, elf.label)
        where = f"{elf.label}: kernel {clip(sym.name, 60)!r}"
        per: dict[int, bytes] = {}
        if info_sec is not None:
            if info_name not in per_section:
                records = _attributes(elf.section_data(info_sec), elf.label, elf.budget, shown(info_name))
                per_section[info_name] = {attr: payload for _, attr, payload in records}
            per = per_section[info_name]
        glob = by_symbol.get(index, {})
        regs = glob.get(EIATTR_REGCOUNT)
        text = elf.by_name.get(f".text.{sym.name}")
        if regs is None and text is not None and text.info >> 24:
            regs = text.info >> 24  # the older ABI keeps the register count in the top byte of sh_info
        if regs is not None:
            checked(regs, where, "register count", MAX_REGISTERS)
        bars: int | None = None
        if EIATTR_NUM_BARRIERS in per:
            if not per[EIATTR_NUM_BARRIERS]:
                raise InputError(f"{where}: damaged .nv.info record: an empty barrier count")
            bars = per[EIATTR_NUM_BARRIERS][0]
        if bars is None and text is not None:  # ABI 8: no record means none; before: in the text section's flags
            bars = 0 if new_abi else (text.flags >> 20) & 0x7F
        if bars is not None:
            checked(bars, where, "named barrier count", MAX_BARRIERS)
        bounds = per.get(EIATTR_MAX_THREADS) or per.get(EIATTR_REQNTID)
        max_threads = None
        if bounds is not None and len(bounds) >= 12:
            x, y, z = _u32s(bounds)[:3]
            max_threads = checked(x * max(y, 1) * max(z, 1), where, "__launch_bounds__ thread count", MAX_THREADS)
        maxreg = None
        if EIATTR_MAXREG_COUNT in per:
            if len(per[EIATTR_MAXREG_COUNT]) < 2:
                raise InputError(f"{where}: damaged .nv.info record: a register cap of under two bytes")
            maxreg = struct.unpack_from("<H", per[EIATTR_MAXREG_COUNT])[0]
        shared = elf.by_name.get(f".nv.shared.{sym.name}")
        if shared is not None:
            checked(shared.size, where, "static shared memory (bytes)", MAX_KERNEL_BYTES)
        frame = glob.get(EIATTR_FRAME_SIZE)
        notes = []
        if regs is None:
            notes.append("the cubin records no register count for this kernel")
        kernels.append(
            KernelInfo(
                name=sym.name,
                display=sym.name,
                format="cubin",
                arch=arch,
                registers=regs,
                max_registers=maxreg if maxreg is not None and maxreg < 255 else None,
                max_threads=max_threads,
                barriers=bars,
                smem_reported_bytes=shared.size if shared is not None else 0,
                smem_reserve_included=reserve_inside and shared is not None,
                stack_frame_bytes=frame,
                notes=notes,
            )
        )
    return kernels


def embedded_cubins(data: bytes, label: str, budget: Budget | None = None) -> tuple[list[Elf], bool, list[str]]:
    """The uncompressed cubins inside a fatbin, object file, executable or library, whether the
    data holds a fatbin at all (so compressed device code can be named as such), and why the
    CUDA ELF headers that are no readable cubin were passed over.

    At most MAX_ELF_MAGICS ELF magic numbers are looked at and MAX_EMBEDDED_CUBINS CUDA ELF
    headers read; a file with more is refused before any of them is parsed."""
    budget = budget if budget is not None else Budget(label)
    starts = []
    seen = 0
    start = data.find(MAGIC, 1)
    while start >= 0:
        seen += 1
        if seen > MAX_ELF_MAGICS:
            raise LimitError(
                f"{short(label)}: more than {MAX_ELF_MAGICS:,} ELF headers inside it; roofcalc looks at no more"
            )
        if start + 64 <= len(data) and struct.unpack_from("<H", data, start + 18)[0] == EM_CUDA:
            starts.append(start)
            if len(starts) > MAX_EMBEDDED_CUBINS:
                raise LimitError(
                    f"{short(label)}: more than {MAX_EMBEDDED_CUBINS:,} cubins embedded; run 'cuobjdump "
                    "-res-usage' on it and pass that output, or extract the cubins you need with 'cuobjdump -xelf'"
                )
        start = data.find(MAGIC, start + 4)
    cubins = []
    damaged = []
    for start in starts:
        try:
            cubins.append(Elf(data, f"{short(label)} (cubin at byte {start:,})", base=start, budget=budget))
        except LimitError:
            raise
        except InputError as e:  # a stray magic number or a damaged image: not a cubin
            damaged.append(str(e))
    return cubins, data.find(FATBIN_MAGIC) >= 0, damaged

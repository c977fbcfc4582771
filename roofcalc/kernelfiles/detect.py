"""Which kind of kernel file a path holds, from its content (the extension is never trusted).

A path is read only if it is a regular file (a FIFO, a device or a socket is refused before it
is opened) and only up to its format's limit, told from the first bytes: ``MAX_BINARY_BYTES``
for ELF files and fatbins, ``MAX_TEXT_BYTES`` for text, ``MAX_JSON_BYTES`` for Triton
metadata. A UTF-8 byte-order mark is dropped. The formats are told apart by patterns that run
in time linear in the text (no pattern can reach across lines or backtrack over a run).
"""

from __future__ import annotations

import re
import struct
from pathlib import Path

from ..errors import InputError
from ..units import clip
from .cubin import FATBIN_MAGIC, embedded_cubins, parse_cubin
from .cuobjdump import parse_cuobjdump
from .elf import EM_CUDA, MAGIC, Elf, machine_name
from .limits import (
    MAX_BINARY_BYTES,
    MAX_JSON_BYTES,
    MAX_TEXT_BYTES,
    Budget,
    LimitError,
    check_kernel_count,
    file_kind,
    read_regular,
    short,
    shown,
    split_lines,
)
from .models import Format, KernelFile, KernelInfo
from .names import demangle
from .ncu import find_header, parse_ncu
from .ptxas import parse_ptxas
from .triton import parse_triton

EXPECTED = (
    "a ptxas -v log, cuobjdump -res-usage output, a cubin or CUDA binary, a Triton cache entry, "
    "or an ncu --csv --page raw export"
)
_CUOBJDUMP = re.compile(r"^[ \t]*Function[ \t]+[^ \t\n][^\n]*:[ \t]*\n[ \t]*REG:[0-9]", re.M)
_PTXAS = re.compile(r"^[ \t]*(?:ptxas[ \t]+)?(?:info|warning|error)[ \t]*:", re.M)


def _is_binary(head: bytes) -> bool:
    return b"\0" in head or head[:4] in (MAGIC, FATBIN_MAGIC)


def _not_elf(label: str) -> InputError:
    return InputError(
        f"{short(label)}: a binary file that is not ELF (cubins, fatbins and CUDA programs are); expected {EXPECTED}"
    )


def _limit(head: bytes, label: str) -> tuple[int, str]:
    """The size limit (and the kind of file, for the message) the first bytes call for; a binary
    file that is no ELF file or fatbin is refused from them, before the rest is read."""
    if _is_binary(head):
        if head[:4] not in (MAGIC, FATBIN_MAGIC):
            raise _not_elf(label)
        return MAX_BINARY_BYTES, "cubin or CUDA binary (run 'cuobjdump -res-usage' on a larger one)"
    if head.removeprefix(b"\xef\xbb\xbf").lstrip()[:1] in (b"{", b"["):
        return MAX_JSON_BYTES, "Triton metadata file"
    return MAX_TEXT_BYTES, "text kernel file (ptxas log, cuobjdump output or ncu export)"


def _binary(data: bytes, label: str) -> tuple[Format, list[KernelInfo], list[str]]:
    name = short(label)
    budget = Budget(label)
    if data[:4] == MAGIC and (len(data) < 64 or data[4] != 2 or data[5] != 1):
        raise InputError(f"{name}: a 32-bit or big-endian ELF file; cubins and CUDA programs are 64-bit little-endian")
    if data[:4] == MAGIC and struct.unpack_from("<H", data, 18)[0] == EM_CUDA:
        return "cubin", parse_cubin(Elf(data, name, budget=budget)), []
    if data[:4] != MAGIC and data[:4] != FATBIN_MAGIC:
        raise _not_elf(label)
    cubins, has_fatbin, damaged = embedded_cubins(data, label, budget)
    what = "a fatbin" if data[:4] == FATBIN_MAGIC else "an ELF file"
    if not cubins:
        if damaged:
            more = f" (and {len(damaged) - 1:,} more)" if len(damaged) > 1 else ""
            raise InputError(
                f"{name}: {what} whose embedded CUDA ELF images are damaged: {clip(damaged[0], 200)}{more}"
            )
        if has_fatbin:
            raise InputError(
                f"{name}: {what} whose device code is compressed; run 'cuobjdump -res-usage' on it "
                "and pass that output, or extract the cubins with 'cuobjdump -xelf all'"
            )
        machine = machine_name(struct.unpack_from("<H", data, 18)[0]) if data[:4] == MAGIC else ""
        raise InputError(f"{name}: {what}{' for ' + machine if machine else ''} with no CUDA device code")
    per_cubin: list[list[KernelInfo]] = []
    notes: list[str] = []
    errors: list[str] = []
    total = 0
    for elf in cubins:
        try:
            kernels = parse_cubin(elf)
        except LimitError:
            raise
        except InputError as e:  # one unreadable cubin (a future architecture) does not hide the others
            errors.append(str(e))
            continue
        total += len(kernels)
        check_kernel_count(total, label)
        per_cubin.append(kernels)
    if not per_cubin:
        raise InputError(errors[0])
    kernels = [k for ks in per_cubin for k in ks]
    archs = sorted({f"sm_{k.arch}" for k in kernels})
    notes.append(
        f"read {sum(1 for ks in per_cubin if ks)} cubin(s) with kernels embedded in {what} ({', '.join(archs)})"
    )
    if errors:
        more = f" (and {len(errors) - 1:,} more)" if len(errors) > 1 else ""
        notes.append(f"skipped: {clip(errors[0], 240)}{more}")
    return "cubin", kernels, notes


def _ptxas_error(lines: list[str]) -> str:
    """The first line in which ptxas says 'error' (found without a pattern: linear)."""
    for line in lines:
        at = line.find("ptxas")
        if at >= 0 and line.find("error", at) >= 0:
            return f" (ptxas said: {shown(line.strip(), 160)})"
    return ""


def _text(text: str, label: str, path: Path) -> tuple[Format, list[KernelInfo], list[str]]:
    name = short(label)
    if not text.strip():
        raise InputError(f"{name}: empty file")
    if text.lstrip(" \t\n\r\x0b\x0c").startswith(("{", "[")):  # as _limit tells JSON
        kernels, notes = parse_triton(path, text)
        return "triton", kernels, notes
    lines = split_lines(text, label)
    if find_header(lines) is not None:
        kernels, notes = parse_ncu(text, label)
        return "ncu", kernels, notes
    if _CUOBJDUMP.search(text) or "Resource usage:" in text:
        kernels, notes = parse_cuobjdump(text, label)
        if not kernels:
            raise InputError(f"{name}: cuobjdump output without kernels (only device functions or none)")
        return "cuobjdump", kernels, notes
    if _PTXAS.search(text):
        kernels = parse_ptxas(text, label)
        if not kernels:
            raise InputError(f"{name}: a ptxas log without 'Compiling entry function' lines{_ptxas_error(lines)}")
        return "ptxas", kernels, []
    first = next(ln for ln in lines if ln.strip())
    if first.count(",") >= 2 or first.count("\t") >= 2:
        raise InputError(
            f"{name}: a CSV file, but not a Nsight Compute raw-page export (it starts "
            f'{clip(first.strip(), 60)!r}; expected a "ID",...,"Kernel Name" header)'
        )
    raise InputError(f"{name}: not a kernel file roofcalc reads; expected {EXPECTED}")


def load_kernel_file(path: str | Path) -> KernelFile:
    """Read any supported kernel file (or a Triton cache folder) into a KernelFile."""
    p = Path(path)
    label = str(p)
    name = short(label)
    kind, _ = file_kind(p)
    if kind == "dir":
        kernels, notes = parse_triton(p)
        fmt: Format = "triton"
    else:
        data = read_regular(p, MAX_BINARY_BYTES, "kernel file", choose=lambda head: _limit(head, label))
        if not data:
            raise InputError(f"{name}: empty file")
        text = None
        if not _is_binary(data[:8192]):
            try:
                text = data.decode("utf-8-sig")
            except UnicodeDecodeError:
                text = None
        if text is None:
            fmt, kernels, notes = _binary(data, label)
        else:
            fmt, kernels, notes = _text(text, label, p)
    if not kernels:
        raise InputError(f"{name}: no kernels in this {fmt} file")
    check_kernel_count(len(kernels), label)
    names = demangle([k.name for k in kernels])
    if names:
        kernels = [k.model_copy(update={"display": names.get(k.name, k.display)}) for k in kernels]
    return KernelFile(path=label, format=fmt, kernels=kernels, notes=notes)

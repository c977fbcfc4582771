"""Which kind of kernel file a path holds, from its content (the extension is never trusted)."""

from __future__ import annotations

import re
import struct
from pathlib import Path

from ..errors import InputError
from .cubin import FATBIN_MAGIC, embedded_cubins, parse_cubin
from .cuobjdump import parse_cuobjdump
from .elf import EM_CUDA, MAGIC, Elf, machine_name
from .models import Format, KernelFile, KernelInfo
from .names import demangle
from .ncu import find_header, parse_ncu
from .ptxas import parse_ptxas
from .triton import parse_triton

MAX_BYTES = 2 * 1024**3  # a shipped CUDA library can be hundreds of megabytes
EXPECTED = (
    "a ptxas -v log, cuobjdump -res-usage output, a cubin or CUDA binary, a Triton cache entry, "
    "or an ncu --csv --page raw export"
)
_CUOBJDUMP = re.compile(r"^\s*Function\s+\S.*:\s*\n\s*REG:\d+", re.M)
_PTXAS = re.compile(r"^\s*(?:ptxas\s+)?(?:info|warning|error)\s*:", re.M)
_PTXAS_ERROR = re.compile(r"^.*ptxas.*error.*$", re.M)


def _binary(data: bytes, label: str) -> tuple[Format, list[KernelInfo], list[str]]:
    if data[:4] == MAGIC and (len(data) < 64 or data[4] != 2 or data[5] != 1):
        raise InputError(f"{label}: a 32-bit or big-endian ELF file; cubins and CUDA programs are 64-bit little-endian")
    if data[:4] == MAGIC and len(data) >= 20 and struct.unpack_from("<H", data, 18)[0] == EM_CUDA:
        return "cubin", parse_cubin(Elf(data, label)), []
    if data[:4] != MAGIC and data[:4] != FATBIN_MAGIC:
        raise InputError(
            f"{label}: a binary file that is not ELF (cubins, fatbins and CUDA programs are); expected {EXPECTED}"
        )
    cubins, has_fatbin = embedded_cubins(data, label)
    what = "a fatbin" if data[:4] == FATBIN_MAGIC else "an ELF file"
    if not cubins:
        if has_fatbin:
            raise InputError(
                f"{label}: {what} whose device code is compressed; run 'cuobjdump -res-usage' on it "
                "and pass that output, or extract the cubins with 'cuobjdump -xelf all'"
            )
        machine = machine_name(struct.unpack_from("<H", data, 18)[0]) if data[:4] == MAGIC and len(data) >= 20 else ""
        raise InputError(f"{label}: {what}{' for ' + machine if machine else ''} with no CUDA device code")
    per_cubin, notes, errors = [], [], []
    for elf in cubins:
        try:
            per_cubin.append(parse_cubin(elf))
        except InputError as e:  # one unreadable cubin (a future architecture) does not hide the others
            errors.append(str(e))
    if not per_cubin:
        raise InputError(errors[0])
    kernels = [k for ks in per_cubin for k in ks]
    archs = sorted({f"sm_{k.arch}" for k in kernels})
    notes.append(
        f"read {sum(1 for ks in per_cubin if ks)} cubin(s) with kernels embedded in {what} ({', '.join(archs)})"
    )
    notes += [f"skipped: {e}" for e in errors]
    return "cubin", kernels, notes


def _text(text: str, label: str, path: Path) -> tuple[Format, list[KernelInfo], list[str]]:
    if not text.strip():
        raise InputError(f"{label}: empty file")
    head = text.lstrip()
    if head.startswith(("{", "[")):
        kernels, notes = parse_triton(path)
        return "triton", kernels, notes
    lines = text.splitlines()
    if find_header(lines) is not None:
        kernels, notes = parse_ncu(text, label)
        return "ncu", kernels, notes
    if _CUOBJDUMP.search(text) or "Resource usage:" in text:
        kernels, notes = parse_cuobjdump(text, label)
        if not kernels:
            raise InputError(f"{label}: cuobjdump output without kernels (only device functions or none)")
        return "cuobjdump", kernels, notes
    if _PTXAS.search(text):
        kernels = parse_ptxas(text, label)
        if not kernels:
            err = _PTXAS_ERROR.search(text)
            why = f" (ptxas said: {err.group(0).strip()[:160]})" if err else ""
            raise InputError(f"{label}: a ptxas log without 'Compiling entry function' lines{why}")
        return "ptxas", kernels, []
    first = next(ln for ln in lines if ln.strip())
    if first.count(",") >= 2 or first.count("\t") >= 2:
        raise InputError(
            f"{label}: a CSV file, but not a Nsight Compute raw-page export (it starts "
            f'{first.strip()[:60]!r}; expected a "ID",...,"Kernel Name" header)'
        )
    raise InputError(f"{label}: not a kernel file roofcalc reads; expected {EXPECTED}")


def load_kernel_file(path: str | Path) -> KernelFile:
    """Read any supported kernel file (or a Triton cache folder) into a KernelFile."""
    p = Path(path)
    label = str(p)
    try:
        is_dir, is_file = p.is_dir(), p.is_file()
    except (OSError, ValueError) as e:  # a name too long, a NUL byte
        raise InputError(f"{label[:200]}: cannot open: {getattr(e, 'strerror', None) or e}") from None
    if is_dir:
        kernels, notes = parse_triton(p)
        fmt: Format = "triton"
    else:
        if not is_file:
            raise InputError(f"{label}: no such file or folder")
        try:
            size = p.stat().st_size
            if size > MAX_BYTES:
                raise InputError(f"{label}: {size:,} bytes is over the {MAX_BYTES:,}-byte limit for a kernel file")
            data = p.read_bytes()
        except OSError as e:
            raise InputError(f"{label}: cannot read: {e.strerror or e}") from None
        if not data:
            raise InputError(f"{label}: empty file")
        text = None
        if b"\0" not in data[:8192]:
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError:
                text = None
        if text is None:
            fmt, kernels, notes = _binary(data, label)
        else:
            fmt, kernels, notes = _text(text, label, p)
    if not kernels:
        raise InputError(f"{label}: no kernels in this {fmt} file")
    names = demangle([k.name for k in kernels])
    if names:
        kernels = [k.model_copy(update={"display": names.get(k.name, k.display)}) for k in kernels]
    return KernelFile(path=label, format=fmt, kernels=kernels, notes=notes)

"""Kernels in ``cuobjdump -res-usage`` (``--dump-resource-usage``) output.

The format (CUDA 12 and 13; one block per embedded cubin)::

    Fatbin elf code:
    ================
    arch = sm_90
    code version = [1,8]
    host = linux
    compile_size = 64bit

    Resource usage:
     Common:
      GLOBAL:0
     Function _Z8lb_256_2Pfi:
      REG:10 STACK:0 SHARED:33792 LOCAL:0 CONSTANT[0]:540 TEXTURE:0 SURFACE:0 SAMPLER:0

SHARED is the size of the cubin's ``.nv.shared.<kernel>`` section: from sm_90 on it includes
the 1 KiB the runtime reserves per block (measured on an H100 and an H200, CUDA 13.0:
SHARED:33792 for 32,768 bytes of static shared memory that cudaFuncGetAttributes reports as
32,768; SHARED:1024 for a kernel with dynamic shared memory only; SHARED:0 for a Triton kernel
that declares no shared memory at all; the sm_80 code of the same program prints SHARED:32768).
Run on a cubin, cuobjdump prints no ``arch =`` line. Named barriers are not listed (ptxas -v and
the cubin have them). Kernels have a CONSTANT[0] bank (their parameters); device functions,
listed the same way, do not.
"""

from __future__ import annotations

import re

from ..errors import InputError
from .limits import MAX_ARCH, MAX_KERNEL_BYTES, MAX_REGISTERS, check_kernel_count, count, short, shown, split_lines
from .models import KernelInfo

_ARCH = re.compile(r"[ \t]*arch[ \t]*=[ \t]*sm_([0-9]+)([a-z]?)[ \t]*")
RESERVE_FROM_SM = 90  # nvcc lays the runtime's per-block reserve inside .nv.shared from sm_90 on
_USED = {"REG": MAX_REGISTERS, "SHARED": MAX_KERNEL_BYTES, "STACK": MAX_KERNEL_BYTES, "LOCAL": MAX_KERNEL_BYTES}


def _fields(line: str, where: str) -> dict[str, int]:
    """The NAME:VALUE fields of a resource line (split on blanks: linear in the line), the ones
    read checked as numbers; CONSTANT[0] is only looked for."""
    out: dict[str, int] = {}
    for token in line.split():
        key, sep, value = token.partition(":")
        if not sep:
            continue
        if key in _USED:
            out[key] = count(value, where, key, _USED[key])
        elif key == "CONSTANT[0]":
            out[key] = 0
    return out


def parse_cuobjdump(text: str, label: str) -> tuple[list[KernelInfo], list[str]]:
    kernels: list[KernelInfo] = []
    notes: list[str] = []
    arch: int | None = None
    suffix = ""
    pending: str | None = None
    device_functions = 0
    name = short(label)

    def truncated(function: str) -> InputError:
        return InputError(f"{name}: truncated cuobjdump output: no resource line for {shown(function)}")

    for n, line in enumerate(split_lines(text, label), start=1):
        where = f"{name}:{n}"
        stripped = line.strip(" \t")
        if "arch" in line and (m := _ARCH.fullmatch(line)):
            arch, suffix = count(m.group(1), where, "architecture", MAX_ARCH), m.group(2)
        elif stripped[:9] in ("Function ", "Function\t") and stripped.endswith(":") and stripped[8:-1].strip(" \t"):
            if pending is not None:
                raise truncated(pending)
            pending = stripped[8:-1].strip(" \t")
        elif pending is not None and "REG:" in line:
            fields = _fields(line, where)
            if "CONSTANT[0]" not in fields:
                device_functions += 1
                pending = None
                continue
            check_kernel_count(len(kernels) + 1, label)
            shared = fields.get("SHARED", 0)
            kernels.append(
                KernelInfo(
                    name=pending,
                    display=pending,
                    format="cuobjdump",
                    arch=arch,
                    arch_suffix=suffix,
                    registers=fields.get("REG"),
                    smem_reported_bytes=shared,
                    smem_reserve_included=None if arch is None else arch >= RESERVE_FROM_SM,
                    stack_frame_bytes=fields.get("STACK"),
                    local_bytes=fields.get("LOCAL"),
                )
            )
            pending = None
    if pending is not None:
        raise truncated(pending)
    if any(k.arch is None for k in kernels):
        notes.append("no 'arch =' line (cuobjdump of a cubin): the architecture is taken to be the hardware's")
    if kernels:
        notes.append(
            "cuobjdump lists no named barriers: on CC 9.0 and later a kernel using more than two fits fewer "
            "blocks than shown here (ptxas -v and the cubin have the count)"
        )
    if device_functions:
        notes.append(f"{device_functions} device function(s) skipped (no CONSTANT[0] parameter bank: not kernels)")
    return kernels, notes

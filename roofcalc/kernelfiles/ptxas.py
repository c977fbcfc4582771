"""Kernels in a ptxas verbose log (``nvcc -Xptxas -v``, ``ptxas -v``).

The lines (nvcc 13.0, checked against cudaFuncGetAttributes on an H200; older releases print
the same with fewer fields)::

    ptxas info    : Compiling entry function '_Z8lb_256_2Pfi' for 'sm_90'
    ptxas info    : Function properties for _Z8lb_256_2Pfi
        0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
    ptxas info    : Used 10 registers, used 1 barriers, 32768 bytes smem, 364 bytes cmem[0]

Older forms: ``Used 46 registers, 176 bytes cmem[0], 16 bytes cmem[14]``, ``Used 16 registers,
4+0 bytes lmem, 24+16 bytes smem`` (static + parameters). A log without "Compiling entry
function" lines (a JIT info log) names each kernel in its "Function properties for" line. The
smem figure is the kernel's static shared memory, without the runtime's per-block reserve. A
log built for several architectures lists every kernel once per architecture.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InputError
from .models import KernelInfo

_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(?:sm|compute)_(\d+)([a-z]?)'")
_PROPS = re.compile(r"Function properties for '?([^':\s]+)'?:?\s*$")
_FRAME = re.compile(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads")
_USED = re.compile(r"\b[Uu]sed (\d+) registers")
_SMEM = re.compile(r"(\d+)(?:\+\d+)? bytes smem")
_BARS = re.compile(r"used (\d+) barriers")
_LMEM = re.compile(r"(\d+)(?:\+\d+)? bytes lmem")
_STACK = re.compile(r"(\d+) (?:bytes cumulative stack size|stack\b)")
_CAP = re.compile(r"Overriding maximum register limit \d+ for '([^']+)' with\s+(\d+)")


@dataclass
class _Entry:
    name: str
    arch: int | None
    suffix: str = ""
    done: bool = False


def parse_ptxas(text: str, label: str) -> list[KernelInfo]:
    kernels: list[KernelInfo] = []
    current: _Entry | None = None  # the entry function being described
    frames: dict[str, tuple[int, int, int]] = {}  # function -> (frame, spill stores, spill loads)
    caps: dict[str, int] = {}
    props_for: str | None = None

    def field(pattern: re.Pattern[str], line: str) -> int | None:
        m = pattern.search(line)
        return int(m.group(1)) if m else None

    for line in text.splitlines():
        if m := _ENTRY.search(line):
            if current is not None and not current.done:
                raise InputError(f"{label}: truncated ptxas log: no 'Used N registers' line for {current.name}")
            current = _Entry(m.group(1), int(m.group(2)), m.group(3))
            props_for = None
        elif m := _CAP.search(line):
            caps[m.group(1)] = int(m.group(2))
        elif m := _PROPS.search(line):
            props_for = m.group(1)
        elif (m := _FRAME.search(line)) and props_for is not None:
            frames[props_for] = (int(m.group(1)), int(m.group(2)), int(m.group(3)))
        elif m := _USED.search(line):
            if current is None or current.done:
                if props_for is None:
                    continue
                current = _Entry(props_for, None)  # a JIT log: no "Compiling entry function" lines
            current.done = True
            frame = frames.get(current.name)
            kernels.append(
                KernelInfo(
                    name=current.name,
                    display=current.name,
                    format="ptxas",
                    arch=current.arch,
                    arch_suffix=current.suffix,
                    registers=int(m.group(1)),
                    barriers=field(_BARS, line),
                    smem_reported_bytes=field(_SMEM, line) or 0,
                    max_registers=caps.get(current.name),
                    local_bytes=field(_LMEM, line),
                    stack_frame_bytes=frame[0] if frame else field(_STACK, line),
                    spill_store_bytes=frame[1] if frame else None,
                    spill_load_bytes=frame[2] if frame else None,
                )
            )
    if current is not None and not current.done:
        raise InputError(f"{label}: truncated ptxas log: no 'Used N registers' line for {current.name}")
    return kernels

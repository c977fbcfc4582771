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

Parsing is linear in the size of the log: the text is split into lines first (at most
``MAX_LINES``), each line is tested for a fixed substring before any pattern runs, and every
pattern starts at a literal or at the first digit of a run of digits (a lookbehind), so no
line can make one backtrack. Numbers are checked for length and range before use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import InputError
from .limits import (
    MAX_ARCH,
    MAX_BARRIERS,
    MAX_KERNEL_BYTES,
    MAX_REGISTERS,
    check_kernel_count,
    count,
    short,
    shown,
    split_lines,
)
from .models import KernelInfo

_ENTRY = re.compile(r"Compiling entry function '([^']+)' for '(?:sm|compute)_([0-9]+)([a-z]?)'")
_PROPS = re.compile(r"Function properties for '?([^': \t]+)'?:?[ \t]*$")
_FRAME = re.compile(r"(?<![0-9])([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads")
_USED = re.compile(r"\b[Uu]sed ([0-9]+) registers")
_SMEM = re.compile(r"(?<![0-9+])([0-9]+)(?:\+[0-9]+)? bytes smem")
_BARS = re.compile(r"used ([0-9]+) barriers")
_LMEM = re.compile(r"(?<![0-9+])([0-9]+)(?:\+[0-9]+)? bytes lmem")
_STACK = re.compile(r"(?<![0-9])([0-9]+) (?:bytes cumulative stack size|stack\b)")
_CAP = re.compile(r"Overriding maximum register limit [0-9]+ for '([^']+)' with[ \t]+([0-9]+)")


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
    name = short(label)

    def truncated(entry: _Entry) -> InputError:
        return InputError(f"{name}: truncated ptxas log: no 'Used N registers' line for {shown(entry.name)}")

    def field(pattern: re.Pattern[str], line: str, where: str, what: str, most: int) -> int | None:
        m = pattern.search(line)
        return count(m.group(1), where, what, most) if m else None

    for n, line in enumerate(split_lines(text, label), start=1):
        where = f"{name}:{n}"
        if "entry function" in line and (m := _ENTRY.search(line)):
            if current is not None and not current.done:
                raise truncated(current)
            current = _Entry(m.group(1), count(m.group(2), where, "architecture", MAX_ARCH), m.group(3))
            props_for = None
        elif "Overriding" in line and (m := _CAP.search(line)):
            caps[m.group(1)] = count(m.group(2), where, "register limit", MAX_REGISTERS)
        elif "properties for" in line and (m := _PROPS.search(line)):
            props_for = m.group(1)
        elif "stack frame" in line and (m := _FRAME.search(line)) and props_for is not None:
            frames[props_for] = (
                count(m.group(1), where, "stack frame (bytes)", MAX_KERNEL_BYTES),
                count(m.group(2), where, "spill stores (bytes)", MAX_KERNEL_BYTES),
                count(m.group(3), where, "spill loads (bytes)", MAX_KERNEL_BYTES),
            )
        elif "sed " in line and (m := _USED.search(line)):
            if current is None or current.done:
                if props_for is None:
                    continue
                current = _Entry(props_for, None)  # a JIT log: no "Compiling entry function" lines
            current.done = True
            check_kernel_count(len(kernels) + 1, label)
            frame = frames.get(current.name)
            kernels.append(
                KernelInfo(
                    name=current.name,
                    display=current.name,
                    format="ptxas",
                    arch=current.arch,
                    arch_suffix=current.suffix,
                    registers=count(m.group(1), where, "register count", MAX_REGISTERS),
                    barriers=field(_BARS, line, where, "barrier count", MAX_BARRIERS),
                    smem_reported_bytes=field(_SMEM, line, where, "shared memory (bytes)", MAX_KERNEL_BYTES) or 0,
                    max_registers=caps.get(current.name),
                    local_bytes=field(_LMEM, line, where, "local memory (bytes)", MAX_KERNEL_BYTES),
                    stack_frame_bytes=frame[0]
                    if frame
                    else field(_STACK, line, where, "stack size (bytes)", MAX_KERNEL_BYTES),
                    spill_store_bytes=frame[1] if frame else None,
                    spill_load_bytes=frame[2] if frame else None,
                )
            )
    if current is not None and not current.done:
        raise truncated(current)
    return kernels

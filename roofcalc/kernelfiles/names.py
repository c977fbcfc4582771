"""Demangling C++ kernel names with the system's c++filt, where there is one."""

from __future__ import annotations

import shutil
import subprocess

MAX_DEMANGLE_CHARS = 16 * 1024  # longer names are shown as they are (c++filt's time grows with them)
MAX_DEMANGLE_TOTAL = 8 * 1024**2  # characters sent to c++filt in all
TIMEOUT_S = 5.0


def demangle(names: list[str]) -> dict[str, str]:
    """Itanium-mangled name -> readable name, for the names c++filt (or llvm-cxxfilt) can read.
    Without either tool the names stay as they are; nothing depends on this but display."""
    mangled = sorted({n for n in names if n.startswith("_Z") and len(n) <= MAX_DEMANGLE_CHARS and n.isprintable()})
    total = 0
    for i, n in enumerate(mangled):
        total += len(n) + 1
        if total > MAX_DEMANGLE_TOTAL:
            mangled = mangled[:i]
            break
    exe = shutil.which("c++filt") or shutil.which("llvm-cxxfilt")
    if not mangled or exe is None:
        return {}
    try:
        out = subprocess.run(
            [exe], input="\n".join(mangled) + "\n", capture_output=True, text=True, timeout=TIMEOUT_S, check=True
        ).stdout.splitlines()
    except (OSError, ValueError, subprocess.SubprocessError):  # ValueError: output that is not UTF-8
        return {}
    if len(out) != len(mangled):
        return {}
    return {m: d for m, d in zip(mangled, out, strict=True) if d and d != m}

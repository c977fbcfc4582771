"""Demangling C++ kernel names with the system's c++filt, where there is one."""

from __future__ import annotations

import shutil
import subprocess


def demangle(names: list[str]) -> dict[str, str]:
    """Itanium-mangled name -> readable name, for the names c++filt (or llvm-cxxfilt) can read.
    Without either tool the names stay as they are; nothing depends on this but display."""
    mangled = sorted({n for n in names if n.startswith("_Z")})
    exe = shutil.which("c++filt") or shutil.which("llvm-cxxfilt")
    if not mangled or exe is None:
        return {}
    try:
        out = subprocess.run(
            [exe], input="\n".join(mangled) + "\n", capture_output=True, text=True, timeout=20, check=True
        ).stdout.splitlines()
    except (OSError, subprocess.SubprocessError):
        return {}
    if len(out) != len(mangled):
        return {}
    return {m: d for m, d in zip(mangled, out, strict=True) if d and d != m}

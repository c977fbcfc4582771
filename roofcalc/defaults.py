"""Defaults that the CLI needs before anything heavy is imported."""

from __future__ import annotations

import os

DEFAULT_HARDWARE = "h100"

# What a fit leaves free of the device's memory, besides weights, cache and the op's own tensors
# (estimates, not measurements; override with --memory-reserve): a fixed part for the CUDA context,
# the libraries' workspaces and communication buffers, and a share of the rest for the caching
# allocator's fragmentation and transient activations.
MEMORY_RESERVE_FIXED_BYTES = 2**30
MEMORY_RESERVE_FRACTION = 0.05


def default_hardware_name(name: str | None = None) -> str:
    """The hardware to use when none is named: $ROOFCALC_HW, else h100. A name that is given
    but empty (--hw '', ROOFCALC_HW='') is refused, never replaced by the default."""
    from .errors import InputError

    if name is not None:
        if not name.strip():
            raise InputError("--hw: the hardware name is empty; see 'roofcalc hw list'")
        return name
    env = os.environ.get("ROOFCALC_HW")
    if env is not None:
        if not env.strip():
            raise InputError("ROOFCALC_HW is set but empty; unset it or name a device (see 'roofcalc hw list')")
        return env
    return DEFAULT_HARDWARE

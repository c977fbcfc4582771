"""Defaults that the CLI needs before anything heavy is imported."""

from __future__ import annotations

import os

DEFAULT_HARDWARE = "h100"


def default_hardware_name(name: str | None = None) -> str:
    """The hardware to use when none is named: $ROOFCALC_HW, else h100."""
    return name or os.environ.get("ROOFCALC_HW") or DEFAULT_HARDWARE

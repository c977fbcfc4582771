"""roofcalc: roofline and SM-occupancy calculator for GPUs, checked against real cards.

Public API (imports are lazy so that ``import roofcalc`` stays cheap)::

    import roofcalc
    hw = roofcalc.load_hardware("h100")
    r = roofcalc.analyze("gemm", hw, m=8192)
    r.bound, r.predicted_s
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ._version import __version__

if TYPE_CHECKING:
    from .errors import DomainError, InputError, RoofcalcError, SpecError
    from .hardware import Hardware, load_hardware
    from .roofline import RooflineResult, analyze

_EXPORTS = {
    "load_hardware": "hardware",
    "Hardware": "hardware",
    "analyze": "roofline",
    "RooflineResult": "roofline",
    "occupancy": "occupancy_solver",
    "OccupancyResult": "occupancy_solver",
    "RoofcalcError": "errors",
    "InputError": "errors",
    "DomainError": "errors",
    "SpecError": "errors",
}

__all__ = ["__version__", *_EXPORTS]


def __getattr__(name: str) -> Any:
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'roofcalc' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{mod}", __name__), name)

"""``roofcalc trace``: a PyTorch profiler trace, op by op, against the roofline.

    from roofcalc.trace import read_trace, analyze_trace, kernel_inventory
    trace = read_trace("trace.json.gz")             # bounded, streaming; TraceError if malformed
    report = analyze_trace(trace, load_hardware("h100"))
    kernels = kernel_inventory(trace, load_hardware("h100"))  # one record per GPU activity

Imports are lazy: reading a trace does not load the hardware models.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .analysis import (
        CallRow,
        KernelRecord,
        KindRow,
        OpRow,
        TraceReport,
        TraceSummary,
        analyze_trace,
        kernel_inventory,
    )
    from .model import Trace
    from .opcost import Cost, Unknown, comm_cost, op_cost
    from .reader import TraceError, read_trace

_EXPORTS = {
    "read_trace": "reader",
    "TraceError": "reader",
    "Trace": "model",
    "analyze_trace": "analysis",
    "kernel_inventory": "analysis",
    "KernelRecord": "analysis",
    "TraceReport": "analysis",
    "TraceSummary": "analysis",
    "OpRow": "analysis",
    "KindRow": "analysis",
    "CallRow": "analysis",
    "op_cost": "opcost",
    "comm_cost": "opcost",
    "Cost": "opcost",
    "Unknown": "opcost",
}

__all__ = [
    "CallRow",
    "Cost",
    "KernelRecord",
    "KindRow",
    "OpRow",
    "Trace",
    "TraceError",
    "TraceReport",
    "TraceSummary",
    "Unknown",
    "analyze_trace",
    "comm_cost",
    "kernel_inventory",
    "op_cost",
    "read_trace",
]


def __getattr__(name: str) -> Any:
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'roofcalc.trace' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f".{mod}", __name__), name)

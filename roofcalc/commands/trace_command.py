"""`roofcalc trace FILE`: a PyTorch profiler trace, op by op, against the roofline."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

import click

from .common import CheckedCommand, FileArg, IntType, emit_json, shared

if TYPE_CHECKING:
    from ..hardware import Hardware
    from ..trace.model import Trace


def resolve_trace_hardware(
    trace: Trace, hw_name: str | None, hw_file: str | None, calibration: str | None
) -> tuple[Hardware, str | None]:
    """The hardware to compare with, and a note: the one named (--hw, --hw-file, --calibration or
    $ROOFCALC_HW); else the registry's part whose alias is the trace's device name
    (deviceProperties); else the default. The note says where a choice came from, or that the
    trace ran on another device than the one named."""
    from ..errors import InputError
    from ..hardware import load_hardware
    from ..resolve import resolve_hardware

    seen = None
    for device in trace.device_names:
        try:
            seen = (device, load_hardware(device))
            break
        except InputError:
            continue
    named = hw_name is not None or hw_file is not None or calibration is not None or "ROOFCALC_HW" in os.environ
    if named:
        hw = resolve_hardware(hw_name, hw_file, calibration)
        base = hw.calibration.base if hw.calibration is not None else hw.id
        if seen is not None and seen[1].id not in (hw.id, base):
            return hw, f"the trace ran on {seen[0]} ({seen[1].id}); this report compares it with {hw.id}"
        return hw, None
    if seen is not None:
        return seen[1], f"hardware {seen[1].id}, from the trace's device name {seen[0]!r} (--hw to choose another)"
    hw = resolve_hardware(None)
    shown = f" ({trace.device_names[0]!r} is not in the registry)" if trace.device_names else ""
    return hw, f"hardware {hw.id}, the default{shown}; --hw to choose"


@click.command("trace", cls=CheckedCommand)
@click.argument("file", type=FileArg())
@shared("hw", "hw_file", "calibration")
@click.option(
    "--top",
    type=IntType(plain=True),
    default=20,
    show_default=True,
    help="rows of the table, and calls listed in --json (0: all)",
)
@shared("json")
def trace_cmd(
    file: str, hw_name: str | None, hw_file: str | None, calibration: str | None, top: int, as_json: bool
) -> None:
    """Each op of a profiled run beside its bound: GPU time, speed of light, time lost.

    FILE is a Chrome trace written by PyTorch's profiler, plain or gzip-compressed
    (torch.profiler.profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA],
    record_shapes=True), then prof.export_chrome_trace("trace.json")). Each GPU kernel is
    traced back to the op that launched it; the op's shapes and dtypes give its FLOPs and
    bytes, and so its bound on the hardware: max(FLOPs / peak, bytes / bandwidth). The
    hardware is --hw, else the device the trace names, else the default.

    \b
    Examples:
      roofcalc trace tests/data/traces/decode-eager.json --hw h100
      roofcalc trace tests/data/traces/triton-unknown.json.gz --top 40
      roofcalc trace tests/data/traces/prefill-sdpa.json --json
    """
    if top < 0:
        raise click.BadParameter(f"must be 0 (every row) or more (got {top})", param_hint="'--top'")
    from ..trace.analysis import analyze_trace
    from ..trace.reader import read_trace

    if hw_name is not None or hw_file is not None or calibration is not None:
        from ..resolve import resolve_hardware

        resolve_hardware(hw_name, hw_file, calibration)  # a wrong name is refused before a long read
    trace = read_trace(file)
    hw, note = resolve_trace_hardware(trace, hw_name, hw_file, calibration)
    report = analyze_trace(trace, hw, top=top)
    if note:
        report = report.model_copy(update={"notes": [note, *report.notes]})
    if as_json:
        emit_json(report.model_dump(mode="json"))
        return
    from ..render import console
    from ..trace.view import render_report

    render_report(console(), report, top)


__all__ = ["resolve_trace_hardware", "trace_cmd"]

"""`roofcalc trace FILE`: a PyTorch profiler trace, op by op, against the roofline."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import click

from .common import CheckedCommand, FileArg, IntType, TimeType, emit_json, shared

if TYPE_CHECKING:
    from ..hardware import Hardware
    from ..trace.model import Trace


def _trace_device(trace: Trace) -> tuple[str, Hardware] | None:
    """The first of the trace's device names (deviceProperties) that is a registry part, with it."""
    from ..errors import InputError
    from ..hardware import load_hardware

    for device in trace.device_names:
        try:
            return device, load_hardware(device)
        except InputError:
            continue
    return None


def resolve_trace_hardware(
    trace: Trace, hw_name: str | None, hw_file: str | None, calibration: str | None
) -> tuple[Hardware, str | None]:
    """The hardware to compare with, and a note: the one named (--hw, --hw-file, --calibration or
    $ROOFCALC_HW); else the registry's part whose alias is the trace's device name
    (deviceProperties); else the default. The note says where a choice came from, or that the
    trace ran on another device than the one named."""
    from ..resolve import resolve_hardware

    seen = _trace_device(trace)
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
@click.option(
    "--save-impl",
    type=FileArg(),
    default=None,
    metavar="FILE.yaml",
    help="write the traced step as an implementation file, for 'op decode|prefill --impl-file' "
    "(needs --batch and --context or --seq)",
)
@click.option("--batch", type=IntType(plain=True), default=None, help="--save-impl: the traced step's batch")
@click.option("--context", type=IntType(plain=True), default=None, help="--save-impl: a decode step's context")
@click.option("--seq", type=IntType(plain=True), default=None, help="--save-impl: a prefill's prompt length")
@click.option(
    "--step-time",
    type=TimeType(),
    default=None,
    help="--save-impl: the step timed without the profiler (e.g. 13.4ms): the host's time is taken from it",
)
@click.option(
    "--cuda-graphs",
    is_flag=True,
    default=False,
    help="--save-impl: the step runs replayed from a CUDA graph (traced from an eager run of the same code): "
    "its kernels back to back, the host's timeline unused",
)
@click.option(
    "--plot",
    type=FileArg(),
    default=None,
    help="draw the ops on the card's roofline into a .png, .svg or .pdf (needs roofcalc[plot])",
)
@shared("json")
def trace_cmd(
    file: str,
    hw_name: str | None,
    hw_file: str | None,
    calibration: str | None,
    top: int,
    save_impl: str | None,
    batch: int | None,
    context: int | None,
    seq: int | None,
    step_time: float | None,
    cuda_graphs: bool,
    plot: str | None,
    as_json: bool,
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
      roofcalc trace validation/traces/h200/hf1/traces/hf-eager-llama-1b-decode-b3-c1000.json.gz --save-impl mine.yaml --batch 3 --context 1018 --step-time 13.37ms

    With --save-impl the step becomes an implementation file: its kernels, with shapes as
    formulas over the batch and the context (or prompt length), and its host timeline, so that
    'roofcalc op decode --impl-file mine.yaml --batch 12 --context 4000' predicts the same code
    at other shapes.
    """
    if top < 0:
        raise click.BadParameter(f"must be 0 (every row) or more (got {top})", param_hint="'--top'")
    phase = _impl_phase(save_impl, batch, context, seq, step_time)
    if cuda_graphs and not save_impl:
        raise click.UsageError("--cuda-graphs describes the step --save-impl writes; give --save-impl")
    if cuda_graphs and step_time is not None:
        raise click.UsageError(
            "--step-time sets the host's timeline, which a step replayed from a CUDA graph does not use"
        )
    if plot:
        from ..plot import check_output

        check_output(plot)
    if save_impl:
        from ..output import check_output_path

        check_output_path(save_impl)
        if plot and Path(plot).resolve() == Path(save_impl).resolve():
            raise click.UsageError("--plot and --save-impl name the same file")
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
    if save_impl and phase is not None and batch is not None:
        from ..impl import measured_overhead
        from ..impl import save_impl as write_impl
        from ..impl.build import build_impl

        if Path(save_impl).exists() and Path(save_impl).resolve() == Path(file).resolve():
            raise click.UsageError("--save-impl would replace the trace it reads")
        impl = build_impl(
            trace,
            _traced_card(trace, hw_name, hw_file, calibration, hw),
            name=Path(save_impl).stem[:200],
            phase=phase,
            batch=batch,
            size=int(context if phase == "decode" else seq),  # type: ignore[arg-type]
            overhead=measured_overhead(),
            measured_step_s=step_time,
            cuda_graphs=cuda_graphs,
        )
        write_impl(impl, save_impl)
        click.echo(f"implementation written to {save_impl} ({len(impl.kernels)} kernels)", err=True)
    if plot:
        from ..plot import save_trace_roofline

        save_trace_roofline(report, hw, plot)
        click.echo(f"chart written to {plot}", err=True)
    if as_json:
        emit_json(report.model_dump(mode="json"))
        return
    from ..render import console
    from ..trace.view import render_report

    render_report(console(), report, top)


def _traced_card(
    trace: Trace, hw_name: str | None, hw_file: str | None, calibration: str | None, hw: Hardware
) -> Hardware:
    """The card the trace ran on, which an implementation file records: the registry's part of the
    trace's device name; a --hw, --hw-file or --calibration that names another card is refused, and
    with no known device name, one of them must say which card it was."""
    from ..errors import InputError

    found = _trace_device(trace)
    seen = found[1] if found is not None else None
    named = hw_name is not None or hw_file is not None or calibration is not None
    if seen is None:
        if not named:
            raise InputError(
                f"{trace.label}: the trace names no device in the registry; give --hw for the card it ran on"
            )
        return hw
    base = hw.calibration.base if hw.calibration is not None else hw.id
    if named and seen.id not in (hw.id, base):
        raise InputError(
            f"--save-impl: the trace ran on {seen.id}, not {hw.id}; an implementation is kept for its own card"
        )
    return hw if named else seen


def _impl_phase(
    save_impl: str | None, batch: int | None, context: int | None, seq: int | None, step_time: float | None
) -> str | None:
    """decode or prefill for --save-impl, from which size is given; usage errors for the rest."""
    if not save_impl:
        if any(x is not None for x in (batch, context, seq, step_time)):
            raise click.UsageError("--batch, --context, --seq and --step-time go with --save-impl")
        return None
    if batch is None or (context is None) == (seq is None):
        raise click.UsageError("--save-impl needs --batch and either --context (decode) or --seq (prefill)")
    for name, v in (("--batch", batch), ("--context", context), ("--seq", seq)):
        if v is not None and not 1 <= v <= 2**31:
            raise click.BadParameter(f"must be 1 to 2^31 (got {v})", param_hint=f"'{name}'")
    return "decode" if context is not None else "prefill"


__all__ = ["resolve_trace_hardware", "trace_cmd"]

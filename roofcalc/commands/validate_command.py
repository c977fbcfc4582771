"""`roofcalc validate`: saved GPU timings against the current model, without a GPU."""

from __future__ import annotations

import click

from .common import CheckedCommand, FileArg, emit_json, shared


@click.command("validate", cls=CheckedCommand)
@click.argument("measurements", type=FileArg())
@shared("hw", "calibration", "json")
@click.option("--all", "show_all", is_flag=True, help="list every case, not only the worst five")
@click.option(
    "--host-rate",
    "host_rates",
    multiple=True,
    type=FileArg(),
    help="a record of validation/bench/host_rate.py from the same call: the host's op floor is taken "
    "from it (repeat: their mean), and compiled code's figures move with it (fixed multiples of it, "
    "or a hardware file's own scaled to it)",
)
@click.option(
    "--host-per-case",
    "host_per_case",
    is_flag=True,
    help="each step without CUDA graphs against its host's speed measured around its own timing "
    "(llm_bench.py's host_op_s): the op floor is that, and compiled-call figures scale with it",
)
def validate_cmd(
    measurements: str,
    hw_name: str | None,
    calibration: str | None,
    as_json: bool,
    show_all: bool,
    host_rates: tuple[str, ...],
    host_per_case: bool,
) -> None:
    """Recompute measured / expected for saved timings (validation/bench output).

    Reads a file written by validation/bench/ops_bench.py or llm_bench.py on a GPU and
    evaluates every case with the current expected-time model: the median of measured /
    expected, the share within the target band, the cases outside [0.5, 2], the five
    worst with the model's largest term, and measured / bound (never below 1 when the
    bound is a bound). The hardware is the file's device unless --hw or --calibration.

    \b
    Examples:
      roofcalc validate validation/expected/h100/ops.json
      roofcalc validate validation/expected/h100/ops.json --calibration validation/probe/h100/calibration.yaml
      roofcalc validate validation/expected/h200x2/llm_tp2.json --hw h200 --json
      roofcalc validate validation/expected/h100/host/run3/llm-nograph.json --host-rate validation/expected/h100/host/run3/host-rate.json
      roofcalc validate validation/expected/h100/host/run7/llm-prefill.json --host-per-case
    """
    from ..errors import InputError
    from ..resolve import resolve_hardware
    from ..specfile import parse_json, read_text
    from ..validation import llm_report, ops_report, with_host_rates

    data = parse_json(read_text(measurements, what="measurement file"), measurements)
    if not isinstance(data, dict) or data.get("kind") not in ("ops", "llm"):
        raise InputError(f"{measurements}: not a measurement file of validation/bench (no 'kind': ops or llm)")
    if hw_name is None and calibration is None:
        hw_name = _device_hardware(data, measurements)
    hw = resolve_hardware(hw_name, None, calibration)
    host = None
    if host_rates:
        records = [(p, parse_json(read_text(p, what="host-rate record"), p)) for p in host_rates]
        dev = data.get("device")
        hw, host = with_host_rates(hw, records, dev.get("name") if isinstance(dev, dict) else None)
    if host_per_case and data["kind"] != "llm":
        raise InputError("--host-per-case needs a file of validation/bench/llm_bench.py (kind: llm)")
    if data["kind"] == "ops":
        report = ops_report(data, hw, measurements)
    else:
        report = llm_report(data, hw, measurements, case_host=host_per_case)
    if host_per_case:
        host = (host + "; " if host else "") + "each case's op floor from its own hot loop (host_op_s)"
    if host is not None:
        report = report.model_copy(update={"host_rate": host})
    if as_json:
        emit_json(report.model_dump(mode="json"))
        return
    from ..render import console, validation_report

    validation_report(console(), report, show_all)


def _device_hardware(data: dict[str, object], source: str) -> str:
    """The registry part of the file's device (its name as nvidia-smi reports it)."""
    from ..errors import InputError
    from ..hardware import all_hardware

    dev = data.get("device")
    name = str(dev.get("name", "")) if isinstance(dev, dict) else ""
    for hw in all_hardware():
        if name and (name.lower() == hw.name.lower() or name.lower() in (a.lower() for a in hw.aliases)):
            return hw.id
    key = name.lower()
    for hw in all_hardware():
        if hw.id in key.replace(" ", "").replace("nvidia", "") and hw.id != "h100-pcie":
            return hw.id
    raise InputError(f"{source}: device {name!r} matches no registry part; give --hw or --calibration")


__all__ = ["validate_cmd"]

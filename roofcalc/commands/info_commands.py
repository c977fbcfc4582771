"""`roofcalc hw list|show`, `roofcalc model list` and `roofcalc impl list|show`: what the registry holds."""

from __future__ import annotations

import click

from ..output import SCHEMA_VERSION
from .common import CheckedCommand, emit_json, shared


@click.group("hw")
def hw_group() -> None:
    """The hardware registry: list it, or show one device with every figure's source.

    \b
    Examples:
      roofcalc hw list
      roofcalc hw show h100
    """


@hw_group.command("list", cls=CheckedCommand)
@shared("json")
def hw_list_cmd(as_json: bool) -> None:
    """List the built-in hardware.

    \b
    Example:
      roofcalc hw list
    """
    from ..hardware import all_hardware

    hws = all_hardware()
    if as_json:
        emit_json([h.model_dump(mode="json") | {"version": SCHEMA_VERSION} for h in hws])
        return
    from ..render import console, hw_list

    hw_list(console(), hws)


@hw_group.command("show", cls=CheckedCommand)
@click.argument("name", required=False)
@shared("hw_file", "calibration", "json")
def hw_show_cmd(name: str | None, hw_file: str | None, calibration: str | None, as_json: bool) -> None:
    """Show every figure of one device, with its source and kind.

    \b
    Examples:
      roofcalc hw show h100
      roofcalc hw show --hw-file my-gpu.yaml
    """
    from ..resolve import resolve_hardware

    hw = resolve_hardware(name, hw_file, calibration)
    if as_json:
        emit_json(hw.model_dump(mode="json") | {"version": SCHEMA_VERSION})
        return
    from ..render import console, hw_show

    hw_show(console(), hw)


@click.group("model")
def model_group() -> None:
    """Model presets for the decode and prefill ops.

    \b
    Example:
      roofcalc model list
    """


@model_group.command("list", cls=CheckedCommand)
@shared("json")
def model_list_cmd(as_json: bool) -> None:
    """List the model presets with their dimensions and sources.

    \b
    Example:
      roofcalc model list
    """
    from ..presets import load_presets

    pf = load_presets()
    if as_json:
        emit_json([{"version": SCHEMA_VERSION, "model": k, **p.model_dump(mode="json")} for k, p in pf.presets.items()])
        return
    from ..render import console, model_list

    model_list(console(), pf)


@click.group("impl")
def impl_group() -> None:
    """Named implementations of the decode and prefill steps (impls/*.yaml): whose kernels the
    expected time counts with --impl NAME.

    \b
    Example:
      roofcalc impl list
      roofcalc impl show hf
    """


@impl_group.command("list", cls=CheckedCommand)
@shared("json")
def impl_list_cmd(as_json: bool) -> None:
    """List the named implementations: what each is, its steps and what its kernels were read from.

    \b
    Example:
      roofcalc impl list
    """
    from ..impl.named import impl_names, load_named

    impls = [load_named(n) for n in impl_names()]
    if as_json:
        emit_json(
            [
                {
                    "version": SCHEMA_VERSION,
                    **i.model_dump(mode="json", include={"name", "summary", "read_from", "versions"}),
                    "phases": list(i.phases),
                }
                for i in impls
            ]
        )
        return
    from ..render import console, impl_list

    impl_list(console(), impls)


@impl_group.command("show", cls=CheckedCommand)
@click.argument("name")
@shared("json")
def impl_show_cmd(name: str, as_json: bool) -> None:
    """One implementation: what it changes in the op files' kernels, per step, and its figures with their kinds.

    \b
    Example:
      roofcalc impl show hf
    """
    from ..impl.named import all_figures, load_named

    impl = load_named(name)
    if as_json:
        doc = impl.model_dump(mode="json", exclude_defaults=True)
        doc["figures"] = {k: f.model_dump(mode="json", exclude_none=True) for k, f in all_figures(impl).items()}
        emit_json({"version": SCHEMA_VERSION, **doc})
        return
    from ..render import console, impl_show

    impl_show(console(), impl, all_figures(impl))

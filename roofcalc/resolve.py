"""The edge: turn what the user typed into objects, once.

Every command (and the public ``roofcalc.analyze``) calls these and hands the engines
objects: an :class:`OpDef`, a :class:`Hardware`, a dict of preset parameter values.
Nothing past this point looks a name up again or reads a file.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .errors import InputError
from .hardware import Hardware
from .opdefs import OpDef


class ConflictError(InputError):
    """Two options that cannot be given together (a usage error, exit 2)."""


def resolve_op(op: OpDef | str | Path) -> OpDef:
    """A built-in op name (``gemm``) or the path of an op file of the user's own."""
    if isinstance(op, OpDef):
        return op
    from .opdefs import load_op, load_op_file
    from .registry import is_path

    text = str(op)
    if isinstance(op, Path) or is_path(text):
        return load_op_file(text)
    return load_op(text)


def resolve_hardware(
    name: Hardware | str | Path | None = None, file: str | Path | None = None, calibration: str | Path | None = None
) -> Hardware:
    """One device from a registry name, a hardware file, or a calibration file.

    A calibration file stands for the device it calibrates; with a name as well the two
    must agree. A hardware file and a calibration file, or a name and a hardware file,
    are conflicting requests and refused.
    """
    if isinstance(name, Hardware):
        if file or calibration:
            raise ConflictError("give a Hardware object or files, not both")
        return name
    from .defaults import default_hardware_name
    from .hardware import load_calibration, load_hardware, load_hardware_file

    if file is not None and calibration is not None:
        raise ConflictError(
            "--hw-file and --calibration both name the hardware; give one "
            "(a calibration file already holds its base device)"
        )
    if file is not None:
        if name is not None:
            raise ConflictError(f"--hw {name} and --hw-file {file} both name the hardware; give one")
        return load_hardware_file(file)
    if calibration is not None:
        base = (
            default_hardware_name(str(name))
            if name is not None
            else (default_hardware_name() if os.environ.get("ROOFCALC_HW") is not None else None)
        )
        return load_calibration(calibration, base)
    return load_hardware(default_hardware_name(None if name is None else str(name)))


def resolve_hardware_list(values: tuple[str, ...] | list[str]) -> list[Hardware]:
    """``--hw a,b --hw c``: each name once, in order; the default device when none is given."""
    from .defaults import default_hardware_name
    from .hardware import load_hardware

    names = [n.strip() for v in values for n in v.split(",") if n.strip()]
    if values and not names:
        raise InputError("--hw: no hardware name given (empty or only commas); see 'roofcalc hw list'")
    names = names or [default_hardware_name()]
    out: list[Hardware] = []
    for n in names:
        hw = load_hardware(n)
        if hw.id not in [h.id for h in out]:
            out.append(hw)
    return out


def resolve_preset(op: OpDef, model: str | None, model_config: str | Path | None) -> dict[str, Any] | None:
    """The parameter values of a model preset or a Hugging Face config.json, read once."""
    if op.presets is None:
        if model is not None or model_config is not None:
            raise InputError(f"op {op.name} takes no model preset")
        return None
    option = op.presets.option
    if model is not None and model_config is not None:
        raise ConflictError(f"give --{option} or --{option}-config, not both")
    if model is not None:
        from .presets import get_preset

        return dict(get_preset(str(model)).params)
    if model_config is not None:
        from .presets import params_from_hf_config

        return dict(params_from_hf_config(str(model_config)))
    return None


def parse_op_spec(spec: str) -> tuple[OpDef, dict[str, str]]:
    """``gemm:m=8192,n=4096`` or ``./axpy.yaml:n=64`` -> (the op, its parameters as text)."""
    text = spec.strip()
    cut = -1
    for suffix in (".yaml:", ".yml:"):
        i = text.find(suffix)
        if i >= 0:
            cut = i + len(suffix) - 1
            break
    if cut < 0:
        cut = text.find(":")
    name, rest = (text, "") if cut < 0 else (text[:cut], text[cut + 1 :])
    name = name.strip()
    if not name:
        raise InputError(f"--op {spec!r}: expected NAME or NAME:param=value,...")
    params: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in rest.split(","))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip() or not value.strip():
            raise InputError(f"--op {spec!r}: {part!r} is not param=value")
        params[key.strip().replace("-", "_")] = value.strip()
    from .registry import is_path

    return resolve_op(name if is_path(name) else name.lower()), params


__all__ = [
    "ConflictError",
    "parse_op_spec",
    "resolve_hardware",
    "resolve_hardware_list",
    "resolve_op",
    "resolve_preset",
]

"""Model presets for the transformer ops (decode, prefill): ``ops/models.yaml``."""

from __future__ import annotations

import functools
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from .errors import InputError, suggest
from .specfile import parse_yaml, validate

PRESET_FILES = ("models.yaml",)


class Preset(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str
    note: str | None = None
    params: dict[str, int | float | bool | str] = Field(min_length=1)


class PresetFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    description: str
    presets: dict[str, Preset] = Field(min_length=1)


@functools.lru_cache(maxsize=None)
def load_presets(file: str) -> PresetFile:
    from importlib.resources import files

    res = files("roofcalc.opdata").joinpath(file)
    label = f"ops/{file}"
    data: Any = parse_yaml(res.read_text(encoding="utf-8"), label)
    return validate(PresetFile, data, label)


def get_preset(file: str, name: str) -> Preset:
    pf = load_presets(file)
    key = name.strip().lower()
    if key not in pf.presets:
        names = list(pf.presets)
        raise InputError(f"unknown model {name!r}{suggest(name, names)}; known: {', '.join(names)}")
    return pf.presets[key]

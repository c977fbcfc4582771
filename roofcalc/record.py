"""Frozen result records: what the engines return.

Inputs (hardware, op and kernel files) are validated with pydantic models; results are built by
roofcalc's own code from those validated inputs and need no validation. Defining a pydantic
model class means generating its validation schema at import (a few milliseconds each, most of
the CLI's start-up over its libraries), so results are frozen dataclasses with the two methods
their callers use: ``model_dump(mode="json")`` and ``model_copy(update=...)``.

    @dataclass(frozen=True, kw_only=True)
    class Term(Record):
        name: str
        seconds: float
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any, Literal, TypeVar

R = TypeVar("R", bound="Record")


def _dump(value: Any, json: bool) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _dump(getattr(value, f.name), json) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [_dump(v, json) for v in value]
    if isinstance(value, dict):
        return {k: _dump(v, json) for k, v in value.items()}
    if json and isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no inf or nan (pydantic's json mode writes null too)
    if hasattr(value, "model_dump"):  # a pydantic model inside a record
        return value.model_dump(mode="json" if json else "python")
    return value


class Record:
    """Base of the result dataclasses (each subclass is a frozen, keyword-only dataclass)."""

    def model_dump(self, mode: Literal["python", "json"] = "python") -> dict[str, Any]:
        """The record as plain dicts and lists, nested records included."""
        out: dict[str, Any] = _dump(self, mode == "json")
        return out

    def model_copy(self: R, update: dict[str, Any] | None = None) -> R:
        """A copy with the fields in ``update`` replaced.

        What dataclasses.replace gives for these records (plain frozen dataclasses: every field
        in __init__, no __post_init__, no slots), without re-running __init__ field by field:
        the engines copy thousands of kernel estimates per report."""
        fields = self.__dataclass_fields__  # type: ignore[attr-defined]
        for name in update or ():
            if name not in fields:
                raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument {name!r}")
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        if update:
            new.__dict__.update(update)
        return new

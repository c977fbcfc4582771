"""Reading YAML spec files and turning validation errors into linter-style lines."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TypeVar

from .errors import SpecError

M = TypeVar("M")

MAX_SPEC_BYTES = 1_000_000  # a spec file is a page of YAML; anything this big is a mistake


def read_text(path: Path) -> str:
    try:
        size = path.stat().st_size
    except OSError as e:
        raise SpecError(f"{path}: cannot read: {e.strerror or e}") from None
    if size > MAX_SPEC_BYTES:
        raise SpecError(f"{path}: file is {size} bytes, over the {MAX_SPEC_BYTES}-byte limit for a spec file")
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise SpecError(f"{path}: not UTF-8 text") from None
    except OSError as e:
        raise SpecError(f"{path}: cannot read: {e.strerror or e}") from None


def parse_yaml(text: str, label: str) -> Any:
    """``yaml.safe_load`` with the C loader where available; errors carry the file name."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        data = yaml.load(text, Loader=loader)  # noqa: S506 - a safe loader
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise SpecError(f"{label}{where}: invalid YAML: {problem}") from None
    if not isinstance(data, dict):
        raise SpecError(f"{label}: expected a mapping at the top level, got {type(data).__name__}")
    return data


def validation_message(label: str, err: Any) -> str:
    """One line from a pydantic ValidationError: 'file: field.path: message (+N more)'."""
    errors = err.errors(include_url=False)
    first = errors[0]
    loc = ".".join(str(p) for p in first["loc"]) or "(top level)"
    msg = first["msg"]
    if first["type"] == "extra_forbidden":
        msg = "unknown key"
    elif first["type"] == "missing":
        msg = "required field is missing"
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{label}: {loc}: {msg}{more}"


def validate(model: type[M], data: Any, label: str, **context: Any) -> M:
    from pydantic import ValidationError

    try:
        return model.model_validate(data, context=context or None)  # type: ignore[attr-defined,no-any-return]
    except ValidationError as e:
        raise SpecError(validation_message(label, e)) from None

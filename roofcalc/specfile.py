"""Reading YAML spec files and turning validation errors into linter-style lines."""

from __future__ import annotations

import functools
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


@functools.lru_cache(maxsize=1)
def _strict_loader() -> Any:
    """A safe loader that refuses duplicate keys and aliases (so no alias bombs)."""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class StrictLoader(base):  # type: ignore[misc,valid-type]
        def construct_object(self, node: Any, deep: bool = False) -> Any:
            # an alias is the same node reached twice; the C parser resolves aliases before
            # Python sees them, so they are caught here, at construction
            if node in self.constructed_objects or node in self.recursive_objects:
                raise yaml.MarkedYAMLError(problem="anchors and aliases (&name, *name) are not allowed in spec files",
                                           problem_mark=node.start_mark)
            return super().construct_object(node, deep)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            keys: set[tuple[str, str]] = set()
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    key = (key_node.tag, key_node.value)
                    if key in keys:
                        raise yaml.MarkedYAMLError(problem=f"duplicate key {key_node.value!r}",
                                                   problem_mark=key_node.start_mark)
                    keys.add(key)
            return super().construct_mapping(node, deep)

    return StrictLoader


def parse_yaml(text: str, label: str) -> Any:
    """``yaml.safe_load`` that also refuses duplicate keys and aliases; errors carry the file name."""
    import yaml

    loader = _strict_loader()
    try:
        data = yaml.load(text, Loader=loader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise SpecError(f"{label}{where}: invalid YAML: {problem}") from None
    if not isinstance(data, dict):
        raise SpecError(f"{label}: expected a mapping at the top level, got {type(data).__name__}")
    return data


_TYPE_TAGS = {"float", "int", "str", "bool", "list[int]", "dict[str,PositiveFigure]"}


def validation_message(label: str, err: Any) -> str:
    """One line from a pydantic ValidationError: 'file: field.path: message (+N more)'."""
    errors = []
    seen: set[str] = set()
    for e in err.errors(include_url=False):
        # union branches add a type tag to the path ('value.float'); drop it and keep one error
        loc = ".".join(str(p) for p in e["loc"] if str(p) not in _TYPE_TAGS and not str(p).startswith("function-"))
        msg = str(e["msg"]).removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            msg = "unknown key"
        elif e["type"] == "missing":
            msg = "required field is missing"
        if not loc and ": " in msg:  # a model-level check names its own field
            loc, msg = msg.split(": ", 1)
        if loc not in seen:
            seen.add(loc)
            errors.append((e["type"], loc, msg))
    # an unknown key is usually a typo of a missing one: report it first, with the suggestion
    errors.sort(key=lambda x: x[0] != "extra_forbidden")
    kind, loc, msg = errors[0]
    if kind == "extra_forbidden":
        parent, _, key = loc.rpartition(".")
        missing = [m_loc.rpartition(".")[2] for k, m_loc, _ in errors if k == "missing" and m_loc.rpartition(".")[0] == parent]
        from .errors import suggest

        msg += suggest(key, missing) if missing else ""
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{label}: {loc or '(top level)'}: {msg}{more}"


def validate(model: type[M], data: Any, label: str, **context: Any) -> M:
    from pydantic import ValidationError

    try:
        return model.model_validate(data, context=context or None)  # type: ignore[attr-defined,no-any-return]
    except ValidationError as e:
        raise SpecError(validation_message(label, e)) from None

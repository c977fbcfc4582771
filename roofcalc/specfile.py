"""Reading YAML and JSON spec files and turning validation errors into linter-style lines.

Everything here is bounded before the parsers run, because the parsers are not:
libyaml's composer recurses in C (50,000 nested ``[`` is a segfault, not an exception),
Python's ``int()`` stops at 4,300 digits with a ValueError, and ``1e309`` quietly becomes
infinity. So a spec file is read only if it is a regular file of at most ``MAX_SPEC_BYTES``,
its nesting is counted on libyaml's event stream (which does not recurse) and refused past
``MAX_DEPTH`` levels before anything is composed, and numbers come out of the constructors
checked: integers of at most ``MAX_NUMBER_DIGITS`` digits, floats finite and normal. Each
refusal is one line naming the file and, where there is one, the key path.
"""

from __future__ import annotations

import functools
import math
import os
import re
import stat
import sys
from pathlib import Path
from typing import IO, Any, TypeVar

from .errors import SpecError
from .units import clip

M = TypeVar("M")

# a spec file is a few pages of YAML; the largest part of one is a card's measured GEMM choice map
# (expected.gemm_choice_map: 163,801 shapes, about 7.1 MB, as one block of text); anything past this
# is a mistake
MAX_SPEC_BYTES = 8_000_000
MAX_DEPTH = 64  # levels of nesting (mappings and lists); real spec files use 4
MAX_NUMBER_DIGITS = 100  # digits of one integer in a spec file; more is a mistake
_MAX_LOC_PART = 40  # characters of one key in a field path of a message
_MAX_MESSAGE = 300  # characters of a validation message after the file name


def _kind_of(mode: int) -> str:
    for test, name in (
        (stat.S_ISDIR, "directory"),
        (stat.S_ISFIFO, "FIFO"),
        (stat.S_ISCHR, "character device"),
        (stat.S_ISBLK, "block device"),
        (stat.S_ISSOCK, "socket"),
    ):
        if test(mode):
            return name
    return "special file"


def open_regular(
    full: str, label: str, error: type[Exception], missing: str = "file"
) -> tuple[IO[bytes], os.stat_result]:
    """A regular file opened for reading (binary), with its stat; ``error`` (one line naming
    ``label``) for a missing or unreadable path, a bad name, or a FIFO, device or folder. Opened
    non-blocking, so a FIFO with no writer cannot hang the process; checked on the descriptor, so
    nothing swapped in after a stat is read."""
    try:
        fd = os.open(full, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise error(f"{label}: no such {missing}") from None
    except OSError as e:
        raise error(f"{label}: cannot read: {e.strerror or e}") from None
    except ValueError:  # an embedded NUL byte
        raise error(f"{clip(label)!r}: not a valid file name") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise error(f"{label}: not a regular file (a {_kind_of(st.st_mode)})")
        return os.fdopen(fd, "rb", closefd=True), st
    except BaseException:
        os.close(fd)
        raise


def read_text(path: Path | str, what: str = "file", limit: int = 0) -> str:
    """The UTF-8 text of a regular file of at most ``limit`` bytes (MAX_SPEC_BYTES unless given);
    SpecError otherwise.

    FIFOs, devices (/dev/zero) and directories are refused without reading (the file is
    opened non-blocking, so a FIFO with no writer cannot hang the process).
    """
    limit = limit or MAX_SPEC_BYTES
    full = str(path)
    # messages name the file; a very long path is shortened (its start and its end)
    label = full if len(full) <= 120 else full[:50] + "..." + full[-50:]
    f, st = open_regular(full, label, SpecError, what)
    with f:
        if st.st_size > limit:
            raise SpecError(f"{label}: file is {st.st_size} bytes, over the {limit}-byte limit for a spec file")
        try:
            data = f.read(limit + 1)
        except OSError as e:
            raise SpecError(f"{label}: cannot read: {e.strerror or e}") from None
    if len(data) > limit:  # grew while being read
        raise SpecError(f"{label}: file is over the {limit}-byte limit for a spec file")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise SpecError(f"{label}: not UTF-8 text") from None


# ------------------------------------------------------------------ checked numbers


class BadNumber:
    """What a constructor returns for a number it refuses; reported with its key path after loading."""

    __slots__ = ("problem",)

    def __init__(self, problem: str) -> None:
        self.problem = problem

    def __repr__(self) -> str:
        return f"BadNumber({self.problem!r})"


def _float_or_bad(text: str, value: float) -> float | BadNumber:
    if math.isnan(value):
        return BadNumber(f"{clip(text)} is not a number; give a finite value")
    if math.isinf(value):
        if text.lower().lstrip("+-") in (".inf", "inf", "infinity"):
            return BadNumber(f"{clip(text)} is infinite; give a finite value")
        return BadNumber(f"number {clip(text)} is out of range (over 1.8e308)")
    if value != 0 and abs(value) < sys.float_info.min:
        return BadNumber(f"number {clip(text)} is too small (below 2.2e-308, a subnormal float)")
    if value == 0 and re.search(r"[1-9]", text.lower().split("e")[0]):
        return BadNumber(f"number {clip(text)} is too small (it rounds to 0)")
    return value


# YAML 1.2 reads 1e3 and 3.35e12 as numbers; PyYAML (YAML 1.1) reads them as strings unless
# they have a dot and a signed exponent. Hardware files write 3.35e12, and a quoted
# "3.35e12" must stay a string (and be refused where a number belongs), so the 1.2 forms
# are resolved as floats here.
_FLOAT_12 = re.compile(r"^[-+]?(?:[0-9][0-9_]*(?:\.[0-9_]*)?|\.[0-9_]+)[eE][-+]?[0-9]+$")


@functools.lru_cache(maxsize=1)
def _strict_loader() -> Any:
    """A safe loader that refuses duplicate keys and bad numbers. (Anchors and aliases, so alias
    bombs, are refused on the event stream by _check_events, before anything is composed.)"""
    import yaml

    base = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

    class StrictLoader(base):  # type: ignore[misc,valid-type]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            keys: set[tuple[str, str]] = set()
            for key_node, _ in node.value:
                if isinstance(key_node, yaml.ScalarNode):
                    key = (key_node.tag, key_node.value)
                    if key in keys:
                        raise yaml.MarkedYAMLError(
                            problem=f"duplicate key {clip(key_node.value, 40)!r}", problem_mark=key_node.start_mark
                        )
                    keys.add(key)
            return super().construct_mapping(node, deep)

        def checked_int(self, node: Any) -> Any:
            text = str(self.construct_scalar(node))
            digits = text.lstrip("+-").replace("_", "")
            if len(digits) > MAX_NUMBER_DIGITS:
                return BadNumber(f"integer {clip(text)} has {len(digits)} digits; at most {MAX_NUMBER_DIGITS}")
            return super().construct_yaml_int(node)

        def checked_float(self, node: Any) -> Any:
            text = str(self.construct_scalar(node))
            return _float_or_bad(text, super().construct_yaml_float(node))

    StrictLoader.add_constructor("tag:yaml.org,2002:int", StrictLoader.checked_int)
    StrictLoader.add_constructor("tag:yaml.org,2002:float", StrictLoader.checked_float)
    StrictLoader.add_implicit_resolver("tag:yaml.org,2002:float", _FLOAT_12, list("-+0123456789."))
    return StrictLoader


def _check_events(text: str, loader: Any, label: str) -> None:
    """Walk the event stream (libyaml's parser keeps explicit stacks; its composer recurses) and
    refuse, before anything is composed: the first collection past MAX_DEPTH levels, and the first
    anchor or alias (an alias bomb is a few lines of anchors that expand exponentially)."""
    import yaml

    parser = loader(text)
    depth = 0
    opening = (yaml.MappingStartEvent, yaml.SequenceStartEvent)
    closing = (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    try:
        while parser.check_event():
            ev = parser.get_event()
            if isinstance(ev, opening):
                depth += 1
                if depth > MAX_DEPTH:
                    mark = ev.start_mark
                    where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
                    raise SpecError(f"{label}{where}: invalid YAML: nested deeper than {MAX_DEPTH} levels")
            elif isinstance(ev, closing):
                depth -= 1
            if getattr(ev, "anchor", None) is not None:
                raise yaml.MarkedYAMLError(
                    problem="anchors and aliases (&name, *name) are not allowed in spec files",
                    problem_mark=ev.start_mark,
                )
    finally:
        parser.dispose()


def _key(k: Any) -> str:
    return clip(k, _MAX_LOC_PART)


def _find_bad(data: Any, label: str) -> None:
    """Raise for the first BadNumber in ``data`` (keys included), naming its key path."""
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, obj = stack.pop()
        if isinstance(obj, BadNumber):
            raise SpecError(f"{label}: {path or '(top level)'}: {obj.problem}")
        if isinstance(obj, dict):
            items = list(obj.items())
            for k, v in reversed(items):
                sub = f"{path}.{_key(k)}" if path else _key(k)
                if isinstance(k, BadNumber):
                    raise SpecError(f"{label}: {path or '(top level)'}: key: {k.problem}")
                stack.append((sub, v))
        elif isinstance(obj, list):
            for i in reversed(range(len(obj))):
                stack.append((f"{path}.{i}" if path else str(i), obj[i]))


def parse_yaml(text: str, label: str, trusted: bool = False) -> Any:
    """``yaml.safe_load`` that also refuses duplicate keys, aliases, nesting past MAX_DEPTH and
    numbers that are too long, infinite, NaN or subnormal; errors carry the file name.
    ``trusted``: a file shipped with roofcalc (its nesting was checked by the tests), so the
    event-stream pass that guards the recursive parser against hostile files is skipped."""
    import yaml

    loader = _strict_loader()
    try:
        if not trusted:
            _check_events(text, loader, label)
        data = yaml.load(text, Loader=loader)
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f":{mark.line + 1}:{mark.column + 1}" if mark is not None else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        if "nesting" in problem:
            # libyaml >= 0.2.6 (PyYAML 6.0.4 wheels) has a nesting limit of its own (1,000 levels) that
            # its scanner can reach before the event pass above sees level 65: the same refusal
            problem = f"nested deeper than {MAX_DEPTH} levels"
        raise SpecError(f"{label}{where}: invalid YAML: {clip(problem, 200)}") from None
    except RecursionError:  # not reached with MAX_DEPTH; kept so that it can never escape
        raise SpecError(f"{label}: invalid YAML: nested too deeply") from None
    _find_bad(data, label)
    if not isinstance(data, dict):
        raise SpecError(f"{label}: expected a mapping at the top level, got {type(data).__name__}")
    return data


# ------------------------------------------------------------------ JSON

_JSON_TOKENS = re.compile(r'\\.|["\[\]{}]', re.S)


def _check_json_depth(text: str, label: str) -> None:
    """Refuse JSON nested deeper than MAX_DEPTH before json.loads sees it (brackets in strings
    do not count). Stops at the first level too deep, so a hostile file costs nothing."""
    depth = 0
    in_string = False
    for m in _JSON_TOKENS.finditer(text):
        tok = m.group()
        if in_string:
            if tok == '"':
                in_string = False
        elif tok == '"':
            in_string = True
        elif tok in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                line = text.count("\n", 0, m.start()) + 1
                col = m.start() - (text.rfind("\n", 0, m.start()) + 1) + 1
                raise SpecError(f"{label}:{line}:{col}: invalid JSON: nested deeper than {MAX_DEPTH} levels")
        elif tok in "]}":
            depth -= 1


def parse_json(text: str, label: str) -> Any:
    """``json.loads`` with the same bounds as parse_yaml: nesting, digits, finite numbers.

    Malformed JSON reads '{label}: not JSON ({message} at line {n})'.
    """
    import json

    _check_json_depth(text, label)

    def constant(name: str) -> BadNumber:
        return BadNumber(f"{name} is not a finite number")

    def floating(s: str) -> float | BadNumber:
        return _float_or_bad(s, float(s))

    def integer(s: str) -> int | BadNumber:
        digits = s.lstrip("-")
        if len(digits) > MAX_NUMBER_DIGITS:
            return BadNumber(f"integer {clip(s)} has {len(digits)} digits; at most {MAX_NUMBER_DIGITS}")
        return int(s)

    try:
        data = json.loads(text, parse_int=integer, parse_float=floating, parse_constant=constant)
    except json.JSONDecodeError as e:
        raise SpecError(f"{label}: not JSON ({e.msg} at line {e.lineno})") from None
    except RecursionError:  # not reached after the depth check; kept so that it can never escape
        raise SpecError(f"{label}: invalid JSON: nested too deeply") from None
    except ValueError as e:
        raise SpecError(f"{label}: not JSON ({clip(e, 80)})") from None
    _find_bad(data, label)
    return data


# ------------------------------------------------------------------ validation messages

_TYPE_TAGS = {"float", "int", "str", "bool", "list[int]", "dict[str,PositiveFigure]"}
_FIELD_PREFIX = re.compile(r"([a-z_][a-z0-9_]*): ")


def validation_message(label: str, err: Any) -> str:
    """One line from a pydantic ValidationError: 'file: field.path: message (+N more)'."""
    errors = []
    seen: set[str] = set()
    for e in err.errors(include_url=False):
        # union branches add a type tag to the path ('value.float'); drop it and keep one error
        loc = ".".join(_key(p) for p in e["loc"] if str(p) not in _TYPE_TAGS and not str(p).startswith("function-"))
        msg = str(e["msg"]).removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            msg = "unknown key"
        elif e["type"] == "missing":
            msg = "required field is missing"
        if not loc and ": " in msg:  # a model-level check names its own field
            loc, msg = msg.split(": ", 1)
        elif e["type"] == "value_error" and (field := _FIELD_PREFIX.match(msg)):  # ... or a nested model's field
            loc, msg = f"{loc}.{field.group(1)}", msg[field.end() :]
        if loc not in seen:
            seen.add(loc)
            errors.append((e["type"], loc, msg))
    # an unknown key is usually a typo of a missing one: report it first, with the suggestion
    errors.sort(key=lambda x: x[0] != "extra_forbidden")
    kind, loc, msg = errors[0]
    if kind == "extra_forbidden":
        parent, _, key = loc.rpartition(".")
        missing = [
            m_loc.rpartition(".")[2] for k, m_loc, _ in errors if k == "missing" and m_loc.rpartition(".")[0] == parent
        ]
        from .errors import suggest

        msg += suggest(key, missing) if missing else ""
    more = f" (+{len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"{label}: {clip(loc or '(top level)', _MAX_MESSAGE)}: {clip(msg, _MAX_MESSAGE)}{more}"


def validate(model: type[M], data: Any, label: str, **context: Any) -> M:
    from pydantic import ValidationError

    try:
        return model.model_validate(data, context=context or None)  # type: ignore[attr-defined,no-any-return]
    except ValidationError as e:
        raise SpecError(validation_message(label, e)) from None

"""Exceptions raised by the library.

The CLI maps :class:`InputError` (the user asked for something that does not
exist or is malformed) to exit code 2 and :class:`DomainError` (a valid request
that cannot be answered, e.g. a dtype the hardware lacks) to exit code 1.
"""

from __future__ import annotations


class RoofcalcError(Exception):
    """Base class of every error roofcalc raises on purpose."""

    exit_code = 1


class InputError(RoofcalcError):
    """Bad input: unknown names, malformed values or files. Exit code 2."""

    exit_code = 2


class ParamError(InputError):
    """A bad value of one op parameter. The message is a template in which ``{name}``
    stands for a parameter: the library prints the parameter's name (``kv_heads``), the
    CLI its option (``--kv-heads``), so the Python API never speaks in CLI flags."""

    def __init__(self, template: str, **fields: object) -> None:
        self.template = template
        self.fields = fields
        super().__init__(self.render(lambda name: name))

    def render(self, name_of: object) -> str:
        import string

        out = []
        for literal, field, _spec, _conv in string.Formatter().parse(self.template):
            out.append(literal)
            if field is not None:
                out.append(str(self.fields[field]) if field in self.fields else name_of(field))  # type: ignore[operator]
        return "".join(out)

    def as_flags(self) -> str:
        return self.render(lambda name: "--" + str(name).replace("_", "-"))


class CheckError(ParamError):
    """Parameters that are each valid but that one of the op's own checks refuses together
    (a context beyond the model's maximum, heads that do not split over the GPUs)."""


class SpecError(InputError):
    """A hardware, op or preset file is malformed."""


class DomainError(RoofcalcError):
    """Well-formed input that cannot be answered. Exit code 1."""

    exit_code = 1


def suggest(name: str, choices: list[str]) -> str:
    """Return ' (did you mean X?)' for the closest of ``choices``, or ''."""
    import difflib

    close = difflib.get_close_matches(name.lower(), [c.lower() for c in choices], n=3, cutoff=0.5)
    if not close:
        return ""
    return " (did you mean " + " or ".join(repr(c) for c in close) + "?)"

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

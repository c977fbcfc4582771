"""Parsing and formatting of sizes, rates and times: the one module that owns units.

Memory sizes use binary multipliers: ``k``, ``K``, ``KB`` and ``KiB`` all mean
1024 bytes (as CUDA's documentation does for shared memory); ``M``/``MB``/``MiB``
mean 2**20 and ``G``/``GB``/``GiB`` 2**30. Hex (``0x18000``) and plain integers
are accepted. Rates and counts in output use decimal SI prefixes (TFLOP/s, TB/s),
as datasheets do.

Every parser here is bounded before it computes anything: at most ``MAX_NUMBER_CHARS``
characters, ASCII digits only (Python's ``int()`` would take ``'٨'`` as 8), exponents
checked before ``10**exp`` is formed, and results within ``MAX_INT`` (int64). A refusal
is a ``ValueError`` with a one-line message that never echoes more than ~20 characters
of the input.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

MAX_INT = 2**63 - 1  # the largest count or size accepted anywhere: int64, absurd for any real tensor
MAX_NUMBER_CHARS = 100  # characters in one number as typed; more is a mistake or an attack
_MAX_EXPONENT = 40  # 10**40 > MAX_INT already: a larger decimal exponent is refused unseen
ECHO_CHARS = 20  # how much of a refused value a message repeats


def clip(text: object, width: int = ECHO_CHARS) -> str:
    """``text`` cut to ``width`` characters, with '...' when cut: for echoing input in messages."""
    s = str(text)
    return s if len(s) <= width else s[:width] + "..."


def _shown(text: object) -> str:
    """The value as a message quotes it: repr of at most ECHO_CHARS characters."""
    return repr(clip(text))


def _prepare(text: object, what: str) -> str:
    s = str(text).strip()
    if not s:
        raise ValueError(f"empty value (expected {what})")
    if len(s) > MAX_NUMBER_CHARS:
        raise ValueError(f"{_shown(s)} ({len(s)} characters) is too long for {what}; at most {MAX_NUMBER_CHARS}")
    if not s.isascii():
        raise ValueError(f"{_shown(s)} is not {what} (only the ASCII digits 0-9 are accepted)")
    return s


def _bounded(value: int, text: object) -> int:
    if value > MAX_INT:
        raise ValueError(f"{_shown(text)} is absurdly large (at most {MAX_INT:,})")
    if value < -MAX_INT:
        raise ValueError(f"{_shown(text)} is absurdly large in magnitude (at least {-MAX_INT:,})")
    return value


_SIZE_RE = re.compile(r"(?P<num>[0-9]+(?:\.[0-9]+)?)\s*(?P<unit>[A-Za-z]*)", re.ASCII)
_HEX_RE = re.compile(r"0[xX](?P<digits>[0-9a-fA-F]+)", re.ASCII)
# One unit style, as roofcalc prints sizes: kB, MB, GB are decimal (1000, 10^6, 10^9, as datasheets
# and the tables), KiB, MiB, GiB binary; a bare k, M or G (the CUDA habit: --smem 96k) is binary.
_BINARY = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kb": 1000,
    "kib": 1024,
    "m": 1024**2,
    "mb": 1000**2,
    "mib": 1024**2,
    "g": 1024**3,
    "gb": 1000**3,
    "gib": 1024**3,
}


def parse_size(text: str | int) -> int:
    """Parse a memory size into bytes. Raises ValueError with a readable message."""
    if isinstance(text, bool):
        raise ValueError(f"{text!r} is not a size")
    if isinstance(text, int):
        if text < 0:
            raise ValueError(f"size {clip(text)} is negative")
        return _bounded(text, text)
    s = _prepare(text, "a size")
    if s.lower().startswith("0x"):
        h = _HEX_RE.fullmatch(s)
        if h is None:
            raise ValueError(f"{_shown(text)} is not a hexadecimal size")
        return _bounded(int(h.group("digits"), 16), text)
    if s.startswith("-") and _SIZE_RE.fullmatch(s[1:].strip()):
        raise ValueError(f"size {_shown(s)} is negative")
    m = _SIZE_RE.fullmatch(s)
    if not m:
        raise ValueError(f"{_shown(text)} is not a size (examples: 98304, 96k, 96KiB, 0x18000)")
    unit = m.group("unit").lower()
    if unit not in _BINARY:
        raise ValueError(
            f"{_shown(text)}: unknown size unit {clip(m.group('unit'))!r} (use k or KiB = 1024, kB = 1000, M, MiB, MB, G, GiB, GB)"
        )
    value = Fraction(m.group("num")) * _BINARY[unit]
    if value.denominator != 1:
        raise ValueError(f"{_shown(text)} is not a whole number of bytes")
    return _bounded(int(value), text)


_INT_RE = re.compile(r"[+-]?[0-9]+", re.ASCII)
_EXP_RE = re.compile(r"(?P<mant>[+-]?[0-9]+(?:\.[0-9]+)?)[eE]\+?(?P<exp>[0-9]+)", re.ASCII)
_SUFFIX_RE = re.compile(r"[0-9]+(?:\.[0-9]+)?\s*(?:k|K|Ki|M|Mi|G|Gi)", re.ASCII)


def parse_int(text: str | int, *, allow_suffix: bool = True) -> int:
    """Parse a count such as ``8192``, ``8k`` (8192), ``1_000``, ``1e6``; at most ``MAX_INT`` in magnitude."""
    if isinstance(text, bool):
        raise ValueError(f"{text!r} is not an integer")
    if isinstance(text, int):
        return _bounded(text, text)
    s = _prepare(text, "an integer").replace("_", "")
    if not s:
        raise ValueError(f"{_shown(text)} is not an integer")
    if _INT_RE.fullmatch(s):
        return _bounded(int(s), text)
    e = _EXP_RE.fullmatch(s)
    if e:
        mant, exp = Fraction(e.group("mant")), int(e.group("exp"))
        if mant == 0:
            return 0
        if exp > _MAX_EXPONENT:  # refused before 10**exp is formed: 1e100000000 costs nothing
            raise ValueError(f"{_shown(text)} is absurdly large (at most {MAX_INT:,})")
        v = mant * 10**exp
        if v.denominator != 1:
            raise ValueError(f"{_shown(text)} is not an integer")
        return _bounded(int(v), text)
    if allow_suffix and _SUFFIX_RE.fullmatch(s):
        return parse_size(s if s[-1] != "i" else s + "B")
    raise ValueError(f"{_shown(text)} is not an integer")


_FLOAT_RE = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?", re.ASCII)


def parse_float(text: str | float | int, *, what: str = "a number") -> float:
    """A finite decimal number (``0.5``, ``1e-3``, ``3.35e12``): no nan, inf, overflow or non-ASCII digits."""
    if isinstance(text, bool):
        raise ValueError(f"{text!r} is not {what}")
    if isinstance(text, (int, float)):
        try:
            f = float(text)
        except OverflowError:
            raise ValueError(f"{_shown(text)} is out of range") from None
        if not math.isfinite(f):
            raise ValueError(f"{_shown(text)} is not a finite number")
        return f
    s = _prepare(text, what).replace("_", "")
    if not _FLOAT_RE.fullmatch(s):
        if s.lower().lstrip("+-") in ("nan", "inf", "infinity"):
            raise ValueError(f"{_shown(text)} is not a finite number")
        raise ValueError(f"{_shown(text)} is not {what}")
    f = float(s)  # a bounded string: float() is linear in its length, and 1e100000000 is just inf
    if not math.isfinite(f):
        raise ValueError(f"{_shown(text)} is out of range (at most about 1.8e308)")
    if f == 0 and any(c in "123456789" for c in s.lower().split("e")[0]):
        raise ValueError(f"{_shown(text)} is too small (it rounds to 0)")
    return f


# micro as "u", the micro sign (U+00B5) or the Greek small mu (U+03BC), which keyboards give alike
_TIME_UNITS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "\u00b5s": 1e-6, "\u03bcs": 1e-6, "ns": 1e-9}


def parse_time(text: str | float | int) -> float:
    """A duration: ``13.4ms``, ``13.4 ms``, ``250us``, ``0.0134`` (seconds); positive and finite."""
    if isinstance(text, str):
        s = text.strip()
        unit = next((u for u in sorted(_TIME_UNITS, key=len, reverse=True) if s.endswith(u)), "s")
        number = s[: len(s) - len(unit)].strip() if s.endswith(unit) else s
        try:
            value = parse_float(number, what="a duration (e.g. 13.4ms, 250us or 0.0134)") * _TIME_UNITS[unit]
        except ValueError as e:  # the message names what was given, not the part left of its unit
            shown = _shown(number)
            msg = str(e)
            raise ValueError(_shown(text) + msg[len(shown) :] if msg.startswith(shown) else msg) from None
    else:
        value = parse_float(text, what="a duration")
    if not 0 < value <= 86_400:
        raise ValueError(f"{_shown(text)} is not a duration between 0 and a day")
    return value


# ---------------------------------------------------------------- formatting

_SI = [(1e24, "Y"), (1e21, "Z"), (1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")]


def si(value: float, unit: str = "", digits: int = 3) -> str:
    """Format with a decimal SI prefix and ``digits`` significant digits: 1.10 TFLOP."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if value == 0:
        return f"0 {unit}".strip()
    v = float(value)
    for scale, prefix in _SI:
        if abs(v) >= scale:
            return f"{_sig(v / scale, digits)} {prefix}{unit}"
    return f"{_sig(v, digits)} {unit}".strip()


def _sig(x: float, digits: int) -> str:
    if abs(x) >= 10 ** (digits - 1):
        return f"{x:.0f}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(x))))
    return f"{x:.{decimals}f}"


def fmt_bytes(n: float) -> str:
    """Decimal bytes, as datasheets and the seeds print them: 402.7 MB."""
    if abs(n) < 1000:
        return f"{n:g} B"
    return si(n, "B", digits=4)


def fmt_binary(n: int) -> str:
    """Binary sizes for SM resources: 228 KiB, 49152 B -> 48 KiB."""
    if n >= 1024**3 and n % (1024**3) == 0:
        return f"{n // 1024**3} GiB"
    if n >= 1024**2 and n % (1024**2) == 0:
        return f"{n // 1024**2} MiB"
    if n >= 1024 and n % 1024 == 0:
        return f"{n // 1024} KiB"
    if n >= 1024:
        return f"{n / 1024:.2f} KiB"
    return f"{n} B"


def fmt_time(seconds: float) -> str:
    """1.62 ms, 41.6 us, 3.20 s."""
    if seconds == 0:
        return "0 s"
    if seconds >= 1e5:  # a day and more: no wall of digits
        return f"{seconds:.3g} s"
    if seconds >= 1:
        return f"{_sig(seconds, 3)} s"
    for scale, unit in ((1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
        if seconds >= scale:
            return f"{_sig(seconds / scale, 3)} {unit}"
    return f"{seconds:.3g} s"


def fmt_time_range(low: float, high: float) -> str:
    """54.4-61.2 ms; 980 us-1.10 ms when the two need different units."""
    a, b = fmt_time(low), fmt_time(high)
    ua, ub = a.rsplit(" ", 1), b.rsplit(" ", 1)
    if len(ua) == 2 and len(ub) == 2 and ua[1] == ub[1]:
        return f"{ua[0]}-{b}"
    return f"{a}-{b}"


def fmt_count(n: int | float) -> str:
    """FLOP counts: 1.10 TFLOP style without the unit."""
    return si(n, "", digits=3)

"""Parsing and formatting of sizes, rates and times: the one module that owns units.

Memory sizes use binary multipliers: ``k``, ``K``, ``KB`` and ``KiB`` all mean
1024 bytes (as CUDA's documentation does for shared memory); ``M``/``MB``/``MiB``
mean 2**20 and ``G``/``GB``/``GiB`` 2**30. Hex (``0x18000``) and plain integers
are accepted. Rates and counts in output use decimal SI prefixes (TFLOP/s, TB/s),
as datasheets do.
"""

from __future__ import annotations

import math
import re

_SIZE_RE = re.compile(r"^\s*(?P<num>\d+(?:\.\d+)?)\s*(?P<unit>[A-Za-z]*)\s*$")
_BINARY = {
    "": 1,
    "b": 1,
    "k": 1024,
    "kb": 1024,
    "kib": 1024,
    "m": 1024**2,
    "mb": 1024**2,
    "mib": 1024**2,
    "g": 1024**3,
    "gb": 1024**3,
    "gib": 1024**3,
}


def parse_size(text: str | int) -> int:
    """Parse a memory size into bytes. Raises ValueError with a readable message."""
    if isinstance(text, bool):
        raise ValueError(f"{text!r} is not a size")
    if isinstance(text, int):
        if text < 0:
            raise ValueError(f"size {text} is negative")
        return text
    s = str(text).strip()
    if s.lower().startswith("0x"):
        try:
            return int(s, 16)
        except ValueError:
            raise ValueError(f"{text!r} is not a hexadecimal size") from None
    m = _SIZE_RE.match(s)
    if not m:
        raise ValueError(
            f"{text!r} is not a size (examples: 98304, 96k, 96KiB, 0x18000)"
        )
    unit = m.group("unit").lower()
    if unit not in _BINARY:
        raise ValueError(f"{text!r}: unknown size unit {m.group('unit')!r} (use k, KB, KiB, M, G)")
    value = float(m.group("num")) * _BINARY[unit]
    if not value.is_integer():
        raise ValueError(f"{text!r} is not a whole number of bytes")
    return int(value)


def parse_int(text: str | int, *, allow_suffix: bool = True) -> int:
    """Parse a count such as ``8192``, ``8k`` (8192), ``1_000``, ``1e6``."""
    if isinstance(text, bool):
        raise ValueError(f"{text!r} is not an integer")
    if isinstance(text, int):
        return text
    s = str(text).strip().replace("_", "")
    if not s:
        raise ValueError("empty value")
    if re.fullmatch(r"[+-]?\d+", s):
        return int(s)
    if re.fullmatch(r"[+-]?\d+(\.\d+)?[eE]\+?\d+", s):
        mant, exp = s.lower().split("e")
        from fractions import Fraction

        v = Fraction(mant) * 10 ** int(exp)
        if v.denominator == 1:
            return int(v)
        raise ValueError(f"{text!r} is not an integer")
    if allow_suffix and re.fullmatch(r"\d+(\.\d+)?\s*(k|K|Ki|M|Mi|G|Gi)", s):
        return parse_size(s if s[-1] != "i" else s + "B")
    raise ValueError(f"{text!r} is not an integer")


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
    if seconds >= 1:
        return f"{_sig(seconds, 3)} s"
    for scale, unit in ((1e-3, "ms"), (1e-6, "us"), (1e-9, "ns")):
        if seconds >= scale:
            return f"{_sig(seconds / scale, 3)} {unit}"
    return f"{seconds:.3g} s"


def fmt_count(n: int | float) -> str:
    """FLOP counts: 1.10 TFLOP style without the unit."""
    return si(n, "", digits=3)

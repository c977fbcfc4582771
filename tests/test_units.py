from __future__ import annotations

import pytest

from roofcalc.units import fmt_bytes, fmt_time, parse_int, parse_size, parse_time, si


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("98304", 98304),
        ("96k", 98304),
        ("96K", 98304),
        ("96KB", 96000),  # kB and KB are decimal, as roofcalc prints them; KiB and a bare k binary
        ("96kB", 96000),
        ("1.5MB", 1_500_000),
        ("96KiB", 98304),
        ("0x18000", 98304),
        ("0X18000", 98304),
        ("1.5k", 1536),
        ("2M", 2 * 1024**2),
        ("1GiB", 1024**3),
        (" 48 KiB ", 49152),
        ("0", 0),
        (4096, 4096),
    ],
)
def test_parse_size(text: str, expected: int) -> None:
    assert parse_size(text) == expected


@pytest.mark.parametrize("bad", ["", "k", "96q", "-1", "1.3", "0xZZ", "ninety", "96 kB extra", True, -5])
def test_parse_size_rejects(bad: object) -> None:
    with pytest.raises(ValueError, match=r"size|unit|bytes|negative|hexadecimal"):
        parse_size(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "expected"), [("8192", 8192), ("8k", 8192), ("1e6", 1_000_000), ("1_024", 1024), ("-3", -3)]
)
def test_parse_int(text: str, expected: int) -> None:
    assert parse_int(text) == expected


@pytest.mark.parametrize("bad", ["1.5", "1e-3", "abc", "", "8q"])
def test_parse_int_rejects(bad: str) -> None:
    with pytest.raises(ValueError, match=r"integer|empty"):
        parse_int(bad)


def test_formatting_matches_the_issue_examples() -> None:
    assert si(1_099_511_627_776, "FLOP") == "1.10 TFLOP"
    assert fmt_bytes(402_653_184) == "402.7 MB"
    assert fmt_time(1.62e-3) == "1.62 ms"
    assert fmt_time(0.0) == "0 s"


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("13.4ms", 13.4e-3),
        ("250 us", 250e-6),
        ("5\u00b5s", 5e-6),
        ("5\u03bcs", 5e-6),
        ("0.0134", 0.0134),
        ("2ns", 2e-9),
    ],
)
def test_durations_read_every_micro(text: str, seconds: float) -> None:
    """Micro as u, the micro sign or the Greek mu, which keyboards give alike."""
    assert parse_time(text) == pytest.approx(seconds, rel=1e-12)


@pytest.mark.parametrize("text", ["1ps", "1Ms", "1ms,2ms", "abc", "1e400s"])
def test_a_bad_duration_is_named_as_given(text: str) -> None:
    """The message quotes what was given, not the part left of a unit it matched ('1p' of 1ps)."""
    with pytest.raises(ValueError, match=r"duration|range") as e:
        parse_time(text)
    assert str(e.value).startswith(repr(text)), str(e.value)

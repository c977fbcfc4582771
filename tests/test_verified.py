"""The record of checks that passed with the same inputs (tests/conftest.py Verified)."""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import Verified


class _Cache:
    def __init__(self) -> None:
        self.data: dict[str, object] = {}

    def get(self, key: str, default: object) -> object:
        return self.data.get(key, default)

    def set(self, key: str, value: object) -> None:
        self.data[key] = value


class _Config:
    def __init__(self) -> None:
        self.cache = _Cache()


def test_a_check_is_skipped_only_with_every_input_unchanged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("ROOFCALC_TEST_RECOMPUTE", raising=False)
    f = tmp_path / "report.json"
    f.write_text("{}")
    v = Verified(_Config())  # type: ignore[arg-type]
    key = v.key("check", [f])
    assert not v.seen(key)
    v.record(key)
    assert v.seen(key) and v.key("check", [f]) == key
    f.write_text("{ }")  # one byte more: another key, so the check runs again
    assert v.key("check", [f]) != key and not v.seen(v.key("check", [f]))
    assert v.key("another check", [f]) != v.key("check", [f])


@pytest.mark.parametrize(("name", "value"), [("CI", "true"), ("ROOFCALC_TEST_RECOMPUTE", "1")])
def test_ci_recomputes_every_check(name: str, value: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(name, value)
    v = Verified(_Config())  # type: ignore[arg-type]
    key = v.key("check", [])
    v.record(key)
    assert not v.seen(key)

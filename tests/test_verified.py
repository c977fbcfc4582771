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


def test_a_run_recomputes_a_share_of_the_checks_and_ci_all(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without CI, a check with no record runs where its key falls in the run's share (one in
    SHARE) and is deferred otherwise; the share follows the key, code digest included, so other
    code draws another share. With CI, or without pytest's cache, every check runs."""
    from .conftest import SHARE, VerifiedFor

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("ROOFCALC_TEST_RECOMPUTE", raising=False)
    files = []
    for i in range(400):
        f = tmp_path / f"report{i}.json"
        f.write_text(str(i))
        files.append(f)
    (tmp_path / "test_x.py").write_text("")
    v = Verified(_Config())  # type: ignore[arg-type]
    ran: list[int] = []
    checks = VerifiedFor(v, tmp_path / "test_x.py")
    for i, f in enumerate(files):
        checks.once("check", [f], lambda i=i: ran.append(i))  # type: ignore[misc]
    # 400 draws of one in 4: 100 expected, and 60-140 holds with a margin of about 8 sigma
    assert 60 <= len(ran) <= 140 and SHARE == 4
    again: list[int] = []
    for i, f in enumerate(files):
        checks.once("check", [f], lambda i=i: again.append(i))  # type: ignore[misc]
    assert again == []  # those that ran are recorded; the others stay deferred with this code
    v.code = "another-code-digest"
    other: list[int] = []
    for i, f in enumerate(files):
        checks.once("check", [f], lambda i=i: other.append(i))  # type: ignore[misc]
    assert set(other) != set(ran) and 60 <= len(other) <= 140
    monkeypatch.setenv("CI", "true")
    every: list[int] = []
    ci = VerifiedFor(Verified(_Config()), tmp_path / "test_x.py")  # type: ignore[arg-type]
    for i, f in enumerate(files):
        ci.once("check", [f], lambda i=i: every.append(i))  # type: ignore[misc]
    assert every == list(range(400))
    monkeypatch.delenv("CI")
    no_cache = _Config()
    no_cache.cache = None  # type: ignore[assignment]
    plain: list[int] = []
    bare = VerifiedFor(Verified(no_cache), tmp_path / "test_x.py")  # type: ignore[arg-type]
    for i, f in enumerate(files):
        bare.once("check", [f], lambda i=i: plain.append(i))  # type: ignore[misc]
    assert plain == list(range(400))

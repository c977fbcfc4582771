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
    """Without CI, in a fresh cache a check with no record runs where its key falls in the run's
    share (one in SHARE) and is deferred otherwise; the share follows the key, code digest
    included, so other code draws another share. Once a run has kept records, a check whose files
    changed, or a new one, runs whatever the share. With CI, or without pytest's cache, every check
    runs."""
    from .conftest import PRIMED, SHARE, VerifiedFor

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("ROOFCALC_TEST_RECOMPUTE", raising=False)
    files = []
    for i in range(400):
        f = tmp_path / f"report{i}.json"
        f.write_text(str(i))
        files.append(f)
    (tmp_path / "test_x.py").write_text("")
    config = _Config()

    def run(v: Verified, checks: list[Path]) -> list[int]:
        ran: list[int] = []
        for i, f in enumerate(checks):
            VerifiedFor(v, tmp_path / "test_x.py").once(f"check{i}", [f], lambda i=i: ran.append(i))  # type: ignore[misc]
        return ran

    v = Verified(config)  # type: ignore[arg-type]
    first = run(v, files)
    # 400 draws of one in 4: 100 expected, and 60-140 holds with a margin of about 8 sigma
    assert 60 <= len(first) <= 140 and SHARE == 4
    assert run(v, files) == []  # those that ran are recorded; the others stay deferred with this code
    config.cache.set(PRIMED, True)  # the end of that run (pytest_sessionfinish)
    v = Verified(config)  # type: ignore[arg-type]
    assert run(v, files) == []  # nothing changed: nothing runs
    deferred = next(i for i in range(400) if i not in first)
    files[deferred].write_text("edited")
    new = tmp_path / "report-new.json"
    new.write_text("new")
    assert run(v, [*files, new]) == [deferred, 400]  # the edited one and the new one, share or not
    # a check forced to run that fails runs again next time, its files unchanged (not deferred)
    other_deferred = next(i for i in range(400) if i not in first and i != deferred)
    files[other_deferred].write_text("broken")
    calls: list[int] = []

    def failing() -> None:
        calls.append(1)
        raise AssertionError("the check fails")

    for _ in range(2):
        with pytest.raises(AssertionError):
            VerifiedFor(v, tmp_path / "test_x.py").once(f"check{other_deferred}", [files[other_deferred]], failing)
    assert calls == [1, 1]
    v.code = "another-code-digest"
    other = run(v, files)
    assert set(other) != set(first) and 60 <= len(other) <= 140
    monkeypatch.setenv("CI", "true")
    assert run(Verified(_Config()), files) == list(range(400))  # type: ignore[arg-type]
    monkeypatch.delenv("CI")
    no_cache = _Config()
    no_cache.cache = None  # type: ignore[assignment]
    assert run(Verified(no_cache), files) == list(range(400))  # type: ignore[arg-type]

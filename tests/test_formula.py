from __future__ import annotations

from fractions import Fraction

import pytest

from roofcalc.formula import EvalError, Formula, FormulaError


@pytest.mark.parametrize(
    ("text", "env", "expected"),
    [
        ("2*m*n*k", {"m": 2, "n": 3, "k": 4}, 48),
        ("m/2", {"m": 3}, Fraction(3, 2)),
        ("m/2", {"m": 4}, 2),
        ("m//2 + m%2", {"m": 7}, 4),
        ("2**m", {"m": 10}, 1024),
        ("x if c else y", {"x": 1, "y": 2, "c": False}, 2),
        ("min(a, b) + max(a, b)", {"a": 3, "b": 9}, 12),
        ("ceil(a/2) + floor(a/2)", {"a": 5}, 5),
        ("sqrt(a) + log2(b)", {"a": 16, "b": 8}, 7.0),
        ("impl == 'flash' and not c", {"impl": "flash", "c": False}, True),
        ("0.5*m", {"m": 3}, Fraction(3, 2)),
        ("-m + +m", {"m": 3}, 0),
        ("1 < m <= 3", {"m": 3}, True),
    ],
)
def test_evaluates(text: str, env: dict[str, object], expected: object) -> None:
    assert Formula(text, env).evaluate(env) == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("m.__class__", "attribute access"),
        ("__import__('os')", "call of '__import__' is not allowed"),
        ("open('x')", "call of 'open' is not allowed"),
        ("m[0]", "subscript"),
        ("q + 1", "unknown name 'q'"),
        ("lambda: 1", "Lambda is not allowed"),
        ("[m]", "List is not allowed"),
        ("m if", "syntax error"),
        ("min", "is a function"),
        ("min(a=1)", "positional arguments only"),
        ("True", "constant True is not allowed"),
        ("m << 2", "operator LShift is not allowed"),
        ("m is m", "comparison Is is not allowed"),
        ("", "empty formula"),
    ],
)
def test_rejects(text: str, message: str) -> None:
    with pytest.raises(FormulaError) as ei:
        Formula(text, {"m"})
    assert message in str(ei.value)


@pytest.mark.parametrize(
    ("text", "env", "message"),
    [
        ("m / (m - m)", {"m": 1}, "division by zero"),
        ("2 ** m", {"m": 100000}, "too large"),
        ("log2(m - m)", {"m": 1}, "log2 of a non-positive"),
        ("m + s", {"m": 1, "s": "x"}, "string"),
    ],
)
def test_eval_errors(text: str, env: dict[str, object], message: str) -> None:
    with pytest.raises(EvalError) as ei:
        Formula(text, env).evaluate(env)  # type: ignore[arg-type]
    assert message in str(ei.value)


def test_remembered_results_follow_the_values_and_their_types() -> None:
    """Results are remembered by the values of the names used: equal values of another type
    (1, 1.0, True) give their own result, an error is raised again each time, and a name the
    formula does not use does not matter."""
    f = Formula("m / 2", {"m", "n"})
    assert f.evaluate({"m": 1, "n": 0}) == Fraction(1, 2)
    assert type(f.evaluate({"m": 1.0, "n": 5})) is float
    assert f.evaluate({"m": True, "n": 9}) == Fraction(1, 2)
    assert f.evaluate({"m": 3, "n": 1}) == Fraction(3, 2)
    g = Formula("1 / m", {"m"})
    for _ in range(2):
        with pytest.raises(EvalError, match="division by zero"):
            g.evaluate({"m": 0})
    with pytest.raises(KeyError):
        g.evaluate({})

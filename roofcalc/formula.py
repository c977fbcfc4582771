"""A whitelisting evaluator for the formulas in op files. Never ``eval``.

Allowed: integer and decimal numbers, string constants (for comparisons such as
``impl == 'flash'``), declared names, ``+ - * / // ** %``, comparisons, ``and``,
``or``, ``not``, conditional expressions (``a if cond else b``) and the calls
``min``, ``max``, ``ceil``, ``floor``, ``log2``, ``sqrt``.

Arithmetic is exact: integers stay integers and ``/`` gives a ``Fraction``, so
FLOP and byte counts are exact however large they get. ``sqrt`` and ``log2``
return floats.

Bounded, so that no formula can hang or exhaust memory: at most ``MAX_CHARS``
characters, ``MAX_NODES`` syntax-tree nodes and ``MAX_DEPTH`` levels of nesting
(checked when the file is loaded, iteratively, before anything recurses); while
evaluating, a power is refused before it is computed when its result would have more
than ``MAX_BITS`` bits, every exact result is held to ``MAX_BITS`` (so it always prints:
Python converts at most 4,300 digits to text), and every float result must be finite
and real.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Iterable, Mapping
from fractions import Fraction
from typing import Any, Union

Number = Union[int, Fraction, float]  # noqa: UP007 - a runtime alias, kept for Python 3.10
Value = Union[int, Fraction, float, str, bool]  # noqa: UP007

MAX_EXPONENT = 256  # exact powers; a larger exponent of a fraction is computed in floating point
MAX_CHARS = 2000  # characters of one formula
MAX_NODES = 1000  # syntax-tree nodes of one formula (the largest shipped formula has 71)
MAX_DEPTH = 100  # nesting of the syntax tree (the deepest shipped formula has 13)
MEMO_SIZE = 4096  # results kept per formula (see Formula.evaluate)
MAX_BITS = 10_000  # bits of an exact value (numerator and denominator each): about 3,000 digits


_MISSING = object()


class FormulaError(Exception):
    """A formula that is malformed or names something not allowed (raised at load time)."""


class EvalError(Exception):
    """A formula that cannot be evaluated for the given values (division by zero...)."""


def _ceil(x: Number) -> int:
    return math.ceil(x)


def _floor(x: Number) -> int:
    return math.floor(x)


def _log2(x: Number) -> float:
    if x <= 0:
        raise EvalError(f"log2 of a non-positive number ({x})")
    return math.log2(x)


def _sqrt(x: Number) -> float:
    if x < 0:
        raise EvalError(f"sqrt of a negative number ({x})")
    return math.sqrt(x)


def _div(a: Any, b: Any) -> Any:
    """Exact division of exact values (a Fraction); a float on either side divides as floats."""
    if type(a) is int and type(b) is int:
        return Fraction(a, b)  # one Fraction, not three (ZeroDivisionError for b = 0, as before)
    if not isinstance(a, float) and not isinstance(b, float):
        return Fraction(a) / Fraction(b)
    return a / b


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "min": min,
    "max": max,
    "ceil": _ceil,
    "floor": _floor,
    "log2": _log2,
    "sqrt": _sqrt,
}

_BINOPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: _div,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Pow: lambda a, b: a**b,
}
_CMPOPS: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}


class Formula:
    """A parsed, checked formula. ``Formula("2*m*n*k", names={"m","n","k"})``."""

    __slots__ = ("_fn", "_get", "_memo", "_order", "names", "text", "tree")

    def __init__(self, text: str | int | float, names: Iterable[str]) -> None:
        if isinstance(text, bool):
            text = int(text)
        if isinstance(text, (int, float)):
            text = repr(text)
        if not isinstance(text, str) or not text.strip():
            raise FormulaError("empty formula")
        self.text = text.strip()
        if len(self.text) > MAX_CHARS:
            raise FormulaError(f"formula is longer than {MAX_CHARS} characters ({len(self.text)})")
        try:
            tree = ast.parse(self.text, mode="eval")
        except SyntaxError as e:
            raise FormulaError(f"syntax error in {_clip(self.text)!r}: {e.msg}") from None
        except (RecursionError, MemoryError, ValueError):  # the parser's own limits on nesting
            raise FormulaError(f"formula {_clip(self.text)!r} is nested too deeply") from None
        _check_size(tree.body, self.text)
        allowed = set(names)
        used: set[str] = set()
        _check(tree.body, allowed, used)
        self.tree = tree.body
        self.names = frozenset(used)
        self._derive()

    def _derive(self) -> None:
        """What evaluation uses, made from the checked tree and names (again when unpickled)."""
        self._fn = _compile(self.tree)
        self._order = tuple(sorted(self.names))
        # the values of the names used, as a tuple, straight from the mapping (a KeyError for
        # a name it lacks, as env[name] gives)
        self._get = operator.itemgetter(*self._order, *self._order[:1]) if self._order else None
        # results by the values of the names used: a formula is a pure function of them, and a
        # sweep or a report evaluates the same few formulas with the same few values many times
        self._memo: dict[tuple[Any, ...], Value] = {}

    def __repr__(self) -> str:
        return f"Formula({self.text!r})"

    # pickled (the registry's cache) as its checked parts; the closure is compiled again on load
    def __getstate__(self) -> tuple[str, ast.expr, frozenset[str]]:
        return (self.text, self.tree, self.names)

    def __setstate__(self, state: tuple[str, ast.expr, frozenset[str]]) -> None:
        self.text, self.tree, self.names = state
        self._derive()

    # two formulas of the same text are the same formula (a copy, e.g. unpickled, included)
    def __eq__(self, other: object) -> bool:
        return isinstance(other, Formula) and self.text == other.text and self.names == other.names

    def __hash__(self) -> int:
        return hash((self.text, self.names))

    def evaluate(self, env: Mapping[str, Value]) -> Value:
        # the type is part of the key: 1, 1.0 and True are equal but evaluate differently
        get = self._get
        if get is None:  # a constant: one result, whatever the names
            key: tuple[Any, ...] = ((),)
        else:
            vals = get(env)
            key = (vals, *map(type, vals))
        hit = self._memo.get(key, _MISSING)
        if hit is not _MISSING:
            return hit  # type: ignore[return-value]
        value = self._evaluate(env)
        if len(self._memo) >= MEMO_SIZE:
            self._memo.clear()
        self._memo[key] = value
        return value

    def _evaluate(self, env: Mapping[str, Value]) -> Value:
        try:
            return self._fn(env)
        except ZeroDivisionError:
            raise EvalError(f"division by zero in {_clip(self.text)!r}") from None
        except OverflowError:
            raise EvalError(f"number too large in {_clip(self.text)!r}") from None
        except (TypeError, ValueError) as e:
            raise EvalError(f"cannot evaluate {_clip(self.text)!r}: {_clip(e, 80)}") from None
        except RecursionError:  # not reached with MAX_DEPTH; kept so that it can never escape
            raise EvalError(f"formula {_clip(self.text)!r} is nested too deeply") from None


def _clip(text: object, width: int = 60) -> str:
    s = str(text)
    return s if len(s) <= width else s[:width] + "..."


def _check_size(root: ast.AST, text: str) -> None:
    """Count nodes and depth without recursion (a 2,000-character formula can nest 2,000 deep)."""
    nodes = 0
    stack: list[tuple[ast.AST, int]] = [(root, 1)]
    while stack:
        node, depth = stack.pop()
        nodes += 1
        if nodes > MAX_NODES:
            raise FormulaError(f"formula {_clip(text)!r} has more than {MAX_NODES} parts")
        if depth > MAX_DEPTH:
            raise FormulaError(f"formula {_clip(text)!r} nests more than {MAX_DEPTH} levels deep")
        stack.extend((child, depth + 1) for child in ast.iter_child_nodes(node))


def _bits(v: Any) -> int:
    """Size of an exact value: bits of an int, of the larger part of a Fraction; 0 otherwise."""
    if isinstance(v, bool):
        return 1
    if isinstance(v, int):
        return v.bit_length()
    if isinstance(v, Fraction):
        return max(v.numerator.bit_length(), v.denominator.bit_length())
    return 0


def _checked(v: Any, node: ast.AST) -> Value:
    """Every value the evaluator produces: exact values within MAX_BITS, floats finite and real."""
    if isinstance(v, complex):
        raise EvalError(f"{_clip(ast.unparse(node))} is not a real number")
    if isinstance(v, float) and not math.isfinite(v):
        raise EvalError(f"{_clip(ast.unparse(node))} is not a finite number")
    if _bits(v) > MAX_BITS:
        raise EvalError(f"{_clip(ast.unparse(node))} is too large: {_bits(v):,} bits (limit {MAX_BITS:,})")
    return _norm(v)


def _check(node: ast.AST, allowed: set[str], used: set[str]) -> None:
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float, str)):
            raise FormulaError(f"constant {_clip(repr(node.value))} is not allowed")
        if isinstance(node.value, float) and not math.isfinite(node.value):
            raise FormulaError(f"constant {_clip(ast.unparse(node))} is out of range (over 1.8e308)")
        if isinstance(node.value, int) and node.value.bit_length() > MAX_BITS:
            raise FormulaError(f"constant {_clip(node.value)} is too large (over {MAX_BITS:,} bits)")
        return
    if isinstance(node, ast.Name):
        if node.id in FUNCTIONS:
            raise FormulaError(f"{node.id!r} is a function; call it")
        if node.id not in allowed:
            raise FormulaError(f"unknown name {node.id!r}")
        used.add(node.id)
        return
    if isinstance(node, ast.BinOp):
        if type(node.op) not in _BINOPS:
            raise FormulaError(f"operator {type(node.op).__name__} is not allowed")
        _check(node.left, allowed, used)
        _check(node.right, allowed, used)
        return
    if isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
            raise FormulaError(f"operator {type(node.op).__name__} is not allowed")
        _check(node.operand, allowed, used)
        return
    if isinstance(node, ast.BoolOp):
        for v in node.values:
            _check(v, allowed, used)
        return
    if isinstance(node, ast.Compare):
        for op in node.ops:
            if type(op) not in _CMPOPS:
                raise FormulaError(f"comparison {type(op).__name__} is not allowed")
        _check(node.left, allowed, used)
        for c in node.comparators:
            _check(c, allowed, used)
        return
    if isinstance(node, ast.IfExp):
        for part in (node.test, node.body, node.orelse):
            _check(part, allowed, used)
        return
    if isinstance(node, ast.Call):
        if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
            what = ast.unparse(node.func)
            raise FormulaError(f"call of {what!r} is not allowed (allowed: {', '.join(FUNCTIONS)})")
        if node.keywords or not node.args:
            raise FormulaError(f"{node.func.id}() takes positional arguments only")
        for a in node.args:
            _check(a, allowed, used)
        return
    if isinstance(node, ast.Attribute):
        raise FormulaError(f"attribute access {ast.unparse(node)!r} is not allowed")
    if isinstance(node, ast.Subscript):
        raise FormulaError(f"subscript {ast.unparse(node)!r} is not allowed")
    raise FormulaError(f"{type(node).__name__} is not allowed in a formula")


def _const(v: Any) -> Value:
    if isinstance(v, float):
        return Fraction(repr(v))  # 0.5 in a file means exactly one half
    return v  # type: ignore[no-any-return]


def _fast_checked(node: ast.AST) -> Callable[[Any], Value]:
    """_checked for one node, with the common results (a small int, a finite float) first."""

    def check(v: Any) -> Value:
        t = type(v)
        # a finite float: inf - inf and nan - nan are nan
        if (t is int and v.bit_length() <= MAX_BITS) or (t is float and v - v == 0.0):
            return v  # type: ignore[no-any-return]
        return _checked(v, node)

    return check


def _compile(node: ast.AST) -> Callable[[Mapping[str, Value]], Value]:
    """The node as a closure over the environment: what _eval computes, without walking the
    tree and asking each node its type on every evaluation."""
    if isinstance(node, ast.Constant):
        c = _const(node.value)
        return lambda env: c
    if isinstance(node, ast.Name):
        name = node.id

        def name_(env: Mapping[str, Value]) -> Value:
            v = env[name]
            return int(v) if type(v) is bool else v

        return name_
    if isinstance(node, ast.BinOp):
        return _compile_binop(node)
    if isinstance(node, ast.UnaryOp):
        operand = _compile(node.operand)
        if isinstance(node.op, ast.Not):
            return lambda env: not operand(env)
        neg = isinstance(node.op, ast.USub)

        def unary(env: Mapping[str, Value]) -> Value:
            v = operand(env)
            if isinstance(v, str):
                raise EvalError("arithmetic on a string")
            return _checked(-v, node) if neg else v

        return unary
    if isinstance(node, ast.BoolOp):
        parts = [_compile(v) for v in node.values]
        if isinstance(node.op, ast.And):
            return lambda env: all(p(env) for p in parts)
        return lambda env: any(p(env) for p in parts)
    if isinstance(node, ast.Compare):
        first = _compile(node.left)
        steps = [(_CMPOPS[type(op)], _compile(c)) for op, c in zip(node.ops, node.comparators, strict=True)]

        def compare(env: Mapping[str, Value]) -> Value:
            left = first(env)
            for cmp, comp in steps:
                right = comp(env)
                if not cmp(left, right):
                    return False
                left = right
            return True

        return compare
    if isinstance(node, ast.IfExp):
        test, body, orelse = _compile(node.test), _compile(node.body), _compile(node.orelse)
        return lambda env: body(env) if test(env) else orelse(env)
    if isinstance(node, ast.Call):
        assert isinstance(node.func, ast.Name)  # guaranteed by _check
        fn = FUNCTIONS[node.func.id]
        args = [_compile(a) for a in node.args]
        check = _fast_checked(node)
        if len(args) == 1:
            (a0,) = args
            return lambda env: check(fn(a0(env)))
        if len(args) == 2:
            a0, a1 = args
            return lambda env: check(fn(a0(env), a1(env)))
        return lambda env: check(fn(*[a(env) for a in args]))
    raise FormulaError(f"{type(node).__name__} is not allowed in a formula")


def _compile_binop(node: ast.BinOp) -> Callable[[Mapping[str, Value]], Value]:
    left, right = _compile(node.left), _compile(node.right)
    op = _BINOPS[type(node.op)]
    check = _fast_checked(node)
    if not isinstance(node.op, ast.Pow):

        def binop(env: Mapping[str, Value]) -> Value:
            a = left(env)
            b = right(env)
            if isinstance(a, str) or isinstance(b, str):
                raise EvalError("arithmetic on a string")
            return check(op(a, b))

        return binop

    def power(env: Mapping[str, Value]) -> Value:
        a = left(env)
        b = right(env)
        if isinstance(a, str) or isinstance(b, str):
            raise EvalError("arithmetic on a string")
        if not isinstance(b, bool) and (b > MAX_EXPONENT or b < -MAX_EXPONENT):
            # exact powers stay small; a large exponent of a fraction (e.g. the chance that no
            # token picks an expert, (1 - k/E)**tokens) is computed in floating point
            if isinstance(a, int) and abs(a) > 1:
                raise EvalError(f"exponent {_clip(b, 20)} is too large")
            try:
                return _checked(math.pow(float(a), float(b)), node)
            except (OverflowError, ZeroDivisionError, ValueError):
                raise EvalError(f"{_clip(a, 20)} ** {_clip(b, 20)} cannot be computed") from None
        if isinstance(b, (int, Fraction)) and not isinstance(a, (float, str)):
            # refuse before computing: ((m**256)**256)**256 would otherwise run for minutes
            whole = isinstance(b, int) or b.denominator == 1
            if whole and _bits(a) * abs(int(b)) > MAX_BITS:
                raise EvalError(
                    f"{_clip(ast.unparse(node))} is too large: about {_bits(a) * abs(int(b)):,} bits "
                    f"(limit {MAX_BITS:,})"
                )
        return check(op(a, b))

    return power


def _norm(v: Any) -> Value:
    if isinstance(v, Fraction) and v.denominator == 1:
        return int(v)
    return v  # type: ignore[no-any-return]


def as_exact(v: Value) -> int | Fraction | float:
    """Numbers out of the evaluator: bools become ints; strings are an error."""
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, str):
        raise EvalError(f"expected a number, got the string {v!r}")
    return v

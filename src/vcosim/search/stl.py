"""Requirements in a fragment of signal temporal logic, and their robustness over a recorded run.

A requirement such as ``always (groundspeed > 5)`` or ``always[2, 10] (accX > -6 or
groundspeed < 1)`` says what every run must do; its *robustness* is a number whose sign is the
verdict (>= 0: met) and whose size says by how much, so a search can minimise it towards a
violation. The fragment (docs/search.md, "Requirements"):

- atoms ``SIGNAL OP NUMBER`` or ``NUMBER OP SIGNAL``, OP one of ``< <= > >=``; a signal is a
  name of ``vcosim signals`` (``groundspeed``, ``accX``, ...);
- ``not``, ``and``, ``or``, ``implies`` (in rising order of binding: implies, or, and, not);
- ``always`` and ``eventually``, over the whole run or ``[a, b]`` seconds ahead; parentheses.

Robustness is the usual quantitative semantics over the samples (Donzé and Maler's, in discrete
time): ``x > c`` is ``x - c`` and ``x < c`` is ``c - x`` at each sample (the non-strict
comparisons alike); ``not`` negates, ``and`` is the minimum, ``or`` the maximum;
``always[a, b] φ`` at ``t`` is the minimum of φ's over the samples in ``[t + a, t + b]``, and
``eventually`` the maximum; windows are cut at the end of the run (an empty one: ``always`` holds,
``eventually`` does not). The requirement's robustness is its value at the first sample.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from vcosim.errors import ConfigError


@dataclass(frozen=True)
class Atom:
    """``signal OP value``, the signal on the left (``NUMBER < x`` is ``x > NUMBER``)."""

    signal: str
    above: bool  # True: signal > value (or >=); False: signal < value (or <=)
    value: float


@dataclass(frozen=True)
class Not:
    """The negation of a formula."""

    operand: Formula


@dataclass(frozen=True)
class Both:
    """``and`` (``conjunction``) or ``or`` of two formulas."""

    left: Formula
    right: Formula
    conjunction: bool


@dataclass(frozen=True)
class Temporal:
    """``always`` (``universal``) or ``eventually`` over ``[low, high]`` seconds ahead."""

    operand: Formula
    universal: bool
    low: float = 0.0
    high: float = math.inf


Formula = Atom | Not | Both | Temporal

_TOKEN = re.compile(
    r"\s*(?:(?P<number>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)|(?P<op><=|>=|<|>)"
    r"|(?P<name>[A-Za-z_][A-Za-z_0-9.]*)|(?P<punct>[()\[\],]))"
)
_KEYWORDS = {"always", "eventually", "not", "and", "or", "implies", "inf"}


class _Parser:
    """Recursive descent over the tokens; every error names its column (1-based)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, str, int]] = []
        position = 0
        while position < len(text):
            if text[position:].strip() == "":
                break
            match = _TOKEN.match(text, position)
            if match is None or match.end() == position:
                column = position + len(text[position:]) - len(text[position:].lstrip()) + 1
                raise self.error(column, f"unexpected {text[column - 1]!r}")
            kind = match.lastgroup or ""
            start = match.start(kind)
            self.tokens.append((kind, match.group(kind), start + 1))
            position = match.end()
        self.index = 0

    def error(self, column: int, message: str) -> ConfigError:
        return ConfigError([f"column {column}: {message} in {self.text!r}"], "requirement")

    def peek(self) -> tuple[str, str, int]:
        if self.index < len(self.tokens):
            return self.tokens[self.index]
        return ("end", "the end", len(self.text) + 1)

    def take(self, value: str | None = None, kind: str | None = None) -> tuple[str, str, int]:
        token = self.peek()
        if (value is not None and token[1] != value) or (kind is not None and token[0] != kind):
            wanted = repr(value) if value is not None else f"a {kind}"
            raise self.error(token[2], f"expected {wanted}, got {token[1]!r}")
        self.index += 1
        return token

    def formula(self) -> Formula:
        left = self.disjunction()
        if self.peek()[1] == "implies":
            self.take()
            return Both(Not(left), self.formula(), conjunction=False)
        return left

    def disjunction(self) -> Formula:
        left = self.conjunction()
        while self.peek()[1] == "or":
            self.take()
            left = Both(left, self.conjunction(), conjunction=False)
        return left

    def conjunction(self) -> Formula:
        left = self.unary()
        while self.peek()[1] == "and":
            self.take()
            left = Both(left, self.unary(), conjunction=True)
        return left

    def unary(self) -> Formula:
        kind, value, column = self.peek()
        if value == "not":
            self.take()
            return Not(self.unary())
        if value in ("always", "eventually"):
            self.take()
            low, high = 0.0, math.inf
            if self.peek()[1] == "[":
                low, high = self.interval()
            return Temporal(self.unary(), value == "always", low, high)
        if value == "(":
            self.take()
            inner = self.formula()
            self.take(")")
            return inner
        if kind in ("name", "number"):
            return self.atom()
        raise self.error(column, f"expected a signal, a number, '(', 'not', 'always' or "
                         f"'eventually', got {value!r}")  # fmt: skip

    def interval(self) -> tuple[float, float]:
        self.take("[")
        low = self.bound()
        self.take(",")
        high = self.bound()
        _, _, column = self.take("]")
        if not 0 <= low <= high:
            raise self.error(column, f"an interval [a, b] needs 0 <= a <= b (got [{low}, {high}])")
        return low, high

    def bound(self) -> float:
        kind, value, _ = self.peek()
        if value == "inf":
            self.take()
            return math.inf
        return float(self.take(kind="number")[1])

    def atom(self) -> Atom:
        first = self.take()
        _, op, column = self.take(kind="op")
        second = self.peek()
        if second[0] not in ("name", "number"):
            wanted = "a signal" if first[0] == "number" else "a number"
            raise self.error(second[2], f"expected {wanted}, got {second[1]!r}")
        self.take()
        if first[0] == "name" and second[0] == "number" and first[1] not in _KEYWORDS:
            return Atom(first[1], op.startswith(">"), float(second[1]))
        if first[0] == "number" and second[0] == "name" and second[1] not in _KEYWORDS:
            return Atom(second[1], op.startswith("<"), float(first[1]))
        raise self.error(column, "a comparison is a signal against a number")


def parse_requirement(text: str) -> Formula:
    """The formula of a requirement; a ``ConfigError`` names the column of a mistake."""
    parser = _Parser(text)
    if not parser.tokens:
        raise parser.error(1, "an empty requirement")
    formula = parser.formula()
    kind, value, column = parser.peek()
    if kind != "end":
        raise parser.error(column, f"expected the end, got {value!r}")
    return formula


def signal_names(formula: Formula) -> list[str]:
    """The signals a formula reads, in order of appearance, each once."""
    if isinstance(formula, Atom):
        return [formula.signal]
    if isinstance(formula, Not | Temporal):
        return signal_names(formula.operand)
    return list(dict.fromkeys([*signal_names(formula.left), *signal_names(formula.right)]))


def robustness_trace(formula: Formula, signals: Mapping[str, np.ndarray], dt: float) -> np.ndarray:
    """The robustness at every sample (``dt`` seconds apart) of ``signals``."""
    if isinstance(formula, Atom):
        x = np.asarray(signals[formula.signal], dtype=np.float64)
        return x - formula.value if formula.above else formula.value - x
    if isinstance(formula, Not):
        return -robustness_trace(formula.operand, signals, dt)
    if isinstance(formula, Both):
        left = robustness_trace(formula.left, signals, dt)
        right = robustness_trace(formula.right, signals, dt)
        return np.minimum(left, right) if formula.conjunction else np.maximum(left, right)
    inner = robustness_trace(formula.operand, signals, dt)
    return _window(inner, formula, dt)


def _window(inner: np.ndarray, formula: Temporal, dt: float) -> np.ndarray:
    """Min (always) or max (eventually) of ``inner`` over each sample's window ahead."""
    n = inner.size
    pick = np.minimum if formula.universal else np.maximum
    empty = math.inf if formula.universal else -math.inf
    first = math.ceil(formula.low / dt - 1e-9)
    if math.isinf(formula.high):  # to the end of the run: a running extreme from the end
        tail = pick.accumulate(inner[::-1])[::-1]
        out = np.full(n, empty)
        if first < n:
            out[: n - first] = tail[first:]
        return out
    last = math.floor(formula.high / dt + 1e-9)
    out = np.full(n, empty)
    for offset in range(first, min(last, n - 1) + 1):  # each offset ahead, all samples at once
        out[: n - offset] = pick(out[: n - offset], inner[offset:])
    return out


def robustness(formula: Formula, signals: Mapping[str, np.ndarray], dt: float) -> float:
    """The requirement's robustness over a run: its value at the first sample."""
    return float(robustness_trace(formula, signals, dt)[0])

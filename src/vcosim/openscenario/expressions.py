"""OpenSCENARIO's ``${...}`` expressions: arithmetic over numbers, ``$parameters`` and constants.

The standard's grammar (1.1 and later) is arithmetic (``+ - * / %``, parentheses, unary minus),
the functions ``round floor ceil sqrt pow`` (1.1) and ``sin cos tan asin acos atan sign abs
max min`` (listed since 1.2), comparisons and the logical ``not and or``. Beyond the standard,
as esmini reads them (and the public files use them): ``**`` for the power, the constants
``pi`` and ``e``, and esmini's string concatenation, ``${$name + _suffix + $other}``: when a
``+`` joins words that are not numbers, the parts are joined as text, the ``+`` and the
spaces around it dropped (``BrakeCondition_HWT + _ + $HeadwayTime`` is
``BrakeCondition_HWT_0.7``).

Python's own parser reads that grammar once ``$name`` is replaced by a Python name, so an
expression is parsed by :mod:`ast` and evaluated over a whitelist of node types: nothing but
arithmetic runs. A refusal says what is not understood in the expression's own terms.

Every expression is bounded before it is built: its text (:data:`MAX_EXPRESSION`), its
nesting (:data:`MAX_DEPTH`) and the text a concatenation makes (:data:`MAX_VALUE`), so a small
file cannot make a huge string or exhaust the parser's stack.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Mapping
from typing import Any


def _round(x: float) -> float:
    return float(math.floor(x + 0.5))  # the standard rounds halves up


def _sign(x: float) -> float:
    return float((x > 0) - (x < 0))


FUNCTIONS: dict[str, tuple[int, Callable[..., float]]] = {
    "round": (1, _round),
    "floor": (1, lambda x: float(math.floor(x))),
    "ceil": (1, lambda x: float(math.ceil(x))),
    "sqrt": (1, math.sqrt),
    "pow": (2, math.pow),
    "sin": (1, math.sin),
    "cos": (1, math.cos),
    "tan": (1, math.tan),
    "asin": (1, math.asin),
    "acos": (1, math.acos),
    "atan": (1, math.atan),
    "sign": (1, _sign),
    "abs": (1, abs),
    "max": (2, max),
    "min": (2, min),
}
"""The functions, by name: how many arguments each takes, and what it computes."""
CONSTANTS = {"pi": math.pi, "e": math.e}
"""Names an expression may use without a ``$`` (esmini's; the standard has none)."""
MAX_EXPRESSION = 4096
"""The longest ``${...}`` read, in characters (the public corpora's longest is under 200)."""
MAX_DEPTH = 100
"""The deepest nesting of operators, calls and parentheses in an expression."""
MAX_VALUE = 65536
"""The longest text an expression (a concatenation) may make, in characters."""


def _power(base: float, exponent: float) -> float:
    """``base ** exponent`` as a real number (a negative base's fractional power has none)."""
    value = operator.pow(base, exponent)
    if isinstance(value, complex):
        raise ValueError("no real power")
    return float(value)


BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Mod: math.fmod,
    ast.Pow: _power,
}
COMPARE: dict[type, Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
}
NAME = re.compile(r"\$([A-Za-z_][A-Za-z0-9_]*)")
WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_ ]*")
"""A part of a concatenation that is text: a word (or words), not a number or a formula."""
PLACEHOLDER = "_param_"
"""What ``$name`` becomes for Python's parser (``$`` is not Python)."""


class ExpressionError(ValueError):
    """An expression that is not the standard's arithmetic, or names an unknown parameter."""


def evaluate(expression: str, parameters: Mapping[str, str]) -> str:
    """The value of ``${...}``'s inside, as text (a whole number without a decimal point)."""
    if len(expression) > MAX_EXPRESSION:
        raise ExpressionError(
            f"{_short(expression)!r} is {len(expression):,} characters long "
            f"(at most {MAX_EXPRESSION:,})"
        )
    for name in NAME.findall(expression):
        if name not in parameters:
            raise ExpressionError(f"no parameter named {name!r}")
    joined = _concatenation(expression, parameters)
    if joined is not None:
        return joined
    alone = NAME.fullmatch(expression.strip())
    if alone is not None:  # ${$name}: its value, whatever it is
        return parameters[alone.group(1)]
    text = NAME.sub(lambda match: PLACEHOLDER + match.group(1), expression)
    text = re.sub(r"\bnot\b", " not ", text).replace("&&", " and ").replace("||", " or ")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        raise ExpressionError(f"{_short(expression)!r} is not an OpenSCENARIO expression") from None
    except (RecursionError, MemoryError):  # the parser's own stack
        raise ExpressionError(f"{_short(expression)!r} is nested too deep") from None
    try:
        value = _Evaluator(text, parameters).eval(tree.body)
    except ExpressionError:
        raise
    except ZeroDivisionError:
        raise ExpressionError(f"{_short(expression)!r} divides by zero") from None
    except OverflowError:
        raise ExpressionError(f"{_short(expression)!r} is too large a number") from None
    except (ValueError, TypeError):  # math's domain errors (sqrt(-1), acos(2))
        raise ExpressionError(
            f"{_short(expression)!r}: a function is given a value outside its domain"
        ) from None
    if isinstance(value, bool):
        return "true" if value else "false"
    value = float(value)
    if not math.isfinite(value):
        raise ExpressionError(f"{_short(expression)!r} is not a finite number")
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def _short(expression: str, most: int = 60) -> str:
    """The expression as a refusal quotes it: its start, when it is long."""
    text = expression.strip()
    return text if len(text) <= most else f"{text[: most - 3]}..."


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _concatenation(expression: str, parameters: Mapping[str, str]) -> str | None:
    """The string concatenation esmini reads, or None when the expression is not one.

    It is one when ``+`` (outside parentheses) joins parts of which one is text: words that
    are not a constant, or a ``$parameter`` whose value is not a number.
    """
    parts, depth, start = [], 0, 0
    for i, char in enumerate(expression):
        depth += (char == "(") - (char == ")")
        if char == "+" and depth == 0:
            parts.append(expression[start:i].strip())
            start = i + 1
    parts.append(expression[start:].strip())
    if len(parts) < 2 or not all(parts):
        return None

    def is_text(part: str) -> bool:
        alone = NAME.fullmatch(part)
        if alone is not None:
            return not _is_number(parameters[alone.group(1)])
        return WORD.fullmatch(part) is not None and part not in CONSTANTS

    if not any(is_text(part) for part in parts):
        return None
    size = sum(len(part) for part in parts) + sum(
        len(parameters[name]) for name in NAME.findall(expression)
    )
    if size > MAX_VALUE:  # an upper bound of the text, known before it is made
        raise ExpressionError(
            f"{_short(expression)!r} would make {size:,} characters (at most {MAX_VALUE:,})"
        )
    return "".join(NAME.sub(lambda match: parameters[match.group(1)], part) for part in parts)


class _Evaluator:
    """Evaluates a parsed expression, refusing every node the grammar does not have."""

    def __init__(self, text: str, parameters: Mapping[str, str]) -> None:
        self.text = text
        self.parameters = parameters
        self.depth = 0

    def said(self, node: ast.AST) -> str:
        """The expression's text of ``node``, as the file writes it."""
        segment = ast.get_source_segment(self.text.strip(), node) or ""
        return segment.replace(PLACEHOLDER, "$")

    def eval(self, node: ast.AST) -> float | bool:
        """The value of one node, no deeper than ``MAX_DEPTH``."""
        self.depth += 1
        try:
            if self.depth > MAX_DEPTH:
                said = _short(self.text.replace(PLACEHOLDER, "$"))
                raise ExpressionError(f"{said!r} is nested more than {MAX_DEPTH} deep")
            return self._eval(node)
        finally:
            self.depth -= 1

    def _eval(self, node: ast.AST) -> float | bool:
        if (
            isinstance(node, ast.Constant)
            and isinstance(node.value, (int, float))
            and not isinstance(node.value, bool)
        ):
            return float(node.value)  # floats overflow where integers would grow without end
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
            return BINARY[type(node.op)](self.eval(node.left), self.eval(node.right))
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
            inner = self.eval(node.operand)
            if isinstance(node.op, ast.Not):
                return not inner
            return -inner if isinstance(node.op, ast.USub) else inner
        if isinstance(node, ast.BoolOp):
            values = [bool(self.eval(v)) for v in node.values]
            return all(values) if isinstance(node.op, ast.And) else any(values)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in COMPARE:
            return COMPARE[type(node.ops[0])](self.eval(node.left), self.eval(node.comparators[0]))
        if isinstance(node, ast.Call):
            return self.call(node)
        raise ExpressionError(f"{self.said(node)!r} is not an OpenSCENARIO expression")

    def name(self, node: ast.Name) -> float | bool:
        """A parameter's value, a constant, or true and false."""
        if node.id.startswith(PLACEHOLDER):
            name = node.id[len(PLACEHOLDER) :]
            value = self.parameters[name]
            if value in ("true", "false"):
                return value == "true"
            try:
                return float(value)
            except ValueError:
                raise ExpressionError(
                    f"the parameter {name!r} is {value!r}, not a number"
                ) from None
        if node.id in ("true", "false"):
            return node.id == "true"
        if node.id in CONSTANTS:
            return CONSTANTS[node.id]
        raise ExpressionError(
            f"{node.id!r} is not a number, a $parameter or a constant ({', '.join(CONSTANTS)})"
        )

    def call(self, node: ast.Call) -> float:
        """One of the functions."""
        name = node.func.id if isinstance(node.func, ast.Name) else None
        if name not in FUNCTIONS or node.keywords:
            raise ExpressionError(
                f"{self.said(node)!r} is not an OpenSCENARIO expression: the functions are "
                + ", ".join(FUNCTIONS)
            )
        count, function = FUNCTIONS[name]
        if len(node.args) != count:
            raise ExpressionError(f"{name}() takes {count} argument(s): {self.said(node)!r}")
        return function(*(float(self.eval(a)) for a in node.args))

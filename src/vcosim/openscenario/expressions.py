"""OpenSCENARIO 1.1's ``${...}`` expressions: arithmetic over numbers and ``$parameters``.

The standard's grammar is arithmetic (``+ - * / % **``, parentheses, unary minus), the functions
``round floor ceil sqrt pow`` and the logical ``not and or`` over comparisons. Python's own
parser reads that grammar once ``$name`` is replaced by its value, so an expression is parsed
by :mod:`ast` and evaluated over a whitelist of node types: nothing but arithmetic runs.
"""

from __future__ import annotations

import ast
import math
import operator
import re
from collections.abc import Callable, Mapping
from typing import Any

FUNCTIONS: dict[str, Callable[..., float]] = {
    "round": lambda x: float(math.floor(x + 0.5)),  # the standard rounds halves up
    "floor": lambda x: float(math.floor(x)),
    "ceil": lambda x: float(math.ceil(x)),
    "sqrt": math.sqrt,
    "pow": math.pow,
}
BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Mod: math.fmod,
    ast.Pow: operator.pow,
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


class ExpressionError(ValueError):
    """An expression that is not the standard's arithmetic, or names an unknown parameter."""


def evaluate(expression: str, parameters: Mapping[str, str]) -> str:
    """The value of ``${...}``'s inside, as text (a whole number without a decimal point)."""

    def value_of(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in parameters:
            raise ExpressionError(f"no parameter named {name!r}")
        return f"({parameters[name]})"

    text = NAME.sub(value_of, expression)
    text = re.sub(r"\bnot\b", " not ", text).replace("&&", " and ").replace("||", " or ")
    try:
        tree = ast.parse(text.strip(), mode="eval")
        value = _eval(tree.body)
    except (SyntaxError, ZeroDivisionError, OverflowError, TypeError) as exc:
        raise ExpressionError(f"cannot evaluate {expression!r}: {exc}") from None
    if isinstance(value, bool):
        return "true" if value else "false"
    value = float(value)
    return str(int(value)) if value.is_integer() and abs(value) < 1e15 else repr(value)


def _eval(node: ast.AST) -> float | bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return float(node.value)  # floats overflow where integers would grow without end
    if isinstance(node, ast.Name) and node.id in ("true", "false"):
        return node.id == "true"
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
        return BINARY[type(node.op)](_eval(node.left), _eval(node.right))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd, ast.Not)):
        inner = _eval(node.operand)
        if isinstance(node.op, ast.Not):
            return not inner
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, ast.BoolOp):
        values = [bool(_eval(v)) for v in node.values]
        return all(values) if isinstance(node.op, ast.And) else any(values)
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in COMPARE:
        return COMPARE[type(node.ops[0])](_eval(node.left), _eval(node.comparators[0]))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in FUNCTIONS
        and not node.keywords
    ):
        return FUNCTIONS[node.func.id](*(_eval(a) for a in node.args))
    raise ExpressionError(f"{ast.dump(node)[:40]}... is not an OpenSCENARIO expression")

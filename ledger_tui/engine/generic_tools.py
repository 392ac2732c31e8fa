"""The tools every τ²-bench domain shares and no domain owns: `calculate` and
`transfer_to_human_agents` (kind "generic": they never change the database)."""

from __future__ import annotations

import ast
import math
import operator
from typing import Any

from pydantic import BaseModel, ConfigDict

from ledger_tui.engine.domain import Tool, ToolError


class CalculateArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    expression: str


class TransferArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    summary: str


ALLOWED = "0123456789+-*/(). "
# An integer power whose result would have more bits than this is refused: Python takes seconds
# to hours to build such a number, and no float holds more than 1,024 bits of one.
MAX_POWER_BITS = 1_000_000

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def _power(base: Any, exponent: Any) -> Any:
    if (
        type(base) is int
        and type(exponent) is int
        and abs(base) > 1
        and exponent > 0
        and (exponent > MAX_POWER_BITS or exponent * math.log2(abs(base)) > MAX_POWER_BITS)
    ):
        raise ToolError("Exponent too large")
    return operator.pow(base, exponent)


def _value(node: ast.AST) -> Any:
    """The value of a node as Python computes it. The allowed characters reach only numbers,
    `...`, `()`, arithmetic, signs and calls of a value (`2(3)`); each fails as in Python."""
    if isinstance(node, ast.Expression):
        return _value(node.body)
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Tuple):
        return tuple(_value(element) for element in node.elts)
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow):
            return _power(left, right)
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_value(node.operand))
    if isinstance(node, ast.Call):
        return _call(node)
    raise ToolError("Invalid expression")  # no other node can be written with the allowed characters


def _call(node: ast.Call) -> Any:
    """No value here is callable: Python checks the arguments' unpacking, then refuses the call."""
    func = _value(node.func)
    for arg in node.args:
        if isinstance(arg, ast.Starred):
            value = _value(arg.value)
            if not isinstance(value, tuple):
                raise TypeError(f"{func} argument after * must be an iterable, not {type(value).__name__}")
        else:
            _value(arg)
    for keyword in node.keywords:
        value = _value(keyword.value)
        if keyword.arg is None:
            raise TypeError(f"{func} argument after ** must be a mapping, not {type(value).__name__}")
    raise TypeError(f"'{type(func).__name__}' object is not callable")


def calculate(db: Any, args: CalculateArgs) -> str:
    """τ²-bench's calculator: digits, `+ - * / ( ) .` and spaces, evaluated as Python arithmetic,
    rounded to 2 decimals and shown as Python float text; a failure reads as Python's own error.

    Evaluated on the syntax tree (never `eval`), with the values and error texts `eval` gives. One
    difference: an integer power past MAX_POWER_BITS is refused ("Exponent too large"), where
    τ²-bench builds it (for up to hours) and then, unless a division brings it back, cannot turn it
    into a float. A mistyped expression runs as given, as in τ²-bench: a number is not iterable, a
    list of allowed characters is no text to evaluate."""
    expression = args.expression
    if not all(ch in ALLOWED for ch in expression):
        raise ToolError("Invalid characters in expression")
    if not isinstance(expression, str):
        raise TypeError("eval() arg 1 must be a string, bytes or code object")
    tree = ast.parse(expression.lstrip(" \t"), filename="<string>", mode="eval")
    return str(round(float(_value(tree)), 2))


def transfer_to_human_agents(db: Any, args: TransferArgs) -> str:
    return "Transfer successful"


CALCULATE_DESCRIPTION = (
    "Evaluate an arithmetic expression (digits, + - * / ( ) . and spaces); the result is rounded to two decimals."
)


def calculate_tool(description: str = CALCULATE_DESCRIPTION) -> Tool:
    return Tool("calculate", "generic", CalculateArgs, calculate, description)


def transfer_tool(description: str, args: type[BaseModel] = TransferArgs) -> Tool:
    return Tool("transfer_to_human_agents", "generic", args, transfer_to_human_agents, description)

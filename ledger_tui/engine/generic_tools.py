"""The tools every τ²-bench domain shares and no domain owns: `calculate` and
`transfer_to_human_agents` (kind "generic": they never change the database)."""

from __future__ import annotations

import ast
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


_OPS = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Pow: operator.pow,
    ast.Mod: operator.mod,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}


def _arith(node: ast.AST) -> float | int:
    if isinstance(node, ast.Expression):
        return _arith(node.body)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        left, right = _arith(node.left), _arith(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 1000:
            raise ToolError("Exponent too large")
        return _OPS[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_arith(node.operand))
    raise ToolError("Invalid expression")


def calculate(db: Any, args: CalculateArgs) -> str:
    """Arithmetic on digits, `+ - * / ( ) .` and spaces, rounded to 2 decimals, as Python float text.

    Evaluated on the syntax tree (never `eval`); exponents above 1000 are refused, which only
    rejects expressions τ²-bench would take minutes to compute."""
    if not all(ch in "0123456789+-*/(). " for ch in args.expression):
        raise ToolError("Invalid characters in expression")
    try:
        value = _arith(ast.parse(args.expression, mode="eval"))
        return str(round(float(value), 2))
    except ToolError:
        raise
    except (SyntaxError, ZeroDivisionError, OverflowError, TypeError, ValueError) as exc:
        raise ToolError(str(exc) or type(exc).__name__) from None


def transfer_to_human_agents(db: Any, args: TransferArgs) -> str:
    return "Transfer successful"


CALCULATE_DESCRIPTION = (
    "Evaluate an arithmetic expression (digits, + - * / ( ) . and spaces); the result is rounded to two decimals."
)


def calculate_tool(description: str = CALCULATE_DESCRIPTION) -> Tool:
    return Tool("calculate", "generic", CalculateArgs, calculate, description)


def transfer_tool(description: str, args: type[BaseModel] = TransferArgs) -> Tool:
    return Tool("transfer_to_human_agents", "generic", args, transfer_to_human_agents, description)

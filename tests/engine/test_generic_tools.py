"""The shared calculator answers as τ²-bench's does: Python's arithmetic, Python's error texts."""

from __future__ import annotations

import random
import warnings

import pytest

from ledger_tui.engine.generic_tools import ALLOWED, CalculateArgs, calculate


def answer(expression) -> tuple[str, str]:
    try:
        return "ok", calculate(None, CalculateArgs.model_construct(expression=expression))
    except Exception as exc:  # the environment shows any exception as `Error: <text>`
        return "error", str(exc)


def python_answer(expression) -> tuple[str, str]:
    """What τ²-bench's calculator does with the same text: check the characters, eval, round."""
    try:
        if not all(ch in ALLOWED for ch in expression):
            raise ValueError("Invalid characters in expression")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "'int' object is not callable; perhaps you missed a comma?"
            return "ok", str(round(float(eval(expression, {"__builtins__": None}, {})), 2))
    except Exception as exc:
        return "error", str(exc)


def test_random_expressions_answer_as_python_eval_does():
    rnd = random.Random(7)
    weights = [3] * 10 + [2, 2, 3, 2, 3, 3, 1, 2]  # digits, then + - * / ( ) . and space
    compared = 0
    for _ in range(20_000):
        expression = "".join(rnd.choices(ALLOWED, weights=weights, k=rnd.randint(0, 10)))
        ours = answer(expression)
        if ours == ("error", "Exponent too large"):
            continue  # Python would build a number of millions of digits first
        assert ours == python_answer(expression), expression
        compared += 1
    assert compared > 19_000


@pytest.mark.parametrize(
    "expression, expected",
    [
        ("(1200 - 350) * 0.5", ("ok", "425.0")),
        ("  2 + 2", ("ok", "4.0")),
        ("1 / 0", ("error", "division by zero")),
        ("2 +", ("error", "invalid syntax (<string>, line 1)")),
        ("2(3)", ("error", "'int' object is not callable")),
        ("...", ("error", "float() argument must be a string or a real number, not 'ellipsis'")),
        ("abc", ("error", "Invalid characters in expression")),
        (123, ("error", "'int' object is not iterable")),
        (None, ("error", "'NoneType' object is not iterable")),
        (["2"], ("error", "eval() arg 1 must be a string, bytes or code object")),
        ({"2": "x"}, ("error", "eval() arg 1 must be a string, bytes or code object")),
    ],
)
def test_texts_and_mistyped_expressions_answer_as_python_does(expression, expected):
    assert answer(expression) == expected == python_answer(expression)


def test_only_huge_integer_powers_are_refused():
    assert answer("2 ** 1000") == python_answer("2 ** 1000")  # too large for a float: Python's words
    assert answer("2 ** 1000 / 2 ** 999") == ("ok", "2.0")
    assert answer("9 ** 9 ** 9") == ("error", "Exponent too large")
    assert answer("2.0 ** 9999999") == python_answer("2.0 ** 9999999")  # a float overflows at once

"""A tool gets the same arguments whichever way the environment makes them.

Plain arguments (text, whole numbers, lists of text of the declared types) become the argument
model directly (`CallPlan.direct`); every other call goes through strict validation of the JSON
text (`validated`). For every tool of every domain and many values of every argument, both must
give the same model (same values of the same types, same fields set), and whatever `direct`
declines must still be answered by the validation path, refusal texts included.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import pytest
from pydantic import ValidationError

from ledger_tui.domains import available, load_domain
from ledger_tui.engine.environment import CallPlan, Environment, _Records, validated
from ledger_tui.engine.events import ToolCall

VALUES: tuple[Any, ...] = (
    "ZFA04Y", "", "  spaced  ", "é accent", "\ud800", "a\x00b", "3", 0, 7, -12, 2**63 - 1, 2**63, -(2**63), 10**40,
    True, False, 2.5, 3.0, -0.0, 1e308, math.nan, math.inf, None, [], ["a", "b"], ["a", 1], ["é"], [["a"]], {}, {"k": "v"},
)  # fmt: skip


def plans() -> list[tuple[str, CallPlan]]:
    out = []
    for name in available():
        domain = load_domain(name)
        for tool in domain.tools + domain.user_tools:
            out.append((f"{name}.{tool.requestor}.{tool.name}", CallPlan(tool, "Tools")))
    return out


PLANS = plans()


def sample(kind: Any) -> Any:
    """A value `direct` takes for an argument of this kind."""
    if isinstance(kind, frozenset):
        return min(kind)
    if isinstance(kind, _Records):
        return [{name: sample(k) for name, k in kind.fields}]
    return {"text": "x", "whole": 3, "number": 2.5, "texts": ["a"]}[kind]


def records_like(plan: CallPlan) -> tuple[Any, ...]:
    """Lists of records for the tool's record arguments: as declared, and a key short, a key
    more, a value of another type, an item that is no object, two of them."""
    out: list[Any] = []
    for _, kind in plan.fields or ():
        if isinstance(kind, _Records):
            good = sample(kind)[0]
            first = next(iter(good))
            out += [
                [good], [good, dict(good)], [{k: v for k, v in good.items() if k != first}], [{**good, "extra": "x"}],
                [{**good, first: 7}], [{**good, first: "é"}], [good, "x"], [{**good, first: 2.0}],
            ]  # fmt: skip
        if isinstance(kind, frozenset):
            out += sorted(kind)
    return tuple(out)


def exact(value: Any) -> Any:
    """A value as what a tool can tell about it: models with their values, types and fields set."""
    if isinstance(value, list):
        return [exact(v) for v in value]
    if not hasattr(value, "__pydantic_fields_set__"):
        return (type(value), repr(value))
    return (
        type(value),
        [(k, exact(v)) for k, v in value.__dict__.items()],
        value.__pydantic_fields_set__,
        value.__pydantic_extra__,
        value.__pydantic_private__,
    )


@pytest.mark.parametrize("label,plan", PLANS, ids=[label for label, _ in PLANS])
def test_direct_arguments_equal_validated_ones(label: str, plan: CallPlan) -> None:
    fields = list(plan.model.model_fields)
    typical = {name: sample(kind) for name, kind in plan.fields} if plan.fields else {name: "x" for name in fields}
    tried = direct = 0
    for name, value in itertools.product(fields or [None], VALUES + records_like(plan)):
        arguments = dict(typical) if name is None else {**typical, name: value}
        tried += 1
        made = plan.direct(arguments)
        if made is None:
            continue
        direct += 1
        try:
            expected = validated(plan.tool, arguments)
        except ValidationError as exc:  # pragma: no cover - the failure explains itself
            pytest.fail(f"{label}: {arguments!r} was taken directly, but validation refuses it: {exc}")
        assert exact(made) == exact(expected), arguments
        if isinstance(made.__dict__.get(name), list):
            assert made.__dict__[name] is not arguments[name]  # the tool's list is its own
            for item, given in zip(made.__dict__[name], arguments[name]):
                assert item is not given or not isinstance(given, dict)
    assert tried
    assert direct or plan.fields is None


def test_the_common_tools_take_their_arguments_directly() -> None:
    by_label = dict(PLANS)
    assert by_label["airline.assistant.send_certificate"].direct({"user_id": "mia_li_3668", "amount": 50}) is not None
    assert by_label["airline.assistant.calculate"].direct({"expression": "2 + 2"}) is not None
    assert by_label["retail.assistant.modify_pending_order_items"].direct(
        {"order_id": "#W1", "item_ids": ["1"], "new_item_ids": ["2"], "payment_method_id": "gift_card_1"}
    ) is not None
    # a count given as text, a boolean, a missing or an extra argument: validation answers
    assert by_label["airline.assistant.send_certificate"].direct({"user_id": "mia_li_3668", "amount": "50"}) is None
    assert by_label["airline.assistant.send_certificate"].direct({"user_id": "mia_li_3668", "amount": True}) is None
    assert by_label["airline.assistant.send_certificate"].direct({"user_id": "mia_li_3668"}) is None
    assert by_label["airline.assistant.calculate"].direct({"expression": "1", "x": 1}) is None
    booking = {
        "user_id": "mia_li_3668", "origin": "JFK", "destination": "SEA", "flight_type": "one_way", "cabin": "economy",
        "flights": [{"flight_number": "HAT136", "date": "2024-05-20"}],
        "passengers": [{"first_name": "Mia", "last_name": "Li", "dob": "1990-04-05"}],
        "payment_methods": [{"payment_id": "credit_card_4421486", "amount": 200}],
        "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no",
    }  # fmt: skip
    made = by_label["airline.assistant.book_reservation"].direct(booking)
    assert made is not None and made.flights[0].flight_number == "HAT136"
    assert by_label["airline.assistant.book_reservation"].direct({**booking, "cabin": "first"}) is None


def test_refusals_read_the_same_for_declined_arguments() -> None:
    env = Environment(load_domain("airline"))

    def run(arguments: dict[str, Any]) -> str:
        return env.execute(ToolCall(id="c", name="calculate", arguments=arguments)).content

    assert run({"expression": 5}) == "Error: 'int' object is not iterable"
    assert run({"expression": "2 + 2", "extra": 1}) == "Error: AirlineTools.calculate() got an unexpected keyword argument 'extra'"
    assert run({}) == "Error: AirlineTools.calculate() missing 1 required positional argument: 'expression'"
    assert run({"expression": "2 + 2"}) == "4.0"

"""The gate refuses NaN and ±Infinity in a write's arguments, in every domain.

Each case plays a conversation as an agent would have it (the customer identifies and asks, the
agent reads, lists the details and gets a yes) and then proposes the write with one non-finite
number in it. Under the gate the call is BLOCKed by `finite_numbers`, the customer is told which
argument was wrong, and the database is untouched. Without the gate (baseline) the tool runs as it
always did: the gate changes nothing about the tools themselves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.engine.events import GateDecided, Refusal, ToolCall, ToolResult, Verdict
from ledger_tui.engine.agents.gold import fresh_environment
from ledger_tui.engine.model.models import ScriptedModel
from ledger_tui.engine.session import Session
from ledger_tui.engine.agents.tasks import load_tasks
from tests.engine.helpers import drain, turn

NAN = float("nan")
INF = float("inf")


@dataclass(frozen=True)
class Case:
    domain: str
    task: str  # the task whose opening, reads and write the conversation follows
    write: str
    change: dict[str, Any]  # argument -> replacement (a callable gets the gold arguments)
    path: str  # the argument path the refusal names
    shown: str  # NaN, Infinity or -Infinity


def _second_payment_nan(args: dict[str, Any]) -> list[dict[str, Any]]:
    return [*args["payment_methods"], {"payment_id": "gift_card_1", "amount": NAN}]


CASES = [
    Case("airline", "airline_10_book_one_way_economy", "book_reservation",
         {"payment_methods": _second_payment_nan}, "payment_methods.1.amount", "NaN"),
    Case("airline", "airline_10_book_one_way_economy", "send_certificate",
         {"user_id": "rosa_morgan_2481", "amount": INF}, "amount", "Infinity"),
    Case("retail", "retail_10_return_to_original_method", "return_delivered_order_items",
         {"item_ids": lambda a: [a["item_ids"][0], NAN]}, "item_ids.1", "NaN"),
    Case("telecom", "telecom_06_data_used_up_refuel", "refuel_data", {"gb_amount": NAN}, "gb_amount", "NaN"),
    Case("telecom", "telecom_06_data_used_up_refuel", "refuel_data", {"gb_amount": "-Infinity"}, "gb_amount", "-Infinity"),
    Case("telehealth", "telehealth_01_book_cardiology_visit_open_slot", "schedule_appointment",
         {"duration_minutes": -INF}, "duration_minutes", "-Infinity"),
]  # fmt: skip


def _plan(case: Case) -> tuple[Any, Any, str, list[ToolCall], ToolCall]:
    """(domain, task, opening, the gold reads, the write with its non-finite argument)."""
    domain = load_domain(case.domain)
    task = next(t for t in load_tasks(domain.tasks_path) if t.id == case.task)
    actions = [a for a in task.gold_actions if a.requestor == "assistant"]
    reads = [
        ToolCall(id=f"read_{i}", name=a.name, arguments=a.arguments)
        for i, a in enumerate(actions)
        if domain.kind(a.name) == "read"
    ]
    gold = next((a.arguments for a in actions if a.name == case.write), {})
    arguments = dict(gold)
    for key, value in case.change.items():
        arguments[key] = value(gold) if callable(value) else value
    return domain, task, task.ledger_tui.opening, reads, ToolCall(id="the_write", name=case.write, arguments=arguments)


async def _play(case: Case, mode: str) -> Session:
    domain, task, opening, reads, write = _plan(case)
    model = ScriptedModel()
    session = Session(domain, model, mode, env=fresh_environment(domain, task), timestamps=False)  # type: ignore[arg-type]
    await drain(session.start())
    details = f"I will call {write.name} with {write.signature()}. Shall I go ahead?"
    model.extend([turn(*reads), turn(text=details)])
    await drain(session.user_says(opening))
    model.extend([turn(write), turn(text="Done.")])
    await drain(session.user_says("Yes, please go ahead."))
    await drain(session.end())
    return session


@pytest.mark.parametrize("case", CASES, ids=[f"{c.domain}-{c.write}-{c.shown}" for c in CASES])
async def test_a_write_with_a_non_finite_number_is_blocked_and_changes_nothing(case: Case):
    session = await _play(case, "full")
    decision = next(e.decision for e in session.events if isinstance(e, GateDecided) and e.decision.call.id == "the_write")
    assert decision.verdict == Verdict.BLOCK
    assert [(p.name, p.clause) for p in decision.failed()] == [("finite_numbers", "general.arguments")]
    expected = f"{case.path} is {case.shown}; the gate does not run calls with non-finite numbers."
    assert decision.reason == expected
    result = next(e for e in session.events if isinstance(e, ToolResult) and e.call_id == "the_write")
    assert not result.executed and "POLICY GATE: BLOCK" in result.content and expected in result.content
    refusal = next(e for e in session.events if isinstance(e, Refusal))
    assert case.path in refusal.text, "the customer is told which argument was refused"
    started, ended = session.state.started, session.state.ended
    assert started is not None and ended is not None
    assert ended.db_digest == started.db_digest and ended.user_db_digest == started.user_db_digest


@pytest.mark.parametrize("case", CASES, ids=[f"{c.domain}-{c.write}-{c.shown}" for c in CASES])
async def test_without_the_gate_the_tool_runs_the_call_as_before(case: Case):
    session = await _play(case, "baseline")
    assert not [e for e in session.events if isinstance(e, GateDecided)]
    result = next(e for e in session.events if isinstance(e, ToolResult) and e.call_id == "the_write")
    assert result.executed, "baseline mode hands the call to the tool, which answers as in τ²-bench"


async def test_nan_written_as_a_string_is_refused_only_where_the_argument_is_a_number():
    """"NaN" is text in a text field (the tools judge it like any other id), and a number where
    the argument model reads it as one (telecom's gb_amount)."""
    retail = Case("retail", "retail_10_return_to_original_method", "return_delivered_order_items",
                  {"payment_method_id": "NaN"}, "payment_method_id", "NaN")  # fmt: skip
    session = await _play(retail, "full")
    decision = next(e.decision for e in session.events if isinstance(e, GateDecided) and e.decision.call.id == "the_write")
    assert "finite_numbers" not in [p.name for p in decision.failed()]
    airline = Case("airline", "airline_10_book_one_way_economy", "send_certificate",
                   {"user_id": "rosa_morgan_2481", "amount": "NaN"}, "amount", "NaN")  # fmt: skip
    session = await _play(airline, "full")
    decision = next(e.decision for e in session.events if isinstance(e, GateDecided) and e.decision.call.id == "the_write")
    # the certificate amount takes numbers only, as sent: "NaN" is an invalid argument, not a number
    assert [p.name for p in decision.failed()] == ["valid_arguments"] and decision.verdict == Verdict.REVISE


async def test_nan_from_a_model_through_the_openai_client_reaches_the_gate_as_a_float_and_is_refused():
    """A model may write NaN in its JSON arguments (Python's json reads it); the call reaches the
    gate with a float NaN, is refused, and the conversation goes on: the next request carries the
    refused call back to the model without breaking the client."""
    from ledger_tui.engine.model.models import OpenAIModel
    from tests.loopback import LoopbackServer, sequence

    replies = [
        {"tool_calls": [{"name": "get_user_details", "arguments": '{"user_id": "rosa_morgan_2481"}'}]},
        {"text": "I can send a certificate to rosa_morgan_2481. Shall I?"},
        {"tool_calls": [{"name": "send_certificate", "arguments": '{"user_id": "rosa_morgan_2481", "amount": NaN}'}]},
        {"text": "Sorry about that. Anything else?"},
    ]
    domain = load_domain("airline")
    with LoopbackServer(sequence(replies)) as server:
        model = OpenAIModel(model="loopback-model", base_url=server.base_url, api_key="test-key")
        session = Session(domain, model, "full", timestamps=False)
        await drain(session.start())
        await drain(session.user_says("Hi, I'm rosa_morgan_2481; my flight was delayed."))
        await drain(session.user_says("Yes, please."))
        await drain(session.user_says("What happened?"))
        await model.aclose()
    decision = next(e.decision for e in session.events if isinstance(e, GateDecided))
    amount = decision.call.arguments["amount"]
    assert isinstance(amount, float) and math.isnan(amount)
    assert decision.verdict == Verdict.BLOCK and [p.name for p in decision.failed()] == ["finite_numbers"]
    assert decision.reason.startswith("amount is NaN;")
    assert not next(e for e in session.events if isinstance(e, ToolResult) and e.name == "send_certificate").executed
    assert len(server.requests) == 4, "the conversation went on after the refusal"
    echoed = [
        c["function"]["arguments"]
        for m in server.requests[-1]["messages"]
        for c in m.get("tool_calls") or ()
        if c["function"]["name"] == "send_certificate"
    ]
    assert echoed and "NaN" in echoed[0]
    assert session.state.ended is None and session.env.digests()[0] == session.state.started.db_digest

"""The Agents SDK guardrail through a real `Runner.run` against a loopback OpenAI-compatible server:
reads absorbed, a held write answered by the customer's yes, a forbidden write rejected."""

from __future__ import annotations

import json

import pytest

from tests.loopback import LoopbackServer, sequence


@pytest.fixture(scope="module")
def converse():
    """The example's conversation loop. The agents extra is a dev dependency: without it these tests
    fail here (they never skip). Imported by the tests that use it, not when the file is collected:
    each pytest-xdist worker collects every file, and the Agents SDK takes about 1.5 s to import."""
    from ledger_tui.adapters.agents_example import converse

    return converse


def call(name: str, **arguments: object) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def tool_messages(request: dict) -> list[str]:
    return [m["content"] for m in request["messages"] if m.get("role") == "tool"]


async def test_a_card_then_the_customers_yes_lets_the_cancellation_run(converse) -> None:
    replies = [
        call("get_user_details", user_id="grace_scott_6483"),
        call("get_reservation_details", reservation_id="633IZT"),
        call("cancel_reservation", reservation_id="633IZT"),  # held: the reason is asked first
        {"text": "Why do you want to cancel reservation 633IZT? (relayed)"},
        call("cancel_reservation", reservation_id="633IZT"),  # held: the card
        {"text": "Before I go ahead, please confirm … (the card, relayed)"},
        call("cancel_reservation", reservation_id="633IZT"),  # the customer said yes: allowed
        {"text": "Done: reservation 633IZT is cancelled."},
    ]
    with LoopbackServer(sequence(replies)) as server:
        talk = await converse(
            [
                "Hi, this is grace_scott_6483. I booked reservation 633IZT yesterday but my plans changed, so please cancel it.",
                "My plans changed.",
                "Yes, please.",
            ],
            base_url=server.base_url,
            model="loopback",
        )
        requests = list(server.requests)
    assert [d.verdict for d in talk.guard.decisions] == ["REVISE", "REVISE", "ALLOW"]
    assert talk.guard.decisions[0].question and "Why do you want to cancel" in talk.guard.decisions[0].question
    assert talk.guard.decisions[1].card and "Refund: $100" in talk.guard.decisions[1].card
    # the model read the gate's feedback and the text to send instead of a result
    held = tool_messages(requests[3])[-1]
    assert held.startswith("Not run yet") and "Why do you want to cancel reservation 633IZT?" in held
    card = tool_messages(requests[5])[-1]
    assert "Before I go ahead, please confirm" in card and "American Express ending in 0210" in card
    # the allowed call ran on the mock database, and the reads' records are in the ledger
    assert json.loads(tool_messages(requests[7])[-1])["status"] == "cancelled"
    ledger = talk.guard.gate.ledger
    assert "reservations.633IZT" in ledger and "users.grace_scott_6483" in ledger
    assert ledger["reservations.633IZT"]["stale"] is True  # the write touched it: read again to know
    assert talk.replies[-1] == "Done: reservation 633IZT is cancelled."


async def test_a_forbidden_cancellation_is_rejected_with_the_gates_feedback_and_never_runs(converse) -> None:
    replies = [
        call("get_user_details", user_id="rosa_phillips_9719"),
        call("get_reservation_details", reservation_id="VY0QX8"),
        call("get_flight_status", flight_number="HAT255", date="2024-05-23"),
        call("cancel_reservation", reservation_id="VY0QX8"),
        {"text": "I'm sorry, it cannot be cancelled."},
        call("get_reservation_details", reservation_id="VY0QX8"),
        {"text": "It is still booked."},
    ]
    with LoopbackServer(sequence(replies)) as server:
        talk = await converse(
            ["Hi, I'm rosa_phillips_9719. I need to cancel reservation VY0QX8 and get my money back; my plans changed.", "Check it?"],
            base_url=server.base_url,
            model="loopback",
        )
        requests = list(server.requests)
    assert [d.verdict for d in talk.guard.decisions] == ["BLOCK"]
    rejected = tool_messages(requests[4])[-1]
    assert rejected.startswith("POLICY GATE: BLOCK. cancel_reservation is not allowed and was not executed.")
    assert "more than 24 hours ago" in rejected
    assert json.loads(tool_messages(requests[6])[-1])["status"] != "cancelled"  # never ran


async def test_a_tool_the_domain_does_not_know_is_refused() -> None:
    from agents import FunctionTool

    from ledger_tui.adapters.agents_sdk import LedgerGuard

    guard = LedgerGuard("airline")
    ran: list[str] = []

    async def invoke(ctx: object, raw: str) -> str:
        ran.append(raw)
        return "done"

    tool = guard.guarded(FunctionTool(name="wipe_database", description="", params_json_schema={"type": "object", "properties": {}}, on_invoke_tool=invoke))
    from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner
    from openai import AsyncOpenAI

    with LoopbackServer(sequence([call("wipe_database"), {"text": "ok"}])) as server:
        model = OpenAIChatCompletionsModel(model="loopback", openai_client=AsyncOpenAI(base_url=server.base_url, api_key="x", max_retries=0))
        await Runner.run(Agent(name="a", tools=[tool], model=model), "go", run_config=RunConfig(tracing_disabled=True))
        requests = list(server.requests)
    assert ran == []
    assert "'wipe_database' is not a tool of the airline domain" in tool_messages(requests[1])[-1]

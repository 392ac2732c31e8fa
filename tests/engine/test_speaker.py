"""Identity is bound to who speaks: a caller who gives another person's identifier as the one to
act on identifies nobody, and the gate says why; one who gives their own, with relatives named
as passengers or recipients, is identified as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ledger_tui.engine.events import GateDecided, ToolResult, Verdict
from ledger_tui.engine.model.models import ScriptedModel
from ledger_tui.engine.session import Session
from ledger_tui.engine.conversation.speaker import given_for_another
from tests.engine.helpers import call, drain, turn

TABLES = sorted((Path(__file__).parents[1] / "data" / "identity").glob("claims-*.json"))


@pytest.mark.parametrize("table", TABLES, ids=lambda p: p.stem)
def test_each_claim_in_the_tables_is_read_as_the_callers_own_or_another_persons(table):
    rows = json.loads(table.read_text())["rows"]
    wrong = [r for r in rows if (given_for_another(r["messages"], r["value"]) is None) != r["speaker"]]
    assert not wrong, [(r["kind"], r["messages"]) for r in wrong]


def test_the_words_that_decide_are_the_ones_returned():
    quote = given_for_another(["Hello.", "My mother's user id is lena_park_5521, she wants to cancel."], "lena_park_5521")
    assert quote == "My mother's user id is lena_park_5521, she wants to cancel."
    assert given_for_another(["I want to cancel."], "lena_park_5521") is None  # never given: not another's


async def run(toy_domain, said: str):
    model = ScriptedModel([
        turn(call("find_member_by_email", "id1", email="ada@example.org"), call("get_loan_details", "r1", loan_id="L1")),
        turn(call("renew_loan", "w1", loan_id="L1")),
        turn(text="I can't do that."),
    ])
    session = Session(toy_domain, model, "full")
    await drain(session.start())
    events = await drain(session.user_says(said))
    return session, events


async def test_a_caller_acting_for_someone_else_identifies_nobody_and_the_write_does_not_run(toy_domain):
    session, events = await run(toy_domain, "I'm calling for my mother. Her email is ada@example.org, please renew L1.")
    assert session.state.ledger.value("users.current") is None
    [decided] = [e.decision for e in events if isinstance(e, GateDecided)]
    assert decided.verdict == Verdict.REVISE
    [who] = [r for r in decided.failed() if r.name == "customer_identified"]
    assert "identifies another person" in who.reason and "Her email is ada@example.org" in who.reason
    assert "account holder must contact us" in who.hint and who.suggested_call is None  # no lookup to make
    assert not [e for e in events if isinstance(e, ToolResult) and e.call_id == "w1" and e.executed]


async def test_a_caller_naming_a_relative_as_a_recipient_is_still_identified(toy_domain):
    session, events = await run(toy_domain, "I borrowed L1 for my mother. My email is ada@example.org, please renew it.")
    assert session.state.ledger.value("users.current") is not None
    [decided] = [e.decision for e in events if isinstance(e, GateDecided)]
    assert "customer_identified" not in [r.name for r in decided.failed()]

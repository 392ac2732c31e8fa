"""A bounded slice of the card property run (tests/property_cards.py): in every domain, random
gold-agent sessions whose cards get random replies from the reply tables; no write runs unless a
card listing exactly that call got a reply the tables mark yes. The full run:
`python -m benchmarks.card_property`."""

from __future__ import annotations

import pytest

from tests.property_cards import DOMAINS, check, run_domain

SEED = 20261201
EPISODES = 12


@pytest.mark.parametrize("domain", DOMAINS)
async def test_a_write_runs_only_on_a_yes_to_a_card_listing_exactly_that_call(domain):
    tally = await run_domain(domain, SEED, EPISODES)
    assert tally.violations == []
    # the slice exercises both sides: cards answered yes that ran, and cards answered otherwise
    assert tally.cards >= EPISODES // 2 and tally.answers["yes"] >= 1 and tally.answers["yes"] < tally.cards


def test_the_check_catches_a_write_run_without_a_yes():
    from ledger_tui.engine.events import ConfirmationAnswered, ConfirmationRequested, ToolCall, ToolCallProposed, ToolResult

    call = ToolCall(id="w1", name="renew_loan", arguments={"loan_id": "L1"})
    other = ToolCall(id="g1", name="renew_loan", arguments={"loan_id": "L2"})
    card = ConfirmationRequested(seq=1, card="card_1", calls=[call], text="…")
    answered = ConfirmationAnswered(seq=2, card="card_1", answer="yes", quote="no", runs=["g1"])
    ran = [ToolCallProposed(seq=3, call=other, kind="write"), ToolResult(seq=4, call_id="g1", name="renew_loan", content="{}")]
    problems = check([card, answered, *ran], {"card_1": "not"})
    assert any("not a yes in the tables" in p for p in problems)
    assert any("which listed another call" in p for p in problems)
    unasked = [ToolCallProposed(seq=1, call=call, kind="write"), ToolResult(seq=2, call_id="w1", name="renew_loan", content="{}")]
    assert check(unasked, {}) == ['renew_loan(loan_id="L1") ran without a card\'s yes']

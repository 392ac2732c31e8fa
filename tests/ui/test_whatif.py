"""What-if re-runs the gate on the state the decision saw, with one edit."""

from __future__ import annotations

from ledger_tui.engine.events import GateDecided, Verdict
from ledger_tui.ui.whatif import Edit, editable_targets, state_before, what_if
from tests.ui.scenarios import BLOCK_MESSAGES, block_turns, record


async def test_editing_a_ledger_value_flips_block_to_allow(toy):
    events = await record(toy, block_turns(), BLOCK_MESSAGES)
    decided = next(e for e in events if isinstance(e, GateDecided))
    before = state_before(events, decided)
    loan = dict(before.ledger.value("loans.L2"), renewals=1)
    assert what_if(decided, before, toy, Edit("ledger", "loans.L2", loan)).verdict == Verdict.ALLOW
    # the recorded decision is untouched
    assert decided.decision.verdict == Verdict.BLOCK


async def test_editing_an_argument_to_an_unread_loan_asks_to_read_it(toy):
    events = await record(toy, block_turns(), BLOCK_MESSAGES)
    decided = next(e for e in events if isinstance(e, GateDecided))
    outcome = what_if(decided, state_before(events, decided), toy, Edit("argument", "loan_id", "L1"))
    assert outcome.verdict == Verdict.REVISE
    assert "loans.L1" in outcome.reason


async def test_targets_are_the_arguments_then_the_paths_read(toy):
    events = await record(toy, block_turns(), BLOCK_MESSAGES)
    decided = next(e for e in events if isinstance(e, GateDecided))
    targets = editable_targets(decided, state_before(events, decided))
    assert [(t, k) for t, k, _ in targets] == [("argument", "loan_id"), ("ledger", "loans.L2")]

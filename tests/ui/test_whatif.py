"""What-if re-runs the gate on the state the decision saw, with the edits so far."""

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


async def test_targets_are_the_arguments_then_each_field_of_the_records_read(toy):
    events = await record(toy, block_turns(), BLOCK_MESSAGES)
    decided = next(e for e in events if isinstance(e, GateDecided))
    targets = editable_targets(decided, state_before(events, decided))
    assert [t.label() for t in targets][:4] == ["arg loan_id", "loans.L2 › status", "loans.L2 › renewals", "loans.L2 › loan_id"]
    assert {t.label() for t in targets[4:]} == {"loans.L2 › member_id", "loans.L2 › book"}
    renewals = targets[2]
    assert (renewals.field, renewals.value) == ("renewals", 2)


async def test_edits_add_up_and_a_later_edit_of_a_field_replaces_the_earlier(toy):
    events = await record(toy, block_turns(), BLOCK_MESSAGES)
    decided = next(e for e in events if isinstance(e, GateDecided))
    before = state_before(events, decided)
    once = Edit("ledger", "loans.L2", 1, field="renewals")
    returned = Edit("ledger", "loans.L2", "returned", field="status")
    assert what_if(decided, before, toy, [once]).verdict == Verdict.ALLOW
    # two fields of one record, both applied: renewed once, but returned
    both = what_if(decided, before, toy, [once, returned])
    assert both.verdict == Verdict.BLOCK and "returned" in both.reason
    assert before.ledger.value("loans.L2")["renewals"] == 2, "the state the gate saw is untouched"

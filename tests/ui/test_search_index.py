"""The search, without a screen: what each pane offers it, one hit per step, the counts the bar
shows, and stepping by step with wrapping at the ends."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ledger_tui.engine.events import GateDecided, GateDecision, LedgerUpdated, PredicateResult, ToolCall, ToolCallProposed, ToolResult, UserMessage, Verdict
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.ui.search import SearchIndex, search

ROOT = Path(__file__).resolve().parents[2]
BLOCKED = read_trajectory(ROOT / "sessions" / "airline-cancel-blocked.jsonl").events


def test_a_reservation_id_is_found_in_every_pane_one_hit_a_step():
    found = search(BLOCKED, "vy0qx8")  # case ignored
    by_step = {h.step: h for h in found.hits}
    assert found.steps == sorted(by_step)  # step order, one hit each
    assert {h.pane for h in found.hits} == {"conversation", "ledger", "gate"}
    assert by_step[1].where == "customer" and "VY0QX8" in by_step[1].snippet
    assert by_step[14].pane == "ledger" and by_step[14].path == "reservations.VY0QX8"
    assert by_step[25].where == "agent call" and by_step[25].snippet.endswith('cancel_reservation(reservation_id="VY0QX8")')
    assert by_step[26].pane == "gate" and by_step[26].where == "cancel_reservation"
    assert found.matches == sum(h.count for h in found.hits) > len(found.hits)  # the record names it twice


def test_a_word_is_found_in_results_ledger_values_and_the_gate_reason():
    found = search(BLOCKED, "  Insurance ")
    panes = {h.step: h.pane for h in found.hits}
    assert panes == {13: "conversation", 14: "ledger", 20: "conversation", 26: "gate", 27: "conversation", 28: "conversation", 30: "conversation"}
    assert found.by_pane() == {"conversation": 5, "ledger": 1, "gate": 1}
    assert found.summary() == '"Insurance": 7 steps · 7 matches: Chat 5, Ledger 1, Gate 1 · Enter: next'


def test_nothing_found_says_so_and_an_empty_query_invites_typing():
    assert search(BLOCKED, "zebra").summary() == 'no match for "zebra"'
    assert search(BLOCKED, "zebra").next_after(3) is None
    assert search(BLOCKED, "   ").hits == () and search(BLOCKED, "").summary().startswith("type to search")


def test_stepping_goes_by_step_and_wraps_at_both_ends():
    found = search(BLOCKED, "insurance")
    assert found.next_after(13) == (found.hits[1], False)  # strictly after the step it is on
    assert found.next_after(0, forward=False) == (found.hits[-1], True)
    assert found.next_after(30) == (found.hits[0], True)
    hit, wrapped = found.next_after(26, forward=False)
    assert hit.step == 20 and not wrapped
    line = found.summary(hit)
    assert line.startswith("hit 3 of 7 steps · step 20 Chat agent · 7 matches") and "travel insurance" in line


def test_the_gate_log_offers_its_call_verdict_failed_checks_and_reasons():
    call = ToolCall(id="c1", name="renew_loan", arguments={"loan_id": "L2"})
    failed = PredicateResult(name="not_overdue", clause="§2", passed=False, verdict_on_fail=Verdict.BLOCK, reason="loan L2 is overdue")
    decided = GateDecided(seq=3, decision=GateDecision(call=call, verdict=Verdict.BLOCK, reason="refused", predicates=[failed]))
    events = [UserMessage(seq=0, text="renew"), ToolCallProposed(seq=1, call=call, kind="write"), LedgerUpdated(seq=2, path="loans.L2", change="added", after={"status": "overdue"}), decided]
    assert search(events, "not_overdue").steps == [3]
    assert search(events, "block").steps == [3]
    assert search(events, "is overdue").steps == [3]
    assert search(events, '"status":"overdue"').steps == [2]  # the value as the ledger holds it
    assert search(events, "loans.l2").steps == [2]
    assert search(events, "loan_id").steps == [1, 3]  # the call's arguments, in the conversation and the gate


def test_the_index_catches_up_with_events_that_came_after_it_was_built():
    events: list = [UserMessage(seq=0, text="hello")]
    index = SearchIndex(events)
    assert index.find("refund").hits == ()
    events.append(ToolResult(seq=1, call_id="c", name="get_order", content="refund pending"))
    index.catch_up(events)
    assert index.find("refund").steps == [1]
    index.catch_up(events)  # nothing new: nothing counted twice
    assert len(index.find("refund").hits) == 1


def test_the_search_module_imports_without_textual():
    code = "import json, sys, ledger_tui.ui.search; print(json.dumps(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'rich'))))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout.strip().splitlines()[-1]) == []

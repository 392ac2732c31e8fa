"""A check the free-text reader decided is an inferred finding, not a ledger violation: the gate
says so on the check (`inferred: true`) and in the decision's category, and a file written before
the field reads such a check as a violation."""

from __future__ import annotations

from ledger_tui.engine.events import GateDecision, PredicateResult, ToolCall, Verdict
from tests.domains.test_airline_rules import gate, scenario, statuses


def decision(*failed: PredicateResult) -> GateDecision:
    call = ToolCall(id="c1", name="cancel_reservation", arguments={"reservation_id": "ABC123"})
    return GateDecision(call=call, verdict=Verdict.REVISE, reason="", predicates=list(failed))


def check(name: str, **flags) -> PredicateResult:
    return PredicateResult(name=name, clause="x", passed=False, verdict_on_fail=Verdict.REVISE, **flags)


def test_a_ledger_violation_outranks_an_inferred_finding_which_outranks_a_missing_read():
    assert decision(check("reason", inferred=True)).category() == "inferred"
    assert decision(check("reason", inferred=True), check("eligible", needs_read=True)).category() == "inferred"
    assert decision(check("reason", inferred=True), check("owned")).category() == "violation"
    assert decision(check("eligible", needs_read=True)).category() == "needs_read"
    assert decision(check("reason")).category() == "violation"  # written before the field: as it was


def test_a_reason_not_found_in_the_words_is_inferred_and_an_uninsured_refusal_is_the_ledgers():
    p, _, rid = scenario("cancel_recent", "Hello")  # no reason said
    unsaid = gate(p, "cancel_reservation", reservation_id=rid)
    [reason] = [r for r in unsaid.failed() if r.name == "cancel_reason_asked"]
    assert reason.inferred is True and unsaid.category() == "inferred"
    assert '"inferred":true' in reason.model_dump_json()

    p, _, rid = scenario("cancel_refused_no_insurance", "My plans changed, please cancel")
    statuses(p, rid)
    refused = gate(p, "cancel_reservation", reservation_id=rid)
    [eligible] = [r for r in refused.failed() if r.name == "cancel_eligible"]
    assert eligible.inferred is None and refused.category() == "violation"
    assert "inferred" not in eligible.model_dump_json()  # an optional field, absent when unset

    # insured: the refusal hinges on the reason the reader took from "my plans changed"
    p, _, rid = scenario("cancel_refused_wrong_reason", "My plans changed, please cancel")
    statuses(p, rid)
    hinges = gate(p, "cancel_reservation", reservation_id=rid)
    assert hinges.verdict == Verdict.BLOCK and hinges.category() == "inferred"

"""Every telecom policy rule, one call that passes and one that fails with the expected verdict.

Each test drives the real environment, ledger and gate with `Probe`: reads are absorbed, writes
and the customer's own phone actions mark ledger paths stale, customer messages become `said.*`.
"""

from __future__ import annotations

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.domains.telecom.predicates import PREDICATES
from ledger_tui.engine.domain import clause_text
from ledger_tui.engine.events import ToolCall, Verdict
from ledger_tui.engine.gate import guarded
from ledger_tui.testing import Probe

DOMAIN = load_domain("telecom")


@pytest.fixture(scope="module")
def base_state():
    return DOMAIN.load_db()


def probe_for(base_state, phone: tuple[str, str] | None = None, actions: list[dict] | None = None) -> Probe:
    """A probe on a private copy; `phone` = (name, number) puts the phone in that customer's hand."""
    state = base_state.model_copy(deep=True)
    init = []
    if phone:
        init.append({"env_type": "user", "func_name": "set_user_info", "arguments": {"name": phone[0], "phone_number": phone[1]}})
    DOMAIN.init_task(state, {"initialization_actions": init + (actions or [])})
    return Probe(DOMAIN, db=state)


JOHN = ("John Smith", "555-123-2002")
PRIYA = ("Priya Raman", "555-123-2004")


def identify(p: Probe, phone: str) -> None:
    """The customer gives their phone number and the agent looks it up."""
    p.say(f"Hi, my phone number is {phone}.")
    assert not p.read("get_customer_by_phone", phone_number=phone).error


def failed(decision) -> set[str]:
    return {r.name for r in decision.failed()}


def assert_verdict(decision, verdict: Verdict, name: str) -> None:
    assert decision.verdict == verdict, decision.reason
    assert name in {r.name for r in decision.failed() if r.verdict_on_fail == verdict}, decision.reason


# ----------------------------------------------------------------------------- everywhere


def test_every_predicate_clause_is_tagged_in_the_policy():
    policy = DOMAIN.policy
    for p in PREDICATES:
        text = clause_text(policy, p.clause)
        assert text.startswith(f"[{p.clause}]"), p.name
        assert len(text) > 60, p.clause


def test_identification_is_required_and_hinted(base_state):
    p = probe_for(base_state)
    p.confirm("I will turn roaming off for line L1002.")
    d = p.gate("disable_roaming", customer_id="C1001", line_id="L1002")
    assert_verdict(d, Verdict.REVISE, "customer_identified")
    assert d.suggested_calls == []  # the customer has not said who they are: the agent must ask
    p.say("My customer id is C1001.")
    p.confirm("I will turn roaming off for line L1002.")
    d = p.gate("disable_roaming", customer_id="C1001", line_id="L1002")
    assert_verdict(d, Verdict.REVISE, "customer_identified")
    assert d.suggested_calls[0].name == "get_customer_by_id"
    assert d.suggested_calls[0].arguments == {"customer_id": "C1001"}
    p.read("get_customer_by_phone", phone_number="555-123-2002")  # a number the customer never gave
    assert "customer_identified" in failed(p.gate("disable_roaming", customer_id="C1001", line_id="L1002"))
    identify(p, "555-123-2002")
    assert "customer_identified" not in failed(p.gate("disable_roaming", customer_id="C1001", line_id="L1002"))


def test_identification_by_name_needs_a_unique_match(base_state):
    p = probe_for(base_state)
    p.say("I'm John Smith, born 1999-01-01.")
    assert not p.read("get_customer_by_name", full_name="JOHN SMITH", dob="1999-01-01").error  # empty list
    assert "customer_identified" in failed(p.gate("disable_roaming", customer_id="C1001", line_id="L1002"))
    p.read("get_customer_by_name", full_name="john smith", dob="1984-09-22")  # a birth date never said
    assert "customer_identified" in failed(p.gate("disable_roaming", customer_id="C1001", line_id="L1002"))
    p.say("Sorry, my date of birth is 1984-09-22.")
    p.read("get_customer_by_name", full_name="john smith", dob="1984-09-22")
    assert "customer_identified" not in failed(p.gate("disable_roaming", customer_id="C1001", line_id="L1002"))


def test_one_customer_per_conversation(base_state):
    p = probe_for(base_state)
    identify(p, "555-123-2008")
    p.read("get_details_by_id", id="L1008")
    p.confirm("I will turn roaming off for line L1008.")
    assert "one_customer_per_conversation" not in failed(p.gate("disable_roaming", customer_id="C1004", line_id="L1008"))
    identify(p, "555-123-2002")
    assert_verdict(p.gate("disable_roaming", customer_id="C1004", line_id="L1008"), Verdict.BLOCK, "one_customer_per_conversation")


def test_lines_and_bills_must_belong_to_the_customer(base_state):
    p = probe_for(base_state)
    identify(p, "555-123-2002")
    p.say("I'm abroad in France.")
    p.confirm("I will turn roaming on for line L1005.")
    assert_verdict(p.gate("enable_roaming", customer_id="C1001", line_id="L1005"), Verdict.BLOCK, "record_owned_by_customer")
    assert_verdict(p.gate("enable_roaming", customer_id="C1002", line_id="L1005"), Verdict.BLOCK, "record_owned_by_customer")
    p.read("get_details_by_id", id="B1005")
    p.confirm("I will send a payment request for bill B1005.")
    assert_verdict(p.gate("send_payment_request", customer_id="C1001", bill_id="B1005"), Verdict.BLOCK, "record_owned_by_customer")
    p.read("get_details_by_id", id="L1002")
    p.confirm("I will turn roaming on for line L1002.")
    assert "record_owned_by_customer" not in failed(p.gate("enable_roaming", customer_id="C1001", line_id="L1002"))


def test_writes_need_the_details_listed_and_an_explicit_yes(base_state):
    p = probe_for(base_state)
    identify(p, "555-123-2008")
    p.read("get_details_by_id", id="L1008")
    p.agent_says("I will turn roaming off for line L1008. Shall I?")
    p.say("Hmm, not yet, wait.")
    assert_verdict(p.gate("disable_roaming", customer_id="C1004", line_id="L1008"), Verdict.REVISE, "explicit_confirmation")
    p.confirm("I will turn roaming off for your line. Shall I?")  # the line id was not listed
    assert_verdict(p.gate("disable_roaming", customer_id="C1004", line_id="L1008"), Verdict.REVISE, "explicit_confirmation")
    p.confirm("I will turn roaming off for line L1008. Shall I?")
    assert p.gate("disable_roaming", customer_id="C1004", line_id="L1008").verdict == Verdict.ALLOW


def test_unknown_write_tool_is_blocked(base_state):
    p = probe_for(base_state)
    assert p.gate("change_plan", customer_id="C1001", line_id="L1002", plan_id="P1003").verdict == Verdict.BLOCK


# ----------------------------------------------------------------------------- billing


def test_payment_request_only_for_an_overdue_bill(base_state):
    p = probe_for(base_state, PRIYA)
    identify(p, "555-123-2004")
    p.read("get_bills_for_customer", customer_id="C1002")
    p.confirm("I will send a payment request for bill B1004.")
    assert_verdict(p.gate("send_payment_request", customer_id="C1002", bill_id="B1004"), Verdict.BLOCK, "payment_request_bill_overdue")
    p.confirm("I will send a payment request for bill B1005 ($102.50).")
    assert p.gate("send_payment_request", customer_id="C1002", bill_id="B1005").verdict == Verdict.ALLOW


def test_payment_request_needs_the_bill_read(base_state):
    p = probe_for(base_state, PRIYA)
    identify(p, "555-123-2004")
    p.confirm("I will send a payment request for bill B1005.")
    d = p.gate("send_payment_request", customer_id="C1002", bill_id="B1005")
    assert d.verdict == Verdict.REVISE
    assert {c.name for c in d.suggested_calls} <= {"get_details_by_id", "get_bills_for_customer"}


def test_only_one_payment_request_at_a_time(base_state):
    p = probe_for(base_state)
    identify(p, "555-123-2008")
    p.read("get_bills_for_customer", customer_id="C1004")
    p.confirm("I will send a payment request for bill B1009.")
    d = p.gate("send_payment_request", customer_id="C1004", bill_id="B1009")
    assert_verdict(d, Verdict.BLOCK, "no_other_bill_awaiting_payment")
    assert "payment_request_bill_overdue" not in failed(d)


# ----------------------------------------------------------------------------- lines


def test_resume_blocked_while_a_bill_is_overdue_then_allowed_after_payment(base_state):
    p = probe_for(base_state, PRIYA)
    identify(p, "555-123-2004")
    p.read("get_details_by_id", id="L1004")
    p.read("get_bills_for_customer", customer_id="C1002")
    p.confirm("I will resume line L1004.")
    assert_verdict(p.gate("resume_line", customer_id="C1002", line_id="L1004"), Verdict.BLOCK, "resume_no_overdue_bill")
    assert not p.write("send_payment_request", customer_id="C1002", bill_id="B1005").error
    assert "B1005" in p.write("make_payment", requestor="user").content
    assert next(b for b in p.env.db.agent_db.bills if b.bill_id == "B1005").status == "Paid"
    p.read("get_bills_for_customer", customer_id="C1002")
    p.confirm("I will resume line L1004.")
    assert p.gate("resume_line", customer_id="C1002", line_id="L1004").verdict == Verdict.ALLOW


def test_customer_payment_on_the_phone_makes_bills_stale_until_read_again(base_state):
    """The customer's own action (paying on the phone) changes the bill: the gate demands a re-read."""
    p = probe_for(base_state, PRIYA)
    identify(p, "555-123-2004")
    p.read("get_details_by_id", id="L1004")
    p.write("send_payment_request", customer_id="C1002", bill_id="B1005")
    p.read("get_bills_for_customer", customer_id="C1002")
    assert p.ledger["bills.B1005"].value["status"] == "Awaiting Payment"
    p.write("make_payment", requestor="user")
    assert all(p.ledger[f"bills.{b}"].stale for b in ("B1004", "B1005", "B1006"))
    assert "make_payment() by the customer" in p.ledger["bills.B1005"].stale_because
    assert not p.ledger["lines.L1004"].stale  # paying does not touch the line record
    p.confirm("I will resume line L1004 now that you've paid.")
    d = p.gate("resume_line", customer_id="C1002", line_id="L1004")
    assert_verdict(d, Verdict.REVISE, "resume_no_overdue_bill")
    assert [c.signature() for c in d.suggested_calls] == ['get_bills_for_customer(customer_id="C1002")']
    p.read("get_bills_for_customer", customer_id="C1002")
    assert p.ledger["bills.B1005"].value["status"] == "Paid"
    assert p.gate("resume_line", customer_id="C1002", line_id="L1004").verdict == Verdict.ALLOW


def test_phone_side_actions_are_never_gated_and_only_payment_touches_the_ledger():
    assert not guarded(DOMAIN, ToolCall(id="u", name="make_payment", requestor="user"))
    touching = {t.name for t in DOMAIN.user_tools if t.touched_paths({})}
    assert touching == {"make_payment"}
    assert all(t.requestor == "user" for t in DOMAIN.user_tools)


def test_resume_blocked_when_the_contract_has_ended(base_state):
    p = probe_for(base_state)
    identify(p, "555-123-2007")
    p.read("get_details_by_id", id="L1007")
    p.read("get_bills_for_customer", customer_id="C1003")
    p.confirm("I will resume line L1007.")
    d = p.gate("resume_line", customer_id="C1003", line_id="L1007")
    assert_verdict(d, Verdict.BLOCK, "resume_contract_not_ended")
    assert "resume_no_overdue_bill" not in failed(d)
    assert "human" in d.predicates[[r.name for r in d.predicates].index("resume_contract_not_ended")].hint


def test_suspend_only_with_grounds(base_state):
    p = probe_for(base_state)
    identify(p, "555-123-2002")
    p.read("get_details_by_id", id="L1001")
    p.read("get_bills_for_customer", customer_id="C1001")
    p.confirm("I will suspend line L1001 ($5 per month while suspended).")
    d = p.gate("suspend_line", customer_id="C1001", line_id="L1001", reason="travel")
    assert_verdict(d, Verdict.BLOCK, "suspend_only_for_overdue_or_ended_contract")
    # ended contract
    q = probe_for(base_state)
    identify(q, "555-123-2006")
    q.read("get_details_by_id", id="L1006")
    q.confirm("I will suspend line L1006 ($5 per month while suspended).")
    assert q.gate("suspend_line", customer_id="C1003", line_id="L1006", reason="contract ended").verdict == Verdict.ALLOW
    # overdue bill
    r = probe_for(base_state)
    identify(r, "555-123-2004")
    r.read("get_details_by_id", id="L1005")
    r.read("get_bills_for_customer", customer_id="C1002")
    r.confirm("I will suspend line L1005.")
    assert r.gate("suspend_line", customer_id="C1002", line_id="L1005", reason="overdue bill B1005").verdict == Verdict.ALLOW


# ----------------------------------------------------------------------------- data


def _refuel_probe(base_state) -> Probe:
    p = probe_for(base_state, JOHN, [{"env_type": "assistant", "func_name": "set_data_usage",
                                       "arguments": {"customer_id": "C1001", "line_id": "L1002", "data_used_gb": 15.1}}])
    identify(p, "555-123-2002")
    p.read("get_details_by_id", id="L1002")
    p.read("get_details_by_id", id="P1002")
    return p


def test_refuel_at_most_two_gb_per_cycle(base_state):
    p = _refuel_probe(base_state)
    p.confirm("Adding 2.5 GB to line L1002 costs $5.00. OK?")
    assert_verdict(p.gate("refuel_data", customer_id="C1001", line_id="L1002", gb_amount=2.5), Verdict.REVISE, "refuel_within_limit")
    p.confirm("Adding 1.5 GB to line L1002 costs $3.00. OK?")
    assert p.gate("refuel_data", customer_id="C1001", line_id="L1002", gb_amount=1.5).verdict == Verdict.ALLOW
    p.write("refuel_data", customer_id="C1001", line_id="L1002", gb_amount=1.5)
    p.read("get_details_by_id", id="L1002")
    p.read("get_customer_by_id", customer_id="C1001")
    p.confirm("Adding 1 GB to line L1002 costs $2.00. OK?")
    d = p.gate("refuel_data", customer_id="C1001", line_id="L1002", gb_amount=1.0)
    assert_verdict(d, Verdict.REVISE, "refuel_within_limit")
    assert "0.5 GB" in d.hint


def test_refuel_price_must_be_stated_and_confirmed(base_state):
    p = _refuel_probe(base_state)
    p.confirm("I will add 2 GB to line L1002. OK?")
    d = p.gate("refuel_data", customer_id="C1001", line_id="L1002", gb_amount=2.0)
    assert_verdict(d, Verdict.REVISE, "explicit_confirmation")  # the price is part of the proposal
    assert "$4.00" in d.reason
    p.confirm("Adding 2 GB to line L1002 costs 2 GB × $2.00/GB = $4.00, charged on your next bill. OK?")
    assert p.gate("refuel_data", customer_id="C1001", line_id="L1002", gb_amount=2.0).verdict == Verdict.ALLOW


def test_refuel_price_named_by_the_customer_counts(base_state):
    p = _refuel_probe(base_state)
    p.say("Please add 2 GB; at $2 a gigabyte, $4.00 is fine.")
    p.confirm("I will add 2 GB to line L1002. OK?")
    assert p.gate("refuel_data", customer_id="C1001", line_id="L1002", gb_amount=2.0).verdict == Verdict.ALLOW


# ----------------------------------------------------------------------------- roaming


def test_roaming_only_for_a_customer_abroad(base_state):
    p = probe_for(base_state)
    identify(p, "555-123-2002")
    p.read("get_details_by_id", id="L1002")
    p.say("I'm not travelling yet, my trip is in April.")
    p.confirm("I will turn roaming on for line L1002.")
    d = p.gate("enable_roaming", customer_id="C1001", line_id="L1002")
    assert_verdict(d, Verdict.REVISE, "roaming_customer_abroad")
    assert any(r.origin == "stated" for r in d.predicates[[x.name for x in d.predicates].index("roaming_customer_abroad")].reads)
    p.say("Actually I'm abroad in France already.")
    p.confirm("I will turn roaming on for line L1002.")
    assert p.gate("enable_roaming", customer_id="C1001", line_id="L1002").verdict == Verdict.ALLOW


def test_roaming_only_when_off_on_the_line(base_state):
    p = probe_for(base_state)
    identify(p, "555-123-2008")
    p.read("get_details_by_id", id="L1008")
    p.say("I'm abroad, on holiday in Japan.")
    p.confirm("I will turn roaming on for line L1008.")
    d = p.gate("enable_roaming", customer_id="C1004", line_id="L1008")
    assert_verdict(d, Verdict.REVISE, "roaming_off_on_line")
    assert "phone" in d.hint


def test_roaming_needs_a_fresh_line_after_a_write(base_state):
    p = probe_for(base_state)
    identify(p, "555-123-2002")
    p.read("get_details_by_id", id="L1002")
    p.write("enable_roaming", customer_id="C1001", line_id="L1002")
    p.write("disable_roaming", customer_id="C1001", line_id="L1002")
    p.say("I'm abroad in Spain.")
    p.confirm("I will turn roaming on for line L1002.")
    d = p.gate("enable_roaming", customer_id="C1001", line_id="L1002")
    assert d.verdict == Verdict.REVISE
    assert d.suggested_calls[0].signature() == 'get_details_by_id(id="L1002")'


# ----------------------------------------------------------------------------- escalation


def test_transfer_needs_a_reason(base_state):
    p = probe_for(base_state)
    identify(p, "555-123-2002")
    p.read("get_details_by_id", id="L1002")
    p.read("get_details_by_id", id="P1002")  # the data is not used up: no refuel to offer
    p.say("My data is slow, give me a human.")
    d = p.gate("transfer_to_human_agents", summary="slow data")
    assert_verdict(d, Verdict.REVISE, "transfer_after_fixes_tried")
    p.agent_says("Please restart your phone and run a speed test.")
    p.say("I did, it still doesn't work.")
    d = p.gate("transfer_to_human_agents", summary="slow data after restart")
    assert_verdict(d, Verdict.REVISE, "transfer_after_fixes_tried")  # the fixes the policy lists for slow data were not offered
    assert "data saver" in d.reason
    p.agent_says("Let's try the fixes for slow data: make sure mobile data is on, turn data saver off, and set the "
                 "network mode to 4G/5G preferred. Then restart your phone and run a speed test.")
    p.say("I did all of that, it still doesn't work.")
    assert p.gate("transfer_to_human_agents", summary="slow data after restart").verdict == Verdict.ALLOW


def test_transfer_allowed_for_a_locked_sim_or_an_unliftable_suspension(base_state):
    p = probe_for(base_state)
    p.say("My phone asks for a PUK code.")
    assert p.gate("transfer_to_human_agents", summary="PUK-locked SIM").verdict == Verdict.ALLOW
    q = probe_for(base_state)
    identify(q, "555-123-2007")
    q.say("My line is suspended, please help.")
    assert q.gate("transfer_to_human_agents", summary="suspended").verdict == Verdict.REVISE
    q.read("get_details_by_id", id="L1007")
    assert q.gate("transfer_to_human_agents", summary="suspended, contract ended").verdict == Verdict.ALLOW

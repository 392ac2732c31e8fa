"""The gate on the toy domain: each shared rule passes and fails with its verdict; it fails closed."""

from ledger_tui.engine.events import ToolCall, Verdict
from ledger_tui.engine.gate import GateContext, Predicate, evaluate, predicate
from ledger_tui.testing import Probe


def failed(decision):
    return {p.name for p in decision.failed()}


def identified_probe(domain, email="ada@example.org"):
    probe = Probe(domain)
    probe.say(f"Hi, I'm {email}")
    probe.read("find_member_by_email", email=email)
    return probe


def test_unidentified_customer_gets_revise_with_identification_hint(toy_domain):
    probe = Probe(toy_domain)
    probe.read("get_loan_details", loan_id="L1")
    d = probe.gate("renew_loan", loan_id="L1")
    assert d.verdict == Verdict.REVISE
    assert "customer_identified" in failed(d)
    assert d.suggested_calls[0].name == "find_member_by_email"


def test_missing_record_gets_revise_naming_the_read_call(toy_domain):
    probe = identified_probe(toy_domain)
    probe.confirm("Renew loan L1 (Dune)?")
    d = probe.gate("renew_loan", loan_id="L1")
    assert d.verdict == Verdict.REVISE
    assert [s.signature() for s in d.suggested_calls] == ['get_loan_details(loan_id="L1")']


def test_allow_when_identified_owned_confirmed_and_within_limit(toy_domain):
    probe = identified_probe(toy_domain)
    probe.read("get_loan_details", loan_id="L1")
    probe.confirm("Renew loan L1 (Dune) for two more weeks?")
    d = probe.gate("renew_loan", loan_id="L1")
    assert d.verdict == Verdict.ALLOW, d.reason
    assert all(p.passed for p in d.predicates)


def test_confirmation_needs_an_explicit_yes_after_the_details(toy_domain):
    probe = identified_probe(toy_domain)
    probe.read("get_loan_details", loan_id="L1")
    probe.agent_says("Renew loan L1?")
    probe.say("Hmm, what would that cost?")
    d = probe.gate("renew_loan", loan_id="L1")
    assert d.verdict == Verdict.REVISE and failed(d) == {"explicit_confirmation"}
    probe.agent_says("Shall I renew it?")
    probe.say("yes")
    assert failed(probe.gate("renew_loan", loan_id="L1")) == {"explicit_confirmation"}, "details were not listed"


def test_someone_elses_loan_is_blocked_with_evidence(toy_domain):
    probe = identified_probe(toy_domain)
    probe.read("get_loan_details", loan_id="L3")
    probe.confirm("Renew loan L3 (Ulysses)?")
    d = probe.gate("renew_loan", loan_id="L3")
    assert d.verdict == Verdict.BLOCK and failed(d) == {"record_owned_by_customer"}
    owner_check = next(p for p in d.predicates if p.name == "record_owned_by_customer")
    read = next(r for r in owner_check.reads if r.path == "loans.L3")
    assert read.value["member_id"] == "m2" and read.source_call == 'get_loan_details(loan_id="L3")'


def test_domain_rule_blocks_a_third_renewal(toy_domain):
    probe = identified_probe(toy_domain)
    probe.read("get_loan_details", loan_id="L2")
    probe.confirm("Renew loan L2 (Emma)?")
    d = probe.gate("renew_loan", loan_id="L2")
    assert d.verdict == Verdict.BLOCK and failed(d) == {"renewal_limit"}


def test_two_customers_in_one_conversation_is_blocked(toy_domain):
    probe = identified_probe(toy_domain)
    probe.read("find_member_by_email", email="bo@example.org")  # never said: identifies nobody
    probe.read("get_loan_details", loan_id="L1")
    probe.confirm("Renew loan L1?")
    assert "one_customer_per_conversation" not in failed(probe.gate("renew_loan", loan_id="L1"))
    brother = identified_probe(toy_domain)
    brother.say("Oh, and my brother's email is bo@example.org.")  # another person's: identifies nobody
    brother.read("find_member_by_email", email="bo@example.org")
    brother.read("get_loan_details", loan_id="L1")
    brother.confirm("Renew loan L1?")
    assert "one_customer_per_conversation" not in failed(brother.gate("renew_loan", loan_id="L1"))
    probe.say("I have a second card too, my other email is bo@example.org.")
    probe.read("find_member_by_email", email="bo@example.org")
    probe.confirm("Renew loan L1?")
    d = probe.gate("renew_loan", loan_id="L1")
    assert d.verdict == Verdict.BLOCK and "one_customer_per_conversation" in failed(d)


def test_unknown_tool_is_blocked_and_invalid_arguments_revised(toy_domain):
    probe = identified_probe(toy_domain)
    d = probe.gate("delete_member", member_id="m1")
    assert d.verdict == Verdict.BLOCK and failed(d) == {"known_tool"}
    d = probe.gate("renew_loan", loan=5)
    assert d.verdict == Verdict.REVISE and failed(d) == {"valid_arguments"}


def test_a_predicate_that_raises_fails_closed(toy_domain):
    @predicate("broken", clause="renewals", on_fail=Verdict.REVISE, tools=["renew_loan"])
    def broken(ctx: GateContext):
        return {}["nope"]

    probe = identified_probe(toy_domain)
    call = ToolCall(id="x", name="renew_loan", arguments={"loan_id": "L1"})
    d = evaluate(call, toy_domain, probe.ledger, probe.context(), predicates=[broken])
    assert d.verdict == Verdict.BLOCK
    assert d.predicates[0].error and "could not be evaluated" in d.reason


def test_stated_facts_cannot_be_read_as_evidence(toy_domain):
    @predicate("misuses_statement", clause="renewals", on_fail=Verdict.REVISE, tools=["renew_loan"])
    def misuse(ctx: GateContext):
        ctx.read("said.urgency")

    probe = identified_probe(toy_domain)
    probe.say("It's urgent!")
    assert probe.ledger["said.urgency"].value == "urgent"
    call = ToolCall(id="x", name="renew_loan", arguments={"loan_id": "L1"})
    d = evaluate(call, toy_domain, probe.ledger, probe.context(), predicates=[misuse])
    assert d.verdict == Verdict.BLOCK, "a predicate that treats a stated fact as evidence must not pass"


def test_predicate_metadata_names_clause_and_paths(toy_domain):
    by_name = {p.name: p for p in toy_domain.predicates}
    assert isinstance(by_name["renewal_limit"], Predicate)
    assert by_name["renewal_limit"].clause == "renewals"
    assert by_name["renewal_limit"].reads == ("loans.{loan_id}",)

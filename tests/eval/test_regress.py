"""Policy regression: replay recorded model turns under today's predicates, list changed verdicts."""

import dataclasses

from ledger_tui.engine.events import Verdict
from ledger_tui.engine.gate import GateContext, predicate
from ledger_tui.engine.model.models import ScriptedModel
from ledger_tui.engine.session import Session
from ledger_tui.eval.regress import regress, regress_lines
from tests.engine.helpers import call, drain, turn


async def recorded(domain):
    model = ScriptedModel(
        [
            turn(call("find_member_by_email", "a", email="ada@example.org"), call("get_loan_details", "b", loan_id="L2")),
            turn(text="Renew loan L2 (Emma)?"),
            turn(call("renew_loan", "c", loan_id="L2")),
            turn(text="Done."),
        ]
    )
    session = Session(domain, model, "full", timestamps=False, consent="text")
    await drain(session.start())
    await drain(session.user_says("I'm ada@example.org, renew L2"))
    await drain(session.user_says("Yes please"))
    await drain(session.end())
    return session.events


def with_limit(domain, limit):
    @predicate("renewal_limit", clause="renewals", on_fail=Verdict.BLOCK, tools=["renew_loan"])
    def relaxed(ctx: GateContext):
        loan = ctx.read(f"loans.{ctx.arguments['loan_id']}")
        if loan["renewals"] >= limit:
            return ctx.fail(f"Loan {loan['loan_id']} was already renewed {loan['renewals']} times (limit {limit}).")
        return None

    predicates = [relaxed if p.name == "renewal_limit" else p for p in domain.predicates]
    return dataclasses.replace(domain, predicates=predicates, _cache={})


async def test_same_policy_changes_nothing(toy_domain, tmp_path):
    events = await recorded(toy_domain)
    report = await regress(toy_domain, events)
    assert report.decisions_before == report.decisions_after == 1
    assert report.changes == [] and report.diverged is None


async def test_a_relaxed_rule_turns_the_block_into_an_allow(toy_domain, tmp_path):
    events = await recorded(toy_domain)
    report = await regress(with_limit(toy_domain, 3), events)
    assert [(c.call, c.before, c.after) for c in report.changes] == [('renew_loan(loan_id="L2")', "BLOCK", "ALLOW")]
    lines = regress_lines(tmp_path / "t.jsonl", report)
    assert any("BLOCK -> ALLOW" in line for line in lines)


async def test_a_session_played_by_the_operator_replays_without_a_model(toy_domain):
    """No model turns at all: customer lines, the operator's words and calls are replayed as such."""
    session = Session(toy_domain, ScriptedModel([]), "full", timestamps=False, consent="text")
    await drain(session.start())
    await drain(session.user_says("Hi, I'm ada@example.org, please renew L1", respond=False))
    await drain(session.operator_call("find_member_by_email", {"email": "ada@example.org"}))
    await drain(session.operator_call("get_loan_details", {"loan_id": "L1"}))
    await drain(session.agent_says("Renew loan L1 (Dune) for two weeks?"))
    await drain(session.user_says("yes", respond=False))
    await drain(session.operator_call("renew_loan", {"loan_id": "L1"}))
    await drain(session.end())
    assert [e.decision.verdict for e in session.events if e.type == "gate_decision"] == [Verdict.ALLOW]
    report = await regress(toy_domain, session.events)
    assert report.diverged is None and report.changes == [] and report.decisions_after == 1


def test_regress_of_a_recording_made_before_the_read_gate_lists_the_reads_it_now_withholds():
    """The caller's mother's profile and booking were shown to the agent when this was recorded;
    today's read gate withholds both. The reads are listed by call, and the one write still lines up
    with its recorded decision."""
    from tests.cli.test_cli import ROOT, cli

    old = ROOT / "tests" / "data" / "before_read_gate" / "airline-acting-for-someone-else.jsonl"
    out = cli("regress", str(old))
    assert out.returncode == 1 and "2 verdicts changed in 1 trajectory file" in out.stdout, out.stderr  # 1: something changed
    assert 'read: get_user_details(user_id="grace_scott_6483"): shown -> WITHHELD' in out.stdout
    assert 'read: get_reservation_details(reservation_id="633IZT"): shown -> WITHHELD' in out.stdout
    assert "decision 1" not in out.stdout and "diverged" not in out.stdout  # the cancellation: REVISE then and now

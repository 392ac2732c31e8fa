"""The gold agent follows the gate's hints, gets the customer's yes, and makes the gold writes."""

from ledger_tui.engine.events import Verdict
from ledger_tui.engine.agents.gold import gold_digests, run_gold
from ledger_tui.engine.agents.tasks import Task


IDENTIFY = {"name": "find_member_by_email", "arguments": {"email": "ada@example.org"}}


def task(**kw):
    base = {
        "id": "t",
        "user_scenario": {"instructions": "renew"},
        "evaluation_criteria": {"actions": [{"name": "renew_loan", "arguments": {"loan_id": "L1"}}]},
        "ledger_tui": {"opening": "Hi, I am ada@example.org and I would like to renew loan L1.", "identify": IDENTIFY},
    }
    base.update(kw)
    return Task.model_validate(base)


async def test_gold_agent_reads_what_the_gate_asks_and_passes(toy_domain):
    report = await run_gold(toy_domain, task())
    assert report.passed, report.problems
    assert [d.verdict for d in report.decisions][-1] == Verdict.ALLOW
    assert report.final_digest == report.gold_digest
    assert report.final_digest != gold_digests(toy_domain, task(evaluation_criteria={"actions": []}))[0]


async def test_refusal_task_passes_only_with_the_expected_block(toy_domain):
    refusal = task(
        evaluation_criteria={"actions": []},
        ledger_tui={
            "outcome": "refuse",
            "opening": "Hi, I'm ada@example.org, renew loan L2 please.",
            "identify": IDENTIFY,
            "forbidden_action": {"name": "renew_loan", "arguments": {"loan_id": "L2"}},
            "expected_verdict": "BLOCK",
            "expected_predicate": "renewal_limit",
        },
    )
    report = await run_gold(toy_domain, refusal)
    assert report.passed, report.problems
    wrong = refusal.model_copy(deep=True)
    wrong.ledger_tui.expected_predicate = "record_owned_by_customer"
    report = await run_gold(toy_domain, wrong)
    assert not report.passed and "expected predicate" in report.problems[0]

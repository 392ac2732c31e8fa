"""Every telehealth task, solved by the gold agent through the gate.

Allowed tasks end with every gold write ALLOWED and the same db digest as the gold actions applied
directly (information-only tasks leave the db as it was); refusal tasks see their forbidden write
stopped by the expected predicate with the database untouched.
"""

from __future__ import annotations

import asyncio

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.engine.agents.gold import run_gold
from ledger_tui.engine.agents.tasks import load_tasks

DOMAIN = load_domain("telehealth")
TASKS = load_tasks(DOMAIN.tasks_path)
WRITES = {t.name for t in DOMAIN.tools if t.kind == "write"}
IDENTIFY = {"find_patient_by_email", "find_patient_by_name_dob"}


def test_task_set_has_the_required_shape():
    refusals = [t for t in TASKS if t.is_refusal]
    assert len(TASKS) >= 20
    assert len(refusals) >= 7 and len(refusals) * 3 >= len(TASKS)
    assert len({t.id for t in TASKS}) == len(TASKS)
    for task in TASKS:
        assert task.gold_actions[0].name in IDENTIFY, task.id
        assert task.ledger_tui.opening, task.id
    for task in refusals:
        assert not any(a.name in WRITES for a in task.gold_actions), task.id
        assert task.ledger_tui.forbidden_action is not None and task.ledger_tui.expected_predicate


def test_openings_carry_the_identifying_facts():
    """The gold customer's opening names the email, or the name and date of birth, that the first
    gold action looks up: the agent can identify the patient from what they said."""
    for task in TASKS:
        first = task.gold_actions[0]
        for value in first.arguments.values():
            assert str(value) in task.ledger_tui.opening, (task.id, value)


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_gold_agent_solves_task(task):
    report = asyncio.run(run_gold(DOMAIN, task))
    assert report.passed, report.problems
    untouched = DOMAIN.digests(DOMAIN.load_db())[0]
    if task.is_refusal:
        last = report.outcomes[-1]
        assert last.action.name == task.ledger_tui.forbidden_action.name
        assert last.verdict is not None and last.verdict.value == task.ledger_tui.expected_verdict
        assert task.ledger_tui.expected_predicate in last.failed_predicates
        assert not last.executed
        assert report.final_digest == untouched
    elif any(a.name in WRITES for a in task.gold_actions):
        assert report.final_digest != untouched
    else:
        assert report.final_digest == untouched

"""Every telecom task, solved by the gold agent through the gate (dual control included).

Allowed tasks: every gold write ALLOWED, the customer's own actions succeed, the task's env
assertions hold on the final state, and the digests equal the gold actions applied directly.
Refusal tasks: the forbidden write is stopped by the expected predicate and nothing changes.
"""

from __future__ import annotations

import asyncio

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.domains.telecom import state as telecom_state
from ledger_tui.engine.agents.gold import fresh_environment, run_gold
from ledger_tui.engine.agents.tasks import load_tasks

DOMAIN = load_domain("telecom")
TASKS = load_tasks(DOMAIN.tasks_path)
WRITES = {t.name for t in DOMAIN.tools if t.kind == "write"}


def test_task_set_has_the_required_shape():
    refusals = [t for t in TASKS if t.is_refusal]
    assert len(TASKS) >= 20 and len(refusals) >= 7
    assert len(refusals) * 3 >= len(TASKS)
    assert len({t.id for t in TASKS}) == len(TASKS)
    assert all(t.ledger_tui.opening and t.initial_state for t in TASKS)
    for task in refusals:
        assert not any(a.name in WRITES or a.requestor == "user" for a in task.gold_actions), task.id
        assert task.ledger_tui.forbidden_action is not None and task.ledger_tui.expected_predicate
    # the shared τ²-bench shape: the customer's phone is John Smith's line unless the task says otherwise
    assert sum(
        t.initial_state["initialization_actions"][0]["arguments"] == {"name": "John Smith", "phone_number": "555-123-2002"}
        for t in TASKS
    ) >= 15


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_gold_agent_solves_task(task):
    report = asyncio.run(run_gold(DOMAIN, task))
    assert report.passed, report.problems
    assert report.final_digest == report.gold_digest
    initial = fresh_environment(DOMAIN, task).digests()
    if task.is_refusal:
        last = report.outcomes[-1]
        assert last.action.name == task.ledger_tui.forbidden_action.name
        assert last.verdict is not None and last.verdict.value == task.ledger_tui.expected_verdict
        assert task.ledger_tui.expected_predicate in last.failed_predicates
        assert not last.executed
        assert report.env.digests() == initial
    elif any(a.name in WRITES or a.requestor == "user" for a in task.gold_actions):
        assert report.env.digests() != initial  # a fix happened (transfers alone change nothing)
    for assertion in task.evaluation_criteria.env_assertions or []:
        assert telecom_state.run_assertion(report.env.db, assertion), assertion

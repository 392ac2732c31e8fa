"""Every retail task, solved by the gold agent through the gate.

Allowed tasks must end with every gold write ALLOWED and the same db digest as the gold actions
applied directly; refusal tasks must see their forbidden write stopped by the expected predicate,
with the database left untouched.
"""

from __future__ import annotations

import asyncio

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.engine.agents.gold import run_gold
from ledger_tui.engine.agents.tasks import load_tasks

DOMAIN = load_domain("retail")
TASKS = load_tasks(DOMAIN.tasks_path)


def test_task_set_has_the_required_shape():
    refusals = [t for t in TASKS if t.is_refusal]
    assert len(TASKS) >= 20
    assert len(refusals) * 3 >= len(TASKS)
    assert len({t.id for t in TASKS}) == len(TASKS)
    writes = {t.name for t in DOMAIN.tools if t.kind == "write"}
    for task in refusals:
        assert not any(a.name in writes for a in task.gold_actions), task.id
        assert task.ledger_tui.forbidden_action is not None and task.ledger_tui.expected_predicate


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_gold_agent_solves_task(task):
    report = asyncio.run(run_gold(DOMAIN, task))
    assert report.passed, report.problems
    if task.is_refusal:
        last = report.outcomes[-1]
        assert last.action.name == task.ledger_tui.forbidden_action.name
        assert last.verdict is not None and last.verdict.value == task.ledger_tui.expected_verdict
        assert task.ledger_tui.expected_predicate in last.failed_predicates
        assert not last.executed
    if task.is_refusal:
        assert report.final_digest == DOMAIN.digests(DOMAIN.load_db())[0]
    else:
        assert report.final_digest != DOMAIN.digests(DOMAIN.load_db())[0]

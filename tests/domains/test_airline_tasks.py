"""Every airline task, solved by the gold agent through the gate.

Allowed tasks must end with every gold write ALLOWED and the db digest of the gold actions applied
directly; refusal tasks must see their forbidden write BLOCKed by the expected predicate, with the
database untouched.
"""

from __future__ import annotations

import asyncio
from functools import cache

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.engine.agents.gold import run_gold
from ledger_tui.engine.agents.tasks import load_tasks

DOMAIN = load_domain("airline")
TASKS = load_tasks(DOMAIN.tasks_path)
WRITES = {t.name for t in DOMAIN.tools if t.kind == "write"}


@cache
def untouched_digest() -> str:
    return DOMAIN.digests(DOMAIN.load_db())[0]


def test_task_set_has_the_required_shape():
    refusals = [t for t in TASKS if t.is_refusal]
    assert len(TASKS) >= 20 and len(refusals) >= 7 and len(refusals) * 3 >= len(TASKS)
    assert len({t.id for t in TASKS}) == len(TASKS)
    for task in TASKS:
        user_id = task.gold_actions[0].arguments["user_id"]
        assert user_id in task.ledger_tui.opening, task.id  # the customer identifies themself
    for task in refusals:
        assert not any(a.name in WRITES for a in task.gold_actions), task.id
        assert task.ledger_tui.forbidden_action.name in WRITES and task.ledger_tui.expected_predicate


@pytest.mark.parametrize("task", TASKS, ids=[t.id for t in TASKS])
def test_gold_agent_solves_task(task):
    report = asyncio.run(run_gold(DOMAIN, task))
    assert report.passed, report.problems
    if task.is_refusal:
        last = report.outcomes[-1]
        assert last.action.name == task.ledger_tui.forbidden_action.name
        assert last.verdict is not None and last.verdict.value == "BLOCK"
        assert report.final_digest == untouched_digest()

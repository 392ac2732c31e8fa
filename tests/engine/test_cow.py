"""Copy-on-write session databases: isolated, and digested exactly like a plain database."""

import asyncio
import hashlib
import json

import pytest

from domains import load_domain
from ledger_tui.engine.environment import Environment
from ledger_tui.engine.events import ToolCall
from ledger_tui.engine.gold import run_gold
from ledger_tui.engine.tasks import load_tasks


def plain_digest(db) -> str:
    return hashlib.sha256(json.dumps(db.model_dump(), sort_keys=True, default=str).encode()).hexdigest()


@pytest.mark.parametrize("name", ["airline", "retail", "telehealth"])
def test_spliced_digest_equals_the_plain_digest_after_real_writes(name):
    domain = load_domain(name)
    tasks = [t for t in load_tasks(domain.tasks_path) if not t.is_refusal]
    for task in tasks:
        report = asyncio.run(run_gold(domain, task))
        assert report.passed, report.problems
        env = report.env
        assert env.digests()[0] == plain_digest(env.db), task.id


def test_sessions_do_not_see_each_others_writes_and_the_pristine_copy_stays_intact():
    domain = load_domain("airline")
    first, second = Environment(domain), Environment(domain)
    pristine = first.digests()[0]
    rid = next(iter(first.db.reservations))
    out = first.execute(ToolCall(id="w", name="cancel_reservation", arguments={"reservation_id": rid}))
    assert not out.error
    assert first.db.reservations[rid].status == "cancelled"
    assert second.db.reservations[rid].status is None
    assert second.digests()[0] == pristine != first.digests()[0]
    assert Environment(domain).digests()[0] == pristine
    assert plain_digest(Environment(domain).db) == pristine


def test_reads_share_records_writes_copy_them():
    domain = load_domain("retail")
    env = Environment(domain)
    order_id = next(iter(env.db.orders))
    env.execute(ToolCall(id="r", name="get_order_details", arguments={"order_id": order_id}))
    assert order_id not in env.db.orders._own, "a read must not copy the record"
    env.db.orders[order_id]  # touched outside a read: private copy from now on
    assert order_id in env.db.orders._own


def test_records_added_or_removed_in_one_session_stay_there():
    domain = load_domain("retail")
    env, other = Environment(domain), Environment(domain)
    orders = env.db.orders
    first, second = list(orders)[:2]
    copy = orders[first].model_copy(update={"order_id": "#W0000001"})
    orders["#W0000001"] = copy
    del orders[second]
    assert list(orders)[-1] == "#W0000001" and second not in orders and len(orders) == len(other.db.orders)
    assert "#W0000001" not in other.db.orders and second in other.db.orders
    env.touched()
    assert env.digests()[0] == plain_digest(env.db) != other.digests()[0]
    assert Environment(domain).digests()[0] == other.digests()[0] == plain_digest(other.db)

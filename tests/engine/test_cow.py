"""Copy-on-write session databases: isolated, and digested exactly like a plain database."""

import asyncio
import hashlib
import json

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.engine.environment import Environment
from ledger_tui.engine.events import ToolCall
from ledger_tui.engine.agents.gold import run_gold
from ledger_tui.engine.agents.tasks import load_tasks


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
    # the same change in another session: the same digest (remembered), still the plain one
    third = Environment(domain)
    third.execute(ToolCall(id="w", name="cancel_reservation", arguments={"reservation_id": rid}))
    assert third.digests()[0] == first.digests()[0] == plain_digest(third.db)
    second.execute(ToolCall(id="w", name="cancel_reservation", arguments={"reservation_id": list(second.db.reservations)[1]}))
    assert second.digests()[0] == plain_digest(second.db) != first.digests()[0]


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


def test_keys_deleted_and_added_again_keep_the_order_a_dict_would():
    domain = load_domain("retail")
    env = Environment(domain)
    orders = env.db.orders
    mirror = dict.fromkeys(orders)
    first, second, third = list(orders)[:3]
    record = orders[third]
    steps = [("del", first), ("set", "#W0000001"), ("del", second), ("set", first), ("del", "#W0000001"), ("set", second)]
    for op, key in steps:
        if op == "del":
            del orders[key]
            del mirror[key]
        else:
            orders[key] = record.model_copy(update={"order_id": key})
            mirror[key] = None
        assert list(orders) == list(mirror) and len(orders) == len(mirror)
        assert all(k in orders for k in mirror) and ("#W0000001" in orders) == ("#W0000001" in mirror)
    with pytest.raises(KeyError):
        del orders["#W0000001"]
    env.touched()
    assert env.digests()[0] == plain_digest(env.db)
    assert Environment(domain).digests()[0] == plain_digest(Environment(domain).db)


def test_a_record_copied_in_part_is_whole_and_private_when_asked_for():
    from ledger_tui.engine.store.cow import edit, is_frozen, look

    domain = load_domain("airline")
    env = Environment(domain)

    def open_dates(number):
        return [d for d, e in look(env.db.flights, number).dates.items() if hasattr(e, "available_seats")]

    number = next(n for n in env.db.flights if len(open_dates(n)) > 1)
    date, *others = open_dates(number)
    seats = look(env.db.flights, number).dates[date].available_seats["economy"]
    edit(env.db.flights, number, "dates", date).available_seats["economy"] -= 1
    partial = look(env.db.flights, number)
    assert partial.dates[date].available_seats["economy"] == seats - 1
    assert all(is_frozen(partial.dates[d]) for d in others), "the other dates stay shared"
    whole = env.db.flights[number]
    assert whole is partial and not any(is_frozen(v) for v in whole.dates.values())
    for d in others:
        whole.dates[d].available_seats["economy"] = -5  # the whole record is private now
    assert all(look(Environment(domain).db.flights, number).dates[d].available_seats["economy"] != -5 for d in others)
    assert Environment(domain).db.flights[number].dates[date].available_seats["economy"] == seats
    env.touched()
    assert env.digests()[0] == plain_digest(env.db)


@pytest.mark.parametrize("name", ["airline", "retail", "telehealth"])  # (telecom keeps its records in lists)
def test_records_added_removed_and_changed_anywhere_digest_as_a_plain_database(name):
    """Keys deleted (the first, the last, any), added before, among and after the pristine ones,
    deleted then added again, records changed before and after such a change: the spliced digest
    is the plain one every time."""
    import random

    from ledger_tui.engine.store.cow import CowRecords

    domain = load_domain(name)
    rng = random.Random(name)
    collections = [n for n, v in Environment(domain).db.__dict__.items() if isinstance(v, CowRecords)]
    for _ in range(12):
        env = Environment(domain)
        records = getattr(env.db, rng.choice(collections))
        pristine = sorted(records)
        template = records.look(pristine[0])
        for _ in range(rng.randint(1, 5)):
            op = rng.choice(["del", "del", "add", "readd", "change"])
            keys = list(records)
            if op == "del" and keys:
                del records[rng.choice([keys[0], keys[-1], min(keys), max(keys), rng.choice(keys)])]
            elif op == "add":
                new = rng.choice(["", "~", "0", pristine[len(pristine) // 2]]) + f"new{rng.randint(0, 99)}"
                records[new] = template.model_copy(deep=True)
            elif op == "readd" and len(keys) < len(pristine):
                records[next(k for k in pristine if k not in records)] = template.model_copy(deep=True)
            elif op == "change" and keys:
                record = records[rng.choice(keys)]
                field = next(f for f, v in record.__dict__.items() if isinstance(v, str))
                setattr(record, field, f"changed {rng.random()}")
        env.touched()
        assert env.digests()[0] == plain_digest(env.db), (name, list(records)[-3:])

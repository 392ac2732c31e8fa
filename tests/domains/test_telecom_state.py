"""Loading both databases (this project's JSON pair, τ²-bench's TOML pair), digests, task set-up,
and the seeded generator."""

from __future__ import annotations

import json

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.domains.telecom import generate, state as telecom_state
from ledger_tui.domains.telecom.schema import TelecomDB, TelecomUserDB
from ledger_tui.engine.errors import DatabaseError, TaskError
from ledger_tui.engine.store.serialize import digest

DOMAIN = load_domain("telecom")

TOML_AGENT = """
[[plans]]
plan_id = "P1"
name = "Tiny"
data_limit_gb = 1
price_per_month = 10
data_refueling_price_per_gb = 2

[[customers]]
customer_id = "C1"
full_name = "Ada Byron"
date_of_birth = "1990-01-01"
email = "ada@example.org"
phone_number = "555-000-0001"
account_status = "Active"
line_ids = ["L1"]
bill_ids = ["B1"]
created_at = 2024-01-02T03:04:05
[customers.address]
street = "1 Main St"
city = "Town"
state = "CA"
zip_code = "90000"

[[lines]]
line_id = "L1"
phone_number = "555-000-0001"
status = "Active"
plan_id = "P1"
contract_end_date = 2026-01-31

[[bills]]
bill_id = "B1"
customer_id = "C1"
period_start = 2025-01-01
period_end = 2025-01-31
issue_date = 2025-01-01
total_due = 10
due_date = 2025-01-15
status = "Paid"

[[devices]]
device_id = "D1"
device_type = "phone"
model = "Any"
is_esim_capable = true
"""


@pytest.fixture(scope="module")
def base_state():
    return DOMAIN.load_db()


def test_shipped_pair_loads_fresh_private_copies(base_state):
    other = DOMAIN.load_db()
    other.agent_db.lines[0].status = "Closed"
    assert DOMAIN.load_db().agent_db.lines[0].status == "Active"
    assert len(base_state.agent_db.plans) == 5 and len(base_state.agent_db.customers) >= 4
    assert base_state.user_db.surroundings.phone_number == "555-123-2004"  # Priya's phone for free play


def test_benchmark_toml_pair_from_a_folder_or_a_file(tmp_path):
    (tmp_path / "db.toml").write_text(TOML_AGENT, encoding="utf-8")
    state = DOMAIN.load_db(tmp_path)
    assert state.agent_db.plans[0].data_limit_gb == 1.0 and isinstance(state.agent_db.plans[0].data_limit_gb, float)
    assert state.user_db == TelecomUserDB()  # no user_db.toml: the factory phone
    assert state.agent_db.customers[0].created_at.isoformat() == "2024-01-02T03:04:05"
    (tmp_path / "user_db.toml").write_text('[device]\nbattery_level = 12\n[surroundings]\nis_abroad = true\n', encoding="utf-8")
    state = DOMAIN.load_db(tmp_path / "db.toml")
    assert state.user_db.device.battery_level == 12 and state.user_db.surroundings.is_abroad
    agent_digest, user_digest = DOMAIN.digests(state)
    assert agent_digest == digest(state.agent_db) and user_digest == digest(state.user_db)
    dump = json.dumps(state.agent_db.model_dump(), sort_keys=True, default=str)
    assert '"created_at": "2024-01-02 03:04:05"' in dump and '"contract_end_date": "2026-01-31"' in dump


def test_bad_databases_end_in_one_sentence(tmp_path):
    with pytest.raises(DatabaseError, match="does not exist"):
        DOMAIN.load_db(tmp_path / "nope.json")
    with pytest.raises(DatabaseError, match="neither db.toml nor db.json"):
        DOMAIN.load_db(tmp_path)
    (tmp_path / "db.toml").write_text(TOML_AGENT.replace('model = "Any"', 'model = "Any"\ncolour = "red"'), encoding="utf-8")
    with pytest.raises(DatabaseError, match="telecom schema"):
        DOMAIN.load_db(tmp_path)


def test_signal_strength_digests_with_technology_keys():
    text = json.dumps(TelecomUserDB().model_dump(), sort_keys=True, default=str)
    assert '"signal_strength": {"2G": "poor", "3G": "fair", "4G": "good", "5G": "excellent"}' in text


def test_init_task_merges_data_then_runs_actions_with_sync(base_state):
    state = base_state.model_copy(deep=True)
    DOMAIN.init_task(state, {"initial_state": {
        "initialization_data": {"agent_data": {"plans": [{"plan_id": "P9", "name": "Only", "data_limit_gb": 1,
                                                            "price_per_month": 5, "data_refueling_price_per_gb": 1}]},
                                "user_data": {"device": {"battery_level": 9}}},
        "initialization_actions": [],
    }})
    assert [p.plan_id for p in state.agent_db.plans] == ["P9"]  # lists are replaced, not merged
    assert state.user_db.device.battery_level == 9 and state.user_db.surroundings.phone_number is None
    state = base_state.model_copy(deep=True)
    DOMAIN.init_task(state, {"initialization_actions": [
        {"env_type": "user", "func_name": "set_user_info", "arguments": {"name": "John Smith", "phone_number": "555-123-2002"}},
        {"env_type": "assistant", "func_name": "set_data_usage", "arguments": {"customer_id": "C1001", "line_id": "L1002", "data_used_gb": 15.1}},
    ]})
    assert state.user_db.surroundings.mobile_data_usage_exceeded  # sync ran after the action
    with pytest.raises(TaskError, match="not a telecom user-side function"):
        DOMAIN.init_task(state, {"initialization_actions": [{"env_type": "user", "func_name": "teleport", "arguments": {}}]})


def test_env_assertions_compare_with_assert_value(base_state):
    state = base_state.model_copy(deep=True)
    DOMAIN.init_task(state, {"initialization_actions": []})
    assert telecom_state.run_assertion(state, {"env_type": "user", "func_name": "assert_airplane_mode_status",
                                               "arguments": {"expected_status": False}, "assert_value": True})
    assert telecom_state.run_assertion(state, {"env_type": "assistant", "func_name": "assert_line_status",
                                               "arguments": {"customer_id": "C1001", "line_id": "L1002",
                                                             "expected_status": "Suspended"}, "assert_value": False})


def test_generator_is_deterministic_and_matches_the_shipped_files():
    first, second = generate.build(), generate.build()
    assert first == second
    shipped = json.loads((DOMAIN.folder / "db.json").read_text(encoding="utf-8"))
    assert shipped == first
    assert digest(TelecomDB.model_validate(generate.build(seed=7))) != digest(TelecomDB.model_validate(first))
    phone = json.loads((DOMAIN.folder / "user_db.json").read_text(encoding="utf-8"))
    assert phone == generate.build_phone(first)


def test_shipped_data_has_the_benchmark_set_up_customer(base_state):
    db = base_state.agent_db
    john = next(c for c in db.customers if c.full_name == "John Smith")
    line = next(l for l in db.lines if l.phone_number == "555-123-2002")
    plan = next(p for p in db.plans if p.plan_id == line.plan_id)
    assert (john.customer_id, line.line_id, line.status) == ("C1001", "L1002", "Active")
    assert (plan.data_limit_gb, plan.data_refueling_price_per_gb) == (15.0, 2.0)
    assert any(b.status == "Draft" for b in db.bills if b.bill_id in john.bill_ids)
    assert not any(b.status in ("Overdue", "Awaiting Payment") for b in db.bills if b.bill_id in john.bill_ids)

"""The carrier's tools behave like τ²-bench's (tau2-compat §4.4), message text aside."""

from __future__ import annotations

import json

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.domains.telecom import tools
from ledger_tui.domains.telecom.paths import identifies_unique_customer
from ledger_tui.engine.environment import Environment
from ledger_tui.engine.events import ToolCall

DOMAIN = load_domain("telecom")


@pytest.fixture(scope="module")
def base_state():
    return DOMAIN.load_db()


@pytest.fixture
def env(base_state):
    return Environment(DOMAIN, db=base_state.model_copy(deep=True))


def call(env, name, requestor="assistant", **arguments):
    return env.execute(ToolCall(id="t", name=name, arguments=arguments, requestor=requestor))


def bill(env, bill_id):
    return next(b for b in env.db.agent_db.bills if b.bill_id == bill_id)


def line(env, line_id):
    return next(l for l in env.db.agent_db.lines if l.line_id == line_id)


def test_get_details_by_id_dispatches_on_the_first_letter(env):
    assert json.loads(call(env, "get_details_by_id", id="L1002").content)["phone_number"] == "555-123-2002"
    assert json.loads(call(env, "get_details_by_id", id="P1002").content)["data_refueling_price_per_gb"] == 2.0
    assert json.loads(call(env, "get_details_by_id", id="D1002").content)["device_id"] == "D1002"
    assert call(env, "get_details_by_id", id="l1002").error  # case-sensitive prefix
    assert call(env, "get_details_by_id", id="X1").content.startswith("Error: ")
    assert call(env, "get_details_by_id", id="B9999").error


def test_records_dump_every_field_in_schema_order_with_dates_as_text(env):
    text = call(env, "get_customer_by_id", customer_id="C1001").content
    data = json.loads(text)
    assert list(data)[:3] == ["customer_id", "full_name", "date_of_birth"]
    assert data["last_extension_date"] is None
    assert data["created_at"] == "2021-08-12 16:09:44"  # a datetime in a record: space, not "T"


def test_customer_lookup_by_any_of_its_line_numbers(env):
    assert json.loads(call(env, "get_customer_by_phone", phone_number="555-123-2003").content)["customer_id"] == "C1001"
    assert call(env, "get_customer_by_phone", phone_number="555-000-0000").error


def test_customer_lookup_by_name_is_case_insensitive_and_never_an_error(env):
    found = json.loads(call(env, "get_customer_by_name", full_name="priya RAMAN", dob="1990-02-11").content)
    assert [c["customer_id"] for c in found] == ["C1002"]
    assert call(env, "get_customer_by_name", full_name="Priya Raman", dob="1990-02-12").content == "[]"
    assert identifies_unique_customer({}, [{"customer_id": "C1"}, {"customer_id": "C2"}]) is None


def test_bills_newest_first_with_a_limit(env):
    bills = json.loads(call(env, "get_bills_for_customer", customer_id="C1001").content)
    assert [b["bill_id"] for b in bills] == ["B1003", "B1002", "B1001"]
    assert len(json.loads(call(env, "get_bills_for_customer", customer_id="C1001", limit=1).content)) == 1


def test_data_usage_numbers_are_strings_and_the_cycle_ends_with_the_month(env):
    data = json.loads(call(env, "get_data_usage", customer_id="C1001", line_id="L1002").content)
    assert data == {"line_id": "L1002", "data_used_gb": "9.4", "data_limit_gb": "15.0", "data_refueling_gb": "0.0",
                    "cycle_end_date": "2025-02-28"}
    assert call(env, "get_data_usage", customer_id="C1001", line_id="L1004").error  # not John's line


def test_suspend_and_resume(env):
    out = json.loads(call(env, "suspend_line", customer_id="C1001", line_id="L1001", reason="any").content)
    assert "$5" in out["message"] and out["line"]["status"] == "Suspended"
    assert line(env, "L1001").suspension_start_date.isoformat() == "2025-02-25"
    assert call(env, "suspend_line", customer_id="C1001", line_id="L1001", reason="again").error
    call(env, "resume_line", customer_id="C1001", line_id="L1001")
    assert line(env, "L1001").status == "Active" and line(env, "L1001").suspension_start_date is None
    assert call(env, "resume_line", customer_id="C1001", line_id="L1001").error
    assert not call(env, "resume_line", customer_id="C1005", line_id="L1011").error  # Pending Activation


def test_roaming_switches_are_idempotent(env):
    first = call(env, "enable_roaming", customer_id="C1001", line_id="L1002").content
    second = call(env, "enable_roaming", customer_id="C1001", line_id="L1002").content
    assert first != second and "already" in second and line(env, "L1002").roaming_enabled
    call(env, "disable_roaming", customer_id="C1001", line_id="L1002")
    assert not line(env, "L1002").roaming_enabled


def test_payment_request_rules_and_the_phone_gets_it_at_sync(env):
    assert call(env, "send_payment_request", customer_id="C1004", bill_id="B1009").error  # B1010 awaiting
    assert call(env, "send_payment_request", customer_id="C1001", bill_id="B1005").error  # not C1001's
    assert not call(env, "send_payment_request", customer_id="C1001", bill_id="B1002").error  # paid: not checked
    assert bill(env, "B1002").status == "Awaiting Payment"
    # the shipped phone is Priya's: her request appears, John's does not
    assert env.db.user_db.surroundings.payment_request is None
    call(env, "send_payment_request", customer_id="C1002", bill_id="B1005")
    request = env.db.user_db.surroundings.payment_request
    assert (request.bill_id, request.amount_due, request.paid) == ("B1005", 102.5, False)


def test_refuel_charges_the_first_draft_bill(env):
    out = json.loads(call(env, "refuel_data", customer_id="C1001", line_id="L1002", gb_amount=2.0).content)
    assert out["new_data_refueling_gb"] == "2.0" and out["charge"] == "4.0" and "$4.00" in out["message"]
    draft = bill(env, "B1003")
    assert draft.total_due == 4.0
    item = draft.line_items[-1]
    assert (item.description, item.amount, item.date.isoformat(), item.item_type) == (
        "Data refueling: 2.0 GB at $2.0/GB", 4.0, "2025-02-25", "Charge")
    assert call(env, "refuel_data", customer_id="C1001", line_id="L1002", gb_amount=0).error


def test_refuel_keeps_the_amount_as_sent_int_or_float(base_state):
    as_int = Environment(DOMAIN, db=base_state.model_copy(deep=True))
    as_float = Environment(DOMAIN, db=base_state.model_copy(deep=True))
    call(as_int, "refuel_data", customer_id="C1001", line_id="L1002", gb_amount=2)
    call(as_float, "refuel_data", customer_id="C1001", line_id="L1002", gb_amount=2.0)
    assert bill(as_int, "B1003").line_items[-1].description == "Data refueling: 2 GB at $2.0/GB"
    assert as_int.digests()[0] != as_float.digests()[0]


def test_refuel_without_a_draft_opens_a_deterministic_one(base_state):
    ids = []
    for _ in range(2):
        env = Environment(DOMAIN, db=base_state.model_copy(deep=True))
        call(env, "refuel_data", customer_id="C1005", line_id="L1010", gb_amount=1.5)
        customer = next(c for c in env.db.agent_db.customers if c.customer_id == "C1005")
        new = customer.bill_ids[-1]
        ids.append(new)
        b = bill(env, new)
        assert (b.status, b.period_start.isoformat(), b.period_end.isoformat(), b.due_date.isoformat(), b.total_due) == (
            "Draft", "2025-03-01", "2025-03-31", "2025-03-15", 3.0)
    assert ids[0] == ids[1] and len(ids[0]) == 9 and ids[0].startswith("B")
    assert ids[0] == tools.draft_bill_id(base_state.agent_db, "C1005")


def test_transfer_and_unknown_tools(env):
    assert call(env, "transfer_to_human_agents", summary="x").content == "Transfer successful"
    assert call(env, "calculate", expression="1+1").content == "Error: Tool 'calculate' not found."
    assert call(env, "resume_line", customer_id="C1001").error  # a missing argument is an error result
    assert call(env, "resume_line", customer_id="C1001", line_id="L1001", extra=1).error

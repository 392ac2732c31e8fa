"""A database whose record keys disagree with the records' own ids is refused when it is loaded.

Tools find a record by its key and the ledger files it by the id inside it, so a key that names
another record would make the agent act on one record while the gate reads another. Every
collection listed here is keyed by its records' ids; re-labelling one record's id must stop the
load (`Domain.load_db`, `session_db`, telecom's own loader, and `ledger-tui run --db`) with one
sentence naming the collection, the key and the id.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.engine.domain import check_keys
from ledger_tui.engine.errors import DatabaseError
from tests.cli.test_cli import cli, one_sentence_error

ROOT = Path(__file__).resolve().parents[2]
WRONG_ID = "XYZ999"

# (domain, collection, id field), written out here rather than read from the domains' own
# declarations, so a collection a domain forgets to declare fails this test.
COLLECTIONS = [
    ("airline", "flights", "flight_number"),
    ("airline", "users", "user_id"),
    ("airline", "users.*.payment_methods", "id"),
    ("airline", "reservations", "reservation_id"),
    ("retail", "products", "product_id"),
    ("retail", "products.*.variants", "item_id"),
    ("retail", "users", "user_id"),
    ("retail", "users.*.payment_methods", "id"),
    ("retail", "orders", "order_id"),
    ("telecom", "user_db.device.app_statuses", "app_name"),
    ("telehealth", "patients", "patient_id"),
    ("telehealth", "providers", "provider_id"),
    ("telehealth", "appointments", "appointment_id"),
    ("telehealth", "records", "record_id"),
    ("telehealth", "prescriptions", "prescription_id"),
    ("telehealth", "suppliers", "supplier_id"),
    ("telehealth", "interactions", "interaction_id"),
    ("telehealth", "regimens", "plan_id"),
    ("telehealth", "devices", "device_id"),
    ("telehealth", "uploads", "upload_id"),
]


def _relabel(data: dict[str, Any], collection: str, id_field: str) -> tuple[str, str]:
    """Give the first record of `collection` another id; (the collection's concrete path, its key)."""
    where: list[str] = []
    value: Any = data
    for part in collection.split("."):
        if part == "*":
            part = next(iter(value))
        where.append(part)
        value = value[part]
    key = next(iter(value))
    value[key][id_field] = WRONG_ID
    return ".".join(where), key


def bad_database(tmp_path: Path, domain: str, collection: str, id_field: str) -> tuple[Path, str]:
    """A copy of the shipped database with one record re-labelled; (file for --db, expected error)."""
    folder = ROOT / "domains" / domain
    target = tmp_path / "db.json"
    if collection.startswith("user_db."):  # telecom: the phone's database sits beside the carrier's
        shutil.copy(folder / "db.json", target)
        data = json.loads((folder / "user_db.json").read_text())
        data["device"]["app_statuses"] = {"messaging": {"app_name": "messaging"}, "browser": {"app_name": "browser"}}
        where, key = _relabel(data, collection.removeprefix("user_db."), id_field)
        where = "user_db." + where
        (tmp_path / "user_db.json").write_text(json.dumps(data))
    else:
        data = json.loads((folder / "db.json").read_text())
        where, key = _relabel(data, collection, id_field)
        target.write_text(json.dumps(data))
    expected = (
        f"Database {target}: {where} key {key!r} holds the record whose {id_field} is {WRONG_ID!r}; "
        "make each key equal its record's id."
    )
    return target, expected


@pytest.mark.parametrize("domain, collection, id_field", COLLECTIONS, ids=[f"{d}-{c}" for d, c, _ in COLLECTIONS])
def test_a_key_that_disagrees_with_its_record_id_stops_the_load(tmp_path: Path, domain: str, collection: str, id_field: str):
    path, expected = bad_database(tmp_path, domain, collection, id_field)
    d = load_domain(domain)
    with pytest.raises(DatabaseError) as caught:
        d.load_db(path)
    assert str(caught.value) == expected
    with pytest.raises(DatabaseError, match="make each key equal its record's id"):
        d.session_db(path)  # what every session's environment loads


@pytest.mark.parametrize("domain", ["airline", "retail", "telecom", "telehealth"])
def test_the_shipped_databases_are_keyed_by_their_ids(domain: str):
    d = load_domain(domain)
    assert check_keys(d.load_db(), d.keyed, d.db_path) is not None
    declared = {(c, f) for c, f in d.keyed}
    assert declared == {(c, f) for dom, c, f in COLLECTIONS if dom == domain}


def test_two_records_swapped_between_keys_are_refused(tmp_path: Path):
    """The airline case from the issue: users keyed by each other's user_id."""
    data = json.loads((ROOT / "domains" / "airline" / "db.json").read_text())
    first, second = list(data["users"])[:2]
    data["users"][first], data["users"][second] = data["users"][second], data["users"][first]
    (tmp_path / "db.json").write_text(json.dumps(data))
    with pytest.raises(DatabaseError) as caught:
        load_domain("airline").load_db(tmp_path / "db.json")
    assert f"users key {first!r} holds the record whose user_id is {second!r}" in str(caught.value)


@pytest.mark.parametrize(
    "domain, collection, id_field",
    [("airline", "reservations", "reservation_id"), ("retail", "orders", "order_id"),
     ("telecom", "user_db.device.app_statuses", "app_name"), ("telehealth", "appointments", "appointment_id")],
    ids=["airline", "retail", "telecom", "telehealth"],
)  # fmt: skip
def test_the_cli_refuses_such_a_database_in_one_sentence(tmp_path: Path, domain: str, collection: str, id_field: str):
    path, expected = bad_database(tmp_path, domain, collection, id_field)
    script = sorted((ROOT / "domains" / domain / "scripts").glob("*.json"))[0]
    out = cli("run", "--script", str(script), "--db", str(path), "--out", str(tmp_path / "run.jsonl"))
    assert one_sentence_error(out) == f"error: {expected}"

"""The gate records which fields of a record each check used, from the check's own accesses, and
`why` shows those fields in full instead of a record cut to one line."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from ledger_tui.cli import app
from ledger_tui.engine.events import EvidenceRead, GateDecided, Verdict, dump_event
from ledger_tui.engine.store.trajectories import read_trajectory

ROOT = Path(__file__).resolve().parents[2]
BLOCKED = ROOT / "sessions" / "airline-cancel-blocked.jsonl"


def blocked_decision():
    events = read_trajectory(BLOCKED).events
    return next(e for e in events if isinstance(e, GateDecided) and e.decision.verdict == Verdict.BLOCK)


def test_the_deciding_check_names_the_fields_its_verdict_turned_on():
    decision = blocked_decision().decision
    eligible = next(p for p in decision.predicates if p.name == "cancel_eligible")
    reservation = next(r for r in eligible.reads if r.path.startswith("reservations."))
    assert {"insurance", "cabin", "created_at"} <= set(reservation.fields or [])
    owned = next(p for p in decision.predicates if p.name == "record_owned_by_customer")
    assert next(r for r in owned.reads if r.path.startswith("reservations.")).fields == ["user_id"]
    # context facts and stated facts are not records: no fields
    assert all(r.fields is None for r in eligible.reads if r.origin != "observed")


def test_evidence_without_fields_keeps_the_bytes_of_older_trajectories():
    old = EvidenceRead(path="users.u1", value={"a": 1}, source_seq=3)
    assert "fields" not in json.loads(old.model_dump_json())
    assert json.loads(old.model_copy(update={"fields": ["a"]}).model_dump_json())["fields"] == ["a"]


def test_why_prints_each_used_field_in_full(tmp_path: Path):
    result = CliRunner().invoke(app, ["why", str(BLOCKED)])
    assert result.exit_code == 0, result.output
    block = result.output[result.output.index("[FAIL→BLOCK] cancel_eligible") :]
    assert '            insurance = "no"' in block
    assert '            cabin = "economy"' in block


def test_why_on_a_trajectory_written_before_fields_shows_the_record(tmp_path: Path):
    lines = []
    for line in BLOCKED.read_text().splitlines():
        data = json.loads(line)
        for p in (data.get("decision") or {}).get("predicates", []):
            for r in p.get("reads", []):
                r.pop("fields", None)
        lines.append(json.dumps(data))
    old = tmp_path / "old.jsonl"
    old.write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(app, ["why", str(old)])
    assert result.exit_code == 0, result.output
    assert 'reservations.VY0QX8 = {"cabin": "economy"' in result.output
    assert dump_event(blocked_decision())  # the shipped one still serializes

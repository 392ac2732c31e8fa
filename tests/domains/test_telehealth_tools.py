"""Telehealth tools, data and conventions: effects of every write, what reads return, the tool text
and digest conventions of τ²-bench (tau2-compat §1.2-1.4), the policy's clause tags, the path map,
the generator and the scripted sessions."""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from pathlib import Path

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.domains.telehealth import generate, slots
from ledger_tui.domains.telehealth.predicates import PREDICATES
from ledger_tui.domains.telehealth.slots import NOW, hours_between, slots_for
from ledger_tui.engine.domain import clause_text
from ledger_tui.engine.observe import read_pairs
from ledger_tui.engine.environment import Environment
from ledger_tui.engine.events import GateDecided, Refusal, ToolCall
from ledger_tui.engine.gate import SessionContext, suggest_read
from ledger_tui.engine.store.serialize import digest
from ledger_tui.engine.session import Session
from ledger_tui.testing import play_script

DOMAIN = load_domain("telehealth")
PRISTINE = DOMAIN.load_db()


@pytest.fixture
def env() -> Environment:
    return Environment(DOMAIN)


def run(env: Environment, name: str, **arguments):
    return env.execute(ToolCall(id="t", name=name, arguments=arguments))


def ok(env: Environment, name: str, **arguments):
    outcome = run(env, name, **arguments)
    assert not outcome.error, outcome.content
    return json.loads(outcome.content) if outcome.content[:1] in "{[" else outcome.content


def upcoming(minutes: int = 30):
    return next(
        a for a in PRISTINE.appointments.values()
        if a.status == "scheduled" and a.duration_minutes == minutes and hours_between(NOW, a.start) > 48
    )


def free_slot(provider_id: str, minutes: int = 30, after: str = NOW) -> str:
    slots = PRISTINE.providers[provider_id].available_slots
    return next(s for s in slots if s > after and all(x in slots for x in slots_for(s, minutes)))


# --------------------------------------------------------------------------- identification and reads


def test_find_patient_returns_the_bare_id_as_text(env):
    patient = next(iter(PRISTINE.patients.values()))
    outcome = run(env, "find_patient_by_email", email=patient.email.upper())
    assert not outcome.error and outcome.content == patient.patient_id  # verbatim, not JSON-quoted


def test_patients_sharing_a_name_are_told_apart_by_date_of_birth(env):
    seen: dict[tuple[str, str], list] = {}
    for p in PRISTINE.patients.values():
        seen.setdefault((p.first_name, p.last_name), []).append(p)
    twins = next(group for group in seen.values() if len(group) > 1)
    for p in twins:
        found = ok(env, "find_patient_by_name_dob", first_name=p.first_name.lower(), last_name=p.last_name,
                   date_of_birth=p.date_of_birth)
        assert found == p.patient_id
    wrong = run(env, "find_patient_by_name_dob", first_name=twins[0].first_name, last_name=twins[0].last_name,
                date_of_birth="1900-01-01")
    assert wrong.error and wrong.content.startswith("Error: No patient found")


def test_identification_reads_record_the_patient_not_a_path():
    patient = next(iter(PRISTINE.patients.values()))
    tool = DOMAIN.tool("find_patient_by_email")
    assert list(tool.absorbs({"email": patient.email}, patient.patient_id)) == []
    assert tool.identifies({"email": patient.email}, patient.patient_id) == patient.patient_id


def test_records_are_dumped_in_schema_order_with_every_field(env):
    a = upcoming()
    outcome = run(env, "get_appointment_details", appointment_id=a.appointment_id)
    assert list(json.loads(outcome.content)) == list(type(a).model_fields)
    assert outcome.content.startswith('{"appointment_id": ')  # τ²-bench separators


def test_unknown_ids_and_bad_arguments_are_error_results(env):
    assert run(env, "get_appointment_details", appointment_id="APT1").content == "Error: Appointment APT1 not found"
    bad = run(env, "get_patient_details", patient_id="x", extra=1)
    assert bad.error and bad.content == "Error: TelehealthTools.get_patient_details() got an unexpected keyword argument 'extra'"
    assert run(env, "no_such_tool").content == "Error: Tool 'no_such_tool' not found."


def test_list_patient_appointments_fills_the_ledger_with_records_and_an_index(env):
    pid = upcoming().patient_id
    outcome = run(env, "list_patient_appointments", patient_id=pid)
    pairs = dict(read_pairs(ToolCall(id="t", name="list_patient_appointments", arguments={"patient_id": pid}), outcome))
    assert pairs[f"patient_appointments.{pid}"] == PRISTINE.patients[pid].appointment_ids
    for aid in PRISTINE.patients[pid].appointment_ids:
        assert pairs[f"appointments.{aid}"]["patient_id"] == pid


def test_list_available_providers_filters_by_specialty_date_and_slot(env):
    cardio = ok(env, "list_available_providers", specialty="Cardiology")
    assert cardio and {p["specialty"] for p in cardio} == {"cardiology"}
    slot = free_slot(cardio[0]["provider_id"])
    at_slot = ok(env, "list_available_providers", specialty="cardiology", start=slot[:16])
    assert cardio[0]["provider_id"] in {p["provider_id"] for p in at_slot}
    assert all(slot in p["available_slots"] for p in at_slot)
    on_day = ok(env, "list_available_providers", date=slot[:10])
    assert all(any(s.startswith(slot[:10]) for s in p["available_slots"]) for p in on_day)
    assert run(env, "list_available_providers", specialty="astrology").content.startswith("Error: Unknown specialty")


def test_drug_interactions_only_consider_active_prescriptions(env):
    for pid, patient in PRISTINE.patients.items():
        active = {PRISTINE.prescriptions[r].medication for r in patient.prescription_ids
                  if PRISTINE.prescriptions[r].status == "active"}
        for i in ok(env, "check_drug_interactions", patient_id=pid):
            assert {i["medication_a"], i["medication_b"]} <= active


def test_telemetry_uploads_are_oldest_first_and_belong_to_the_device(env):
    device = next(d for d in PRISTINE.devices.values() if d.status == "active")
    uploads = ok(env, "get_telemetry_uploads", device_id=device.device_id)
    assert uploads and all(u["device_id"] == device.device_id for u in uploads)
    assert [u["recorded_at"] for u in uploads] == sorted(u["recorded_at"] for u in uploads)
    assert uploads[-1]["recorded_at"] == device.last_upload_at


def test_regimen_options_by_condition_name_or_code(env):
    by_name = ok(env, "get_regimen_options", condition="Hypertension")
    by_code = ok(env, "get_regimen_options", condition="I10")
    assert by_name == by_code and len(by_name) >= 2
    assert run(env, "get_regimen_options", condition="broken leg").error


# --------------------------------------------------------------------------- writes


def test_schedule_appointment_books_the_slot(env):
    a = upcoming()
    provider = a.provider_id
    start = free_slot(provider)
    booked = ok(env, "schedule_appointment", patient_id=a.patient_id, provider_id=provider, start=start[:16],
                duration_minutes=30, reason=" annual physical ")
    next_id = f"APT{max(int(k[3:]) for k in PRISTINE.appointments) + 1}"
    assert booked == {
        "appointment_id": next_id, "patient_id": a.patient_id, "provider_id": provider, "start": start,
        "duration_minutes": 30, "status": "scheduled", "reason": "annual physical", "modality": "video",
        "created_at": NOW,
    }
    assert env.db.patients[a.patient_id].appointment_ids[-1] == next_id
    assert start not in env.db.providers[provider].available_slots
    again = run(env, "schedule_appointment", patient_id=a.patient_id, provider_id=provider, start=start,
                duration_minutes=30, reason="annual physical")
    assert again.error and "no open slot" in again.content


def test_a_60_minute_booking_takes_two_slots_and_a_failed_one_changes_nothing(env):
    a = upcoming()
    start = free_slot(a.provider_id, 60)
    before = env.digests()
    bad = run(env, "schedule_appointment", patient_id=a.patient_id, provider_id=a.provider_id, start=start,
              duration_minutes=45, reason="x")
    assert bad.error and env.digests() == before
    ok(env, "schedule_appointment", patient_id=a.patient_id, provider_id=a.provider_id, start=start,
       duration_minutes=60, reason="back pain")
    assert not set(slots_for(start, 60)) & set(env.db.providers[a.provider_id].available_slots)


def test_new_appointment_ids_follow_the_highest_id_the_session_has(env):
    highest = max(int(k[3:]) for k in PRISTINE.appointments)
    a = upcoming()
    first, second = (free_slot(a.provider_id, after=after) for after in (NOW, free_slot(a.provider_id)))
    book = dict(patient_id=a.patient_id, provider_id=a.provider_id, duration_minutes=30, reason="back pain")
    assert ok(env, "schedule_appointment", start=first, **book)["appointment_id"] == f"APT{highest + 1}"
    assert ok(env, "schedule_appointment", start=second, **book)["appointment_id"] == f"APT{highest + 2}"
    # a session that removed the highest pristine id, and a plain database, count their own ids
    removed = Environment(DOMAIN)
    del removed.db.appointments[f"APT{highest}"]
    assert ok(removed, "schedule_appointment", start=first, **book)["appointment_id"] == f"APT{highest}"
    plain = Environment(DOMAIN)
    plain.db.appointments = {k: v for k, v in plain.db.appointments.items() if k != f"APT{highest}"}
    assert ok(plain, "schedule_appointment", start=first, **book)["appointment_id"] == f"APT{highest}"


def test_times_are_read_and_written_as_strptime_and_strftime_do():
    texts = [
        "2025-03-12T10:00:00", "2025-03-12T10:00", "2025-03-12 10:00:00", " 2025-03-12 10:00 ", "2025-3-2T1:2:3",
        "2025-13-01T10:00:00", "2025-02-29T10:00:00", "2024-02-29T23:59:59", "2025-03-12T24:00:00",
        "2025-03-12T10:00:60", "2025-03-12T10:00:61", "0000-01-01T00:00:00", "0999-01-01T00:00:00",
        "2025-03-12T10:00:00\n", "2025-03-12T10:00:00Z", "2025-03-12T10:00:00+01:00", "2025-03-12T10:00:00.5",
        "20250312T100000", "2025-03-12t10:00:00", "\u0662\u0660\u0662\u0665-03-12T10:00:00", "", "soon",
    ]

    def outcome(f, text):
        try:
            return f(text)
        except ValueError as e:
            return str(e)

    def by_strptime(text):
        cleaned = text.strip().replace(" ", "T")
        for pattern in (slots.FORMAT, "%Y-%m-%dT%H:%M"):
            try:
                return dt.datetime.strptime(cleaned, pattern).strftime(slots.FORMAT)
            except ValueError:
                continue
        raise ValueError(f"{text!r} is not a date and time like 2025-03-12T10:00:00")

    for text in texts:
        assert outcome(slots.parse, text) == outcome(lambda t: dt.datetime.strptime(t, slots.FORMAT), text), text
        assert outcome(slots.normalise, text) == outcome(by_strptime, text), text
    for moment in (dt.datetime(1, 2, 3, 4, 5, 6), dt.datetime(999, 12, 31, 23, 59), dt.datetime(2025, 3, 12, 10, 0, 0, 5)):
        assert slots.fmt(moment) == moment.strftime(slots.FORMAT)


def test_reschedule_frees_the_old_slots_and_takes_the_new(env):
    a = upcoming()
    new = next(s for s in PRISTINE.providers[a.provider_id].available_slots if s > NOW)
    moved = ok(env, "reschedule_appointment", appointment_id=a.appointment_id, new_start=new)
    slots = env.db.providers[a.provider_id].available_slots
    assert moved["start"] == new and new not in slots and a.start in slots
    assert slots == sorted(slots)
    assert run(env, "reschedule_appointment", appointment_id=a.appointment_id, new_start=new).content == (
        "Error: The new time is the same as the current one"
    )


def test_cancel_releases_the_slots_and_cannot_be_repeated(env):
    a = upcoming(60)
    cancelled = ok(env, "cancel_appointment", appointment_id=a.appointment_id)
    assert cancelled["status"] == "cancelled"
    slots = env.db.providers[a.provider_id].available_slots
    assert set(slots_for(a.start, 60)) <= set(slots) and slots == sorted(slots)
    assert run(env, "cancel_appointment", appointment_id=a.appointment_id).content == (
        f"Error: Appointment {a.appointment_id} is cancelled, not scheduled"
    )


def test_update_prescription_supplier_changes_only_the_supplier(env):
    rx = next(r for r in PRISTINE.prescriptions.values() if r.status == "active")
    other = next(s for s in PRISTINE.suppliers.values() if s.supplier_id != rx.supplier_id)
    updated = ok(env, "update_prescription_supplier", prescription_id=rx.prescription_id, supplier_id=other.supplier_id)
    assert updated == {**rx.model_dump(), "supplier_id": other.supplier_id}
    same = run(env, "update_prescription_supplier", prescription_id=rx.prescription_id, supplier_id=other.supplier_id)
    assert same.error and "already" in same.content
    stopped = next(r for r in PRISTINE.prescriptions.values() if r.status == "discontinued")
    assert run(env, "update_prescription_supplier", prescription_id=stopped.prescription_id, supplier_id="SUP01").error


def test_update_medical_record_note_appends_and_leaves_clinical_data_alone(env):
    record = next(r for r in PRISTINE.records.values() if r.diagnoses and r.prescription_ids)
    after = ok(env, "update_medical_record_note", record_id=record.record_id, note="  Patient reports a mild cough. ")
    assert after["notes"][-1] == {"written_at": NOW, "author": "virtual assistant", "text": "Patient reports a mild cough."}
    assert after["diagnoses"] == [d.model_dump() for d in record.diagnoses]
    assert after["prescription_ids"] == record.prescription_ids
    assert run(env, "update_medical_record_note", record_id=record.record_id, note="   ").content == "Error: The note is empty"


def test_transfer_is_generic_and_changes_nothing(env):
    before = env.digests()
    assert run(env, "transfer_to_human_agents", summary="wants a dosage change").content == "Transfer successful"
    assert env.digests() == before and DOMAIN.kind("transfer_to_human_agents") == "generic"


def test_writes_make_the_paths_they_change_stale():
    assert DOMAIN.tool("schedule_appointment").touched_paths({"patient_id": "p", "provider_id": "DR1"}) == [
        "patients.p", "patient_appointments.p", "providers.DR1",
    ]
    # the provider is not an argument: it comes from the updated appointment, else every provider
    cancelled = {"appointment_id": "A", "provider_id": "DR7", "status": "cancelled"}
    assert DOMAIN.tool("cancel_appointment").touched_paths({"appointment_id": "A"}, cancelled) == ["appointments.A", "providers.DR7"]
    assert DOMAIN.tool("cancel_appointment").touched_paths({"appointment_id": "A"}) == ["appointments.A", "providers.*"]
    assert DOMAIN.tool("update_prescription_supplier").touched_paths({"prescription_id": "RX"}) == ["prescriptions.RX"]
    assert DOMAIN.tool("update_medical_record_note").touched_paths({"record_id": "MR"}) == ["records.MR"]


# --------------------------------------------------------------------------- conventions


def test_digest_follows_the_canonical_dump(env):
    assert env.digests() == (digest(PRISTINE), None)
    ok(env, "cancel_appointment", appointment_id=upcoming().appointment_id)
    assert env.digests()[0] != digest(PRISTINE)


def test_digest_is_sensitive_to_list_order_and_number_types():
    db = DOMAIN.load_db()
    provider = next(iter(db.providers.values()))
    provider.available_slots = list(reversed(provider.available_slots))
    assert digest(db) != digest(PRISTINE)
    db = DOMAIN.load_db()
    upload = next(iter(db.uploads.values()))
    key = next(iter(upload.readings))
    upload.readings[key] = int(upload.readings[key])
    assert digest(db) != digest(PRISTINE)


def test_every_predicate_clause_is_tagged_once_in_the_policy():
    policy = DOMAIN.policy
    for p in PREDICATES:
        text = clause_text(policy, p.clause)
        assert text.startswith(f"[{p.clause}]"), p.clause
        assert len(text) > 40
        assert policy.count(f"**[{p.clause}]**") == 1


def test_every_path_a_predicate_reads_has_a_read_that_supplies_it():
    ctx = SessionContext(now=NOW)
    for template in {t for p in PREDICATES for t in p.reads if not t.startswith(("said.", "users."))}:
        concrete = template.replace("{", "").replace("}", "")
        call = suggest_read(DOMAIN, concrete, ctx)
        assert call is not None, template
        assert DOMAIN.tool(call.name).kind == "read"
        assert set(call.arguments) == set(DOMAIN.tool(call.name).args.model_fields), template


def test_every_tool_has_a_schema_with_required_arguments():
    for tool in DOMAIN.tools:
        schema = tool.schema()["function"]
        assert schema["description"]
        required = {n for n, f in tool.args.model_fields.items() if f.is_required()}
        assert set(schema["parameters"].get("required", [])) == required
        assert tool.args.model_config.get("extra") == "forbid"


def test_generator_is_deterministic_and_matches_the_committed_db():
    first = generate.dumps(generate.generate())
    assert first == generate.dumps(generate.generate())
    assert first == DOMAIN.db_path.read_text(encoding="utf-8")
    assert generate.dumps(generate.generate(seed=7)) != first


def test_generated_data_hangs_together():
    db = PRISTINE
    assert len(db.patients) == 200 and len(db.providers) == 30 and len(db.suppliers) == 8
    assert 500 <= len(db.appointments) <= 700
    for a in db.appointments.values():
        assert a.patient_id in db.patients and a.appointment_id in db.patients[a.patient_id].appointment_ids
        if a.status == "scheduled":
            assert a.start > NOW[:10]
            assert not set(slots_for(a.start, a.duration_minutes)) & set(db.providers[a.provider_id].available_slots)
        else:
            assert a.status == "cancelled" or a.start < NOW
    for rx in db.prescriptions.values():
        assert rx.medication in db.suppliers[rx.supplier_id].stocks
    for r in db.records.values():
        assert set(r.prescription_ids) <= set(db.patients[r.patient_id].prescription_ids)


# --------------------------------------------------------------------------- scripted sessions

SCRIPTS = sorted((DOMAIN.folder / "scripts").glob("*.json"))


async def _play(path: Path) -> Session:
    return await play_script(DOMAIN, path)


def _verdicts(session: Session) -> list[tuple[str, str]]:
    return [(e.decision.call.name, e.decision.verdict.value) for e in session.events if isinstance(e, GateDecided)]


def test_scripts_exist():
    assert {p.name for p in SCRIPTS} >= {"reschedule_overlap_revise_then_allow.json", "late_cancellation_blocked_then_moved.json"}


def test_overlapping_reschedule_script_is_revised_then_allowed():
    session = asyncio.run(_play(DOMAIN.folder / "scripts" / "reschedule_overlap_revise_then_allow.json"))
    assert _verdicts(session) == [("reschedule_appointment", "REVISE"), ("reschedule_appointment", "ALLOW")]
    revise = next(e.decision for e in session.events if isinstance(e, GateDecided))
    assert [p.name for p in revise.failed()] == ["no_overlapping_appointment"]
    assert session.env.db.appointments["APT10524"].start == "2025-03-19T13:00:00"


def test_late_cancellation_script_is_blocked_then_the_visit_is_moved():
    session = asyncio.run(_play(DOMAIN.folder / "scripts" / "late_cancellation_blocked_then_moved.json"))
    assert _verdicts(session) == [("cancel_appointment", "BLOCK"), ("reschedule_appointment", "ALLOW")]
    block = next(e.decision for e in session.events if isinstance(e, GateDecided))
    assert [p.name for p in block.failed()] == ["outside_cancellation_window"]
    assert any(isinstance(e, Refusal) for e in session.events)
    appointment = session.env.db.appointments["APT10456"]
    assert appointment.status == "scheduled" and appointment.start == "2025-03-11T09:00:00"


def test_a_cancellation_makes_only_its_own_provider_stale():
    from ledger_tui.testing import Probe

    probe = Probe("telehealth")
    appointment = next(a for a in probe.env.db.appointments.values() if a.status == "scheduled" and a.start > NOW)
    other = next(pid for pid in probe.env.db.providers if pid != appointment.provider_id)
    for provider in (appointment.provider_id, other):
        probe.read("get_provider_details", provider_id=provider)
    probe.read("get_appointment_details", appointment_id=appointment.appointment_id)
    assert not probe.write("cancel_appointment", appointment_id=appointment.appointment_id).error
    stale = {path for path in probe.ledger if not probe.ledger.fresh(path)}
    assert stale == {f"appointments.{appointment.appointment_id}", f"providers.{appointment.provider_id}"}
    assert probe.ledger.fresh(f"providers.{other}"), "another provider's slots did not change"

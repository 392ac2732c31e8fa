"""Every telehealth policy rule, through the gate: one call that passes and one that fails with the
verdict and predicate policy.md gives it. Driven by hand with `Probe` (no model)."""

from __future__ import annotations

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.domains.telehealth.predicates import PREDICATES, clinical_change
from ledger_tui.domains.telehealth.slots import NOW, hours_between, overlaps, slots_for
from ledger_tui.engine.events import Verdict
from ledger_tui.testing import Probe

DOMAIN = load_domain("telehealth")
DB = DOMAIN.load_db()


# --------------------------------------------------------------------------- finding situations


def scheduled(pid: str):
    return [DB.appointments[a] for a in DB.patients[pid].appointment_ids if DB.appointments[a].status == "scheduled"]


def is_free(pid: str, start: str, minutes: int, skip: str | None = None) -> bool:
    return not any(
        overlaps(start, minutes, a.start, a.duration_minutes) for a in scheduled(pid) if a.appointment_id != skip
    )


def open_slot(provider_id: str, pid: str, minutes: int = 30, skip: str | None = None) -> str:
    slots = DB.providers[provider_id].available_slots
    return next(
        s for s in slots if s > NOW and all(x in slots for x in slots_for(s, minutes)) and is_free(pid, s, minutes, skip)
    )


def upcoming(min_hours: float = 48, max_hours: float = 1e9):
    return next(
        a for a in DB.appointments.values()
        if a.status == "scheduled" and min_hours <= hours_between(NOW, a.start) < max_hours
    )


def provider_of(specialty: str) -> str:
    return next(p.provider_id for p in DB.providers.values() if p.specialty == specialty)


# --------------------------------------------------------------------------- driving the gate


def probe_for(pid: str, by: str = "email", opening: str = "Hello.") -> Probe:
    """A conversation in which the patient `pid` has said who they are and was identified."""
    p = Probe(DOMAIN)
    patient = DB.patients[pid]
    p.say(opening)
    if by == "email":
        p.say(f"My email is {patient.email}.")
        assert not p.read("find_patient_by_email", email=patient.email).error
    else:
        p.say(f"I'm {patient.first_name} {patient.last_name}, born {patient.date_of_birth}.")
        outcome = p.read(
            "find_patient_by_name_dob",
            first_name=patient.first_name, last_name=patient.last_name, date_of_birth=patient.date_of_birth,
        )
        assert not outcome.error
    return p


def decide(p: Probe, name: str, **arguments):
    """The agent proposes the write in the patient's terms, the patient says yes, the gate decides."""
    return p.propose(name, **arguments)


def failed(decision) -> set[str]:
    return {r.name for r in decision.failed()}


def assert_stopped(decision, verdict: Verdict, predicate: str) -> None:
    assert decision.verdict == verdict, (decision.verdict, decision.reason)
    assert predicate in failed(decision), failed(decision)


def assert_allowed(decision) -> None:
    assert decision.verdict == Verdict.ALLOW, decision.reason


def booking_probe(pid: str, provider_id: str, opening: str = "Hello.") -> Probe:
    p = probe_for(pid, opening=opening)
    p.read("get_provider_details", provider_id=provider_id)
    p.read("list_patient_appointments", patient_id=pid)
    return p


# --------------------------------------------------------------------------- everywhere


def test_a_write_before_identification_is_revised_and_after_it_allowed():
    a = upcoming()
    email = DB.patients[a.patient_id].email
    p = Probe(DOMAIN)
    p.say("Hello, I need to cancel an appointment.")
    p.read("get_appointment_details", appointment_id=a.appointment_id)
    decision = decide(p, "cancel_appointment", appointment_id=a.appointment_id)
    assert_stopped(decision, Verdict.REVISE, "customer_identified")
    assert decision.suggested_calls == []  # the patient has not said who they are: ask first

    p.read("find_patient_by_email", email=email)  # an email the patient never gave identifies nobody
    assert_stopped(decide(p, "cancel_appointment", appointment_id=a.appointment_id), Verdict.REVISE, "customer_identified")

    p.say(f"My email is {email}.")
    decision = decide(p, "cancel_appointment", appointment_id=a.appointment_id)
    assert_stopped(decision, Verdict.REVISE, "customer_identified")
    assert "find_patient_by_email" in decision.hint
    assert [(c.name, c.arguments) for c in decision.suggested_calls] == [("find_patient_by_email", {"email": email})]

    p.read("find_patient_by_email", email=email)
    assert_allowed(decide(p, "cancel_appointment", appointment_id=a.appointment_id))


def test_a_patient_id_alone_does_not_identify():
    a = upcoming()
    p = Probe(DOMAIN)
    p.read("get_patient_details", patient_id=a.patient_id)
    p.read("get_appointment_details", appointment_id=a.appointment_id)
    assert_stopped(decide(p, "cancel_appointment", appointment_id=a.appointment_id), Verdict.REVISE, "customer_identified")


def test_identification_by_name_and_date_of_birth_counts():
    a = upcoming()
    p = probe_for(a.patient_id, by="name_dob")
    p.read("get_appointment_details", appointment_id=a.appointment_id)
    assert_allowed(decide(p, "cancel_appointment", appointment_id=a.appointment_id))


def test_a_second_identified_patient_blocks_every_write():
    a = upcoming()
    p = probe_for(a.patient_id)
    p.read("get_appointment_details", appointment_id=a.appointment_id)
    other = next(q for q in DB.patients.values() if q.patient_id != a.patient_id)
    p.read("find_patient_by_email", email=other.email)  # never given by the patient: identifies nobody
    assert_allowed(decide(p, "cancel_appointment", appointment_id=a.appointment_id))
    p.say(f"I have a second file with you too, my other email is {other.email}.")
    p.read("find_patient_by_email", email=other.email)
    assert_stopped(decide(p, "cancel_appointment", appointment_id=a.appointment_id), Verdict.BLOCK, "one_customer_per_conversation")


def test_a_relatives_email_identifies_nobody_and_their_appointment_stays_theirs():
    a = upcoming()
    p = probe_for(a.patient_id)
    p.read("get_appointment_details", appointment_id=a.appointment_id)
    son = next(q for q in DB.patients.values() if q.patient_id != a.patient_id and scheduled(q.patient_id))
    p.say(f"Could you also look at my son's account? His email is {son.email}.")
    p.read("find_patient_by_email", email=son.email)  # the caller acts for him: he is not identified
    theirs = scheduled(son.patient_id)[0]
    p.read("get_appointment_details", appointment_id=theirs.appointment_id)
    assert_stopped(decide(p, "cancel_appointment", appointment_id=theirs.appointment_id), Verdict.BLOCK, "record_owned_by_customer")
    assert_allowed(decide(p, "cancel_appointment", appointment_id=a.appointment_id))  # the caller's own


def test_writes_need_the_details_listed_and_an_explicit_yes():
    a = upcoming()
    p = probe_for(a.patient_id)
    p.read("list_patient_appointments", patient_id=a.patient_id)  # the patient has several appointments
    assert len(scheduled(a.patient_id)) > 1
    assert_stopped(p.gate("cancel_appointment", appointment_id=a.appointment_id), Verdict.REVISE, "explicit_confirmation")

    p.confirm("Shall I cancel your appointment?")  # the id (or what singles it out) was never said
    assert_stopped(p.gate("cancel_appointment", appointment_id=a.appointment_id), Verdict.REVISE, "explicit_confirmation")

    p.confirm(f"Shall I cancel appointment {a.appointment_id}?", yes="No, wait, let me think.")
    assert_stopped(p.gate("cancel_appointment", appointment_id=a.appointment_id), Verdict.REVISE, "explicit_confirmation")

    p.confirm(f"Shall I cancel appointment {a.appointment_id}?", yes="Yes, go ahead.")
    assert_allowed(p.gate("cancel_appointment", appointment_id=a.appointment_id))


def test_a_booking_confirmation_must_name_the_provider_date_and_time():
    pid = upcoming().patient_id
    provider = DB.patients[pid].primary_provider_id
    start = open_slot(provider, pid)
    p = booking_probe(pid, provider)
    args = dict(patient_id=pid, provider_id=provider, start=start, duration_minutes=30, reason="annual physical")
    p.confirm(f"Shall I book you with {provider} on {start[:10]}?")  # no time
    assert_stopped(p.gate("schedule_appointment", **args), Verdict.REVISE, "explicit_confirmation")
    p.confirm(f"Shall I book you with {provider} on {start[:10]} at {start[11:16]}?")
    assert_allowed(p.gate("schedule_appointment", **args))


@pytest.mark.parametrize("tool", ["cancel_appointment", "reschedule_appointment"])
def test_acting_on_another_patients_appointment_is_blocked(tool):
    mine, theirs = upcoming(), next(
        a for a in DB.appointments.values()
        if a.status == "scheduled" and hours_between(NOW, a.start) > 48 and a.patient_id != upcoming().patient_id
    )
    p = probe_for(mine.patient_id)
    p.read("get_appointment_details", appointment_id=theirs.appointment_id)
    args = {"appointment_id": theirs.appointment_id}
    if tool == "reschedule_appointment":
        args["new_start"] = open_slot(theirs.provider_id, theirs.patient_id, theirs.duration_minutes, theirs.appointment_id)
    assert_stopped(decide(p, tool, **args), Verdict.BLOCK, "record_owned_by_customer")


def test_changing_another_patients_prescription_supplier_is_blocked():
    me = upcoming().patient_id
    rx = next(r for r in DB.prescriptions.values() if r.patient_id != me and r.status == "active")
    supplier = next(s for s in DB.suppliers.values() if rx.medication in s.stocks and s.supplier_id != rx.supplier_id)
    p = probe_for(me)
    p.read("get_prescription_details", prescription_id=rx.prescription_id)
    p.read("get_supplier_details", supplier_id=supplier.supplier_id)
    p.read("check_drug_interactions", patient_id=rx.patient_id)
    decision = decide(p, "update_prescription_supplier", prescription_id=rx.prescription_id, supplier_id=supplier.supplier_id)
    assert_stopped(decision, Verdict.BLOCK, "record_owned_by_customer")


def test_booking_for_someone_else_is_blocked():
    me = upcoming().patient_id
    other = next(q for q in DB.patients.values() if q.patient_id != me)
    provider = other.primary_provider_id
    start = open_slot(provider, other.patient_id)
    p = booking_probe(me, provider)
    p.read("list_patient_appointments", patient_id=other.patient_id)
    args = dict(patient_id=other.patient_id, provider_id=provider, start=start, duration_minutes=30, reason="annual physical")
    assert_stopped(decide(p, "schedule_appointment", **args), Verdict.BLOCK, "books_for_identified_patient")
    args["patient_id"] = me
    assert "books_for_identified_patient" not in failed(decide(p, "schedule_appointment", **args))


def test_unknown_write_tools_are_blocked():
    p = probe_for(upcoming().patient_id)
    decision = p.gate("delete_medical_record", record_id="MR30001")
    assert decision.verdict == Verdict.BLOCK and "known_tool" in failed(decision)


# --------------------------------------------------------------------------- booking


def test_a_slot_the_provider_does_not_have_open_is_revised():
    pid = upcoming().patient_id
    provider = DB.patients[pid].primary_provider_id
    taken = next(
        s for s in (f"2025-03-1{d}T{h:02d}:{m:02d}:00" for d in range(1, 10) for h in range(8, 17) for m in (0, 30))
        if s not in DB.providers[provider].available_slots and is_free(pid, s, 30)
    )
    p = booking_probe(pid, provider)
    args = dict(patient_id=pid, provider_id=provider, start=taken, duration_minutes=30, reason="annual physical")
    decision = decide(p, "schedule_appointment", **args)
    assert_stopped(decision, Verdict.REVISE, "provider_available_at_slot")
    args["start"] = open_slot(provider, pid)
    assert_allowed(decide(p, "schedule_appointment", **args))


def test_a_60_minute_visit_needs_two_consecutive_open_slots():
    pid = upcoming().patient_id
    provider = DB.patients[pid].primary_provider_id
    slots = DB.providers[provider].available_slots
    lonely = next(s for s in slots if s > NOW and slots_for(s, 60)[1] not in slots and is_free(pid, s, 60))
    p = booking_probe(pid, provider)
    args = dict(patient_id=pid, provider_id=provider, start=lonely, duration_minutes=60, reason="back pain")
    assert_stopped(decide(p, "schedule_appointment", **args), Verdict.REVISE, "provider_available_at_slot")
    args["start"] = open_slot(provider, pid, 60)
    assert_allowed(decide(p, "schedule_appointment", **args))


def test_a_slot_that_already_started_is_revised():
    provider = next(p for p in DB.providers.values() if p.available_slots[0] <= NOW)
    pid = next(q.patient_id for q in DB.patients.values() if is_free(q.patient_id, provider.available_slots[0], 30))
    reason = provider.treats[0]
    p = booking_probe(pid, provider.provider_id)
    args = dict(patient_id=pid, provider_id=provider.provider_id, start=provider.available_slots[0], duration_minutes=30, reason=reason)
    assert_stopped(decide(p, "schedule_appointment", **args), Verdict.REVISE, "slot_in_future")
    args["start"] = open_slot(provider.provider_id, pid)
    assert_allowed(decide(p, "schedule_appointment", **args))


def test_the_provider_must_have_the_specialty_the_patient_asked_for():
    pid = upcoming().patient_id
    derm, cardio = provider_of("dermatology"), provider_of("cardiology")
    p = booking_probe(pid, derm, opening="I'd like to see a cardiologist about my blood pressure.")
    p.read("get_provider_details", provider_id=cardio)
    args = dict(patient_id=pid, provider_id=derm, start=open_slot(derm, pid), duration_minutes=30, reason="blood pressure check")
    decision = decide(p, "schedule_appointment", **args)
    assert_stopped(decision, Verdict.REVISE, "specialty_fits_request")
    assert "said.specialty" in {r.path for res in decision.predicates for r in res.reads}
    args.update(provider_id=cardio, start=open_slot(cardio, pid))
    assert_allowed(decide(p, "schedule_appointment", **args))


def test_without_a_stated_specialty_the_reason_must_be_something_the_provider_treats():
    pid = upcoming().patient_id
    derm = provider_of("dermatology")
    p = booking_probe(pid, derm)
    args = dict(patient_id=pid, provider_id=derm, start=open_slot(derm, pid), duration_minutes=30, reason="palpitations")
    assert_stopped(decide(p, "schedule_appointment", **args), Verdict.REVISE, "specialty_fits_request")
    args["reason"] = "itchy skin rash"
    assert_allowed(decide(p, "schedule_appointment", **args))


def test_a_booking_that_overlaps_another_appointment_is_revised():
    a = upcoming()
    provider = DB.providers[a.provider_id]
    clash = next(
        (s for s in provider.available_slots if s > NOW and overlaps(s, 30, a.start, a.duration_minutes)), None
    ) or a.start
    other = next(
        q.provider_id for q in DB.providers.values()
        if q.specialty == provider.specialty and clash in q.available_slots
    )
    p = booking_probe(a.patient_id, other)
    args = dict(patient_id=a.patient_id, provider_id=other, start=clash, duration_minutes=30, reason=a.reason)
    decision = decide(p, "schedule_appointment", **args)
    assert_stopped(decision, Verdict.REVISE, "no_overlapping_appointment")
    assert a.appointment_id in decision.reason
    args["start"] = open_slot(other, a.patient_id)
    assert_allowed(decide(p, "schedule_appointment", **args))


def test_a_reschedule_that_overlaps_another_appointment_is_revised_then_allowed():
    p = probe_for("bruno_rahman_8782", by="name_dob")
    p.read("list_patient_appointments", patient_id="bruno_rahman_8782")
    p.read("get_provider_details", provider_id="DR1019")
    decision = decide(p, "reschedule_appointment", appointment_id="APT10524", new_start="2025-03-19T14:30:00")
    assert_stopped(decision, Verdict.REVISE, "no_overlapping_appointment")
    assert "APT10572" in decision.reason
    assert_allowed(decide(p, "reschedule_appointment", appointment_id="APT10524", new_start="2025-03-19T13:00:00"))


def test_a_reschedule_may_reuse_the_appointments_own_slots():
    a = next(
        x for x in DB.appointments.values()
        if x.status == "scheduled" and x.duration_minutes == 60 and hours_between(NOW, x.start) > 48
        and slots_for(x.start, 90)[2] in DB.providers[x.provider_id].available_slots
        and is_free(x.patient_id, slots_for(x.start, 90)[1], 60, x.appointment_id)
    )
    shifted = slots_for(a.start, 60)[1]  # half an hour later: overlaps its own second slot
    p = probe_for(a.patient_id)
    p.read("list_patient_appointments", patient_id=a.patient_id)
    p.read("get_provider_details", provider_id=a.provider_id)
    assert_allowed(decide(p, "reschedule_appointment", appointment_id=a.appointment_id, new_start=shifted))
    assert not p.write("reschedule_appointment", appointment_id=a.appointment_id, new_start=shifted).error


def test_stale_evidence_after_a_write_asks_for_a_fresh_read():
    a = upcoming()
    p = probe_for(a.patient_id)
    p.read("list_patient_appointments", patient_id=a.patient_id)
    p.read("get_provider_details", provider_id=a.provider_id)
    assert_allowed(decide(p, "cancel_appointment", appointment_id=a.appointment_id))
    assert not p.write("cancel_appointment", appointment_id=a.appointment_id).error
    assert p.ledger[f"appointments.{a.appointment_id}"].stale
    assert p.ledger[f"providers.{a.provider_id}"].stale
    new = open_slot(a.provider_id, a.patient_id)
    decision = decide(
        p, "schedule_appointment", patient_id=a.patient_id, provider_id=a.provider_id, start=new,
        duration_minutes=30, reason=a.reason,
    )
    assert decision.verdict == Verdict.REVISE
    suggested = {(c.name, tuple(c.arguments.items())) for c in decision.suggested_calls}
    assert suggested == {
        ("get_provider_details", (("provider_id", a.provider_id),)),  # its slots changed
        ("get_appointment_details", (("appointment_id", a.appointment_id),)),  # the overlap check reads it
    }


# --------------------------------------------------------------------------- cancelling


def test_only_scheduled_appointments_can_be_cancelled():
    done = next(a for a in DB.appointments.values() if a.status == "completed")
    p = probe_for(done.patient_id)
    p.read("get_appointment_details", appointment_id=done.appointment_id)
    assert_stopped(decide(p, "cancel_appointment", appointment_id=done.appointment_id), Verdict.BLOCK, "appointment_is_scheduled")


def test_a_cancelled_appointment_cannot_be_moved():
    gone = next(a for a in DB.appointments.values() if a.status == "cancelled" and a.start > NOW)
    p = probe_for(gone.patient_id)
    p.read("get_appointment_details", appointment_id=gone.appointment_id)
    decision = decide(p, "reschedule_appointment", appointment_id=gone.appointment_id, new_start="2025-03-20T10:00:00")
    assert_stopped(decision, Verdict.BLOCK, "appointment_is_scheduled")


def test_cancellation_inside_24_hours_is_blocked():
    late = upcoming(0, 24)
    p = probe_for(late.patient_id)
    p.read("get_appointment_details", appointment_id=late.appointment_id)
    decision = decide(p, "cancel_appointment", appointment_id=late.appointment_id)
    assert_stopped(decision, Verdict.BLOCK, "outside_cancellation_window")
    assert "24 hours" in decision.reason


def test_cancellation_exactly_24_hours_ahead_is_allowed():
    a = upcoming()
    db = DOMAIN.load_db()
    db.appointments[a.appointment_id].start = "2025-03-11T09:00:00"
    p = Probe(DOMAIN, db=db)
    p.say("Hello.")
    p.say(f"My email is {DB.patients[a.patient_id].email}.")
    p.read("find_patient_by_email", email=DB.patients[a.patient_id].email)
    p.read("get_appointment_details", appointment_id=a.appointment_id)
    assert_allowed(decide(p, "cancel_appointment", appointment_id=a.appointment_id))


# --------------------------------------------------------------------------- prescriptions


def flagged_meds(pid: str) -> set[str]:
    from ledger_tui.domains.telehealth.tools import PatientArgs, check_drug_interactions

    return {
        m for i in check_drug_interactions(DB, PatientArgs(patient_id=pid)) if i.flagged
        for m in (i.medication_a, i.medication_b)
    }


def supplier_case(stocked: bool, flagged: bool):
    for rx in DB.prescriptions.values():
        if rx.status != "active" or (rx.medication in flagged_meds(rx.patient_id)) != flagged:
            continue
        for s in DB.suppliers.values():
            if s.supplier_id != rx.supplier_id and (rx.medication in s.stocks) == stocked:
                return rx, s
    raise LookupError


def supplier_probe(rx, supplier) -> Probe:
    p = probe_for(rx.patient_id)
    p.read("list_patient_prescriptions", patient_id=rx.patient_id)
    p.read("list_medication_suppliers")
    p.read("check_drug_interactions", patient_id=rx.patient_id)
    return p


def test_a_supplier_that_stocks_the_medication_is_allowed_one_that_does_not_is_blocked():
    rx, bad = supplier_case(stocked=False, flagged=False)
    p = supplier_probe(rx, bad)
    decision = decide(p, "update_prescription_supplier", prescription_id=rx.prescription_id, supplier_id=bad.supplier_id)
    assert_stopped(decision, Verdict.BLOCK, "supplier_stocks_medication")
    good = next(s for s in DB.suppliers.values() if rx.medication in s.stocks and s.supplier_id != rx.supplier_id)
    assert_allowed(decide(p, "update_prescription_supplier", prescription_id=rx.prescription_id, supplier_id=good.supplier_id))


def test_a_flagged_interaction_blocks_a_supplier_change():
    rx, supplier = supplier_case(stocked=True, flagged=True)
    p = supplier_probe(rx, supplier)
    decision = decide(p, "update_prescription_supplier", prescription_id=rx.prescription_id, supplier_id=supplier.supplier_id)
    assert_stopped(decision, Verdict.BLOCK, "no_flagged_interaction")
    assert "interactions." + rx.patient_id in {r.path for res in decision.predicates for r in res.reads}


def test_an_unflagged_interaction_does_not_block_a_supplier_change():
    from ledger_tui.domains.telehealth.tools import PatientArgs, check_drug_interactions

    rx = next(
        r for r in DB.prescriptions.values()
        if r.status == "active" and not flagged_meds(r.patient_id)
        and any(r.medication in (i.medication_a, i.medication_b) for i in check_drug_interactions(DB, PatientArgs(patient_id=r.patient_id)))
    )
    supplier = next(s for s in DB.suppliers.values() if rx.medication in s.stocks and s.supplier_id != rx.supplier_id)
    p = supplier_probe(rx, supplier)
    assert_allowed(decide(p, "update_prescription_supplier", prescription_id=rx.prescription_id, supplier_id=supplier.supplier_id))


def test_the_interaction_check_must_be_read_before_a_supplier_change():
    rx, supplier = supplier_case(stocked=True, flagged=False)
    p = probe_for(rx.patient_id)
    p.read("get_prescription_details", prescription_id=rx.prescription_id)
    p.read("get_supplier_details", supplier_id=supplier.supplier_id)
    decision = decide(p, "update_prescription_supplier", prescription_id=rx.prescription_id, supplier_id=supplier.supplier_id)
    assert decision.verdict == Verdict.REVISE
    assert [c.name for c in decision.suggested_calls] == ["check_drug_interactions"]
    assert decision.suggested_calls[0].arguments == {"patient_id": rx.patient_id}


# --------------------------------------------------------------------------- records


def test_notes_go_only_on_the_patients_own_records():
    me = next(q for q in DB.patients.values() if q.record_ids)
    theirs = next(r for r in DB.records.values() if r.patient_id != me.patient_id)
    p = probe_for(me.patient_id)
    p.read("get_medical_record", record_id=theirs.record_id)
    p.read("list_patient_records", patient_id=me.patient_id)
    note = "Patient reports trouble sleeping."
    assert_stopped(decide(p, "update_medical_record_note", record_id=theirs.record_id, note=note), Verdict.BLOCK, "note_on_own_record")
    assert_allowed(decide(p, "update_medical_record_note", record_id=me.record_ids[0], note=note))


@pytest.mark.parametrize(
    "note",
    [
        "Remove the type 2 diabetes diagnosis from this record.",
        "Please increase metformin to 1000 mg twice daily.",
        "Change dosage of lisinopril to 20 mg.",
        "Diagnosis should be asthma, not COPD.",
        "Add a diagnosis of sleep apnea.",
        "Patient is fine. Discontinue the prescription for sertraline.",
    ],
)
def test_a_note_that_would_change_clinical_data_is_blocked(note):
    me = next(q for q in DB.patients.values() if q.record_ids)
    p = probe_for(me.patient_id)
    p.read("list_patient_records", patient_id=me.patient_id)
    decision = decide(p, "update_medical_record_note", record_id=me.record_ids[0], note=note)
    assert_stopped(decision, Verdict.BLOCK, "note_leaves_clinical_data_alone")


@pytest.mark.parametrize(
    "note",
    [
        "Patient reports dizziness since starting the new medication.",
        "Patient asks to change her dosage; wants to discuss it at the next visit.",
        "Patient would like to discuss stopping sertraline with the provider.",
        "Patient prefers afternoon appointments.",
    ],
)
def test_a_note_that_reports_what_the_patient_said_is_fine(note):
    assert clinical_change(note) is None


def test_a_note_cannot_carry_diagnosis_or_prescription_arguments():
    me = next(q for q in DB.patients.values() if q.record_ids)
    p = probe_for(me.patient_id)
    p.read("list_patient_records", patient_id=me.patient_id)
    p.confirm(f"Shall I add the note \"Patient reports a cough.\" to record {me.record_ids[0]}?")
    decision = p.gate("update_medical_record_note", record_id=me.record_ids[0], note="Patient reports a cough.", diagnoses=[])
    assert decision.verdict != Verdict.ALLOW
    assert p.write("update_medical_record_note", record_id=me.record_ids[0], note="x", diagnoses=[]).error


def test_every_write_is_guarded_by_identification_confirmation_and_one_patient():
    writes = {t.name for t in DOMAIN.tools if t.kind == "write"}
    for name in ("customer_identified", "one_customer_per_conversation"):
        pred = next(p for p in PREDICATES if p.name == name)
        assert all(pred.applies(w, "write") for w in writes)
    confirming = [p for p in PREDICATES if p.name == "explicit_confirmation"]
    assert set().union(*(p.tools for p in confirming)) == writes

"""The telehealth policy as code: one predicate per rule of policy.md, each naming its clause.

Shared rules (identification, one patient, ownership, explicit yes) come from `rules.py`; the rest
read the appointment, provider, prescription, supplier, interaction and record entries of the
ledger. What the patient *says* (the specialty they ask for) is a statement under `said.*`, never
evidence: it can only narrow what the gate allows, not prove anything.
"""

from __future__ import annotations

import re
from typing import Any

from ledger_tui.domains.telehealth.slots import CANCELLATION_WINDOW_HOURS, DURATIONS, NOW, hours_between, overlaps, parse, slots_for
from ledger_tui.domains.telehealth import proposals
from ledger_tui.engine import rules
from ledger_tui.engine.domain import Statement, keyword_statement
from ledger_tui.engine.events import Verdict
from ledger_tui.engine.gate import Failure, GateContext, Predicate, predicate

SCHEDULE = "schedule_appointment"
RESCHEDULE = "reschedule_appointment"
CANCEL = "cancel_appointment"
SUPPLIER = "update_prescription_supplier"
NOTE = "update_medical_record_note"
WRITES = (SCHEDULE, RESCHEDULE, CANCEL, SUPPLIER, NOTE)
BOOKING = (SCHEDULE, RESCHEDULE)


def _now(ctx: GateContext) -> str:
    now = ctx.session.now or NOW
    try:
        parse(now)
    except ValueError:
        now = NOW
    return ctx.context("now", now)


def _record_path(arguments: dict[str, Any]) -> str | None:
    if "appointment_id" in arguments:
        return f"appointments.{arguments['appointment_id']}"
    if "prescription_id" in arguments:
        return f"prescriptions.{arguments['prescription_id']}"
    return None


# --------------------------------------------------------------------------- everywhere

patient_identified = rules.identified(
    "general.identify", "find_patient_by_email, or find_patient_by_name_dob with first name, last name and date of birth"
)
one_patient = rules.one_customer("general.one-patient")
owns_record = rules.owned_by_customer(
    "general.ownership",
    tools=(RESCHEDULE, CANCEL, SUPPLIER),
    record_path=_record_path,
    owner_of=lambda record: record.get("patient_id") if isinstance(record, dict) else None,
    what="record",
)
confirmation = rules.confirmed("general.confirm", WRITES, proposals.terms)


@predicate("books_for_identified_patient", clause="general.ownership", on_fail=Verdict.BLOCK, tools=(SCHEDULE,))
def books_for_identified_patient(ctx: GateContext) -> Failure | None:
    """A new appointment is booked only for the identified patient."""
    me = ctx.user_id()
    if me is None:
        return ctx.fail("No patient is identified, so the booking cannot be shown to be theirs.", verdict=Verdict.REVISE)
    if ctx.args.patient_id != me:
        return ctx.fail(
            f"The booking is for {ctx.args.patient_id}, but the identified patient is {me}.",
            "Only book appointments for the patient you are speaking with.",
        )
    return None


# --------------------------------------------------------------------------- booking


def _booking(ctx: GateContext) -> tuple[str, str, int, dict[str, Any] | None]:
    """(provider id, requested start, duration, the appointment being moved or None)."""
    if ctx.call.name == SCHEDULE:
        return ctx.args.provider_id, ctx.args.start, ctx.args.duration_minutes, None
    moved = ctx.read(f"appointments.{ctx.args.appointment_id}")
    return moved["provider_id"], ctx.args.new_start, moved["duration_minutes"], moved


@predicate(
    "provider_available_at_slot",
    clause="booking.availability",
    on_fail=Verdict.REVISE,
    tools=BOOKING,
    reads=("providers.{provider_id}", "appointments.{appointment_id}"),
)
def provider_available_at_slot(ctx: GateContext) -> Failure | None:
    """Every 30-minute slot the visit needs is open in the provider's schedule."""
    provider_id, start, minutes, moved = _booking(ctx)
    provider = ctx.read(f"providers.{provider_id}")
    open_slots = set(provider["available_slots"])
    if moved is not None:
        open_slots |= set(slots_for(moved["start"], moved["duration_minutes"]))
    if minutes not in DURATIONS:
        return ctx.fail(f"A visit lasts 30 or 60 minutes, not {minutes}.", "Use duration_minutes 30 or 60.")
    missing = [s for s in slots_for(start, minutes) if s not in open_slots]
    if missing:
        return ctx.fail(
            f"Provider {provider_id} has no open slot at {', '.join(missing)}.",
            f"Offer the patient a time from providers.{provider_id}.available_slots (a 60-minute visit needs two consecutive slots).",
        )
    return None


@predicate("slot_in_future", clause="booking.future", on_fail=Verdict.REVISE, tools=BOOKING)
def slot_in_future(ctx: GateContext) -> Failure | None:
    """The visit starts after the current time."""
    start = ctx.args.start if ctx.call.name == SCHEDULE else ctx.args.new_start
    now = _now(ctx)
    if parse(start) <= parse(now):
        return ctx.fail(f"{start} is not in the future (it is now {now}).", "Offer the patient a later slot.")
    return None


def _mentions(text: str, terms: list[str]) -> list[str]:
    return [t for t in terms if re.search(r"\b" + re.escape(t.lower()) + r"\b", text.lower())]


@predicate(
    "specialty_fits_request",
    clause="booking.specialty",
    on_fail=Verdict.REVISE,
    tools=BOOKING,
    reads=("providers.{provider_id}", "said.specialty"),
)
def specialty_fits_request(ctx: GateContext) -> Failure | None:
    """The provider's specialty is the one the patient asked for, or the provider treats the reason."""
    provider_id, _, _, moved = _booking(ctx)
    provider = ctx.read(f"providers.{provider_id}")
    specialty = provider["specialty"]
    if moved is None:
        asked = ctx.stated("specialty")
        if asked and asked != specialty:
            return ctx.inferred(
                f"The patient asked for {asked}, but {provider_id} is a {specialty} provider.",
                f"Choose a {asked} provider (list_available_providers with specialty={asked}).",
            )
        if asked == specialty:
            return None
        reason = ctx.args.reason
    else:
        reason = moved["reason"]
    if _mentions(reason, provider["treats"]):
        return None
    return ctx.fail(
        f"The reason {reason!r} is not something {provider_id} ({specialty}) treats ({', '.join(provider['treats'])}).",
        "Pick a provider whose specialty covers the reason, or state the reason in the provider's terms.",
    )


@predicate(
    "no_overlapping_appointment",
    clause="booking.overlap",
    on_fail=Verdict.REVISE,
    tools=BOOKING,
    reads=("patient_appointments.{patient_id}", "appointments.{appointment_id}"),
)
def no_overlapping_appointment(ctx: GateContext) -> Failure | None:
    """The patient has no other scheduled appointment overlapping the new time."""
    _, start, minutes, moved = _booking(ctx)
    patient_id = ctx.args.patient_id if moved is None else moved["patient_id"]
    ids = ctx.read(f"patient_appointments.{patient_id}")
    for other_id in ids:
        if moved is not None and other_id == moved["appointment_id"]:
            continue
        other = ctx.read(f"appointments.{other_id}")
        if other["status"] == "scheduled" and overlaps(start, minutes, other["start"], other["duration_minutes"]):
            return ctx.fail(
                f"The patient already has appointment {other_id} at {other['start']} "
                f"({other['duration_minutes']} min), which overlaps the requested {start} ({minutes} min).",
                "Offer a time that does not overlap the patient's other appointments.",
            )
    return None


# --------------------------------------------------------------------------- cancellation


@predicate(
    "appointment_is_scheduled",
    clause="cancel.status",
    on_fail=Verdict.BLOCK,
    tools=(CANCEL, RESCHEDULE),
    reads=("appointments.{appointment_id}",),
)
def appointment_is_scheduled(ctx: GateContext) -> Failure | None:
    """Only a scheduled appointment can be cancelled or moved (not a completed or cancelled one)."""
    appointment = ctx.read(f"appointments.{ctx.args.appointment_id}")
    if appointment["status"] != "scheduled":
        return ctx.fail(
            f"Appointment {ctx.args.appointment_id} is {appointment['status']}, not scheduled.",
            "Completed and cancelled appointments cannot be changed.",
        )
    return None


@predicate(
    "outside_cancellation_window",
    clause="cancel.window",
    on_fail=Verdict.BLOCK,
    tools=(CANCEL,),
    reads=("appointments.{appointment_id}",),
)
def outside_cancellation_window(ctx: GateContext) -> Failure | None:
    """An appointment is cancelled only if it starts at least 24 hours from now (CANCELLATION_WINDOW_HOURS)."""
    appointment = ctx.read(f"appointments.{ctx.args.appointment_id}")
    now = _now(ctx)
    ahead = hours_between(now, appointment["start"])
    if ahead < CANCELLATION_WINDOW_HOURS:
        return ctx.fail(
            f"Appointment {ctx.args.appointment_id} starts at {appointment['start']}, {max(ahead, 0):.1f} hours "
            f"from now; cancellations need at least {CANCELLATION_WINDOW_HOURS} hours' notice.",
            "The patient can keep the appointment, or reschedule it to a later slot.",
        )
    return None


# --------------------------------------------------------------------------- prescriptions


@predicate(
    "supplier_stocks_medication",
    clause="prescriptions.stock",
    on_fail=Verdict.BLOCK,
    tools=(SUPPLIER,),
    reads=("prescriptions.{prescription_id}", "suppliers.{supplier_id}"),
)
def supplier_stocks_medication(ctx: GateContext) -> Failure | None:
    """The new supplier stocks the prescription's medication."""
    prescription = ctx.read(f"prescriptions.{ctx.args.prescription_id}")
    supplier = ctx.read(f"suppliers.{ctx.args.supplier_id}")
    medication = prescription["medication"]
    if medication.lower() not in (m.lower() for m in supplier["stocks"]):
        return ctx.fail(
            f"{supplier['name']} ({ctx.args.supplier_id}) does not stock {medication}.",
            f"Offer a supplier that stocks {medication} (list_medication_suppliers with medication={medication!r}).",
        )
    return None


@predicate(
    "no_flagged_interaction",
    clause="prescriptions.interactions",
    on_fail=Verdict.BLOCK,
    tools=(SUPPLIER,),
    reads=("prescriptions.{prescription_id}", "interactions.{patient_id}"),
)
def no_flagged_interaction(ctx: GateContext) -> Failure | None:
    """No interaction flagged for clinician review involves the prescription's medication."""
    prescription = ctx.read(f"prescriptions.{ctx.args.prescription_id}")
    found = ctx.read(f"interactions.{prescription['patient_id']}")
    medication = prescription["medication"].lower()
    for interaction in found:
        pair = (interaction["medication_a"].lower(), interaction["medication_b"].lower())
        if interaction["flagged"] and medication in pair:
            return ctx.fail(
                f"{prescription['medication']} has a flagged {interaction['severity']} interaction "
                f"({interaction['interaction_id']}: {interaction['medication_a']} + {interaction['medication_b']}) "
                "awaiting clinician review.",
                "The prescription stays with its supplier until a clinician clears the interaction; offer a transfer.",
            )
    return None


# --------------------------------------------------------------------------- records


@predicate("note_on_own_record", clause="records.own", on_fail=Verdict.BLOCK, tools=(NOTE,), reads=("records.{record_id}",))
def note_on_own_record(ctx: GateContext) -> Failure | None:
    """A note goes only on a medical record of the identified patient."""
    record = ctx.read(f"records.{ctx.args.record_id}")
    me = ctx.user_id()
    if me is None:
        return ctx.fail("No patient is identified, so the record cannot be shown to be theirs.", verdict=Verdict.REVISE)
    if record["patient_id"] != me:
        return ctx.fail(
            f"Record {ctx.args.record_id} belongs to {record['patient_id']}, not to the identified patient {me}.",
            "Only add notes to the identified patient's own records.",
        )
    return None


# A note may *report* anything the patient says ("asks to change her dosage", "dizzy since starting
# the new medication"); what it may not do is *instruct* a change: a clause that opens with a change
# verb aimed at clinical data ("Remove the diabetes diagnosis", "please increase metformin to 1000 mg"),
# or that says what clinical data "should be".
_VERBS = (
    r"add|remove|delete|erase|drop|change|update|replace|correct|amend|edit|revise|discontinue|stop|start|"
    r"increase|decrease|reduce|raise|lower|double|halve|switch|substitute|cancel"
)
_CLINICAL = r"diagnos(?:is|es|ed)|prescriptions?|medications?|meds|dosage|doses?|refills?|icd(?:-10)?|\d+(?:\.\d+)?\s?(?:mg|mcg|ml)"
_CLAUSE_START = r"(?:^|[.;:!?]\s*|\bplease\s+)"
_VOIDED = r"no longer appl(?:y|ies)|do(?:es)? not apply|is void|void|invalid|incorrect|wrong|removed|deleted|retracted|withdrawn|cancel+ed|ruled out|not valid|obsolete|no longer valid"
_CLINICAL_CHANGE = re.compile(
    rf"{_CLAUSE_START}(?:{_VERBS})\b[^.;:!?]{{0,60}}?\b(?:{_CLINICAL})\b"
    rf"|\b(?:{_CLINICAL})\b[^.;:!?]{{0,30}}?\b(?:should|must|needs? to|has to) be\b"
    rf"|\b(?:{_CLINICAL})\b[^.;:!?]{{0,40}}?\b(?:{_VOIDED})\b",
    re.I,
)


def clinical_change(note: str) -> str | None:
    """The phrase of a note that would change a diagnosis or prescription, or None."""
    m = _CLINICAL_CHANGE.search(note)
    return m.group(0) if m else None


@predicate("note_leaves_clinical_data_alone", clause="records.no-clinical-changes", on_fail=Verdict.BLOCK, tools=(NOTE,))
def note_leaves_clinical_data_alone(ctx: GateContext) -> Failure | None:
    """A note records what the patient reported; it never adds, removes or changes a diagnosis or a
    prescription (only a clinician does that)."""
    phrase = clinical_change(ctx.args.note)
    if phrase:
        return ctx.fail(
            f"The note would change a diagnosis or prescription ({phrase!r}); the agent never alters clinical data.",
            "Record only what the patient reports; for clinical changes, book a visit or transfer to a human agent.",
        )
    return None


PREDICATES: list[Predicate] = [
    patient_identified,
    one_patient,
    owns_record,
    books_for_identified_patient,
    confirmation,
    provider_available_at_slot,
    slot_in_future,
    specialty_fits_request,
    no_overlapping_appointment,
    appointment_is_scheduled,
    outside_cancellation_window,
    supplier_stocks_medication,
    no_flagged_interaction,
    note_on_own_record,
    note_leaves_clinical_data_alone,
]

# Clauses of policy.md no predicate names, each with why (`ledger-tui check-domain` reads this):
# none, every clause is enforced by a predicate or the read gate.
NOT_GATED: dict[str, str] = {}

SPECIALTY_WORDS: dict[str, tuple[str, ...]] = {
    "cardiology": ("cardiology", "cardiologist", "heart doctor", "heart specialist"),
    "endocrinology": ("endocrinology", "endocrinologist", "diabetes specialist", "thyroid specialist"),
    "dermatology": ("dermatology", "dermatologist", "skin doctor", "skin specialist"),
    "psychiatry": ("psychiatry", "psychiatrist", "mental health provider", "mental health specialist"),
    "neurology": ("neurology", "neurologist"),
    "gastroenterology": ("gastroenterology", "gastroenterologist", "GI doctor", "GI specialist"),
    "pulmonology": ("pulmonology", "pulmonologist", "lung doctor", "lung specialist"),
    "primary_care": ("primary care", "primary-care", "family doctor", "family physician", "GP", "general practitioner"),
}

STATEMENTS: list[Statement] = [
    keyword_statement(
        "specialty",
        "The specialty the patient asks to see (stated, not verified); a booking must then be with that specialty.",
        SPECIALTY_WORDS,
        records=r"\bAPT\d+\b",
        after=("see", "see a", "need", "want", "like", "book", "schedule", "with", "looking for", "referral",
               "appointment with", "visit with", "consult", "ver", "voir", "sehen", "vedere", "consultar"),
    ),
]

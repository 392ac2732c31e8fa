"""The telehealth tools: what the agent can look up and the five changes it can make.

Reads return whole records (or lists of them) so the ledger holds the same facts the model reads.
Writes check only what the data itself forbids (an unknown id, a slot that is already taken, an
appointment that is no longer scheduled); the policy rules live in the gate, in `predicates.py`.
Every effect is deterministic: new ids follow the highest existing one and times come from the
domain clock, never from the wall clock.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator

from ledger_tui.domains.telehealth import paths
from ledger_tui.domains.telehealth.schema import (
    Appointment,
    DrugInteraction,
    MedicalRecord,
    Note,
    Patient,
    Prescription,
    Provider,
    RegimenPlan,
    Supplier,
    TelehealthDB,
    TelemetryDevice,
    TelemetryUpload,
)
from ledger_tui.domains.telehealth.slots import DURATIONS, NOW, normalise, slots_for
from ledger_tui.engine.store.cow import look, shared_keys_summary
from ledger_tui.engine.generic_tools import transfer_tool
from ledger_tui.engine.domain import Tool, ToolError

NOTE_AUTHOR = "virtual assistant"


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EmailArgs(Args):
    email: str


class NameDobArgs(Args):
    first_name: str
    last_name: str
    date_of_birth: str


class PatientArgs(Args):
    patient_id: str


class AppointmentArgs(Args):
    appointment_id: str


class ProviderArgs(Args):
    provider_id: str


class RecordArgs(Args):
    record_id: str


class PrescriptionArgs(Args):
    prescription_id: str


class SupplierArgs(Args):
    supplier_id: str


class DeviceArgs(Args):
    device_id: str


class ConditionArgs(Args):
    condition: str


class AvailableProvidersArgs(Args):
    specialty: str | None = None
    date: str | None = None
    start: str | None = None

    @field_validator("start")
    @classmethod
    def _start(cls, value: str | None) -> str | None:
        return None if value is None else normalise(value)


class SuppliersArgs(Args):
    medication: str | None = None


class ScheduleArgs(Args):
    patient_id: str
    provider_id: str
    start: str
    duration_minutes: int
    reason: str

    @field_validator("start")
    @classmethod
    def _start(cls, value: str) -> str:
        return normalise(value)


class RescheduleArgs(Args):
    appointment_id: str
    new_start: str

    @field_validator("new_start")
    @classmethod
    def _start(cls, value: str) -> str:
        return normalise(value)


class SupplierChangeArgs(Args):
    prescription_id: str
    supplier_id: str


class NoteArgs(Args):
    record_id: str
    note: str


# --------------------------------------------------------------------------- lookups


def _get(table: dict[str, Any], key: str, what: str) -> Any:
    """The record, to look at (shared, read-only in a session's database): a write takes a private
    copy (`table[key]`) only of what it then changes."""
    try:
        return look(table, key)
    except KeyError:
        raise ToolError(f"{what} {key} not found") from None


def _patient(db: TelehealthDB, patient_id: str) -> Patient:
    return _get(db.patients, patient_id, "Patient")


def find_patient_by_email(db: TelehealthDB, args: EmailArgs) -> str:
    wanted = args.email.strip().lower()
    for patient in db.patients.values():
        if patient.email.lower() == wanted:
            return patient.patient_id
    raise ToolError("No patient found with that email")


def find_patient_by_name_dob(db: TelehealthDB, args: NameDobArgs) -> str:
    first, last = args.first_name.strip().lower(), args.last_name.strip().lower()
    for patient in db.patients.values():
        if (
            patient.first_name.lower() == first
            and patient.last_name.lower() == last
            and patient.date_of_birth == args.date_of_birth.strip()
        ):
            return patient.patient_id
    raise ToolError("No patient found with that name and date of birth")


def get_patient_details(db: TelehealthDB, args: PatientArgs) -> Patient:
    return _patient(db, args.patient_id)


def get_appointment_details(db: TelehealthDB, args: AppointmentArgs) -> Appointment:
    return _get(db.appointments, args.appointment_id, "Appointment")


def get_provider_details(db: TelehealthDB, args: ProviderArgs) -> Provider:
    return _get(db.providers, args.provider_id, "Provider")


def get_medical_record(db: TelehealthDB, args: RecordArgs) -> MedicalRecord:
    return _get(db.records, args.record_id, "Medical record")


def get_prescription_details(db: TelehealthDB, args: PrescriptionArgs) -> Prescription:
    return _get(db.prescriptions, args.prescription_id, "Prescription")


def get_supplier_details(db: TelehealthDB, args: SupplierArgs) -> Supplier:
    return _get(db.suppliers, args.supplier_id, "Supplier")


def list_patient_appointments(db: TelehealthDB, args: PatientArgs) -> list[Appointment]:
    patient = _patient(db, args.patient_id)
    return [db.appointments[a] for a in patient.appointment_ids if a in db.appointments]


def list_patient_records(db: TelehealthDB, args: PatientArgs) -> list[MedicalRecord]:
    patient = _patient(db, args.patient_id)
    return [db.records[r] for r in patient.record_ids if r in db.records]


def list_patient_prescriptions(db: TelehealthDB, args: PatientArgs) -> list[Prescription]:
    patient = _patient(db, args.patient_id)
    return [db.prescriptions[p] for p in patient.prescription_ids if p in db.prescriptions]


def list_available_providers(db: TelehealthDB, args: AvailableProvidersArgs) -> list[Provider]:
    specialty = (args.specialty or "").strip().lower().replace(" ", "_") or None
    if specialty is not None and specialty not in {p.specialty for p in db.providers.values()}:
        known = ", ".join(sorted({p.specialty for p in db.providers.values()}))
        raise ToolError(f"Unknown specialty {args.specialty!r}; known specialties: {known}")
    out = []
    for provider in db.providers.values():
        if specialty is not None and provider.specialty != specialty:
            continue
        if args.start is not None and args.start not in provider.available_slots:
            continue
        if args.date is not None and not any(s.startswith(args.date.strip()) for s in provider.available_slots):
            continue
        if not provider.available_slots:
            continue
        out.append(provider)
    return out


def list_medication_suppliers(db: TelehealthDB, args: SuppliersArgs) -> list[Supplier]:
    if args.medication is None or not args.medication.strip():
        return list(db.suppliers.values())
    wanted = args.medication.strip().lower()
    return [s for s in db.suppliers.values() if wanted in (m.lower() for m in s.stocks)]


def list_telemetry_devices(db: TelehealthDB, args: PatientArgs) -> list[TelemetryDevice]:
    patient = _patient(db, args.patient_id)
    return [db.devices[d] for d in patient.device_ids if d in db.devices]


def get_telemetry_uploads(db: TelehealthDB, args: DeviceArgs) -> list[TelemetryUpload]:
    _get(db.devices, args.device_id, "Device")
    uploads = [u for u in db.uploads.values() if u.device_id == args.device_id]
    return sorted(uploads, key=lambda u: u.recorded_at)


def check_drug_interactions(db: TelehealthDB, args: PatientArgs) -> list[DrugInteraction]:
    """Known interactions between the patient's active medications."""
    patient = _patient(db, args.patient_id)
    active = {
        db.prescriptions[p].medication.lower()
        for p in patient.prescription_ids
        if p in db.prescriptions and db.prescriptions[p].status == "active"
    }
    return [
        i
        for i in db.interactions.values()
        if i.medication_a.lower() in active and i.medication_b.lower() in active
    ]


def get_regimen_options(db: TelehealthDB, args: ConditionArgs) -> list[RegimenPlan]:
    wanted = args.condition.strip().lower()
    plans = [p for p in db.regimens.values() if wanted in (p.condition.lower(), p.code.lower())]
    if not plans:
        raise ToolError(f"No regimen plans for condition {args.condition!r}")
    return plans


# --------------------------------------------------------------------------- writes


def _take_slots(provider: Provider, wanted: list[str], keep: frozenset[str] = frozenset()) -> None:
    free = set(provider.available_slots) | keep
    missing = [s for s in wanted if s not in free]
    if missing:
        raise ToolError(f"Provider {provider.provider_id} has no open slot at {', '.join(missing)}")


def _release(provider: Provider, slots: list[str]) -> None:
    provider.available_slots = sorted(set(provider.available_slots) | set(slots))


def _numbers(keys: Any, prefix: str) -> list[int]:
    return [int(k[len(prefix):]) for k in keys if k.startswith(prefix) and k[len(prefix):].isdigit()]


def _next_id(table: dict[str, Any], prefix: str) -> str:
    # the shared records' highest number is found once per process (a scan of the 625 pristine
    # appointments was most of a booking's cost), then only the keys this session added are read
    known = shared_keys_summary(table, f"highest {prefix}", lambda keys: max(_numbers(keys, prefix), default=None))
    if known is None:
        numbers = _numbers(table, prefix)
    else:
        highest, added = known
        numbers = _numbers(added, prefix) + ([] if highest is None else [highest])
    return f"{prefix}{max(numbers, default=10000) + 1}"


def schedule_appointment(db: TelehealthDB, args: ScheduleArgs) -> Appointment:
    patient = _patient(db, args.patient_id)
    provider: Provider = _get(db.providers, args.provider_id, "Provider")
    if args.duration_minutes not in DURATIONS:
        raise ToolError(f"duration_minutes must be one of {', '.join(map(str, DURATIONS))}")
    if not args.reason.strip():
        raise ToolError("A reason for the visit is required")
    wanted = slots_for(args.start, args.duration_minutes)
    _take_slots(provider, wanted)
    appointment = Appointment(
        appointment_id=_next_id(db.appointments, "APT"),
        patient_id=patient.patient_id,
        provider_id=provider.provider_id,
        start=args.start,
        duration_minutes=args.duration_minutes,
        status="scheduled",
        reason=args.reason.strip(),
        modality="video",
        created_at=NOW,
    )
    provider = db.providers[args.provider_id]
    provider.available_slots = [s for s in provider.available_slots if s not in wanted]
    db.appointments[appointment.appointment_id] = appointment
    db.patients[args.patient_id].appointment_ids.append(appointment.appointment_id)
    return appointment


def reschedule_appointment(db: TelehealthDB, args: RescheduleArgs) -> Appointment:
    appointment: Appointment = _get(db.appointments, args.appointment_id, "Appointment")
    if appointment.status != "scheduled":
        raise ToolError(f"Appointment {appointment.appointment_id} is {appointment.status}, not scheduled")
    if args.new_start == appointment.start:
        raise ToolError("The new time is the same as the current one")
    provider: Provider = _get(db.providers, appointment.provider_id, "Provider")
    old = slots_for(appointment.start, appointment.duration_minutes)
    new = slots_for(args.new_start, appointment.duration_minutes)
    _take_slots(provider, new, keep=frozenset(old))
    provider = db.providers[appointment.provider_id]
    _release(provider, old)
    provider.available_slots = [s for s in provider.available_slots if s not in new]
    appointment = db.appointments[args.appointment_id]
    appointment.start = args.new_start
    return appointment


def cancel_appointment(db: TelehealthDB, args: AppointmentArgs) -> Appointment:
    appointment: Appointment = _get(db.appointments, args.appointment_id, "Appointment")
    if appointment.status != "scheduled":
        raise ToolError(f"Appointment {appointment.appointment_id} is {appointment.status}, not scheduled")
    _get(db.providers, appointment.provider_id, "Provider")
    appointment = db.appointments[args.appointment_id]
    appointment.status = "cancelled"
    _release(db.providers[appointment.provider_id], slots_for(appointment.start, appointment.duration_minutes))
    return appointment


def update_prescription_supplier(db: TelehealthDB, args: SupplierChangeArgs) -> Prescription:
    prescription: Prescription = _get(db.prescriptions, args.prescription_id, "Prescription")
    _get(db.suppliers, args.supplier_id, "Supplier")
    if prescription.status != "active":
        raise ToolError(f"Prescription {prescription.prescription_id} is {prescription.status}")
    if prescription.supplier_id == args.supplier_id:
        raise ToolError(f"Prescription {prescription.prescription_id} is already filled by {args.supplier_id}")
    prescription = db.prescriptions[args.prescription_id]
    prescription.supplier_id = args.supplier_id
    return prescription


def update_medical_record_note(db: TelehealthDB, args: NoteArgs) -> MedicalRecord:
    """Append a note. The tool has no way to touch diagnoses or prescriptions, by design."""
    record: MedicalRecord = _get(db.records, args.record_id, "Medical record")
    text = args.note.strip()
    if not text:
        raise ToolError("The note is empty")
    record = db.records[args.record_id]
    record.notes.append(Note(written_at=NOW, author=NOTE_AUTHOR, text=text))
    return record


# --------------------------------------------------------------------------- the table


def _patient_id(arguments: dict[str, Any], value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _read(name: str, args: type[Args], run: Any, description: str, absorbs: Any, **extra: Any) -> Tool:
    return Tool(name=name, kind="read", args=args, run=run, description=description, absorbs=absorbs, **extra)


def _write(name: str, args: type[Args], run: Any, description: str, touches: Any) -> Tool:
    return Tool(name=name, kind="write", args=args, run=run, description=description, touches=touches)


TOOLS: list[Tool] = [
    _read(
        "find_patient_by_email", EmailArgs, find_patient_by_email,
        "Look up a patient by the email address on file and return their patient id. Identifies the patient.",
        paths.nothing, identifies=_patient_id,
    ),
    _read(
        "find_patient_by_name_dob", NameDobArgs, find_patient_by_name_dob,
        "Look up a patient by first name, last name and date of birth (YYYY-MM-DD) and return their "
        "patient id. Identifies the patient.",
        paths.nothing, identifies=_patient_id,
    ),
    _read(
        "get_patient_details", PatientArgs, get_patient_details,
        "The patient's profile: contact details, primary provider, allergies, insurance, and the ids of "
        "their appointments, medical records, prescriptions and telemetry devices.",
        paths.patient,
    ),
    _read(
        "get_appointment_details", AppointmentArgs, get_appointment_details,
        "One appointment: patient, provider, start time, duration, status and reason.",
        paths.appointment,
    ),
    _read(
        "get_provider_details", ProviderArgs, get_provider_details,
        "One provider: specialty, what they treat, languages, weekly schedule and open slots.",
        paths.provider,
    ),
    _read(
        "get_medical_record", RecordArgs, get_medical_record,
        "One medical record: visit summary, diagnoses, prescriptions issued, and notes.",
        paths.record,
    ),
    _read(
        "get_prescription_details", PrescriptionArgs, get_prescription_details,
        "One prescription: medication, dosage, prescriber, supplier, status and refills.",
        paths.prescription,
    ),
    _read(
        "get_supplier_details", SupplierArgs, get_supplier_details,
        "One medication supplier: name, kind, phone, delivery time and the medications it stocks.",
        paths.supplier,
    ),
    _read(
        "list_patient_appointments", PatientArgs, list_patient_appointments,
        "All of a patient's appointments (past and upcoming, any status).",
        paths.patient_appointments,
    ),
    _read(
        "list_patient_records", PatientArgs, list_patient_records,
        "All of a patient's medical records.",
        paths.patient_records,
    ),
    _read(
        "list_patient_prescriptions", PatientArgs, list_patient_prescriptions,
        "All of a patient's prescriptions (active and discontinued).",
        paths.patient_prescriptions,
    ),
    _read(
        "list_available_providers", AvailableProvidersArgs, list_available_providers,
        "Providers with open slots, optionally only one specialty (e.g. cardiology, primary_care), only "
        "those open on a date (YYYY-MM-DD), or only those open at an exact slot start (YYYY-MM-DDTHH:MM:SS).",
        paths.providers,
    ),
    _read(
        "list_medication_suppliers", SuppliersArgs, list_medication_suppliers,
        "Medication suppliers, optionally only those that stock a given medication.",
        paths.suppliers,
    ),
    _read(
        "list_telemetry_devices", PatientArgs, list_telemetry_devices,
        "The remote-monitoring devices paired to a patient.",
        paths.devices,
    ),
    _read(
        "get_telemetry_uploads", DeviceArgs, get_telemetry_uploads,
        "The readings a telemetry device has uploaded, oldest first, with out-of-range marks.",
        paths.uploads,
    ),
    _read(
        "check_drug_interactions", PatientArgs, check_drug_interactions,
        "Known interactions between the patient's active medications, with severity and whether the "
        "interaction is flagged for clinician review.",
        paths.interactions,
    ),
    _read(
        "get_regimen_options", ConditionArgs, get_regimen_options,
        "The standard regimen plans for a condition (by name, e.g. 'hypertension', or ICD-10 code).",
        paths.regimens,
    ),
    _write(
        "schedule_appointment", ScheduleArgs, schedule_appointment,
        "Book a video appointment for a patient with a provider at an open slot (start as "
        "YYYY-MM-DDTHH:MM:SS; duration_minutes 30 or 60) for a stated reason.",
        paths.schedule_touches,
    ),
    _write(
        "reschedule_appointment", RescheduleArgs, reschedule_appointment,
        "Move a scheduled appointment to another open slot of the same provider (same duration).",
        paths.appointment_touches,
    ),
    _write(
        "cancel_appointment", AppointmentArgs, cancel_appointment,
        "Cancel a scheduled appointment; its slots become open again.",
        paths.appointment_touches,
    ),
    _write(
        "update_prescription_supplier", SupplierChangeArgs, update_prescription_supplier,
        "Route an active prescription to a different medication supplier.",
        paths.prescription_touches,
    ),
    _write(
        "update_medical_record_note", NoteArgs, update_medical_record_note,
        "Append a note to a medical record. Notes only: diagnoses and prescriptions cannot be changed.",
        paths.record_touches,
    ),
    transfer_tool("Hand the conversation to a human agent, with a short summary of the patient's issue."),
]

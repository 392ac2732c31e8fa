"""The telehealth database: patients, providers and their open slots, appointments, medical
records, prescriptions and the suppliers that fill them, drug interactions, regimen plans, and the
telemetry devices patients upload readings from.

Every record carries its own id and the id of the patient it belongs to, so ownership can be read
straight off the record in the ledger. Times are ISO text (`2025-03-12T10:00:00`), dates
`YYYY-MM-DD`: plain strings keep the digest and the tool text identical.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class Record(BaseModel):
    model_config = ConfigDict(extra="ignore")


class Address(Record):
    street: str
    city: str
    state: str
    zip: str


class Insurance(Record):
    payer: str
    member_id: str


class Patient(Record):
    patient_id: str
    first_name: str
    last_name: str
    date_of_birth: str
    email: str
    phone: str
    address: Address
    primary_provider_id: str | None = None
    allergies: list[str] = Field(default_factory=list)
    insurance: Insurance | None = None
    appointment_ids: list[str] = Field(default_factory=list)
    record_ids: list[str] = Field(default_factory=list)
    prescription_ids: list[str] = Field(default_factory=list)
    device_ids: list[str] = Field(default_factory=list)


Specialty = Literal[
    "primary_care",
    "cardiology",
    "endocrinology",
    "dermatology",
    "psychiatry",
    "neurology",
    "gastroenterology",
    "pulmonology",
]


class Provider(Record):
    """A clinician. `weekly_schedule` maps a weekday to its working blocks (`09:00-12:00`);
    `available_slots` are the open 30-minute slot starts of the published booking horizon."""

    provider_id: str
    first_name: str
    last_name: str
    title: str
    specialty: Specialty
    treats: list[str]
    languages: list[str]
    weekly_schedule: dict[str, list[str]]
    available_slots: list[str]


AppointmentStatus = Literal["scheduled", "completed", "cancelled"]


class Appointment(Record):
    appointment_id: str
    patient_id: str
    provider_id: str
    start: str
    duration_minutes: int
    status: AppointmentStatus
    reason: str
    modality: Literal["video", "phone"] = "video"
    created_at: str


class Diagnosis(Record):
    code: str
    description: str


class Note(Record):
    written_at: str
    author: str
    text: str


class MedicalRecord(Record):
    record_id: str
    patient_id: str
    provider_id: str
    appointment_id: str | None = None
    visit_date: str
    summary: str
    diagnoses: list[Diagnosis] = Field(default_factory=list)
    prescription_ids: list[str] = Field(default_factory=list)
    notes: list[Note] = Field(default_factory=list)


class Prescription(Record):
    prescription_id: str
    patient_id: str
    medication: str
    dosage: str
    prescriber_id: str
    supplier_id: str
    status: Literal["active", "discontinued"]
    refills_remaining: int
    start_date: str


class Supplier(Record):
    supplier_id: str
    name: str
    kind: Literal["retail pharmacy", "mail order", "specialty pharmacy"]
    phone: str
    delivery_days: int
    stocks: list[str]


class DrugInteraction(Record):
    """A known interaction between two medications. `flagged` interactions are held for clinician
    review: while one is on a patient's record, their affected prescriptions cannot be re-routed."""

    interaction_id: str
    medication_a: str
    medication_b: str
    severity: Literal["minor", "moderate", "major"]
    flagged: bool
    description: str


class RegimenPlan(Record):
    plan_id: str
    condition: str
    code: str
    name: str
    description: str
    medications: list[str]
    monitoring_device: str | None = None
    follow_up_weeks: int


class TelemetryDevice(Record):
    device_id: str
    patient_id: str
    device_type: str
    model: str
    status: Literal["active", "inactive"]
    paired_on: str
    last_upload_at: str | None = None


class TelemetryUpload(Record):
    upload_id: str
    device_id: str
    patient_id: str
    recorded_at: str
    readings: dict[str, float]
    out_of_range: bool


class TelehealthDB(BaseModel):
    model_config = ConfigDict(extra="forbid")

    patients: dict[str, Patient]
    providers: dict[str, Provider]
    appointments: dict[str, Appointment]
    records: dict[str, MedicalRecord]
    prescriptions: dict[str, Prescription]
    suppliers: dict[str, Supplier]
    interactions: dict[str, DrugInteraction]
    regimens: dict[str, RegimenPlan]
    devices: dict[str, TelemetryDevice]
    uploads: dict[str, TelemetryUpload]


# Maps keyed by their records' own ids: a load whose key names another record is refused.
KEYED: tuple[tuple[str, str], ...] = (
    ("patients", "patient_id"),
    ("providers", "provider_id"),
    ("appointments", "appointment_id"),
    ("records", "record_id"),
    ("prescriptions", "prescription_id"),
    ("suppliers", "supplier_id"),
    ("interactions", "interaction_id"),
    ("regimens", "plan_id"),
    ("devices", "device_id"),
    ("uploads", "upload_id"),
)

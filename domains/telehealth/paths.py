"""The telehealth path map: where each read's result lives in the ledger, what each write makes
stale, and which read supplies a missing path.

    patients.<patient_id>                 get_patient_details
    appointments.<appointment_id>         get_appointment_details, list_patient_appointments
    patient_appointments.<patient_id>     list_patient_appointments (the ids, in booking order)
    providers.<provider_id>               get_provider_details, list_available_providers
    records.<record_id>                   get_medical_record, list_patient_records
    patient_records.<patient_id>          list_patient_records (the ids)
    prescriptions.<prescription_id>       get_prescription_details, list_patient_prescriptions
    patient_prescriptions.<patient_id>    list_patient_prescriptions (the ids)
    suppliers.<supplier_id>               get_supplier_details, list_medication_suppliers
    interactions.<patient_id>             check_drug_interactions (interactions among active meds)
    regimens.<plan_id>                    get_regimen_options
    devices.<device_id>                   list_telemetry_devices
    telemetry.<device_id>                 get_telemetry_uploads (the uploads, oldest first)

Identification (`find_patient_by_email`, `find_patient_by_name_dob`) records no path of its own:
the engine records `identified.<patient_id>` and `users.current`.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from ledger_tui.engine.disclosure import NOT_KNOWN, by_field
from ledger_tui.engine.events import SuggestedCall
from ledger_tui.engine.conversation.text import EMAIL

Pairs = Iterable[tuple[str, Any]]


def nothing(arguments: dict[str, Any], value: Any) -> Pairs:
    return ()


def _one(collection: str, key: str) -> Any:
    def absorb(arguments: dict[str, Any], value: Any) -> Pairs:
        if isinstance(value, dict) and key in value:
            yield f"{collection}.{value[key]}", value

    return absorb


def _many(collection: str, key: str, index: str | None = None) -> Any:
    def absorb(arguments: dict[str, Any], value: Any) -> Pairs:
        items = [v for v in value or [] if isinstance(v, dict) and key in v]
        for item in items:
            yield f"{collection}.{item[key]}", item
        if index is not None and "patient_id" in arguments:
            yield f"{index}.{arguments['patient_id']}", [item[key] for item in items]

    return absorb


patient = _one("patients", "patient_id")
appointment = _one("appointments", "appointment_id")
provider = _one("providers", "provider_id")
record = _one("records", "record_id")
prescription = _one("prescriptions", "prescription_id")
supplier = _one("suppliers", "supplier_id")

patient_appointments = _many("appointments", "appointment_id", "patient_appointments")
patient_records = _many("records", "record_id", "patient_records")
patient_prescriptions = _many("prescriptions", "prescription_id", "patient_prescriptions")
providers = _many("providers", "provider_id")
suppliers = _many("suppliers", "supplier_id")
devices = _many("devices", "device_id")
regimens = _many("regimens", "plan_id")


def uploads(arguments: dict[str, Any], value: Any) -> Pairs:
    yield f"telemetry.{arguments['device_id']}", value


def interactions(arguments: dict[str, Any], value: Any) -> Pairs:
    yield f"interactions.{arguments['patient_id']}", value


# --------------------------------------------------------------------------- writes


def schedule_touches(arguments: dict[str, Any], result: Any = None) -> list[str]:
    """A booking adds an appointment to the patient and takes slots from the provider."""
    return [
        f"patients.{arguments.get('patient_id')}",
        f"patient_appointments.{arguments.get('patient_id')}",
        f"providers.{arguments.get('provider_id')}",
    ]


def appointment_touches(arguments: dict[str, Any], result: Any = None) -> list[str]:
    """Rescheduling or cancelling changes the appointment and frees/takes its provider's slots (the
    provider is not an argument: it comes from the updated appointment, else every provider)."""
    provider = result.get("provider_id") if isinstance(result, dict) else None
    providers = f"providers.{provider}" if isinstance(provider, str) and provider else "providers.*"
    return [f"appointments.{arguments.get('appointment_id')}", providers]


def prescription_touches(arguments: dict[str, Any], result: Any = None) -> list[str]:
    return [f"prescriptions.{arguments.get('prescription_id')}"]


def record_touches(arguments: dict[str, Any], result: Any = None) -> list[str]:
    return [f"records.{arguments.get('record_id')}"]


# --------------------------------------------------------------------------- hints

SOURCES: list[tuple[str, str]] = [
    ("patients.{patient_id}", "get_patient_details"),
    ("appointments.{appointment_id}", "get_appointment_details"),
    ("patient_appointments.{patient_id}", "list_patient_appointments"),
    ("providers.{provider_id}", "get_provider_details"),
    ("records.{record_id}", "get_medical_record"),
    ("patient_records.{patient_id}", "list_patient_records"),
    ("prescriptions.{prescription_id}", "get_prescription_details"),
    ("patient_prescriptions.{patient_id}", "list_patient_prescriptions"),
    ("suppliers.{supplier_id}", "get_supplier_details"),
    ("interactions.{patient_id}", "check_drug_interactions"),
    ("telemetry.{device_id}", "get_telemetry_uploads"),
]




def identify_hint(arguments: dict[str, Any], customer_text: Sequence[str] = ()) -> SuggestedCall | None:
    """The lookup of the email the patient gave, if they gave one; otherwise the agent must ask
    (an id in the arguments does not count)."""
    for text in reversed(customer_text):
        emails = EMAIL.findall(text or "")
        if emails:
            return SuggestedCall(name="find_patient_by_email", arguments={"email": emails[-1].rstrip(".")})
    return None


def identity_sentence(db: Any, arguments: dict[str, Any]) -> str | None:
    """What the patient a call acts for says to be identified: their email."""
    patient_id = arguments.get("patient_id")
    for collection, key in (("appointments", "appointment_id"), ("prescriptions", "prescription_id"), ("records", "record_id")):
        if not patient_id and arguments.get(key):
            record = getattr(db, collection).get(arguments[key])
            patient_id = record.patient_id if record is not None else None
    patient = db.patients.get(patient_id) if patient_id else None
    return f"My email is {patient.email}." if patient is not None else None



# ----------------------------------------------------------------------------- the read gate

_PATIENT_INDEXES = ("patient_appointments", "patient_records", "patient_prescriptions", "interactions")


def _owner_of_lists(path: str, value: Any, ledger: Any) -> str | None:
    """A patient's lists and interactions are theirs (the path names them), a device's uploads the
    device's patient's; providers, suppliers and regimens are everyone's."""
    collection, _, key = path.partition(".")
    if collection in _PATIENT_INDEXES:
        return key
    if collection == "telemetry":
        device = ledger.get(f"devices.{key}")
        owner = device.value.get("patient_id") if device is not None and isinstance(device.value, dict) else None
        return str(owner) if owner else NOT_KNOWN
    return None


READ_GATE = by_field(
    "general.privacy",
    {c: "patient_id" for c in ("patients", "appointments", "records", "prescriptions", "devices")}, ("patients.",),
    "their email, or first name, last name and date of birth, looked up with find_patient_by_email or find_patient_by_name_dob",
    more=_owner_of_lists,
)

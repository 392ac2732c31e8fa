"""What the agent must say before each telehealth write: the `Terms` its proposal names.

An appointment is named by its id or by what the patient knows of it (the provider's name, the
date); a prescription by its id or its medication; a record by its id or its visit date. A booking
or a move names the provider, the date and the time; a supplier change names the new supplier.
"""

from __future__ import annotations

from typing import Any, Iterable

from ledger_tui.domains.telehealth.slots import normalise
from ledger_tui.engine import rules
from ledger_tui.engine.conversation.consent import Detail, RecordRef, Terms
from ledger_tui.engine.gate import GateContext


def _when(start: Any) -> list[Detail]:
    """The date and the time together ("2025-03-19 at 13:00", "13:00 on March 19"): a date named as
    one slot and a time named as another do not make this slot."""
    try:
        text = normalise(str(start or ""))
    except ValueError:
        return [Detail(f"the time ({start})", (start,))]
    day, hour = text[:10], text[11:16]
    forms = (f"{day} {hour}", f"{day} at {hour}", f"{hour} on {day}", f"{day} from {hour}", f"{hour} {day}")
    return [Detail(f"the date and time ({day} {hour})", forms)]


def _provider_forms(ctx: GateContext, provider_id: str | None) -> tuple[Any, ...]:
    provider = ctx.peek(f"providers.{provider_id}") if provider_id else None
    forms: list[Any] = [provider_id]
    if isinstance(provider, dict):
        forms.append(provider.get("last_name"))
        forms.append(f"{provider.get('first_name')} {provider.get('last_name')}")
    return tuple(f for f in forms if f)


def _appointment_forms(ctx: GateContext) -> Any:
    def describe(appt: Any) -> Iterable[Any]:
        if not isinstance(appt, dict):
            return ()
        forms: list[Any] = list(_provider_forms(ctx, appt.get("provider_id"))[1:])
        start = str(appt.get("start") or "")
        forms.append(start[:10])
        return [f for f in forms if f]

    return describe


def _ref(ctx: GateContext, kind: str, collection: str, record_id: str, nouns: tuple[str, ...], describe: Any) -> RecordRef:
    me = ctx.session.user_id
    patient = ctx.peek(f"patients.{me}") if me else None
    listed = (patient or {}).get(f"{kind}_ids") if isinstance(patient, dict) else None
    records = rules.customer_records(ctx, f"{collection}.", "patient_id", listed)
    return rules.record_ref(kind, record_id, nouns, records, describe)


def _medication(rx: Any) -> Iterable[Any]:
    return [rx.get("medication")] if isinstance(rx, dict) and rx.get("medication") else []


def _visit(record: Any) -> Iterable[Any]:
    return [record.get("visit_date")] if isinstance(record, dict) and record.get("visit_date") else []


def terms(ctx: GateContext) -> Terms:
    a = ctx.arguments
    name = ctx.call.name
    if name == "schedule_appointment":
        details = [Detail(f"the provider ({a.get('provider_id')})", _provider_forms(ctx, a.get("provider_id"))), *_when(a.get("start"))]
        return Terms(("schedule",), f"book an appointment with {a.get('provider_id')}", None, tuple(details))
    if name in ("reschedule_appointment", "cancel_appointment"):
        ref = _ref(ctx, "appointment", "appointments", a["appointment_id"], ("appointment", "visit", "consultation"), _appointment_forms(ctx))
        if name == "cancel_appointment":
            return Terms(("cancel",), f"cancel appointment {a['appointment_id']}", ref)
        return Terms(("reschedule",), f"move appointment {a['appointment_id']}", ref, tuple(_when(a.get("new_start"))))
    if name == "update_prescription_supplier":
        ref = _ref(ctx, "prescription", "prescriptions", a["prescription_id"], ("prescription", "medication", "refill"), _medication)
        supplier = ctx.peek(f"suppliers.{a.get('supplier_id')}")
        forms = (a.get("supplier_id"), supplier.get("name") if isinstance(supplier, dict) else None)
        return Terms(("supplier", "change"), f"move prescription {a['prescription_id']} to supplier {a.get('supplier_id')}", ref, (Detail(f"the new supplier ({a.get('supplier_id')})", tuple(f for f in forms if f)),))
    ref = _ref(ctx, "record", "records", a["record_id"], ("record", "visit", "chart"), _visit)
    # the note is read back as it will be written: a longer note is not the one proposed
    return Terms(("note",), f"add a note to record {a['record_id']}", ref, (Detail("the note's words", (a.get("note"),)),))


# ----------------------------------------------------------------------------- the card


def _provider_shown(ctx: GateContext, provider_id: Any) -> str:
    provider = ctx.ledger.value(f"providers.{provider_id}") if provider_id else None
    if isinstance(provider, dict) and provider.get("last_name"):
        specialty = f" ({str(provider['specialty']).replace('_', ' ')})" if provider.get("specialty") else ""
        return f"Dr. {provider.get('first_name', '')} {provider['last_name']}".replace("  ", " ") + specialty
    return str(provider_id)


def _at(start: Any) -> str:
    try:
        text = normalise(str(start or ""))
    except ValueError:
        return str(start)
    return f"{text[:10]} at {text[11:16]}"


def card(ctx: GateContext) -> list[str]:
    """What a confirmation card shows of a telehealth write besides its action: the provider, the
    date and time, the supplier, the note's words."""
    a = ctx.arguments
    name = ctx.call.name
    if name == "schedule_appointment":
        return [f"Provider: {_provider_shown(ctx, a.get('provider_id'))}", f"When: {_at(a.get('start'))}", *(
            [f"Reason: {a['reason']}"] if a.get("reason") else []
        )]
    if name in ("reschedule_appointment", "cancel_appointment"):
        appt = ctx.ledger.value(f"appointments.{a['appointment_id']}") or {}
        lines = [f"Now: {_provider_shown(ctx, appt.get('provider_id'))}, {_at(appt.get('start'))}"] if isinstance(appt, dict) and appt else []
        if name == "reschedule_appointment":
            lines.append(f"New time: {_at(a.get('new_start'))}")
        return lines
    if name == "update_prescription_supplier":
        supplier = ctx.ledger.value(f"suppliers.{a.get('supplier_id')}")
        shown = supplier.get("name") if isinstance(supplier, dict) and supplier.get("name") else a.get("supplier_id")
        return [f"New supplier: {shown}"]
    return [f"Note: {a.get('note')}"]

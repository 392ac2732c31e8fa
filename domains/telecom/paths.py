"""Where telecom reads land in the ledger, what writes make stale, and which read supplies a path.

Canonical paths: `customers.<customer_id>`, `lines.<line_id>`, `devices.<device_id>`,
`bills.<bill_id>`, `plans.<plan_id>`, `usage.<line_id>` (the data-usage summary of a line).
Values are the plain-JSON records the engine hands over (`jsonable` of the tool return).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

from ledger_tui.engine.disclosure import NOT_KNOWN, by_field
from ledger_tui.engine.events import SuggestedCall

_COLLECTIONS = {"L": "lines", "D": "devices", "B": "bills", "C": "customers", "P": "plans"}
_ID_FIELDS = {"lines": "line_id", "devices": "device_id", "bills": "bill_id", "customers": "customer_id", "plans": "plan_id"}


def absorb_customer(arguments: dict[str, Any], value: Any) -> Iterable[tuple[str, Any]]:
    yield f"customers.{value['customer_id']}", value


def absorb_customers(arguments: dict[str, Any], value: Any) -> Iterable[tuple[str, Any]]:
    for customer in value:
        yield f"customers.{customer['customer_id']}", customer


def absorb_details(arguments: dict[str, Any], value: Any) -> Iterable[tuple[str, Any]]:
    collection = _COLLECTIONS.get(str(arguments.get("id", ""))[:1])
    if collection and isinstance(value, dict):
        yield f"{collection}.{value[_ID_FIELDS[collection]]}", value


def absorb_bills(arguments: dict[str, Any], value: Any) -> Iterable[tuple[str, Any]]:
    for bill in value:
        yield f"bills.{bill['bill_id']}", bill


def absorb_usage(arguments: dict[str, Any], value: Any) -> Iterable[tuple[str, Any]]:
    yield f"usage.{value['line_id']}", value


def identifies_customer(arguments: dict[str, Any], value: Any) -> str | None:
    return value.get("customer_id") if isinstance(value, dict) else None


def identifies_unique_customer(arguments: dict[str, Any], value: Any) -> str | None:
    """Name + date of birth identifies only when exactly one customer matches."""
    if isinstance(value, list) and len(value) == 1:
        return value[0].get("customer_id")
    return None


def refuel_touches(arguments: dict[str, Any], result: Any = None) -> list[str]:
    """Refuelling changes the line and its usage, a draft bill, and maybe the customer's bill list."""
    line, customer = arguments.get("line_id"), arguments.get("customer_id")
    out = [f"lines.{line}", f"usage.{line}", "bills.*"] if line else ["lines.*", "usage.*", "bills.*"]
    out.append(f"customers.{customer}" if customer else "customers.*")
    return out


# (path pattern, read tool): the read whose arguments follow from the path, for REVISE hints.
SOURCES: list[tuple[str, str]] = [
    ("customers.{customer_id}", "get_customer_by_id"),
    ("lines.{id}", "get_details_by_id"),
    ("bills.{id}", "get_details_by_id"),
    ("plans.{id}", "get_details_by_id"),
    ("devices.{id}", "get_details_by_id"),
]


_PHONE = re.compile(r"\(?\b\d{3}\)?[-. ]?\d{3}[-. ]?\d{4}\b")
_CUSTOMER_ID = re.compile(r"\bC\d{4,}\b")


def identify_hint(arguments: dict[str, Any], customer_text: Sequence[str]) -> SuggestedCall | None:
    """The identification read of what the customer gave: their customer id or phone number."""
    for text in reversed(customer_text):
        ids = _CUSTOMER_ID.findall(text or "")
        if ids:
            return SuggestedCall(name="get_customer_by_id", arguments={"customer_id": ids[-1]})
        phones = _PHONE.findall(text or "")
        if phones:
            return SuggestedCall(name="get_customer_by_phone", arguments={"phone_number": phones[-1]})
    return None


def bills_hint(customer_id: str, count: int) -> SuggestedCall:
    """The one read that refreshes all of a customer's bills at once."""
    arguments: dict[str, Any] = {"customer_id": customer_id}
    if count > 12:
        arguments["limit"] = count
    return SuggestedCall(name="get_bills_for_customer", arguments=arguments)


def identity_sentence(state: Any, arguments: dict[str, Any]) -> str | None:
    """What the customer a call acts for says to be identified: their phone number."""
    customer_id = arguments.get("customer_id")
    db = getattr(state, "agent_db", state)
    for customer in db.customers:
        if customer.customer_id == customer_id:
            return f"My phone number is {customer.phone_number}."
    return None



# ----------------------------------------------------------------------------- the read gate


def _line_owner(line_id: str, ledger: Any) -> str:
    for path in ledger.under("customers."):
        customer = ledger[path].value
        if isinstance(customer, dict) and line_id in (customer.get("line_ids") or []):
            return str(customer.get("customer_id") or path.split(".", 1)[1])
    return NOT_KNOWN


def _owner_by_line(path: str, value: Any, ledger: Any) -> str | None:
    """A line (and its usage, and the device on it) is the customer's whose record, read before,
    lists it; plans are everyone's."""
    collection, _, key = path.partition(".")
    if collection in ("lines", "usage"):
        return _line_owner(key, ledger)
    if collection == "devices":
        for line_path in ledger.under("lines."):
            line = ledger[line_path].value
            if isinstance(line, dict) and line.get("device_id") == key:
                return _line_owner(line_path.split(".", 1)[1], ledger)
        return NOT_KNOWN
    return None


READ_GATE = by_field(
    "identity.privacy", {"customers": "customer_id", "bills": "customer_id"}, ("customers.",),
    "their phone number, customer id, or full name with date of birth", more=_owner_by_line,
)

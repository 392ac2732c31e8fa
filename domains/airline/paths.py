"""The airline path map: where each read lands in the ledger, and what each write makes stale.

Canonical paths: `users.<user_id>`, `reservations.<reservation_id>`, `flights.<number>.<date>`
(the date's entry: at least its `status`; search results add seats, prices, route and times) and
`airports`. A search result yields one path per leg, so one search can ground a whole booking.

Writes that move money make the reservation's owner stale too; the owner is not an argument, so
`update_touches` reads it from the write's result (the updated reservation).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

from ledger_tui.engine.disclosure import by_field
from ledger_tui.engine.events import SuggestedCall

SOURCES: list[tuple[str, str]] = [
    ("users.{user_id}", "get_user_details"),
    ("reservations.{reservation_id}", "get_reservation_details"),
    ("flights.{flight_number}.{date}", "get_flight_status"),
    ("airports", "list_all_airports"),
]


def user_path(user_id: str) -> str:
    return f"users.{user_id}"


def reservation_path(reservation_id: str) -> str:
    return f"reservations.{reservation_id}"


def flight_path(flight_number: str, date: str) -> str:
    return f"flights.{flight_number}.{date}"


# ---------------------------------------------------------------------------- reads


def absorb_user(arguments: dict[str, Any], value: Any) -> Iterable[tuple[str, Any]]:
    yield user_path(value.get("user_id", arguments.get("user_id"))), value


def absorb_reservation(arguments: dict[str, Any], value: Any) -> Iterable[tuple[str, Any]]:
    yield reservation_path(value.get("reservation_id", arguments.get("reservation_id"))), value


def absorb_flight_status(arguments: dict[str, Any], value: Any) -> Iterable[tuple[str, Any]]:
    yield flight_path(arguments["flight_number"], arguments["date"]), {"status": value}


def _leg_entry(leg: dict[str, Any]) -> dict[str, Any]:
    """A search leg as a date entry: everything but the number and date (they are in the path)."""
    return {k: v for k, v in leg.items() if k not in ("flight_number", "date")}


def absorb_direct_search(arguments: dict[str, Any], value: Any) -> Iterable[tuple[str, Any]]:
    for leg in value:
        yield flight_path(leg["flight_number"], leg.get("date") or arguments["date"]), _leg_entry(leg)


def absorb_onestop_search(arguments: dict[str, Any], value: Any) -> Iterable[tuple[str, Any]]:
    for pair in value:
        for leg in pair:
            yield flight_path(leg["flight_number"], leg.get("date") or arguments["date"]), _leg_entry(leg)


def absorb_airports(arguments: dict[str, Any], value: Any) -> Iterable[tuple[str, Any]]:
    yield "airports", value


def identifies_user(arguments: dict[str, Any], value: Any) -> str | None:
    """A profile, or a reservation, shows whose it is: it confirms a user id the customer gave."""
    return value.get("user_id") if isinstance(value, dict) else None


def owner_said(arguments: dict[str, Any], value: Any) -> list[str]:
    """The policy identifies by the user id the customer gives: that id is what they must have said."""
    return [value["user_id"]] if isinstance(value, dict) and value.get("user_id") else ["?"]


# ---------------------------------------------------------------------------- writes


def booking_touches(arguments: dict[str, Any], result: Any = None) -> list[str]:
    """A booking debits the user's gift cards/certificates and takes seats on every flight."""
    paths = [user_path(str(arguments.get("user_id", "*")))]
    for f in arguments.get("flights") or []:
        if isinstance(f, dict) and "flight_number" in f and "date" in f:
            paths.append(flight_path(f["flight_number"], f["date"]))
    return paths


def update_touches(arguments: dict[str, Any], result: Any = None) -> list[str]:
    """A baggage or flight update changes the reservation and, paid by gift card, its owner's
    balance (the owner from the updated reservation; every user when the result does not say)."""
    rid = str(arguments.get("reservation_id", ""))
    paths = [reservation_path(rid)]
    if str(arguments.get("payment_id", "")).startswith("gift_card"):
        owner = result.get("user_id") if isinstance(result, dict) else None
        paths.append(user_path(owner) if isinstance(owner, str) and owner else "users.*")
    return paths


_USER_ID = re.compile(r"\b[a-z]+(?:_[a-z]+)+_\d{3,5}\b")


def identify_hint(arguments: dict[str, Any], customer_text: Sequence[str]) -> SuggestedCall | None:
    """The identification read of a user id the customer gave (the call's, or one in their words)."""
    said = [m for text in customer_text for m in _USER_ID.findall(text or "")]
    user_id = arguments.get("user_id")
    if isinstance(user_id, str) and user_id in said:
        return SuggestedCall(name="get_user_details", arguments={"user_id": user_id})
    if said:
        return SuggestedCall(name="get_user_details", arguments={"user_id": said[-1]})
    return None


def identity_sentence(db: Any, arguments: dict[str, Any]) -> str | None:
    """What the owner of the record a call acts on says to be identified: their user id."""
    user_id = arguments.get("user_id")
    if not user_id and arguments.get("reservation_id"):
        res = db.reservations.get(arguments["reservation_id"])
        user_id = res.user_id if res is not None else None
    return f"My user id is {user_id}." if user_id else None



# ----------------------------------------------------------------------------- the read gate

# a profile and a reservation are their user's; flights and airports are everyone's
READ_GATE = by_field(
    "identity.privacy", {"users": "user_id", "reservations": "user_id"}, ("users.",),
    "their user id, looked up with get_user_details",
)

"""What the airline's policy areas read alike: reservations, flight statuses, flown segments,
searched itineraries and their routes, the free bag allowance.

Kept apart so that each area's rules (`booking.py`, `changes.py`, `cancellation.py`,
`compensation.py`) read as the policy does. Everything here reads the ledger through `ctx`, never
the database. Flight facts come from the date entries at `flights.<number>.<date>`: a status read
gives `{"status": …}`, a search result also gives seats, prices and the route of the leg.

A segment counts as flown when its flight is `landed` or `flying` on that date; segments dated
after today are not flown and need no read.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Iterable

from ledger_tui.domains.airline.paths import flight_path, reservation_path
from ledger_tui.domains.airline.tools import NOW
from ledger_tui.engine.events import SuggestedCall
from ledger_tui.engine.gate import Failure, GateContext

TODAY = NOW[:10]
# free checked bags per passenger, by membership and cabin
FREE_BAGS: dict[str, dict[str, int]] = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 4},
}
FLOWN = ("landed", "flying")
def read_reservation(ctx: GateContext) -> dict[str, Any]:
    return ctx.read(reservation_path(ctx.arguments["reservation_id"]))


def flight_status(ctx: GateContext, flight_number: str, date: str) -> str:
    return ctx.read(flight_path(flight_number, date)).get("status", "")


def flown_segments(ctx: GateContext, segments: Iterable[dict[str, Any]]) -> list[str]:
    """`number date` of every segment already flown (reads the status of segments up to today)."""
    flown = []
    for seg in segments:
        if seg["date"] > TODAY:
            continue
        if flight_status(ctx, seg["flight_number"], seg["date"]) in FLOWN:
            flown.append(f"{seg['flight_number']} on {seg['date']}")
    return flown


def any_observed(ctx: GateContext, path: str) -> Any:
    """An observed value even if stale (for facts a write cannot change, or history), as evidence."""
    ev = ctx.recall(path)
    return ev.value if ev.present and ev.origin == "observed" else None


def flight_keys(flights: Iterable[Any]) -> list[tuple[str, str]]:
    return [(f["flight_number"], f["date"]) for f in flights]


def as_written(value: Any) -> str:
    """100 and 100.0 both shown as the customer would read them: `100`."""
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


def _search_hint(call: SuggestedCall, what: str) -> Failure:
    return GateContext.needs(
        f"{what} has not been seen in a flight search, so its seats and price are unknown.",
        call,
        f"Search the flights first: {call.signature()}.",
    )


def _known_route(ctx: GateContext, number: str, current: dict[str, Any] | None) -> tuple[str, str] | None:
    """Where flight `number` flies, from anything read: a flight number keeps its route on every
    date, and a reservation's segments name theirs."""
    for seg in (current or {}).get("flights") or []:
        if seg.get("flight_number") == number and seg.get("origin"):
            return seg["origin"], seg["destination"]
    for path in ctx.observed_paths(f"flights.{number}."):
        entry = ctx.ledger.value(path)
        if isinstance(entry, dict) and entry.get("origin") and entry.get("destination"):
            return entry["origin"], entry["destination"]
    for path in ctx.observed_paths("reservations."):
        for seg in (ctx.ledger.value(path) or {}).get("flights") or []:
            if seg.get("flight_number") == number and seg.get("origin"):
                return seg["origin"], seg["destination"]
    return None


def _leg_search(
    ctx: GateContext, legs: list[dict[str, Any] | None], i: int, requested: list[dict[str, Any]],
    origin: str, destination: str, flight_type: str, current: dict[str, Any] | None,
) -> SuggestedCall:
    """The search that lists leg `i` (every leg before it is known): a direct search on its route
    when both of its ends are known (its own route, or the legs around it); the one-stop search of
    its direction when it is the first leg of a connection (the next leg flies the same or the
    next day). A direct search never lists a connecting leg."""
    number, date = requested[i]["flight_number"], requested[i]["date"]
    route = _known_route(ctx, number, current)
    if route:
        return SuggestedCall(name="search_direct_flight", arguments={"origin": route[0], "destination": route[1], "date": date})
    before = [leg for leg in legs[:i] if leg]
    returning = flight_type == "round_trip" and any(leg["destination"] == destination for leg in before)
    start = before[-1]["destination"] if before else origin
    end = origin if returning else destination
    after = legs[i + 1] if i + 1 < len(legs) else None
    if after is not None:
        return SuggestedCall(name="search_direct_flight", arguments={"origin": start, "destination": after["origin"], "date": date})
    args = {"origin": start, "destination": end, "date": date}
    direct = SuggestedCall(name="search_direct_flight", arguments=args)
    onestop = SuggestedCall(name="search_onestop_flight", arguments=args)
    per_direction = len(requested) / (2 if flight_type == "round_trip" else 1)
    connecting = per_direction >= 2 and i + 1 < len(requested) and _next_day_or_same(date, requested[i + 1]["date"])
    order = [onestop, direct] if connecting and start != end else [direct, onestop]
    done = ctx.context("reads_done", sorted(ctx.session.reads_done & {c.signature() for c in order}))
    return next((c for c in order if c.signature() not in done), order[0])


def _next_day_or_same(first: str, second: str) -> bool:
    try:
        gap = (datetime.fromisoformat(second) - datetime.fromisoformat(first)).days
    except ValueError:
        return False
    return 0 <= gap <= 1


def itinerary(
    ctx: GateContext,
    requested: list[dict[str, Any]],
    cabin: str,
    origin: str,
    destination: str,
    flight_type: str,
    current: dict[str, Any] | None = None,
) -> tuple[list[dict[str, Any]], Failure | None]:
    """Each requested segment with its route and (for new segments) its ledger date entry.

    A segment of `current` kept in the same cabin is reused as stored (the tool re-prices nothing
    for it). Any other segment must have been seen in a search; if not, the failure suggests the
    search that lists it (see `_leg_search`).
    """
    legs: list[dict[str, Any] | None] = []
    # (a leg whose entry a write made stale is searched again; one never listed is not on this trip)
    for info in requested:
        number, date = info["flight_number"], info["date"]
        old = None
        if current is not None:
            old = next((f for f in current["flights"] if f["flight_number"] == number and f["date"] == date), None)
        if old is not None and cabin == current["cabin"]:  # type: ignore[index]
            legs.append({**old, "kept": True})
            continue
        entry = ctx.peek(flight_path(number, date))
        if entry and entry.get("status") not in (None, "available") and "available_seats" not in entry:
            # its status is read and it is not open for booking: no search will list it
            legs.append({"flight_number": number, "date": date, "origin": (old or {}).get("origin"),
                         "destination": (old or {}).get("destination"), "status": entry.get("status"),
                         "seats": 0, "price": None, "kept": False})
            continue
        if not entry or "available_seats" not in entry or "origin" not in entry:
            legs.append(None)
            continue
        legs.append(
            {
                "flight_number": number,
                "date": date,
                "origin": entry["origin"],
                "destination": entry["destination"],
                "status": entry.get("status"),
                "seats": entry.get("available_seats", {}).get(cabin),
                "price": entry.get("prices", {}).get(cabin),
                "kept": False,
            }
        )
    for i, leg in enumerate(legs):
        if leg is None:
            number, date = requested[i]["flight_number"], requested[i]["date"]
            call = _leg_search(ctx, legs, i, requested, origin, destination, flight_type, current)
            seen = ctx.ledger.get(flight_path(number, date))
            if call.signature() in ctx.session.reads_done and not (seen is not None and seen.stale):
                # every search that could list it was made and none did: it does not fly this
                # trip's route on that date, or is not open for booking
                return [l for l in legs if l], ctx.fail(
                    f"Flight {number} on {date} was not listed by {call.signature()}: it does not fly this "
                    f"part of the trip ({origin}–{destination}) on that date, or is not open for booking.",
                    "Offer flights that the searches of the trip's route list.",
                )
            return [l for l in legs if l], _search_hint(call, f"Flight {number} on {date}")
    return [l for l in legs if l], None


def route_problem(legs: list[dict[str, Any]], origin: str, destination: str, flight_type: str) -> str | None:
    if not legs:
        return "the new itinerary has no flights"
    if any(leg.get("origin") is None for leg in legs):
        return None  # a leg known only by its status: it is not open for booking, which is reported
    for a, b in zip(legs, legs[1:]):
        if a["destination"] != b["origin"]:
            return f"{a['flight_number']} lands at {a['destination']} but {b['flight_number']} leaves from {b['origin']}"
    if legs[0]["origin"] != origin:
        return f"the trip must still start at {origin}, not {legs[0]['origin']}"
    end = origin if flight_type == "round_trip" else destination
    if legs[-1]["destination"] != end:
        return f"the {flight_type.replace('_', ' ')} trip must end at {end}, not {legs[-1]['destination']}"
    if flight_type == "round_trip" and not any(l["destination"] == destination for l in legs[:-1]):
        return f"the round trip must still go to {destination}"
    return None

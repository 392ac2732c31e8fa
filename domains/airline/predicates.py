"""The airline policy as code: one predicate per rule of `policy.md`, each naming its clause.

Predicates read records from the ledger (`ctx.read` makes missing or stale evidence a REVISE with
the read that supplies it) and what the customer said from `said.*` (`ctx.stated`), never the
database. Flight facts come from the date entries at `flights.<number>.<date>`: a status read gives
`{"status": …}`, a search result also gives seats, prices and the route of the leg.

A segment counts as flown when its flight is `landed` or `flying` on that date; segments dated
after today are not flown and need no read.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from typing import Any, Iterable

from ledger_tui.domains.airline import proposals
from ledger_tui.domains.airline.paths import flight_path, reservation_path, user_path
from ledger_tui.domains.airline.tools import BAG_FEE, INSURANCE_FEE, NOW
from ledger_tui.engine import rules
from ledger_tui.engine.domain import Choice, Question, Statement, keyword_statement, said_as
from ledger_tui.engine.events import SuggestedCall, Verdict
from ledger_tui.engine.gate import Failure, GateContext, Predicate, predicate

TODAY = NOW[:10]
WRITES = (
    "book_reservation",
    "cancel_reservation",
    "update_reservation_baggages",
    "update_reservation_flights",
    "update_reservation_passengers",
    "send_certificate",
)
RESERVATION_WRITES = (
    "cancel_reservation",
    "update_reservation_baggages",
    "update_reservation_flights",
    "update_reservation_passengers",
)
# free checked bags per passenger, by membership and cabin
FREE_BAGS: dict[str, dict[str, int]] = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 4},
}
FLOWN = ("landed", "flying")
DOB = re.compile(r"^\d{4}-\d{2}-\d{2}$")


# ---------------------------------------------------------------------------- helpers


def _reservation(ctx: GateContext) -> dict[str, Any]:
    return ctx.read(reservation_path(ctx.arguments["reservation_id"]))


def _status(ctx: GateContext, flight_number: str, date: str) -> str:
    return ctx.read(flight_path(flight_number, date)).get("status", "")


def _flown_segments(ctx: GateContext, segments: Iterable[dict[str, Any]]) -> list[str]:
    """`number date` of every segment already flown (reads the status of segments up to today)."""
    flown = []
    for seg in segments:
        if seg["date"] > TODAY:
            continue
        if _status(ctx, seg["flight_number"], seg["date"]) in FLOWN:
            flown.append(f"{seg['flight_number']} on {seg['date']}")
    return flown


def _any_observed(ctx: GateContext, path: str) -> Any:
    """An observed value even if stale (for facts a write cannot change, or history), as evidence."""
    ev = ctx.recall(path)
    return ev.value if ev.present and ev.origin == "observed" else None


def _keys(flights: Iterable[Any]) -> list[tuple[str, str]]:
    return [(f["flight_number"], f["date"]) for f in flights]


def _num(value: Any) -> str:
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


def _itinerary(
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


def _route_problem(legs: list[dict[str, Any]], origin: str, destination: str, flight_type: str) -> str | None:
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


# ---------------------------------------------------------------------------- everywhere

customer_identified = rules.identified(
    "identity.user-id", "ask for the user id and look it up with get_user_details", tools=WRITES
)
one_customer = rules.one_customer("identity.one-customer", tools=WRITES)
reservation_owned = rules.owned_by_customer(
    "identity.ownership",
    RESERVATION_WRITES,
    record_path=lambda a: reservation_path(a["reservation_id"]) if a.get("reservation_id") else None,
    owner_of=lambda record: record.get("user_id"),
    what="reservation",
)
explicit_confirmation = rules.confirmed("confirm.explicit-yes", WRITES, proposals.terms)


@predicate(
    "acts_for_identified_customer",
    clause="identity.ownership",
    on_fail=Verdict.BLOCK,
    tools=("book_reservation", "send_certificate"),
    reads=("users.current",),
)
def acts_for_identified_customer(ctx: GateContext) -> Failure | None:
    """A booking or certificate is for the identified customer's own account."""
    me = ctx.user_id()
    target = ctx.arguments.get("user_id")
    if me is None:
        return ctx.fail("No customer is identified yet.", verdict=Verdict.REVISE)
    if target != me:
        return ctx.fail(
            f"The call is for user {target}, but the identified customer is {me}.",
            "Only act on the identified customer's own account.",
        )
    return None


@predicate(
    "reservation_not_cancelled",
    clause="reservation.active",
    on_fail=Verdict.BLOCK,
    tools=RESERVATION_WRITES,
    reads=("reservations.{reservation_id}",),
)
def reservation_not_cancelled(ctx: GateContext) -> Failure | None:
    """A cancelled reservation cannot be changed or cancelled again."""
    res = _reservation(ctx)
    if res.get("status") == "cancelled":
        return ctx.fail(f"Reservation {res['reservation_id']} is already cancelled.", "Nothing more can be done with it.")
    return None


# ---------------------------------------------------------------------------- booking


@predicate("booking_passengers_valid", clause="book.passengers", on_fail=Verdict.REVISE, tools=("book_reservation",))
def booking_passengers_valid(ctx: GateContext) -> Failure | None:
    """One to five passengers, each with first name, last name and date of birth (YYYY-MM-DD)."""
    people = ctx.arguments.get("passengers") or []
    if not 1 <= len(people) <= 5:
        return ctx.fail(f"A reservation holds 1 to 5 passengers, not {len(people)}.", "Book at most five passengers.")
    for i, p in enumerate(people, 1):
        if not (p.get("first_name") or "").strip() or not (p.get("last_name") or "").strip():
            return ctx.fail(f"Passenger {i} lacks a first or last name.", "Ask the customer for each passenger's full name.")
        if not DOB.match(str(p.get("dob") or "")):
            return ctx.fail(f"Passenger {i} lacks a date of birth (YYYY-MM-DD).", "Ask the customer for each passenger's date of birth.")
    return None


@predicate(
    "booking_flights_available",
    clause="book.flights-available",
    on_fail=Verdict.REVISE,
    tools=("book_reservation",),
    reads=("flights.{flight_number}.{date}",),
)
def booking_flights_available(ctx: GateContext) -> Failure | None:
    """The flights connect into the trip (origin to destination, and back for a round trip), and
    every one was seen available on its date with enough seats left in the cabin."""
    a = ctx.arguments
    legs, missing = _itinerary(ctx, a["flights"], a["cabin"], a["origin"], a["destination"], a["flight_type"])
    if missing:
        return missing
    problem = _route_problem(legs, a["origin"], a["destination"], a["flight_type"])
    if problem:
        return ctx.fail(f"The flights do not make this trip: {problem}.", "Book flights that connect, from the origin to the destination (and back, for a round trip).")
    n = len(a.get("passengers") or [])
    for leg in legs:
        if leg["status"] != "available":
            return ctx.fail(f"Flight {leg['flight_number']} on {leg['date']} is {leg['status']}, not open for booking.", "Offer another flight.")
        if (leg["seats"] or 0) < n:
            return ctx.fail(
                f"Flight {leg['flight_number']} on {leg['date']} has {leg['seats'] or 0} {a['cabin']} seats left for {n} passengers.",
                "Offer another flight or cabin.",
            )
    return None


def _booking_price(ctx: GateContext) -> int | None:
    a = ctx.arguments
    n = len(a.get("passengers") or [])
    total = 0
    for f in a["flights"]:
        entry = ctx.peek(flight_path(f["flight_number"], f["date"])) or {}
        price = (entry.get("prices") or {}).get(a["cabin"])
        if price is None:
            return None
        total += price * n
    if a["insurance"] == "yes":
        total += INSURANCE_FEE * n
    return total + BAG_FEE * a["nonfree_baggages"]


@predicate(
    "booking_payment_valid",
    clause="book.payment",
    on_fail=Verdict.REVISE,
    tools=("book_reservation",),
    reads=("users.{user_id}", "flights.{flight_number}.{date}"),
)
def booking_payment_valid(ctx: GateContext) -> Failure | None:
    """At most one certificate, one credit card and three gift cards, all saved in the profile,
    balances covering their amounts, and amounts adding up to the price."""
    user = ctx.read(user_path(ctx.arguments["user_id"]))
    methods = user.get("payment_methods") or {}
    pays = ctx.arguments.get("payment_methods") or []
    counts = {"certificate": 0, "credit_card": 0, "gift_card": 0}
    for pay in pays:
        method = methods.get(pay["payment_id"])
        if method is None:
            return ctx.fail(f"{pay['payment_id']} is not a payment method in the customer's profile.", "Use a saved payment method.")
        counts[method["source"]] = counts.get(method["source"], 0) + 1
        if method["source"] in ("gift_card", "certificate") and method["amount"] < pay["amount"]:
            return ctx.fail(
                f"{pay['payment_id']} holds {_num(method['amount'])}, less than the {_num(pay['amount'])} charged to it.",
                "Charge at most the balance and put the rest on another method.",
            )
    limits = {"certificate": 1, "credit_card": 1, "gift_card": 3}
    for source, limit in limits.items():
        if counts[source] > limit:
            return ctx.fail(f"{counts[source]} {source.replace('_', ' ')}s used; at most {limit} allowed.", "Use fewer methods of that kind.")
    price = _booking_price(ctx)
    paid = sum(p["amount"] for p in pays)
    if price is not None and paid != price:
        return ctx.fail(f"The payments add up to {paid} but the booking costs {price}.", f"Make the amounts add up to {price}.")
    return None


@predicate(
    "booking_bags_counted",
    clause="book.baggage",
    on_fail=Verdict.REVISE,
    tools=("book_reservation",),
    reads=("users.{user_id}",),
)
def booking_bags_counted(ctx: GateContext) -> Failure | None:
    """Paid bags = total bags minus the free allowance (membership and cabin) for all passengers."""
    a = ctx.arguments
    user = ctx.read(user_path(a["user_id"]))
    free = FREE_BAGS.get(user.get("membership"), FREE_BAGS["regular"]).get(a["cabin"], 0) * len(a.get("passengers") or [])
    expected = max(0, a["total_baggages"] - free)
    if a["nonfree_baggages"] != expected:
        return ctx.fail(
            f"{a['total_baggages']} bags with {free} free ({user.get('membership')} member, {a['cabin']}) means {expected} paid bags, not {a['nonfree_baggages']}.",
            f"Set nonfree_baggages to {expected}.",
        )
    return None


# ---------------------------------------------------------------------------- flight and cabin changes


def _is_flight_change(ctx: GateContext, res: dict[str, Any]) -> bool:
    return _keys(ctx.arguments["flights"]) != _keys(res["flights"])


@predicate(
    "flight_change_not_basic_economy",
    clause="change.basic-economy",
    on_fail=Verdict.BLOCK,
    tools=("update_reservation_flights",),
    reads=("reservations.{reservation_id}",),
)
def flight_change_not_basic_economy(ctx: GateContext) -> Failure | None:
    """Basic economy flights cannot be changed (a cabin change alone is allowed)."""
    res = _reservation(ctx)
    if res["cabin"] == "basic_economy" and _is_flight_change(ctx, res):
        return ctx.fail(
            f"Reservation {res['reservation_id']} is basic economy; its flights cannot be changed.",
            "Offer a cabin change (same flights) or a cancellation if eligible.",
        )
    return None


@predicate(
    "flight_change_same_route",
    clause="change.same-route",
    on_fail=Verdict.BLOCK,
    tools=("update_reservation_flights",),
    reads=("reservations.{reservation_id}", "flights.{flight_number}.{date}"),
)
def flight_change_same_route(ctx: GateContext) -> Failure | None:
    """A flight change keeps the origin, the destination and the trip type."""
    res = _reservation(ctx)
    if not _is_flight_change(ctx, res):
        return None
    legs, missing = _itinerary(
        ctx, ctx.arguments["flights"], ctx.arguments["cabin"], res["origin"], res["destination"], res["flight_type"], res
    )
    if missing:
        return missing
    problem = _route_problem(legs, res["origin"], res["destination"], res["flight_type"])
    if problem:
        return ctx.fail(f"The change alters the trip: {problem}.", "Origin, destination and trip type cannot change; a new booking is needed.")
    return None


@predicate(
    "new_flights_available",
    clause="change.flights-available",
    on_fail=Verdict.REVISE,
    tools=("update_reservation_flights",),
    reads=("reservations.{reservation_id}", "flights.{flight_number}.{date}"),
)
def new_flights_available(ctx: GateContext) -> Failure | None:
    """Every new or re-cabined segment was seen available with seats for all passengers."""
    res = _reservation(ctx)
    a = ctx.arguments
    legs, missing = _itinerary(ctx, a["flights"], a["cabin"], res["origin"], res["destination"], res["flight_type"], res)
    if missing:
        return missing
    n = len(res["passengers"])
    for leg in legs:
        if leg["kept"]:
            continue
        if leg["status"] != "available" or (leg["seats"] or 0) < n:
            return ctx.fail(
                f"Flight {leg['flight_number']} on {leg['date']} has no {n} {a['cabin']} seats open.",
                "Offer another flight or cabin.",
            )
    return None


def _update_cost(ctx: GateContext, res: dict[str, Any]) -> float | None:
    """What a bag or flight change charges (negative: a refund); None when a price is unknown."""
    a = ctx.arguments
    if "total_baggages" in a:
        try:
            return BAG_FEE * max(0, a["nonfree_baggages"] - res["nonfree_baggages"])
        except TypeError:
            return None
    return proposals.change_cost(ctx, res, a)


@predicate(
    "update_payment_method",
    clause="change.payment",
    on_fail=Verdict.REVISE,
    tools=("update_reservation_flights", "update_reservation_baggages"),
    reads=("reservations.{reservation_id}", "users.{user_id}"),
)
def update_payment_method(ctx: GateContext) -> Failure | None:
    """A change is paid with one saved credit card or gift card (never a certificate); a gift card
    must cover the amount due. The reservation's own original credit card, or its gift card for a
    refund, needs no profile: the reservation shows it was the customer's."""
    res = _reservation(ctx)
    pid = ctx.arguments["payment_id"]
    original = {p.get("payment_id") for p in res.get("payment_history") or []}
    if pid in original and pid.startswith("credit_card_"):
        return None
    if pid in original and pid.startswith("gift_card_"):
        cost = _update_cost(ctx, res)
        if cost is not None and cost <= 0:
            return None
    user = ctx.read(user_path(res["user_id"]))
    method = (user.get("payment_methods") or {}).get(pid)
    if method is None:
        return ctx.fail(f"{pid} is not a payment method in the customer's profile.", "Use a saved credit card or gift card.")
    if method["source"] not in ("credit_card", "gift_card"):
        return ctx.fail(f"{pid} is a {method['source'].replace('_', ' ')}; changes are paid by credit card or gift card.", "Ask for a saved credit card or gift card.")
    cost = _update_cost(ctx, res)
    if method["source"] == "gift_card" and cost is not None and method["amount"] < cost:
        return ctx.fail(f"Gift card {pid} holds {_num(method['amount'])}, less than the {cost} due.", "Use another gift card or a credit card.")
    return None


@predicate(
    "cabin_change_nothing_flown",
    clause="change.cabin-not-flown",
    on_fail=Verdict.BLOCK,
    tools=("update_reservation_flights",),
    reads=("reservations.{reservation_id}", "flights.{flight_number}.{date}"),
)
def cabin_change_nothing_flown(ctx: GateContext) -> Failure | None:
    """The cabin changes only if no segment has been flown, and then for the whole reservation."""
    res = _reservation(ctx)
    if ctx.arguments["cabin"] == res["cabin"]:
        return None
    flown = _flown_segments(ctx, res["flights"])
    if flown:
        return ctx.fail(f"The cabin cannot change: {', '.join(flown)} has already been flown.", "Keep the cabin as it is.")
    return None


# ---------------------------------------------------------------------------- bags and passengers


@predicate(
    "baggage_only_added",
    clause="baggage.add-only",
    on_fail=Verdict.BLOCK,
    tools=("update_reservation_baggages",),
    reads=("reservations.{reservation_id}",),
)
def baggage_only_added(ctx: GateContext) -> Failure | None:
    """Bags can be added, never removed."""
    res = _reservation(ctx)
    a = ctx.arguments
    if a["total_baggages"] < res["total_baggages"] or a["nonfree_baggages"] < res["nonfree_baggages"]:
        return ctx.fail(
            f"Reservation {res['reservation_id']} has {res['total_baggages']} bags ({res['nonfree_baggages']} paid); they cannot be reduced.",
            "Bags can only be added.",
        )
    return None


@predicate(
    "bags_priced_from_allowance",
    clause="baggage.add-only",
    on_fail=Verdict.REVISE,
    tools=("update_reservation_baggages",),
    reads=("reservations.{reservation_id}", "users.<owner>"),
)
def bags_priced_from_allowance(ctx: GateContext) -> Failure | None:
    """Added bags are priced from the free allowance (the owner's membership, the cabin, every
    passenger), and bags already paid stay paid."""
    res = _reservation(ctx)
    owner = ctx.read(user_path(res["user_id"]))
    free = FREE_BAGS.get(owner.get("membership"), FREE_BAGS["regular"]).get(res["cabin"], 0) * len(res["passengers"])
    a = ctx.arguments
    expected = max(res["nonfree_baggages"], a["total_baggages"] - free)
    if a["nonfree_baggages"] != expected:
        return ctx.fail(
            f"{a['total_baggages']} bags on {res['reservation_id']} with {free} free ({owner.get('membership')} member, "
            f"{res['cabin']}, {len(res['passengers'])} passengers) means {expected} paid bags, not {a['nonfree_baggages']}.",
            f"Set nonfree_baggages to {expected}.",
        )
    return None


@predicate(
    "bags_the_customer_wants",
    clause="book.baggage",
    on_fail=Verdict.REVISE,
    tools=("book_reservation", "update_reservation_baggages"),
    reads=("said.bags_needed", "reservations.{reservation_id}"),
)
def bags_the_customer_wants(ctx: GateContext) -> Failure | None:
    """No checked bags the customer said they don't need."""
    a = ctx.arguments
    if ctx.stated("bags_needed") != "no":
        return None
    before = _reservation(ctx)["total_baggages"] if "reservation_id" in a else 0
    if a["total_baggages"] > before:
        said = next((e.quote for e in ctx.reads if e.path == "said.bags_needed" and e.quote), "")
        return ctx.inferred(
            f"The customer said they don't need checked bags{f' ({said!r})' if said else ''}, but the call adds {a['total_baggages'] - before}.",
            "Book no bags the customer did not ask for; ask them if unsure.",
        )
    return None


@predicate(
    "same_passenger_count",
    clause="passengers.same-count",
    on_fail=Verdict.BLOCK,
    tools=("update_reservation_passengers",),
    reads=("reservations.{reservation_id}",),
)
def same_passenger_count(ctx: GateContext) -> Failure | None:
    """Passenger details can change, their number cannot."""
    res = _reservation(ctx)
    old, new = len(res["passengers"]), len(ctx.arguments.get("passengers") or [])
    if old != new:
        return ctx.fail(f"Reservation {res['reservation_id']} has {old} passengers; the update lists {new}.", "The number of passengers cannot change.")
    return None


# ---------------------------------------------------------------------------- cancellation


@predicate(
    "cancel_reason_asked",
    clause="cancel.reason",
    on_fail=Verdict.REVISE,
    tools=("cancel_reservation",),
    reads=("answers.cancel_reason.{reservation_id}", "said.cancel_reason"),
)
def cancel_reason_asked(ctx: GateContext) -> Failure | None:
    """The customer gave a reason for cancelling: their answer to the system's question (consent
    mode card), else what the free-text reader found in their words."""
    rid = ctx.arguments["reservation_id"]
    if ctx.asks_questions:
        if ctx.answered("cancel_reason", rid) is None:
            return ctx.question("cancel_reason", rid, f"The customer has not said why they want to cancel {rid}.")
        return None
    if ctx.stated("cancel_reason", rid) is None:
        return ctx.inferred("The customer has not said why they want to cancel.", "Ask the customer for the reason of the cancellation.")
    return None


@predicate(
    "cancel_nothing_flown",
    clause="cancel.not-flown",
    on_fail=Verdict.BLOCK,
    tools=("cancel_reservation",),
    reads=("reservations.{reservation_id}", "flights.{flight_number}.{date}"),
)
def cancel_nothing_flown(ctx: GateContext) -> Failure | None:
    """A reservation with a segment already flown cannot be cancelled (transfer instead)."""
    res = _reservation(ctx)
    flown = _flown_segments(ctx, res["flights"])
    if flown:
        return ctx.fail(f"{', '.join(flown)} has already been flown; the trip cannot be cancelled.", "Transfer to a human agent if the customer insists.")
    return None


@predicate(
    "cancel_eligible",
    clause="cancel.eligibility",
    on_fail=Verdict.BLOCK,
    tools=("cancel_reservation",),
    reads=("reservations.{reservation_id}", "flights.{flight_number}.{date}", "answers.cancel_reason.{reservation_id}", "said.cancel_reason"),
)
def cancel_eligible(ctx: GateContext) -> Failure | None:
    """Booked in the last 24 hours, or an airline-cancelled segment, or business, or insured with a
    health or weather reason."""
    res = _reservation(ctx)
    now = datetime.fromisoformat(ctx.context("now", ctx.session.now or NOW))
    if datetime.fromisoformat(res["created_at"]) >= now - timedelta(hours=24):
        return None
    if res["cabin"] == "business":
        return None
    rid = res["reservation_id"]
    asked = ctx.asks_questions and res["insurance"] == "yes"
    reason = ctx.answered("cancel_reason", rid) if asked else ctx.stated("cancel_reason", rid)
    if res["insurance"] == "yes" and reason in ("health", "weather"):
        return None
    if asked and reason is None:
        return ctx.question(
            "cancel_reason", rid, f"Reservation {rid} is insured: whether it can be cancelled depends on the customer's reason, which they have not given."
        )
    if res["insurance"] == "yes" and reason is None:
        return ctx.inferred(
            f"Reservation {res['reservation_id']} is insured: whether it can be cancelled depends on the customer's reason, which they have not given.",
            "Ask the customer why they want to cancel.",
            verdict=Verdict.REVISE,
        )
    for seg in res["flights"]:
        if _status(ctx, seg["flight_number"], seg["date"]) == "cancelled":
            return None
    why = (
        f"it was booked at {res['created_at']} (more than 24 hours ago), is {res['cabin']}, "
        + ("is insured but the reason is not health or weather" if res["insurance"] == "yes" else "has no insurance")
        + ", and no flight of it was cancelled by the airline"
    )
    # insured, it hinges on the reason: the customer's answer to the question (observed), or what
    # the free-text reader took from their words (inferred)
    refuse = ctx.inferred if res["insurance"] == "yes" and not asked else ctx.fail
    return refuse(f"Reservation {res['reservation_id']} cannot be cancelled: {why}.", "Explain the rule; offer a change instead if allowed.")


# ---------------------------------------------------------------------------- compensation


def _disruptions(ctx: GateContext, user_id: str) -> tuple[list[tuple[dict[str, Any], str, tuple[str, str]]], Failure | None]:
    """(reservation, 'cancelled'|'delayed', segment) for the user's observed reservations."""
    found = []
    unknown: SuggestedCall | None = None
    mine: list[dict[str, Any]] = []
    for path in ctx.ledger.where("reservations.", "user_id", user_id):  # theirs only, as evidence
        res = _any_observed(ctx, path)
        mine.append(res)
        for seg in res.get("flights", []):
            entry = _any_observed(ctx, flight_path(seg["flight_number"], seg["date"]))
            if entry is None:
                unknown = unknown or SuggestedCall(name="get_flight_status", arguments={"flight_number": seg["flight_number"], "date": seg["date"]})
                continue
            if entry.get("status") in ("cancelled", "delayed"):
                found.append((res, entry["status"], (seg["flight_number"], seg["date"])))
    if not found and len(mine) == 1:
        # A changed itinerary no longer lists the disrupted flight; with one reservation in view,
        # a disrupted flight read in this conversation and absent from it belongs to it.
        listed = {(s["flight_number"], s["date"]) for s in mine[0].get("flights", [])}
        disrupted = ctx.ledger.where("flights.", "status", "cancelled") + ctx.ledger.where("flights.", "status", "delayed")
        for path in sorted(disrupted):
            entry = _any_observed(ctx, path)
            number, date = path.split(".")[1:3]
            if (number, date) not in listed:
                found.append((mine[0], entry["status"], (number, date)))
    if found:
        return found, None
    if unknown is not None:
        return [], GateContext.needs("The status of the customer's flights has not been checked.", unknown)
    if not mine:
        profile = ctx.peek(user_path(user_id)) or {}
        unread = [r for r in profile.get("reservations") or [] if ctx.ledger.get(reservation_path(r)) is None]
        if unread:
            return [], GateContext.needs(
                "None of the customer's reservations has been read, so no disruption is on record.",
                SuggestedCall(name="get_reservation_details", arguments={"reservation_id": unread[0]}),
            )
        return [], Failure(
            "None of the customer's reservations has been read, so no disruption is on record.",
            "Read the reservation the complaint is about with get_reservation_details.",
            verdict=Verdict.REVISE,
        )
    return [], Failure("No flight of the customer's reservations was cancelled or delayed.", "No compensation applies.")


@predicate("compensation_requested", clause="certificate.requested", on_fail=Verdict.BLOCK, tools=("send_certificate",), reads=("said.compensation_requested",))
def compensation_requested(ctx: GateContext) -> Failure | None:
    """A certificate is sent only when the customer asks for compensation."""
    if not ctx.stated("compensation_requested"):
        return ctx.inferred("The customer has not asked for compensation.", "Do not offer compensation unprompted.")
    return None


@predicate(
    "certificate_eligible",
    clause="certificate.eligibility",
    on_fail=Verdict.BLOCK,
    tools=("send_certificate",),
    reads=("users.{user_id}", "reservations.{reservation_id}", "flights.{flight_number}.{date}"),
)
def certificate_eligible(ctx: GateContext) -> Failure | None:
    """Silver and gold members, insured reservations and business reservations may be compensated
    for a cancelled or delayed flight; regular members in (basic) economy without insurance not."""
    user_id = ctx.arguments["user_id"]
    user = ctx.read(user_path(user_id))
    found, problem = _disruptions(ctx, user_id)
    if problem:
        return problem
    if user.get("membership") in ("silver", "gold"):
        return None
    if any(res.get("insurance") == "yes" or res.get("cabin") == "business" for res, _, _ in found):
        return None
    return ctx.fail(
        f"{user_id} is a regular member and the disrupted reservation is uninsured and not business; no certificate applies.",
        "Apologise; compensation is not available here.",
    )


@predicate(
    "certificate_amount",
    clause="certificate.amount",
    on_fail=Verdict.REVISE,
    tools=("send_certificate",),
    reads=("reservations.{reservation_id}", "flights.{flight_number}.{date}"),
)
def certificate_amount(ctx: GateContext) -> Failure | None:
    """$100 per passenger for a cancelled flight; $50 per passenger for a delayed one, once the
    requested change or cancellation is done."""
    found, problem = _disruptions(ctx, ctx.arguments["user_id"])
    if problem:
        return problem
    amount = ctx.arguments["amount"]
    allowed, pending = set(), set()
    for res, kind, seg in found:
        n = len(res["passengers"])
        if kind == "cancelled":
            allowed.add(100 * n)
            continue
        ev = ctx.recall(reservation_path(res["reservation_id"]))
        done = ev.stale or res.get("status") == "cancelled" or seg not in _keys(res["flights"])
        (allowed if done else pending).add(50 * n)
    if amount in allowed:
        return None
    if amount in pending:
        return ctx.fail(
            "Compensation for a delay is given after the customer's change or cancellation is done.",
            "Make the change or cancellation first, read the reservation again, then send the certificate.",
        )
    expect = ", ".join(_num(x) for x in sorted(allowed | pending)) or "none"
    return ctx.fail(f"A certificate of {_num(amount)} does not match the rule (expected: {expect}).", f"Send exactly {expect}.")


PREDICATES: list[Predicate] = [
    customer_identified,
    one_customer,
    reservation_owned,
    acts_for_identified_customer,
    explicit_confirmation,
    reservation_not_cancelled,
    booking_passengers_valid,
    booking_flights_available,
    booking_payment_valid,
    booking_bags_counted,
    flight_change_not_basic_economy,
    flight_change_same_route,
    new_flights_available,
    update_payment_method,
    cabin_change_nothing_flown,
    baggage_only_added,
    bags_priced_from_allowance,
    bags_the_customer_wants,
    same_passenger_count,
    cancel_reason_asked,
    cancel_nothing_flown,
    cancel_eligible,
    compensation_requested,
    certificate_eligible,
    certificate_amount,
]

# Clauses of policy.md no predicate names, each with why (`ledger-tui check-domain` reads this).
NOT_GATED: dict[str, str] = {
    "evidence.fresh": (
        "No predicate of its own: the gate applies it inside every predicate, whose ctx.read answers "
        "REVISE for a record never read or made stale by a write; an agent's words built on an unread "
        "record are text, which the gate does not check."
    ),
}


# ---------------------------------------------------------------------------- what the customer says

RESERVATION_ID = r"\b(?!HAT\d)[A-Z0-9]{6}\b"

STATEMENTS: list[Statement] = [
    keyword_statement(
        "cancel_reason",
        "Why the customer wants to cancel: health, weather, airline_cancelled, change_of_plan or other.",
        {
            "health": ("sick", "ill", "illness", "unwell", "not feeling well", "not feeling good", "feel awful",
                       "feeling poorly", "under the weather", "came down with", "health", "hospital", "hospitalized",
                       "hospitalised", "medical", "surgery", "operation", "injury", "injured", "doctor", "pregnant",
                       "pregnancy", "covid", "fever", "flu", "infection", "food poisoning", "migraine", "broke my",
                       "broken", "fracture", "fractured", "diagnosed", "diagnosis", "emergency room", "my condition",
                       "malade", "sante", "enfermo", "enferma", "salud", "krank", "gesundheit", "malato", "malata",
                       "salute", "doente", "saude"),
            "weather": ("weather", "storm", "hurricane", "blizzard", "snowstorm", "snow", "flood", "flooding",
                        "tornado", "typhoon", "cyclone", "volcanic", "heavy rain", "ice storm", "wildfire",
                        "meteo", "tempete", "tormenta", "huracan", "clima", "wetter", "sturm", "unwetter",
                        "tempesta", "maltempo", "tempestade"),
            "airline_cancelled": ("flight was cancelled", "flight got cancelled", "flight has been cancelled",
                                  "you cancelled", "airline cancelled", "cancelled by the airline",
                                  "flight was canceled", "airline canceled", "you canceled", "cancelled my flight",
                                  "canceled my flight"),
            "change_of_plan": ("change of plan", "change of plans", "plans changed", "plans have changed",
                               "plans fell through", "no longer need", "do not need", "can not make it",
                               "no longer going", "not going anymore", "not traveling anymore",
                               "not travelling anymore", "no longer traveling", "no longer travelling",
                               "changed my mind", "trip is off", "trip got cancelled", "event was cancelled",
                               "rescheduled", "postponed", "called off", "will not be going", "can not go",
                               "changement de programme", "cambio de planes", "planaenderung", "planänderung",
                               "cambio di programma", "mudanca de planos"),
            "other": ("personal reasons", "personal reason", "other reason", "other reasons", "family reasons",
                      "rather not say", "prefer not to say", "by accident", "by mistake", "booked the wrong",
                      "wrong date", "wrong flight", "double booked", "found a cheaper", "found a better",
                      "can not afford", "too expensive", "financial", "work", "family"),
        },
        records=RESERVATION_ID,
        examples={"health": "I'm not feeling well.", "weather": "There is a big storm coming.",
                  "airline_cancelled": "The airline cancelled my flight.", "change_of_plan": "My plans changed.",
                  "other": "It's for personal reasons."},
        neutral="other",
    ),  # fmt: skip
    keyword_statement(
        "compensation_requested",
        "The customer asked to be compensated (certificate, voucher, compensation).",
        {"yes": ("compensation", "compensate", "compensated", "voucher", "for the trouble", "for the inconvenience",
                 "make up for", "make it up", "make this right", "goodwill", "gesture", "indemnisation",
                 "dedommagement", "compensacion", "entschadigung", "entschaedigung", "risarcimento",
                 "indennizzo", "compensacao")},
        examples={"yes": "I would like some compensation for this."},
    ),  # fmt: skip
    keyword_statement(
        "bags_needed",
        "Whether the customer wants checked bags; no when they say they don't need any.",
        {
            "no": ("carry-on only", "only carry-on", "only a carry-on", "just a carry-on", "only hand luggage",
                   "just hand luggage", "only a backpack", "just a backpack"),
            "yes": ("bag", "bags", "checked bag", "checked bags", "luggage", "baggage", "suitcase", "suitcases",
                    "bagage", "bagages", "valise", "maleta", "maletas", "equipaje", "koffer", "gepack", "gepaeck",
                    "valigia", "valigie", "bagaglio", "bagagli", "mala", "malas", "bagagem"),
        },
        negated="no",
    ),  # fmt: skip
]


# ---------------------------------------------------------------------------- what the system asks

# The policy's reasons for a cancellation (cancel.reason), plus "another reason, or not sure": in
# consent mode card the system asks this of each reservation cancelled, and the answer decides
# cancel.eligibility for an insured one. The phrases name a choice in a reply (questions.py).
QUESTIONS: list[Question] = [
    Question(
        key="cancel_reason",
        record="reservation_id",
        ask="Why do you want to cancel reservation {record}?",
        tools=("cancel_reservation",),
        choices=(
            Choice("change_of_plan", "My plans changed: I no longer need this trip", said_as(
                "change of plan|change of plans|changed plans|plans changed|my plans changed|plans have changed|"
                "plans fell through|changed my mind|no longer need|do not need|not need it|not needed|"
                "can not make it|cannot make it|will not make it|no longer going|not going anymore|"
                "no longer travelling|no longer traveling|not travelling anymore|not traveling anymore|trip is off|"
                "trip got cancelled|event was cancelled|meeting is cancelled|called off|postponed|rescheduled",
                "changement de programme|changement de plans|cambio de planes|cambio de plan|planaenderung|"
                "plane haben sich geandert|cambio di programma|cambio di piani|mudanca de planos|mudanca de plano",
            )),
            Choice("airline_cancelled", "The airline cancelled one of its flights", said_as(
                "airline cancelled|airline canceled|cancelled by the airline|canceled by the airline|"
                "flight was cancelled|flight was canceled|flight got cancelled|flight got canceled|"
                "flight has been cancelled|flight has been canceled|you cancelled|you canceled|"
                "cancelled my flight|canceled my flight|your cancellation|the airline cancelled",
                "vol annule|vuelo cancelado|flug wurde gestrichen|flug annulliert|volo cancellato|voo cancelado",
            )),
            Choice("health", "Health: I or someone travelling on it is ill or injured", said_as(
                "health|health reason|health reasons|sick|ill|illness|unwell|not feeling well|feeling unwell|"
                "came down with|flu|covid|fever|infection|food poisoning|injured|injury|hurt|broke my|broken leg|"
                "broken arm|fracture|fractured|surgery|hospital|hospitalized|hospitalised|medical|diagnosed|"
                "pregnant|pregnancy|migraine",
                "malade|sante|blesse|enfermo|enferma|salud|herido|krank|gesundheit|verletzt|malato|malata|salute|"
                "ferito|doente|saude|ferido",
            )),
            Choice("weather", "Bad weather where it flies", said_as(
                "weather|bad weather|storm|hurricane|blizzard|snowstorm|snow storm|flood|flooding|tornado|typhoon|"
                "cyclone|heavy rain|ice storm|wildfire|volcanic",
                "meteo|tempete|ouragan|tormenta|huracan|mal tiempo|clima|wetter|sturm|unwetter|orkan|tempesta|"
                "maltempo|uragano|tempestade|furacao|mau tempo",
            )),
            Choice("other", "Another reason, or I'd rather not say", said_as(
                "other|another reason|other reason|other reasons|something else|personal reasons|personal reason|"
                "rather not say|prefer not to say|not sure|unsure|do not know|no idea|by mistake|by accident|"
                "booked the wrong|wrong date|wrong flight|double booked|found a cheaper|found a better|too expensive|"
                "can not afford|cannot afford",
                "autre|autre raison|raisons personnelles|otra|otra razon|motivos personales|andere|anderer grund|"
                "personliche grunde|altro|altra ragione|motivi personali|outro|outra razao|motivos pessoais",
            )),
        ),
    ),
]  # fmt: skip

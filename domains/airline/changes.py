"""The airline policy on changing a reservation: flights and cabin (`change.*` in `policy.md`),
then bags (`baggage.add-only`, `book.baggage`) and passengers (`passengers.same-count`).

One predicate per rule, each naming its clause; `predicates.py` lists them in PREDICATES.
"""

from __future__ import annotations

from typing import Any

from ledger_tui.domains.airline import proposals
from ledger_tui.domains.airline.facts import (
    FREE_BAGS,
    as_written,
    flight_keys,
    flown_segments,
    itinerary,
    read_reservation,
    route_problem,
)
from ledger_tui.domains.airline.paths import user_path
from ledger_tui.domains.airline.tools import BAG_FEE
from ledger_tui.engine.events import Verdict
from ledger_tui.engine.gate import Failure, GateContext, predicate

# ---------------------------------------------------------------------------- flight and cabin changes


def _is_flight_change(ctx: GateContext, res: dict[str, Any]) -> bool:
    return flight_keys(ctx.arguments["flights"]) != flight_keys(res["flights"])


@predicate(
    "flight_change_not_basic_economy",
    clause="change.basic-economy",
    on_fail=Verdict.BLOCK,
    tools=("update_reservation_flights",),
    reads=("reservations.{reservation_id}",),
)
def flight_change_not_basic_economy(ctx: GateContext) -> Failure | None:
    """Basic economy flights cannot be changed (a cabin change alone is allowed)."""
    res = read_reservation(ctx)
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
    res = read_reservation(ctx)
    if not _is_flight_change(ctx, res):
        return None
    legs, missing = itinerary(
        ctx, ctx.arguments["flights"], ctx.arguments["cabin"], res["origin"], res["destination"], res["flight_type"], res
    )
    if missing:
        return missing
    problem = route_problem(legs, res["origin"], res["destination"], res["flight_type"])
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
    res = read_reservation(ctx)
    a = ctx.arguments
    legs, missing = itinerary(ctx, a["flights"], a["cabin"], res["origin"], res["destination"], res["flight_type"], res)
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
    res = read_reservation(ctx)
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
        return ctx.fail(f"Gift card {pid} holds {as_written(method['amount'])}, less than the {cost} due.", "Use another gift card or a credit card.")
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
    res = read_reservation(ctx)
    if ctx.arguments["cabin"] == res["cabin"]:
        return None
    flown = flown_segments(ctx, res["flights"])
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
    res = read_reservation(ctx)
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
    res = read_reservation(ctx)
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
    before = read_reservation(ctx)["total_baggages"] if "reservation_id" in a else 0
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
    res = read_reservation(ctx)
    old, new = len(res["passengers"]), len(ctx.arguments.get("passengers") or [])
    if old != new:
        return ctx.fail(f"Reservation {res['reservation_id']} has {old} passengers; the update lists {new}.", "The number of passengers cannot change.")
    return None

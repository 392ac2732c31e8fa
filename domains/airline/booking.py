"""The airline policy on booking (`book.*` in `policy.md`): passengers, flights, payment, bags.

One predicate per rule, each naming its clause; `predicates.py` lists them in PREDICATES.
"""

from __future__ import annotations

import re

from ledger_tui.domains.airline.facts import FREE_BAGS, as_written, itinerary, route_problem
from ledger_tui.domains.airline.paths import flight_path, user_path
from ledger_tui.domains.airline.tools import BAG_FEE, INSURANCE_FEE
from ledger_tui.engine.events import Verdict
from ledger_tui.engine.gate import Failure, GateContext, predicate

DOB = re.compile(r"^\d{4}-\d{2}-\d{2}$")


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
    legs, missing = itinerary(ctx, a["flights"], a["cabin"], a["origin"], a["destination"], a["flight_type"])
    if missing:
        return missing
    problem = route_problem(legs, a["origin"], a["destination"], a["flight_type"])
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
                f"{pay['payment_id']} holds {as_written(method['amount'])}, less than the {as_written(pay['amount'])} charged to it.",
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

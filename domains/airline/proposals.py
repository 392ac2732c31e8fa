"""What the agent must say before each airline write: the `Terms` its proposal names.

A proposal names the action, the reservation (its id, or a route, flight or date that only that
reservation of the customer has; "your reservation" when they have one), and what the customer
needs to know to say yes: new flights and dates only when flights change, the new cabin, the bag
count, the passengers' names, the amounts, and the payment method unless it is the reservation's
original one (in its customer-facing form: "Visa ending in 9431", "your gift card").
"""

from __future__ import annotations

from typing import Any, Iterable

from ledger_tui.domains.airline.paths import reservation_path, user_path
from ledger_tui.engine import rules
from ledger_tui.engine.conversation import consent
from ledger_tui.engine.conversation.consent import Detail, RecordRef, Terms
from ledger_tui.engine.gate import GateContext

RESERVATION_NOUNS = ("reservation", "booking", "trip", "flight", "flights", "itinerary", "ticket")
CABINS = {"basic_economy": ("basic economy",), "economy": ("economy",), "business": ("business",)}


def _describe(res: Any) -> Iterable[Any]:
    if not isinstance(res, dict):
        return ()
    forms: list[Any] = [res.get("origin"), res.get("destination")]
    for seg in res.get("flights") or []:
        forms.extend((seg.get("flight_number"), seg.get("date")))
    return [f for f in forms if f]


def reservation_ref(ctx: GateContext, reservation_id: str) -> RecordRef:
    profile = ctx.peek(user_path(ctx.session.user_id)) if ctx.session.user_id else None
    listed = (profile or {}).get("reservations") if isinstance(profile, dict) else None
    records = rules.customer_records(ctx, "reservations.", "user_id", listed)
    return rules.record_ref("reservation", reservation_id, RESERVATION_NOUNS, records, _describe)


def _original_payment(res: dict[str, Any] | None) -> str | None:
    history = (res or {}).get("payment_history") or []
    return history[0].get("payment_id") if history else None


def _payment(ctx: GateContext, user_id: str | None, payment_id: str, original: str | None) -> Detail | None:
    """The payment detail; reads the profile only when the proposal does not give the raw id."""
    if payment_id == original:
        return None
    if consent.mentions(ctx.session.last_assistant_text, payment_id, ctx.session.year) or not user_id:
        return Detail("the payment method", (payment_id,))
    profile = ctx.latest(user_path(user_id))
    return rules.payment_detail(payment_id, profile.get("payment_methods") or {}, original)


def _flight_details(flights: Iterable[dict[str, Any]], kept: set[tuple[str, str]]) -> list[Detail]:
    out = []
    for f in flights:
        key = (f.get("flight_number"), f.get("date"))
        if key in kept:
            continue
        out.append(Detail(f"flight {key[0]}", (key[0],)))
        out.append(Detail(f"the date of {key[0]} ({key[1]})", (key[1],)))
    return out


def _reservation(ctx: GateContext) -> dict[str, Any]:
    return ctx.latest(reservation_path(ctx.arguments["reservation_id"]))


def cancel_terms(ctx: GateContext) -> Terms:
    rid = ctx.arguments["reservation_id"]
    return Terms(("cancel",), f"cancel reservation {rid}", reservation_ref(ctx, rid))


def flights_terms(ctx: GateContext) -> Terms:
    a = ctx.arguments
    res = _reservation(ctx)
    current = {(f["flight_number"], f["date"]) for f in res.get("flights") or []}
    details = _flight_details(a.get("flights") or [], current)
    if a.get("cabin") != res.get("cabin"):
        details.append(Detail("the new cabin", CABINS.get(a.get("cabin"), (a.get("cabin"),))))
    pay = _payment(ctx, res.get("user_id"), a.get("payment_id", ""), _original_payment(res))
    if pay is not None:
        details.append(pay)
    cost = change_cost(ctx, res, a)
    if cost is not None and cost > 0:
        details.append(Detail(f"what the change costs (${cost:g})", (cost,)))
    what = "change the flights of" if details and any(d.label.startswith("flight") for d in details) else "change the cabin of"
    return Terms(("change",), f"{what} reservation {a['reservation_id']}", reservation_ref(ctx, a["reservation_id"]), tuple(details))


def change_cost(ctx: GateContext, res: dict[str, Any], a: dict[str, Any]) -> float | None:
    """What a flight or cabin change charges the customer (negative: a refund), from the prices
    searched; None when a new segment's price was not seen."""
    cabin = a.get("cabin")
    old = {(f["flight_number"], f["date"]): f for f in res.get("flights") or []}
    total = 0.0
    for f in a.get("flights") or []:
        key = (f.get("flight_number"), f.get("date"))
        if key in old and cabin == res.get("cabin"):
            total += old[key].get("price", 0)
            continue
        entry = ctx.peek(f"flights.{key[0]}.{key[1]}") or {}
        price = (entry.get("prices") or {}).get(cabin)
        if price is None:
            return None
        total += price
    n = len(res.get("passengers") or [])
    return (total - sum(f.get("price", 0) for f in old.values())) * n


def baggage_terms(ctx: GateContext) -> Terms:
    a = ctx.arguments
    res = _reservation(ctx)
    total = a.get("total_baggages")
    added = total - res.get("total_baggages", 0) if isinstance(total, (int, float)) else None
    details = [Detail(f"the number of bags ({total})", bag_forms(total, added))]
    if a.get("nonfree_baggages", 0) > res.get("nonfree_baggages", 0):
        pay = _payment(ctx, res.get("user_id"), a.get("payment_id", ""), _original_payment(res))
        if pay is not None:
            details.append(pay)
    return Terms(("bags",), f"set the bags of reservation {a['reservation_id']} to {total}", reservation_ref(ctx, a["reservation_id"]), tuple(details))


def passengers_terms(ctx: GateContext) -> Terms:
    a = ctx.arguments
    res = _reservation(ctx)
    before = {(p.get("first_name"), p.get("last_name"), p.get("dob")) for p in res.get("passengers") or []}
    details = []
    for p in a.get("passengers") or []:
        if (p.get("first_name"), p.get("last_name"), p.get("dob")) in before:
            continue
        name = f"{p.get('first_name', '')} {p.get('last_name', '')}".strip()
        details.append(Detail(f"passenger {name}", (name,)))
        if p.get("dob"):
            details.append(Detail(f"{name}'s date of birth", (p["dob"],)))
    return Terms(("passengers", "change"), f"update the passengers of reservation {a['reservation_id']}", reservation_ref(ctx, a["reservation_id"]), tuple(details))


def booking_terms(ctx: GateContext) -> Terms:
    a = ctx.arguments
    details = _flight_details(a.get("flights") or [], set())
    details.append(Detail("the cabin", CABINS.get(a.get("cabin"), (a.get("cabin"),))))
    for p in a.get("passengers") or []:
        name = f"{p.get('first_name', '')} {p.get('last_name', '')}".strip()
        details.append(Detail(f"passenger {name}", (name,)))
    pays = a.get("payment_methods") or []
    amounts = [p.get("amount") for p in pays if isinstance(p, dict)]
    total = sum(x for x in amounts if isinstance(x, (int, float)))
    details.append(Detail(f"the price ({consent_number(total)})", (total, *amounts)))
    for pay in pays:
        detail = _payment(ctx, a.get("user_id"), pay.get("payment_id", ""), None)
        if detail is not None:
            details.append(detail)
    if a.get("total_baggages"):
        details.append(Detail(f"the number of bags ({a['total_baggages']})", bag_forms(a["total_baggages"], None)))
    if a.get("insurance") == "yes":
        details.append(Detail("the travel insurance", ("insurance",)))
    route = f"{a.get('origin')} to {a.get('destination')}"
    return Terms(("book",), f"book {route}", None, tuple(details))


def certificate_terms(ctx: GateContext) -> Terms:
    amount = ctx.arguments.get("amount")
    return Terms(("certificate",), f"send a certificate of {consent_number(amount)}", None, (Detail("the amount", (amount,)),))


BAG_WORDS = ("bags", "bag", "checked bags", "checked bag", "suitcase", "suitcases", "pieces of luggage")


def bag_forms(total: Any, added: Any) -> tuple[str, ...]:
    """A bag count as it is said: "5 bags", "5 checked bags", "5 in total"; an addition as "2 more
    bags", "add 2". A bare number is not enough: it occurs in dates, prices and ids."""
    n = consent_number(total).lstrip("$")
    forms = [f"{n} {w}" for w in BAG_WORDS] + [f"{n} in total", f"total of {n}", f"{n} total"]
    if isinstance(added, (int, float)) and added > 0:
        k = consent_number(added).lstrip("$")
        forms += [f"{k} {q} {w}" for q in ("more", "additional", "extra", "new") for w in BAG_WORDS]
        forms += [f"add {k}", f"adding {k}"]
    return tuple(forms)


def consent_number(value: Any) -> str:
    return f"${value:g}" if isinstance(value, (int, float)) else str(value)


terms = consent.by_tool({
    "cancel_reservation": cancel_terms,
    "update_reservation_flights": flights_terms,
    "update_reservation_baggages": baggage_terms,
    "update_reservation_passengers": passengers_terms,
    "book_reservation": booking_terms,
    "send_certificate": certificate_terms,
})


# ----------------------------------------------------------------------------- the card
# What a confirmation card shows of each write (cards.py): every argument, as the customer knows it.


def _methods(ctx: GateContext, user_id: str | None) -> dict[str, Any]:
    profile = ctx.ledger.value(user_path(user_id)) if user_id else None
    return (profile or {}).get("payment_methods") or {} if isinstance(profile, dict) else {}


def _trip(res: dict[str, Any]) -> str:
    legs = ", ".join(f"{f.get('flight_number')} on {f.get('date')}" for f in res.get("flights") or [])
    people = len(res.get("passengers") or [])
    cabin = (res.get("cabin") or "").replace("_", " ")
    return f"{res.get('origin')} to {res.get('destination')} ({legs}; {cabin}, {people} passenger{'s' if people != 1 else ''})"


def _legs(flights: Iterable[dict[str, Any]]) -> str:
    return ", ".join(f"{f.get('flight_number')} on {f.get('date')}" for f in flights) or "none"


def _money(amount: Any) -> str:
    return f"${amount:,.2f}".replace(".00", "") if isinstance(amount, (int, float)) else str(amount)


def cancel_card(ctx: GateContext) -> list[str]:
    res = ctx.ledger.value(reservation_path(ctx.arguments["reservation_id"])) or {}
    lines = [f"Trip: {_trip(res)}"] if res else []
    paid = sum(p.get("amount", 0) for p in res.get("payment_history") or [] if isinstance(p, dict))
    methods = _methods(ctx, res.get("user_id"))
    back = ", ".join(sorted({rules.payment_shown(p.get("payment_id", ""), methods) for p in res.get("payment_history") or [] if isinstance(p, dict)}))
    lines.append(f"Refund: {_money(paid)} to {back}" if back else "Refund: to the original payment method")
    return lines


def flights_card(ctx: GateContext) -> list[str]:
    a = ctx.arguments
    res = ctx.ledger.value(reservation_path(a["reservation_id"])) or {}
    lines = [f"Now: {_trip(res)}"] if res else []
    lines.append(f"New flights: {_legs(a.get('flights') or [])}")
    lines.append(f"Cabin: {str(a.get('cabin')).replace('_', ' ')}")
    cost = change_cost(ctx, res, a) if res else None
    pay = rules.payment_shown(a.get("payment_id", ""), _methods(ctx, res.get("user_id")))
    if cost is None:
        lines.append(f"Payment or refund of the difference: {pay}")
    elif cost >= 0:
        lines.append(f"Cost: {_money(cost)}, paid with {pay}")
    else:
        lines.append(f"Refund: {_money(-cost)} to {pay}")
    return lines


def baggage_card(ctx: GateContext) -> list[str]:
    a = ctx.arguments
    res = ctx.ledger.value(reservation_path(a["reservation_id"])) or {}
    before = res.get("total_baggages")
    lines = [f"Bags: {a.get('total_baggages')} in total" + (f" (now {before})" if before is not None else "") + f", {a.get('nonfree_baggages')} of them paid"]
    lines.append(f"Payment: {rules.payment_shown(a.get('payment_id', ''), _methods(ctx, res.get('user_id')))}")
    return lines


def passengers_card(ctx: GateContext) -> list[str]:
    people = "; ".join(f"{p.get('first_name', '')} {p.get('last_name', '')} (born {p.get('dob', '?')})".strip() for p in ctx.arguments.get("passengers") or [])
    return [f"Passengers: {people or 'none'}"]


def booking_card(ctx: GateContext) -> list[str]:
    a = ctx.arguments
    methods = _methods(ctx, a.get("user_id"))
    people = "; ".join(f"{p.get('first_name', '')} {p.get('last_name', '')} (born {p.get('dob', '?')})".strip() for p in a.get("passengers") or [])
    paying = "; ".join(f"{_money(p.get('amount'))} with {rules.payment_shown(p.get('payment_id', ''), methods)}" for p in a.get("payment_methods") or [])
    return [
        f"Trip: {a.get('origin')} to {a.get('destination')}, {str(a.get('flight_type')).replace('_', ' ')}",
        f"Flights: {_legs(a.get('flights') or [])}",
        f"Cabin: {str(a.get('cabin')).replace('_', ' ')}",
        f"Passengers: {people or 'none'}",
        f"Bags: {a.get('total_baggages')} in total, {a.get('nonfree_baggages')} of them paid",
        f"Travel insurance: {a.get('insurance')}",
        f"Payment: {paying or 'none'}",
    ]


def certificate_card(ctx: GateContext) -> list[str]:
    return [f"Amount: {_money(ctx.arguments.get('amount'))}, as a travel certificate to account {ctx.arguments.get('user_id')}"]


card = consent.by_tool({
    "cancel_reservation": cancel_card,
    "update_reservation_flights": flights_card,
    "update_reservation_baggages": baggage_card,
    "update_reservation_passengers": passengers_card,
    "book_reservation": booking_card,
    "send_certificate": certificate_card,
})

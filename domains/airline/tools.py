"""The airline tools, with τ²-bench's names, arguments, effects and quirks (tau2-compat §2).

The tools check only what the benchmark's tools check; every policy rule (24-hour window, basic
economy, membership, flown segments…) is the gate's job. Quirks kept on purpose because they decide
the evaluation digest: certificates are consumed whole on booking, cancelling only appends negated
payments, seats are only ever taken by booking, kept segments keep their old price, and baggage
counts and the cabin of an update are stored exactly as the caller sent them.

The texts the model reads are τ²-bench's, word for word ("User <id> not found", "Not enough seats
on flight <n>", a bare `'<key>'` where the reference's dict lookup fails). Every write argument
runs as given, as the reference's unchecked Python runs it, so a bad one fails with its words: a
booking builds its records from the arguments (a cabin "first" or a fractional payment amount
fails with pydantic's message for `Reservation` / `Payment`), a paid-bag count that is not a
number fails in the arithmetic ("unsupported operand type(s) for +=: 'int' and 'str'"), an
update's cabin that is not text fails looking up its seats. Where the reference would instead
*store* a value of the wrong type (an update's `total_baggages` "3", a `true` paid-bag count, a
non-text cabin with no flights to look up, a passenger list that is not one but has the right
length), the tool raises `MistypedArgument` once every check of the reference has passed, and the
environment refuses it as it refuses any mistyped write argument ("invalid arguments for …");
nothing changes.
"""

from __future__ import annotations

from typing import Annotated, Any, Union

from pydantic import BaseModel, ConfigDict, StrictFloat, StrictInt, WithJsonSchema

from ledger_tui.domains.airline import paths
from ledger_tui.domains.airline.schema import (
    CABINS,
    AirportCode,
    CabinClass,
    Certificate,
    DirectFlight,
    Flight,
    FlightDateAvailable,
    FlightDB,
    FlightInfo,
    FlightType,
    Insurance,
    Passenger,
    Payment,
    Reservation,
    ReservationFlight,
    User,
)
from ledger_tui.engine.store.cow import edit, look, thaw
from ledger_tui.engine.domain import MistypedArgument, Tool, ToolError
from ledger_tui.engine.generic_tools import calculate_tool, transfer_tool

NOW = "2024-05-15T15:00:00"
NEW_RESERVATION_IDS = ("HATHAT", "HATHAU", "HATHAV")
NEW_CERTIFICATE_IDS = ("certificate_3221322", "certificate_3221323", "certificate_3221324")
INSURANCE_FEE = 30
BAG_FEE = 50

AIRPORTS: tuple[tuple[str, str], ...] = (
    ("SFO", "San Francisco"), ("JFK", "New York"), ("LAX", "Los Angeles"), ("ORD", "Chicago"),
    ("DFW", "Dallas"), ("DEN", "Denver"), ("SEA", "Seattle"), ("ATL", "Atlanta"), ("MIA", "Miami"),
    ("BOS", "Boston"), ("PHX", "Phoenix"), ("IAH", "Houston"), ("LAS", "Las Vegas"),
    ("MCO", "Orlando"), ("EWR", "Newark"), ("CLT", "Charlotte"), ("MSP", "Minneapolis"),
    ("DTW", "Detroit"), ("PHL", "Philadelphia"), ("LGA", "LaGuardia"),
)  # fmt: skip

# Stored as sent (int stays int, 3.0 stays 3.0): the benchmark assigns these without coercion.
RawInt = Annotated[Union[StrictInt, StrictFloat], WithJsonSchema({"type": "integer"})]
RawCabin = Annotated[str, WithJsonSchema({"type": "string", "enum": list(CABINS)})]


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------------------- argument models


class UserIdArgs(Args):
    user_id: str


class ReservationIdArgs(Args):
    reservation_id: str


class NoArgs(Args):
    pass


class RouteArgs(Args):
    origin: str
    destination: str
    date: str


class FlightStatusArgs(Args):
    flight_number: str
    date: str


class BookArgs(Args):
    user_id: str
    origin: str
    destination: str
    flight_type: FlightType
    cabin: CabinClass
    flights: list[FlightInfo]
    passengers: list[Passenger]
    payment_methods: list[Payment]
    total_baggages: int
    nonfree_baggages: int
    insurance: Insurance


class BaggageArgs(Args):
    reservation_id: str
    total_baggages: RawInt
    nonfree_baggages: RawInt
    payment_id: str


class FlightsArgs(Args):
    reservation_id: str
    cabin: RawCabin
    flights: list[FlightInfo]
    payment_id: str


class PassengersArgs(Args):
    reservation_id: str
    passengers: list[Passenger]


class CertificateArgs(Args):
    user_id: str
    amount: RawInt


# ---------------------------------------------------------------------------- lookups


# A write looks records up with `look` (shared, read-only) for its checks and takes a private copy
# only of what it then changes (`edit`: a reservation's own fields, its payment history, one gift
# card, one date of a flight).


def _user(db: FlightDB, user_id: str) -> User:
    """The user, to look at."""
    try:
        return look(db.users, user_id)
    except KeyError:
        raise ToolError(f"User {user_id} not found") from None


def _reservation(db: FlightDB, reservation_id: str) -> Reservation:
    """The reservation, to look at."""
    try:
        return look(db.reservations, reservation_id)
    except KeyError:
        raise ToolError(f"Reservation {reservation_id} not found") from None


def _flight(db: FlightDB, flight_number: str) -> Flight:
    """The flight, to look at."""
    try:
        return look(db.flights, flight_number)
    except KeyError:
        raise ToolError(f"Flight {flight_number} not found") from None


def _flight_date(db: FlightDB, flight_number: str, date: str) -> Any:
    flight = _flight(db, flight_number)
    if date not in flight.dates:
        raise ToolError(f"Flight {flight_number} not found on date {date}")
    return flight.dates[date]


def _bookable(db: FlightDB, info: FlightInfo, cabin: Any, passengers: int) -> FlightDateAvailable:
    """The date entry of a flight that can take `passengers` more in `cabin` (else an error; a
    cabin that is no key of the seat map fails as the reference's dict lookup does: `'first'`)."""
    entry = _flight_date(db, info.flight_number, info.date)
    if not isinstance(entry, FlightDateAvailable):
        raise ToolError(f"Flight {info.flight_number} not available on date {info.date}")
    if entry.available_seats[cabin] < passengers:
        raise ToolError(f"Not enough seats on flight {info.flight_number}")
    return entry


def _records(values: Any, model: type[BaseModel]) -> Any:
    """A list of JSON objects as `model` records (a missing key fails with pydantic's message);
    anything else as given, as τ²-bench converts a list only when every element is an object."""
    if all(isinstance(value, dict) for value in values):
        return [model(**value) for value in values]
    return values


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _direct(db: FlightDB, date: str, origin: str | None, destination: str | None, leave_after: str | None = None) -> list[DirectFlight]:
    out = []
    for flight in db.flights.values():
        if origin is not None and flight.origin != origin:
            continue
        if destination is not None and flight.destination != destination:
            continue
        entry = flight.dates.get(date)
        if not isinstance(entry, FlightDateAvailable):
            continue
        if leave_after is not None and not flight.scheduled_departure_time_est >= leave_after:
            continue
        out.append(
            DirectFlight(
                flight_number=flight.flight_number,
                origin=flight.origin,
                destination=flight.destination,
                status="available",
                scheduled_departure_time_est=flight.scheduled_departure_time_est,
                scheduled_arrival_time_est=flight.scheduled_arrival_time_est,
                available_seats=entry.available_seats,
                prices=entry.prices,
            )
        )
    return out


def _update_method(user: User, payment_id: str, total: Any) -> Any:
    """The saved method an update's `total` is charged to (refunded to, when negative), once it
    can take it: never a certificate, a gift card only with the balance. Checks only."""
    if payment_id not in user.payment_methods:
        raise ToolError("Payment method not found")
    method = user.payment_methods[payment_id]
    if method.source == "certificate":
        raise ToolError("Certificate cannot be used to update reservation")
    if method.source == "gift_card" and method.amount < total:
        raise ToolError("Gift card balance is not enough")
    return method


def _charge(db: FlightDB, user_id: str, payment_id: str, method: Any, total: Any) -> Payment | None:
    """Debit a gift card by `total` (the user's private copy of it); the history entry to append,
    none for a zero total."""
    if method.source == "gift_card":
        edit(db.users, user_id, "payment_methods", payment_id).amount -= total
    if total != 0:
        return Payment(payment_id=method.id, amount=total)
    return None


# ---------------------------------------------------------------------------- reads


def get_user_details(db: FlightDB, args: UserIdArgs) -> User:
    return _user(db, args.user_id)


def get_reservation_details(db: FlightDB, args: ReservationIdArgs) -> Reservation:
    return _reservation(db, args.reservation_id)


def list_all_airports(db: FlightDB, args: NoArgs) -> list[AirportCode]:
    return [AirportCode(iata=iata, city=city) for iata, city in AIRPORTS]


def search_direct_flight(db: FlightDB, args: RouteArgs) -> list[DirectFlight]:
    return _direct(db, args.date, args.origin, args.destination)


def search_onestop_flight(db: FlightDB, args: RouteArgs) -> list[list[DirectFlight]]:
    """Two-leg connections. The second leg's date keeps the benchmark's quirk: after an overnight
    first leg it is `2024-05-` + (day + 1) without zero padding, so early-month dates never match."""
    results = []
    for first in _direct(db, args.date, args.origin, None):
        first.date = args.date
        if "+1" in first.scheduled_arrival_time_est:
            try:
                second_date = f"2024-05-{int(args.date[-2:]) + 1}"
            except ValueError as exc:
                raise ToolError(str(exc)) from None
        else:
            second_date = args.date
        for second in _direct(db, second_date, first.destination, args.destination, first.scheduled_arrival_time_est):
            second.date = second_date
            results.append([first, second])
    return results


def get_flight_status(db: FlightDB, args: FlightStatusArgs) -> str:
    return _flight_date(db, args.flight_number, args.date).status


# ---------------------------------------------------------------------------- writes


def book_reservation(db: FlightDB, args: BookArgs) -> Reservation:
    """Every argument runs as given: the reservation record is built from them before any flight
    is looked at, so a bad literal or count fails there with pydantic's message, and the price is
    computed from the arguments themselves."""
    flights = _records(args.flights, FlightInfo)
    passengers = _records(args.passengers, Passenger)
    payments = _records(args.payment_methods, Payment)
    user = _user(db, args.user_id)
    reservation_id = next((r for r in NEW_RESERVATION_IDS if r not in db.reservations), None)
    if reservation_id is None:
        raise ToolError("Too many reservations")
    reservation = Reservation(
        reservation_id=reservation_id,
        user_id=args.user_id,
        origin=args.origin,
        destination=args.destination,
        flight_type=args.flight_type,
        cabin=args.cabin,
        flights=[],
        passengers=thaw(passengers),  # a deep copy
        payment_history=thaw(payments),
        created_at=NOW,
        total_baggages=args.total_baggages,
        nonfree_baggages=args.nonfree_baggages,
        insurance=args.insurance,
    )
    count = len(passengers)
    total = 0
    for info in flights:
        flight = _flight(db, info.flight_number)
        entry = _bookable(db, info, args.cabin, count)
        price = entry.prices[args.cabin]  # type: ignore[index]
        reservation.flights.append(
            ReservationFlight(
                flight_number=info.flight_number,
                origin=flight.origin,
                destination=flight.destination,
                date=info.date,
                price=price,
            )
        )
        total += price * count
    if args.insurance == "yes":
        total += INSURANCE_FEE * count
    total += BAG_FEE * args.nonfree_baggages

    for pay in payments:
        if pay.payment_id not in user.payment_methods:
            raise ToolError(f"Payment method {pay.payment_id} not found")
        method = user.payment_methods[pay.payment_id]
        if method.source in ("gift_card", "certificate") and method.amount < pay.amount:
            raise ToolError(f"Not enough balance in payment method {pay.payment_id}")
    paid = sum(p.amount for p in payments)
    if paid != total:
        raise ToolError(f"Payment amount does not add up, total price is {total}, but paid {paid}")

    methods = edit(db.users, args.user_id, "payment_methods", shallow=True)  # entries go, or change
    for pay in payments:
        # the same certificate listed twice is gone after its first entry: a bare KeyError, as in
        # the reference, with the earlier debits kept
        method = methods[pay.payment_id]
        if method.source == "gift_card":
            edit(db.users, args.user_id, "payment_methods", pay.payment_id).amount -= pay.amount
        elif method.source == "certificate":
            del methods[pay.payment_id]
    for info in flights:  # each date entry checked above, now copied and changed
        entry = edit(db.flights, info.flight_number, "dates", info.date)
        entry.available_seats[args.cabin] -= count  # type: ignore[index]
    db.reservations[reservation_id] = reservation
    edit(db.users, args.user_id, "reservations").append(reservation_id)
    return reservation


def cancel_reservation(db: FlightDB, args: ReservationIdArgs) -> Reservation:
    """Append a negated copy of every payment and mark the reservation cancelled (nothing else)."""
    res = _reservation(db, args.reservation_id)
    refunds = [Payment(payment_id=p.payment_id, amount=-p.amount) for p in res.payment_history]
    edit(db.reservations, args.reservation_id, "payment_history", shallow=True).extend(refunds)
    res = edit(db.reservations, args.reservation_id, shallow=True)
    res.status = "cancelled"
    return res


def update_reservation_baggages(db: FlightDB, args: BaggageArgs) -> Reservation:
    res = _reservation(db, args.reservation_id)
    user = _user(db, res.user_id)
    total = BAG_FEE * max(0, args.nonfree_baggages - res.nonfree_baggages)
    method = _update_method(user, args.payment_id, total)
    # stored as given: a count that is not a number is refused (a paid count of another type
    # failed the subtraction already, except `true`)
    for name in ("total_baggages", "nonfree_baggages"):
        if not _is_number(getattr(args, name)):
            raise MistypedArgument(name, "a valid integer")
    payment = _charge(db, res.user_id, args.payment_id, method, total)
    if payment is not None:
        edit(db.reservations, args.reservation_id, "payment_history", shallow=True).append(payment)
    res = edit(db.reservations, args.reservation_id, shallow=True)
    res.total_baggages = args.total_baggages
    res.nonfree_baggages = args.nonfree_baggages
    return res


def update_reservation_flights(db: FlightDB, args: FlightsArgs) -> Reservation:
    """Replace the itinerary. Segments kept in the same cabin keep their stored price and need no
    seat check; every other segment is priced now. No seats move, origin/destination never change."""
    flights = _records(args.flights, FlightInfo)
    res = _reservation(db, args.reservation_id)
    user = _user(db, res.user_id)
    count = len(res.passengers)
    new_flights: list[ReservationFlight] = []
    total = 0
    for info in flights:
        kept = next(
            (
                f
                for f in res.flights
                if f.flight_number == info.flight_number and f.date == info.date and args.cabin == res.cabin
            ),
            None,
        )
        if kept is not None:
            new_flights.append(kept)
            total += kept.price * count
            continue
        flight = _flight(db, info.flight_number)
        entry = _bookable(db, info, args.cabin, count)
        segment = ReservationFlight(
            flight_number=info.flight_number,
            origin=flight.origin,
            destination=flight.destination,
            date=info.date,
            price=entry.prices[args.cabin],  # type: ignore[index]
        )
        new_flights.append(segment)
        total += segment.price * count
    total -= sum(f.price for f in res.flights) * count
    method = _update_method(user, args.payment_id, total)
    if not isinstance(args.cabin, str):  # reached only with no flights: nothing looked it up
        raise MistypedArgument("cabin", "a valid string")
    payment = _charge(db, res.user_id, args.payment_id, method, total)
    if payment is not None:
        edit(db.reservations, args.reservation_id, "payment_history", shallow=True).append(payment)
    res = edit(db.reservations, args.reservation_id, shallow=True)
    res.flights = new_flights  # kept segments may be shared ones: read-only until copied in turn
    res.cabin = args.cabin  # type: ignore[assignment]  # stored raw, as the benchmark does
    return res


def update_reservation_passengers(db: FlightDB, args: PassengersArgs) -> Reservation:
    passengers = _records(args.passengers, Passenger)
    res = _reservation(db, args.reservation_id)
    if len(passengers) != len(res.passengers):
        raise ToolError("Number of passengers does not match")
    if not isinstance(passengers, list) or not all(isinstance(p, Passenger) for p in passengers):
        raise MistypedArgument("passengers", "a valid list of passengers")
    res = edit(db.reservations, args.reservation_id, shallow=True)
    res.passengers = thaw(passengers)
    return res


def send_certificate(db: FlightDB, args: CertificateArgs) -> str:
    """The amount runs as given: the certificate record coerces it (`"100"` → 100.0) or fails with
    pydantic's message; the reply prints it as the caller sent it."""
    user = _user(db, args.user_id)
    for cert_id in NEW_CERTIFICATE_IDS:
        if cert_id not in user.payment_methods:
            certificate = Certificate(source="certificate", id=cert_id, amount=args.amount)
            edit(db.users, args.user_id, "payment_methods", shallow=True)[cert_id] = certificate
            return f"Certificate {cert_id} added to user {args.user_id} with amount {args.amount}."
    raise ToolError("Too many certificates")


# ---------------------------------------------------------------------------- the table

TOOLS: list[Tool] = [
    Tool(
        "book_reservation", "write", BookArgs, book_reservation,
        "Create a new reservation for a user: flights (number and date for every segment), cabin, "
        "passengers, how it is paid (saved payment ids and amounts that add up to the price), "
        "checked bags (total and how many are paid) and whether travel insurance is included.",
        touches=paths.booking_touches,
        # all run as given: the records built from them coerce what τ²-bench stores, or fail as its do
        raw_args=frozenset(BookArgs.model_fields),
    ),
    calculate_tool(),
    Tool(
        "cancel_reservation", "write", ReservationIdArgs, cancel_reservation,
        "Cancel a whole reservation by its id; every payment on it is refunded to its original method.",
        touches=("reservations.{reservation_id}",),
    ),
    Tool(
        "get_reservation_details", "read", ReservationIdArgs, get_reservation_details,
        "Look up a reservation by its six-character id (e.g. 'ZFA04Y'): route, cabin, segments, "
        "passengers, payments, bags, insurance, booking time and status.",
        absorbs=paths.absorb_reservation,
        identifies=paths.identifies_user,
        said=paths.owner_said,
    ),
    Tool(
        "get_user_details", "read", UserIdArgs, get_user_details,
        "Look up a user by user id (e.g. 'mia_li_3668'): profile, saved payment methods, saved "
        "passengers, membership level and reservation ids.",
        absorbs=paths.absorb_user,
        identifies=paths.identifies_user,
        said=paths.owner_said,
    ),
    Tool(
        "list_all_airports", "read", NoArgs, list_all_airports,
        "List the airports the airline serves, as IATA code and city.",
        absorbs=paths.absorb_airports,
    ),
    Tool(
        "search_direct_flight", "read", RouteArgs, search_direct_flight,
        "Find non-stop flights between two airports (IATA codes) on a date (YYYY-MM-DD) that are "
        "open for booking, with seats left and prices per cabin.",
        absorbs=paths.absorb_direct_search,
    ),
    Tool(
        "search_onestop_flight", "read", RouteArgs, search_onestop_flight,
        "Find connections with one stop between two airports (IATA codes) departing on a date "
        "(YYYY-MM-DD); each result is a pair of legs with seats and prices per cabin.",
        absorbs=paths.absorb_onestop_search,
    ),
    Tool(
        "send_certificate", "write", CertificateArgs, send_certificate,
        "Add a travel certificate of the given amount (dollars) to a user's payment methods, as "
        "compensation.",
        touches=("users.{user_id}",),
        raw_args=frozenset({"user_id", "amount"}),  # the certificate record coerces the amount
    ),
    transfer_tool(
        "Hand the conversation to a human agent with a short summary of the customer's issue. Use it "
        "only when the customer asks for a human or the request cannot be handled with these tools "
        "under the policy.",
    ),
    Tool(
        "update_reservation_baggages", "write", BaggageArgs, update_reservation_baggages,
        "Set a reservation's checked bags (new total and new number of paid bags); extra paid bags "
        "are charged to a saved payment method.",
        touches=paths.update_touches,
        # run as given so τ²-bench's checks fail in its words; a count it would store as given
        # (a total that is not a number, a `true`) is refused once they pass
        raw_args=frozenset(BaggageArgs.model_fields),
    ),
    Tool(
        "update_reservation_flights", "write", FlightsArgs, update_reservation_flights,
        "Replace a reservation's itinerary and/or cabin. List EVERY segment of the new itinerary, "
        "unchanged ones included; the price difference is charged to (or refunded to) a saved "
        "payment method.",
        touches=paths.update_touches,
        raw_args=frozenset(FlightsArgs.model_fields),
    ),
    Tool(
        "update_reservation_passengers", "write", PassengersArgs, update_reservation_passengers,
        "Replace the passengers' names and dates of birth on a reservation (same number of passengers).",
        touches=("reservations.{reservation_id}",),
        raw_args=frozenset(PassengersArgs.model_fields),
    ),
    Tool(
        "get_flight_status", "read", FlightStatusArgs, get_flight_status,
        "The status of a flight on a date: available, on time, delayed, flying, landed or cancelled.",
        absorbs=paths.absorb_flight_status,
    ),
]  # fmt: skip

"""The airline database: flights with per-date status, users with payment methods, reservations.

Field names, types and declaration order follow τ²-bench's airline data so that its own `db.json`
loads unchanged and a digest computed here equals the benchmark's (see tau2-compat §2.1): the top
level is strict, records drop unknown keys, a flight date's entry is chosen by its `status`, a
payment method by its `source`, and gift-card / certificate amounts are floats.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

FlightType = Literal["round_trip", "one_way"]
CabinClass = Literal["business", "economy", "basic_economy"]
Insurance = Literal["yes", "no"]
Membership = Literal["gold", "silver", "regular"]

CABINS: tuple[str, ...] = ("basic_economy", "economy", "business")


class AirportCode(BaseModel):
    iata: str
    city: str


class Name(BaseModel):
    first_name: str
    last_name: str


class Address(BaseModel):
    address1: str
    address2: str | None = None
    city: str
    country: str
    state: str
    zip: str


class Payment(BaseModel):
    """One entry of a reservation's payment history (negative amount = refund)."""

    payment_id: str
    amount: int


class CreditCard(BaseModel):
    source: Literal["credit_card"]
    id: str
    brand: str
    last_four: str


class GiftCard(BaseModel):
    source: Literal["gift_card"]
    id: str
    amount: float


class Certificate(BaseModel):
    source: Literal["certificate"]
    id: str
    amount: float


PaymentMethod = Annotated[Union[CreditCard, GiftCard, Certificate], Field(discriminator="source")]


class Passenger(BaseModel):
    first_name: str
    last_name: str
    dob: str


class FlightDateAvailable(BaseModel):
    status: Literal["available"]
    available_seats: dict[CabinClass, int]
    prices: dict[CabinClass, int]


class FlightDateLanded(BaseModel):
    status: Literal["landed"]
    actual_departure_time_est: str
    actual_arrival_time_est: str


class FlightDateCancelled(BaseModel):
    status: Literal["cancelled"]


class FlightDateDelayed(BaseModel):
    status: Literal["delayed"]
    estimated_departure_time_est: str
    estimated_arrival_time_est: str


class FlightDateFlying(BaseModel):
    status: Literal["flying"]
    actual_departure_time_est: str
    estimated_arrival_time_est: str


class FlightDateOnTime(BaseModel):
    status: Literal["on time"]
    estimated_departure_time_est: str
    estimated_arrival_time_est: str


FlightDateStatus = Annotated[
    Union[
        FlightDateAvailable,
        FlightDateLanded,
        FlightDateCancelled,
        FlightDateDelayed,
        FlightDateFlying,
        FlightDateOnTime,
    ],
    Field(discriminator="status"),
]


class Flight(BaseModel):
    flight_number: str
    origin: str
    destination: str
    scheduled_departure_time_est: str
    scheduled_arrival_time_est: str  # may end in "+1" (arrives the next day)
    dates: dict[str, FlightDateStatus]


class DirectFlight(BaseModel):
    """A search result leg (output only)."""

    flight_number: str
    origin: str
    destination: str
    status: Literal["available"]
    scheduled_departure_time_est: str
    scheduled_arrival_time_est: str
    date: str | None = None
    available_seats: dict[CabinClass, int]
    prices: dict[CabinClass, int]


class ReservationFlight(BaseModel):
    flight_number: str
    origin: str
    destination: str
    date: str
    price: int  # per passenger


class FlightInfo(BaseModel):
    """A (flight number, date) pair, as tools receive it."""

    flight_number: str
    date: str


class User(BaseModel):
    user_id: str
    name: Name
    address: Address
    email: str
    dob: str
    payment_methods: dict[str, PaymentMethod]
    saved_passengers: list[Passenger]
    membership: Membership
    reservations: list[str]


class Reservation(BaseModel):
    reservation_id: str
    user_id: str
    origin: str
    destination: str
    flight_type: FlightType
    cabin: CabinClass
    flights: list[ReservationFlight]
    passengers: list[Passenger]
    payment_history: list[Payment]
    created_at: str
    total_baggages: int
    nonfree_baggages: int
    insurance: Insurance
    status: Literal["cancelled"] | None = None


class FlightDB(BaseModel):
    """The whole airline database (strict at the top, like τ²-bench's)."""

    model_config = ConfigDict(extra="forbid")

    flights: dict[str, Flight]
    users: dict[str, User]
    reservations: dict[str, Reservation]


# Maps keyed by their records' own ids: a load whose key names another record is refused.
KEYED: tuple[tuple[str, str], ...] = (
    ("flights", "flight_number"),
    ("users", "user_id"),
    ("users.*.payment_methods", "id"),
    ("reservations", "reservation_id"),
)

"""The airline database's building blocks, drawn from a seeded random generator: flights with
statuses consistent with the clock (2024-05-15 15:00 EST: past dates landed or cancelled, today's
flights landed / flying / on time / delayed by their schedule, future dates open for booking with a
few disruptions near today), users with their payment methods, reservations, their ids and the
route network. `generate.py` assembles the whole database from them and from the situations the
tasks need (`scenarios.py`)."""

from __future__ import annotations

import math
import random
import string
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
SEED = 2024_05_15
NOW = datetime(2024, 5, 15, 15, 0, 0)
TODAY = "2024-05-15"
DATES = [f"2024-05-{d:02d}" for d in range(1, 31)]
RESERVED_RESERVATION_IDS = {"HATHAT", "HATHAU", "HATHAV"}
RESERVED_PAYMENT_NUMBERS = {3221322, 3221323, 3221324}
CABINS = ("basic_economy", "economy", "business")
PRICE_RANGE = {"basic_economy": (50, 100), "economy": (100, 200), "business": (200, 500)}
FREE_BAGS = {
    "regular": {"basic_economy": 0, "economy": 1, "business": 2},
    "silver": {"basic_economy": 1, "economy": 2, "business": 3},
    "gold": {"basic_economy": 2, "economy": 3, "business": 4},
}

# airport -> (longitude, latitude), for plausible flight times
AIRPORTS: dict[str, tuple[float, float]] = {
    "SFO": (-122.4, 37.6), "JFK": (-73.8, 40.6), "LAX": (-118.4, 33.9), "ORD": (-87.9, 42.0),
    "DFW": (-97.0, 32.9), "DEN": (-104.7, 39.9), "SEA": (-122.3, 47.4), "ATL": (-84.4, 33.6),
    "MIA": (-80.3, 25.8), "BOS": (-71.0, 42.4), "PHX": (-112.0, 33.4), "IAH": (-95.3, 30.0),
    "LAS": (-115.2, 36.1), "MCO": (-81.3, 28.4), "EWR": (-74.2, 40.7), "CLT": (-80.9, 35.2),
    "MSP": (-93.2, 44.9), "DTW": (-83.4, 42.2), "PHL": (-75.2, 39.9), "LGA": (-73.9, 40.8),
}  # fmt: skip

FIRST = (
    "Mia Noah Olivia Liam Emma Ethan Ava Lucas Sophia Mason Isabella Logan Amelia James Harper "
    "Aarav Yusuf Chen Mei Priya Ravi Fatima Omar Lena Mateo Sofia Diego Valentina Hiroshi Yuki "
    "Anya Ivan Chloe Daniel Grace Samuel Zoe Elijah Nora Henry Aisha Kwame Ingrid Lars Esther "
    "Raul Juan Lucia Ahmed Layla Arjun Kenji Sara Tomas Rosa Victor Ines Omar Anna Mohamed"
).split()
LAST = (
    "Li Smith Garcia Kim Nguyen Patel Johnson Brown Rossi Muller Silva Santos Ahmed Khan Lopez "
    "Wilson Davis Martin Thomas Moore Taylor Anderson Jackson White Harris Clark Lewis Walker "
    "Young Hall Allen Wright Scott Green Baker Adams Nelson Hill Campbell Mitchell Roberts Carter "
    "Phillips Evans Turner Torres Parker Collins Edwards Stewart Sanchez Morris Rogers Reed Cook "
    "Morgan Bell Murphy Bailey Rivera Cooper Richardson Cox Howard Ward Peterson Gray Ramos Kovacs"
).split()
STREETS = (
    "Maple Avenue, Oak Street, Cedar Lane, Pine Road, Elm Drive, Willow Way, Birch Court, "
    "Lakeview Drive, Sunset Boulevard, River Road, Hillcrest Avenue, Park Place, Main Street, "
    "Highland Avenue, Forest Lane, Meadow Street, Spring Street, Chestnut Street"
).split(", ")
CITIES = (
    ("San Francisco", "CA", "94"), ("New York", "NY", "10"), ("Los Angeles", "CA", "90"),
    ("Chicago", "IL", "60"), ("Dallas", "TX", "75"), ("Denver", "CO", "80"), ("Seattle", "WA", "98"),
    ("Atlanta", "GA", "30"), ("Miami", "FL", "33"), ("Boston", "MA", "02"), ("Phoenix", "AZ", "85"),
    ("Houston", "TX", "77"), ("Las Vegas", "NV", "89"), ("Orlando", "FL", "32"), ("Newark", "NJ", "07"),
    ("Charlotte", "NC", "28"), ("Minneapolis", "MN", "55"), ("Detroit", "MI", "48"),
    ("Philadelphia", "PA", "19"), ("Austin", "TX", "78"), ("Portland", "OR", "97"), ("San Diego", "CA", "92"),
)  # fmt: skip
BRANDS = ("visa", "mastercard", "amex", "discover")


def _ts(dt: datetime) -> str:
    return dt.strftime("%Y-%m-%dT%H:%M:%S")


def _day(date: str) -> datetime:
    return datetime.strptime(date, "%Y-%m-%d")


# ---------------------------------------------------------------------------- flights


def _duration_minutes(a: str, b: str) -> int:
    (x1, y1), (x2, y2) = AIRPORTS[a], AIRPORTS[b]
    dist = math.hypot((x1 - x2) * math.cos(math.radians((y1 + y2) / 2)), y1 - y2)
    return max(60, int(round((45 + dist * 8.5) / 30.0)) * 30)


def _date_entry(rng: random.Random, date: str, dep: datetime, minutes: int) -> dict[str, Any]:
    arr = dep + timedelta(minutes=minutes)
    if date < TODAY:
        if rng.random() < 0.03:
            return {"status": "cancelled"}
        adep = dep + timedelta(minutes=rng.randint(-30, 35))
        return {
            "status": "landed",
            "actual_departure_time_est": _ts(adep),
            "actual_arrival_time_est": _ts(adep + timedelta(minutes=minutes + rng.randint(-25, 25))),
        }
    if date == TODAY:
        if arr <= NOW:
            adep = dep + timedelta(minutes=rng.randint(-20, 25))
            return {
                "status": "landed",
                "actual_departure_time_est": _ts(adep),
                "actual_arrival_time_est": _ts(min(NOW - timedelta(minutes=5), adep + timedelta(minutes=minutes))),
            }
        if dep <= NOW:
            adep = dep + timedelta(minutes=rng.randint(-10, 20))
            return {
                "status": "flying",
                "actual_departure_time_est": _ts(adep),
                "estimated_arrival_time_est": _ts(adep + timedelta(minutes=minutes + rng.randint(-10, 15))),
            }
        roll = rng.random()
        if roll < 0.05:
            return {"status": "cancelled"}
        if roll < 0.25:
            late = timedelta(minutes=rng.choice((45, 60, 90, 120, 180, 240)))
            return {"status": "delayed", "estimated_departure_time_est": _ts(dep + late), "estimated_arrival_time_est": _ts(arr + late)}
        return {"status": "on time", "estimated_departure_time_est": _ts(dep), "estimated_arrival_time_est": _ts(arr)}
    days_ahead = (_day(date) - _day(TODAY)).days
    roll = rng.random()
    if days_ahead == 1 and roll < 0.04:
        late = timedelta(minutes=rng.choice((60, 120, 180)))
        return {"status": "delayed", "estimated_departure_time_est": _ts(dep + late), "estimated_arrival_time_est": _ts(arr + late)}
    if days_ahead == 1 and roll < 0.08:
        return {"status": "on time", "estimated_departure_time_est": _ts(dep), "estimated_arrival_time_est": _ts(arr)}
    if roll > (0.97 if days_ahead <= 3 else 0.99):
        return {"status": "cancelled"}
    return {
        "status": "available",
        "available_seats": {c: rng.randint(0, 20) for c in CABINS},
        "prices": {c: rng.randint(*PRICE_RANGE[c]) for c in CABINS},
    }


def make_flights(rng: random.Random) -> dict[str, dict[str, Any]]:
    codes = list(AIRPORTS)
    pairs: list[tuple[str, str]] = []
    for i, a in enumerate(codes):  # a ring keeps every airport connected
        pairs.append((a, codes[(i + 1) % len(codes)]))
    while len(pairs) < 75:
        a, b = rng.sample(codes, 2)
        if (a, b) not in pairs and (b, a) not in pairs:
            pairs.append((a, b))
    routes = [r for a, b in pairs for r in ((a, b), (b, a))]
    specs = []
    for a, b in routes:
        for _ in range(2):
            dep = rng.randrange(5 * 60, 23 * 60 + 1, 30)
            specs.append((a, b, dep, _duration_minutes(a, b)))
    rng.shuffle(specs)
    flights: dict[str, dict[str, Any]] = {}
    for n, (a, b, dep_min, minutes) in enumerate(specs, 1):
        arr_min = dep_min + minutes
        arr = f"{(arr_min // 60) % 24:02d}:{arr_min % 60:02d}:00" + ("+1" if arr_min >= 24 * 60 else "")
        number = f"HAT{n:03d}"
        dates = {}
        for date in DATES:
            dep = _day(date) + timedelta(minutes=dep_min)
            dates[date] = _date_entry(rng, date, dep, minutes)
        flights[number] = {
            "flight_number": number,
            "origin": a,
            "destination": b,
            "scheduled_departure_time_est": f"{dep_min // 60:02d}:{dep_min % 60:02d}:00",
            "scheduled_arrival_time_est": arr,
            "dates": dates,
        }
    return flights


# ---------------------------------------------------------------------------- users


@dataclass
class Ids:
    rng: random.Random
    used: set[str] = field(default_factory=set)

    def payment(self, prefix: str) -> str:
        while True:
            n = self.rng.randint(1_000_000, 9_999_999)
            pid = f"{prefix}_{n}"
            if n not in RESERVED_PAYMENT_NUMBERS and pid not in self.used:
                self.used.add(pid)
                return pid

    def reservation(self) -> str:
        alphabet = string.ascii_uppercase + string.digits
        while True:
            rid = "".join(self.rng.choice(alphabet) for _ in range(6))
            if rid not in self.used and rid not in RESERVED_RESERVATION_IDS:
                self.used.add(rid)
                return rid

    def user(self, first: str, last: str) -> str:
        while True:
            uid = f"{first.lower()}_{last.lower()}_{self.rng.randint(1000, 9999)}"
            if uid not in self.used:
                self.used.add(uid)
                return uid


def _dob(rng: random.Random, young: int = 2004, old: int = 1948) -> str:
    return f"{rng.randint(old, young)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"


def _person(rng: random.Random, last: str | None = None) -> dict[str, str]:
    return {"first_name": rng.choice(FIRST), "last_name": last or rng.choice(LAST), "dob": _dob(rng)}


def credit_card(rng: random.Random, ids: Ids) -> dict[str, Any]:
    return {"source": "credit_card", "id": ids.payment("credit_card"), "brand": rng.choice(BRANDS), "last_four": f"{rng.randint(0, 9999):04d}"}


def gift_card(rng: random.Random, ids: Ids, amount: float | None = None) -> dict[str, Any]:
    return {"source": "gift_card", "id": ids.payment("gift_card"), "amount": float(amount if amount is not None else rng.randint(0, 300))}


def certificate(rng: random.Random, ids: Ids, amount: float | None = None) -> dict[str, Any]:
    return {"source": "certificate", "id": ids.payment("certificate"), "amount": float(amount if amount is not None else rng.choice((100, 150, 200, 250, 500)))}


def make_user(rng: random.Random, ids: Ids) -> dict[str, Any]:
    first, last = rng.choice(FIRST), rng.choice(LAST)
    uid = ids.user(first, last)
    city, state, zip_prefix = rng.choice(CITIES)
    methods = [credit_card(rng, ids) for _ in range(rng.choice((0, 1, 1, 1, 2)))]
    methods += [gift_card(rng, ids) for _ in range(rng.choice((0, 0, 1, 1, 2)))]
    methods += [certificate(rng, ids) for _ in range(rng.choice((0, 0, 0, 1, 2)))]
    if not any(m["source"] in ("credit_card", "gift_card") for m in methods):
        methods.insert(0, credit_card(rng, ids))
    return {
        "user_id": uid,
        "name": {"first_name": first, "last_name": last},
        "address": {
            "address1": f"{rng.randint(10, 9999)} {rng.choice(STREETS)}",
            "address2": rng.choice((None, None, f"Suite {rng.randint(100, 999)}", f"Apt {rng.randint(1, 40)}")),
            "city": city,
            "country": "USA",
            "state": state,
            "zip": f"{zip_prefix}{rng.randint(100, 999)}",
        },
        "email": f"{first.lower()}.{last.lower()}{rng.randint(1, 9999)}@example.com",
        "dob": _dob(rng, 2002, 1950),
        "payment_methods": {m["id"]: m for m in methods},
        "saved_passengers": [_person(rng) for _ in range(rng.choice((0, 1, 1, 2, 3)))],
        "membership": rng.choices(("regular", "silver", "gold"), (45, 30, 25))[0],
        "reservations": [],
    }


# ---------------------------------------------------------------------------- reservations


class Network:
    """Flights indexed by route, to build plausible itineraries."""

    def __init__(self, flights: dict[str, dict[str, Any]]) -> None:
        self.flights = flights
        self.by_route: dict[tuple[str, str], list[str]] = {}
        self.by_origin: dict[str, list[str]] = {}
        for number, f in flights.items():
            self.by_route.setdefault((f["origin"], f["destination"]), []).append(number)
            self.by_origin.setdefault(f["origin"], []).append(number)

    def entry(self, number: str, date: str) -> dict[str, Any]:
        return self.flights[number]["dates"][date]

    def price(self, rng: random.Random, number: str, date: str, cabin: str) -> int:
        entry = self.entry(number, date)
        if entry["status"] == "available":
            return entry["prices"][cabin]
        return rng.randint(*PRICE_RANGE[cabin])

    def itinerary(self, rng: random.Random, origin: str, destination: str, date: str) -> list[str] | None:
        direct = self.by_route.get((origin, destination))
        if direct and rng.random() < 0.7:
            return [rng.choice(direct)]
        options = []
        for first in self.by_origin.get(origin, []):
            f1 = self.flights[first]
            if "+1" in f1["scheduled_arrival_time_est"] or f1["destination"] == destination:
                continue
            for second in self.by_route.get((f1["destination"], destination), []):
                if self.flights[second]["scheduled_departure_time_est"] >= f1["scheduled_arrival_time_est"]:
                    options.append([first, second])
        if options:
            return rng.choice(options)
        return [rng.choice(direct)] if direct else None


def _total(flights: list[dict[str, Any]], pax: int, insurance: str, nonfree: int) -> int:
    return sum(f["price"] for f in flights) * pax + (30 * pax if insurance == "yes" else 0) + 50 * nonfree


def build_reservation(
    rng: random.Random,
    ids: Ids,
    net: Network,
    user: dict[str, Any],
    legs: list[tuple[str, str]],
    *,
    flight_type: str,
    cabin: str,
    passengers: list[dict[str, str]],
    insurance: str,
    created_at: str,
    total_bags: int | None = None,
    payment_id: str | None = None,
    destination: str | None = None,
) -> dict[str, Any]:
    """A reservation over `legs` [(flight number, date)], paid in full, added to the user."""
    segments = [
        {
            "flight_number": n,
            "origin": net.flights[n]["origin"],
            "destination": net.flights[n]["destination"],
            "date": d,
            "price": net.price(rng, n, d, cabin),
        }
        for n, d in legs
    ]
    pax = len(passengers)
    free = FREE_BAGS[user["membership"]][cabin] * pax
    if total_bags is None:
        total_bags = rng.choice((0, 0, 1, 1, 2, 3)) if pax == 1 else rng.randint(0, pax * 2)
    nonfree = max(0, total_bags - free)
    total = _total(segments, pax, insurance, nonfree)
    methods = [m for m in user["payment_methods"].values() if m["source"] in ("credit_card", "gift_card")]
    if payment_id is None:
        payment_id = rng.choice(methods)["id"]
    history = [{"payment_id": payment_id, "amount": total}]
    cards = [m for m in methods if m["source"] == "credit_card"]
    if user["payment_methods"][payment_id]["source"] == "gift_card" and cards and total > 150 and rng.random() < 0.5:
        part = rng.randint(50, total - 50)
        history = [{"payment_id": payment_id, "amount": part}, {"payment_id": cards[0]["id"], "amount": total - part}]
    first, last = legs[0], legs[-1]
    origin = net.flights[first[0]]["origin"]
    if destination is None:
        destination = net.flights[last[0]]["destination"] if flight_type == "one_way" else _turnaround(net, legs)
    rid = ids.reservation()
    reservation = {
        "reservation_id": rid,
        "user_id": user["user_id"],
        "origin": origin,
        "destination": destination,
        "flight_type": flight_type,
        "cabin": cabin,
        "flights": segments,
        "passengers": passengers,
        "payment_history": history,
        "created_at": created_at,
        "total_baggages": total_bags,
        "nonfree_baggages": nonfree,
        "insurance": insurance,
    }
    user["reservations"].append(rid)
    return reservation


def _turnaround(net: Network, legs: list[tuple[str, str]]) -> str:
    """The far end of a round trip: where the outbound half lands."""
    half = max(1, len(legs) // 2)
    return net.flights[legs[half - 1][0]]["destination"]


def _created_before(rng: random.Random, first_date: str, recent: bool = False) -> str:
    departure = _day(first_date) + timedelta(hours=5)
    latest = min(NOW - timedelta(minutes=1), departure - timedelta(hours=2))
    if recent:
        earliest = NOW - timedelta(hours=23, minutes=50)
    else:
        earliest = max(datetime(2024, 4, 28), latest - timedelta(days=20))
        latest = min(latest, NOW - timedelta(hours=25)) if rng.random() < 0.97 else latest
    if latest <= earliest:
        latest = earliest + timedelta(hours=1)
    seconds = int((latest - earliest).total_seconds())
    return _ts(earliest + timedelta(seconds=rng.randint(0, seconds)))


def random_reservation(rng: random.Random, ids: Ids, net: Network, user: dict[str, Any]) -> dict[str, Any] | None:
    codes = list(AIRPORTS)
    origin, destination = rng.sample(codes, 2)
    flight_type = rng.choice(("one_way", "round_trip"))
    out_date = rng.choice(DATES[:-2] if flight_type == "round_trip" else DATES)
    out = net.itinerary(rng, origin, destination, out_date)
    if out is None:
        return None
    legs = [(n, out_date) for n in out]
    if flight_type == "round_trip":
        back_day = min(30, int(out_date[-2:]) + rng.randint(1, 7))
        back_date = f"2024-05-{back_day:02d}"
        back = net.itinerary(rng, destination, origin, back_date)
        if back is None:
            return None
        legs += [(n, back_date) for n in back]
    cabin = rng.choices(CABINS, (30, 45, 25))[0]
    pax = rng.choices((1, 2, 3, 4), (50, 30, 15, 5))[0]
    people = []
    if rng.random() < 0.7:
        people.append({"first_name": user["name"]["first_name"], "last_name": user["name"]["last_name"], "dob": user["dob"]})
    saved = list(user["saved_passengers"])
    rng.shuffle(saved)
    while len(people) < pax:
        people.append(dict(saved.pop()) if saved else _person(rng))
    created = _created_before(rng, out_date, recent=rng.random() < 0.03 and out_date >= TODAY)
    return build_reservation(
        rng, ids, net, user, legs,
        flight_type=flight_type, cabin=cabin, passengers=people,
        insurance=rng.choices(("yes", "no"), (35, 65))[0], created_at=created, destination=destination,
    )  # fmt: skip

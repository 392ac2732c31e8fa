"""Seeded generator of the telecom databases: `python -m ledger_tui.domains.telecom.generate` rewrites
`db.json` (the carrier's records) and `user_db.json` (the phone used by free play and scripts).

The shape and size follow τ²-bench's telecom data (plans, customers, lines, bills, devices) so the
benchmark's task set-ups work here: John Smith, 555-123-2002, line L1002 on a 15 GB plan refuelled
at $2.00/GB, with a draft bill. Everything else (names, addresses, numbers) is this project's own.
The scenario facts tasks rely on are written out below; the seed fills in the incidental details
(IMEIs, usage, timestamps), so the same seed always gives the same bytes.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import random
from pathlib import Path
from typing import Any

from .schema import TelecomDB, TelecomUserDB

HERE = Path(__file__).parent
SEED = 2025

PLANS = [
    # plan_id, name, GB, price per month, refuel price per GB
    ("P1001", "Talk & Text Basic 5", 5.0, 35.0, 3.0),
    ("P1002", "Everyday 15", 15.0, 65.0, 2.0),
    ("P1003", "Unlimited Plus 50", 50.0, 85.0, 1.5),
    ("P1004", "Tablet Connect 10", 10.0, 25.0, 2.5),
    ("P1005", "Watch Companion 2", 2.0, 10.0, 5.0),
]

DEVICE_MODELS = {
    "phone": ["Pixel 8", "Galaxy S23", "iPhone 14", "Moto G Power", "Xperia 10 V", "Nokia G42"],
    "tablet": ["Galaxy Tab S9", "iPad Air (5th gen)"],
    "watch": ["Galaxy Watch 6 LTE", "Apple Watch SE Cellular"],
    "router": ["Nighthawk M6 Hotspot"],
}

# customer facts: id, name, birth date, contact number, address, status, payment method
CUSTOMERS = [
    ("C1001", "John Smith", "1984-09-22", "555-123-2001",
     ("418 Birchwood Lane", "Springfield", "IL", "62704"), "Active", ("Credit Card", "4412", "09/2027")),
    ("C1002", "Priya Raman", "1990-02-11", "555-123-2004",
     ("77 Harbor View Road", "Portland", "ME", "04101"), "Active", ("Debit Card", "0385", "03/2026")),
    ("C1003", "Marcus Oyelaran", "1978-11-30", "555-123-2006",
     ("2150 Canal Street", "New Orleans", "LA", "70112"), "Active", ("PayPal", "7710", "12/2026")),
    ("C1004", "Elena Vasquez-Hart", "1995-07-04", "555-123-2008",
     ("9 Juniper Court", "Boulder", "CO", "80302"), "Active", ("Credit Card", "6021", "11/2025")),
    ("C1005", "Tomasz Wierzbicki", "1969-03-08", "555-123-2010",
     ("31 Orchard Hill Drive", "Madison", "WI", "53703"), "Active", ("Credit Card", "9954", "06/2028")),
]

# lines: id, owner, number, plan, device type, status, roaming, contract end, suspended since, data used
LINES = [
    ("L1001", "C1001", "555-123-2001", "P1001", "phone", "Active", False, "2026-03-31", None, None),
    ("L1002", "C1001", "555-123-2002", "P1002", "phone", "Active", False, "2026-09-30", None, 9.4),
    ("L1003", "C1001", "555-123-2003", "P1004", "tablet", "Active", False, "2025-11-30", None, None),
    ("L1004", "C1002", "555-123-2004", "P1003", "phone", "Suspended", False, "2026-08-31", "2025-02-10", 21.6),
    ("L1005", "C1002", "555-123-2005", "P1005", "watch", "Active", False, "2025-12-31", None, None),
    ("L1006", "C1003", "555-123-2006", "P1002", "phone", "Active", False, "2024-12-31", None, None),
    ("L1007", "C1003", "555-123-2007", "P1001", "phone", "Suspended", False, "2025-01-31", "2025-02-03", 0.8),
    ("L1008", "C1004", "555-123-2008", "P1003", "phone", "Active", True, "2026-05-31", None, None),
    ("L1009", "C1004", "555-123-2009", "P1005", "watch", "Active", False, "2025-10-31", None, None),
    ("L1010", "C1005", "555-123-2010", "P1002", "phone", "Active", False, "2026-01-31", None, 15.3),
    ("L1011", "C1005", "555-123-2011", "P1004", "router", "Pending Activation", False, None, None, 0.0),
]

# bills: id, owner, month (first day), status, extra line items (description, amount)
BILLS = [
    ("B1001", "C1001", "2024-12-01", "Paid", []),
    ("B1002", "C1001", "2025-01-01", "Paid", [("International calls", 4.2)]),
    ("B1003", "C1001", "2025-02-01", "Draft", []),
    ("B1004", "C1002", "2024-12-01", "Paid", []),
    ("B1005", "C1002", "2025-01-01", "Overdue", [("Late payment fee", 7.5)]),
    ("B1006", "C1002", "2025-02-01", "Draft", []),
    ("B1007", "C1003", "2025-01-01", "Paid", [("Goodwill credit", -10.0)]),
    ("B1008", "C1003", "2025-02-01", "Draft", []),
    ("B1009", "C1004", "2024-12-01", "Overdue", [("Roaming data (Mexico)", 18.75)]),
    ("B1010", "C1004", "2025-01-01", "Awaiting Payment", []),
    ("B1011", "C1004", "2025-02-01", "Draft", []),
    ("B1012", "C1005", "2025-01-01", "Issued", []),
]


def _month_end(first: dt.date) -> dt.date:
    nxt = (first.replace(day=28) + dt.timedelta(days=4)).replace(day=1)
    return nxt - dt.timedelta(days=1)


def _imei(rng: random.Random) -> str:
    return "35" + "".join(str(rng.randrange(10)) for _ in range(13))


def _stamp(rng: random.Random, start: dt.date, span_days: int) -> str:
    day = start + dt.timedelta(days=rng.randrange(span_days))
    return f"{day.isoformat()}T{rng.randrange(8, 20):02d}:{rng.randrange(60):02d}:{rng.randrange(60):02d}"


def build(seed: int = SEED) -> dict[str, Any]:
    """The carrier's database as plain JSON, validated against the schema."""
    rng = random.Random(seed)
    plans = {p[0]: p for p in PLANS}
    devices, lines = [], []
    for n, (line_id, owner, number, plan_id, kind, status, roaming, end, since, used) in enumerate(LINES, start=1):
        device_id = f"D{1000 + n}"
        activated = status != "Pending Activation"
        devices.append(
            {
                "device_id": device_id,
                "device_type": kind,
                "model": rng.choice(DEVICE_MODELS[kind]),
                "imei": _imei(rng) if kind in ("phone", "tablet", "watch") else None,
                "is_esim_capable": rng.random() < 0.6,
                "activated": activated,
                "activation_date": _stamp(rng, dt.date(2022, 1, 1), 900) if activated else None,
                "last_esim_transfer_date": None,
            }
        )
        limit = plans[plan_id][2]
        lines.append(
            {
                "line_id": line_id,
                "phone_number": number,
                "status": status,
                "plan_id": plan_id,
                "device_id": device_id,
                "data_used_gb": used if used is not None else round(rng.uniform(0.1, 0.8) * limit, 1),
                "data_refueling_gb": 0.0,
                "roaming_enabled": roaming,
                "contract_end_date": end,
                "last_plan_change_date": (dt.date(2024, 1, 1) + dt.timedelta(days=rng.randrange(300))).isoformat()
                if rng.random() < 0.4
                else None,
                "last_sim_replacement_date": None,
                "suspension_start_date": since,
            }
        )

    bills = []
    for bill_id, owner, month, status, extras in BILLS:
        first = dt.date.fromisoformat(month)
        items = []
        for line in lines:
            if line["line_id"] in [l[0] for l in LINES if l[1] == owner] and line["status"] != "Pending Activation":
                plan = plans[line["plan_id"]]
                items.append(
                    {
                        "description": f"{plan[1]} monthly charge ({line['line_id']})",
                        "amount": plan[3],
                        "date": first.isoformat(),
                        "item_type": "Charge",
                    }
                )
        if status == "Draft":
            items = []  # a draft collects this month's one-time charges only
        for description, amount in extras:
            items.append(
                {
                    "description": description,
                    "amount": amount,
                    "date": (first + dt.timedelta(days=rng.randrange(5, 25))).isoformat(),
                    "item_type": "Credit" if amount < 0 else "Charge",
                }
            )
        bills.append(
            {
                "bill_id": bill_id,
                "customer_id": owner,
                "period_start": first.isoformat(),
                "period_end": _month_end(first).isoformat(),
                "issue_date": first.isoformat(),
                "total_due": round(sum(i["amount"] for i in items), 2),
                "due_date": (first + dt.timedelta(days=14)).isoformat(),
                "line_items": items,
                "status": status,
            }
        )

    customers = []
    for customer_id, name, dob, phone, (street, city, state, zip_code), status, (method, last4, exp) in CUSTOMERS:
        first, last = name.lower().split(" ", 1)
        customers.append(
            {
                "customer_id": customer_id,
                "full_name": name,
                "date_of_birth": dob,
                "email": f"{first}.{last.replace(' ', '').replace('-', '')}{rng.randrange(10, 99)}@example.com",
                "phone_number": phone,
                "address": {"street": street, "city": city, "state": state, "zip_code": zip_code},
                "account_status": status,
                "payment_methods": [{"method_type": method, "account_number_last_4": last4, "expiration_date": exp}],
                "line_ids": [l[0] for l in LINES if l[1] == customer_id],
                "bill_ids": [b[0] for b in BILLS if b[1] == customer_id],
                "created_at": _stamp(rng, dt.date(2019, 1, 1), 1500),
                "last_extension_date": None,
                "goodwill_credit_used_this_year": 10.0 if customer_id == "C1003" else 0.0,
            }
        )

    data = {
        "plans": [
            {"plan_id": p, "name": n, "data_limit_gb": gb, "price_per_month": price, "data_refueling_price_per_gb": refuel}
            for p, n, gb, price, refuel in PLANS
        ],
        "customers": customers,
        "lines": lines,
        "bills": bills,
        "devices": devices,
    }
    TelecomDB.model_validate(data)
    return data


def build_phone(agent_data: dict[str, Any]) -> dict[str, Any]:
    """The phone of free play and scripted sessions: Priya Raman's, on holiday in Portugal, roaming
    switched off on the phone, and her line suspended for an overdue bill (so: no service)."""
    from .device import network_search
    from .schema import TelecomState
    from .state import sync

    state = TelecomState(agent_db=TelecomDB.model_validate(agent_data), user_db=TelecomUserDB())
    state.user_db.surroundings.name = "Priya Raman"
    state.user_db.surroundings.phone_number = "555-123-2004"
    state.user_db.surroundings.is_abroad = True
    state.user_db.device.battery_level = 64
    sync(state)
    network_search(state.user_db)
    return state.user_db.model_dump(mode="json")


def write(seed: int = SEED, folder: Path = HERE) -> None:
    data = build(seed)
    (folder / "db.json").write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    user = build_phone(data)
    (folder / "user_db.json").write_text(json.dumps(user, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description="Rewrite domains/telecom/db.json and user_db.json.")
    parser.add_argument("--seed", type=int, default=SEED)
    write(parser.parse_args().seed)


if __name__ == "__main__":
    main()

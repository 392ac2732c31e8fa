"""Seeded generator of the airline database (`python -m ledger_tui.domains.airline.generate`).

It writes `db.json` in τ²-bench's format and size (300 flights over May 2024, 500 users, 2,000
reservations), the random part drawn with the building blocks of `parts.py`, and *plants* the
situations the tasks need on dedicated users (`scenarios.py`), then writes `tasks.json` from them,
so ids and amounts in the tasks always match the data. Same seed, same bytes.
"""

from __future__ import annotations

import json
import random
from typing import Any

from ledger_tui.domains.airline.parts import HERE, SEED, Ids, Network, make_flights, make_user, random_reservation
from ledger_tui.domains.airline.scenarios import build_tasks, plant

__all__ = ["HERE", "SEED", "generate", "main"]


# ---------------------------------------------------------------------------- the whole db


def generate(seed: int = SEED) -> tuple[dict[str, Any], dict[str, Any]]:
    """(db, planted): the database and the planted scenarios the tasks are built on."""
    rng = random.Random(seed)
    flights = make_flights(rng)
    ids = Ids(rng)
    users_list = [make_user(rng, ids) for _ in range(500)]
    net = Network(flights)
    planted, scenario_reservations = plant(rng, ids, net, users_list)
    scenario_users = {s["user_id"] for s in planted.values()} | {
        s.get("other_user_id") for s in planted.values() if s.get("other_user_id")
    }
    pool = [u for u in users_list if u["user_id"] not in scenario_users]
    reservations: list[dict[str, Any]] = []
    while len(reservations) + len(scenario_reservations) < 2000:
        res = random_reservation(rng, ids, net, rng.choice(pool))
        if res is not None:
            reservations.append(res)
    for res in scenario_reservations:
        reservations.insert(rng.randint(0, len(reservations)), res)
    db = {
        "flights": flights,
        "users": {u["user_id"]: u for u in users_list},
        "reservations": {r["reservation_id"]: r for r in reservations},
    }
    return db, planted


def main() -> None:
    db, planted = generate()
    (HERE / "db.json").write_text(json.dumps(db, indent=1) + "\n", encoding="utf-8")
    tasks = build_tasks(db, planted)
    (HERE / "tasks.json").write_text(json.dumps(tasks, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()

"""The shipped airline scripts play through the real loop with the verdicts they advertise."""

from __future__ import annotations

import asyncio

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.engine.events import Refusal
from ledger_tui.engine.agents.script import load_script
from ledger_tui.testing import decisions as gate_decisions
from ledger_tui.testing import play_script

DOMAIN = load_domain("airline")
SCRIPTS = DOMAIN.folder / "scripts"


async def play(name: str):
    return await play_script(DOMAIN, SCRIPTS / name)


def decisions(session) -> list[tuple[str, str, list[str]]]:
    return gate_decisions(session.events)


def test_ineligible_cancellation_is_blocked_after_a_yes():
    session = asyncio.run(play("cancel_blocked.json"))
    assert decisions(session) == [("cancel_reservation", "BLOCK", ["cancel_eligible"])]
    assert any(isinstance(e, Refusal) for e in session.events)
    res = session.env.db.reservations["VY0QX8"]
    assert res.status is None and len(res.payment_history) == 1


def test_cancellation_is_revised_for_a_missing_read_and_yes_then_allowed():
    session = asyncio.run(play("cancel_allowed.json"))
    (first, verdict, failed), second = decisions(session)
    assert (first, verdict) == ("cancel_reservation", "REVISE")
    assert {"record_owned_by_customer", "explicit_confirmation"} <= set(failed)
    assert second == ("cancel_reservation", "ALLOW", [])
    res = session.env.db.reservations["633IZT"]
    assert res.status == "cancelled" and [p.amount for p in res.payment_history] == [100, -100]


@pytest.mark.parametrize("path", sorted(SCRIPTS.glob("*.json")), ids=lambda p: p.stem)
def test_every_script_is_for_this_domain(path):
    assert load_script(path).domain == "airline"

"""The shipped retail scripts play through the real loop with the verdicts they advertise."""

from __future__ import annotations

import asyncio

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.engine.events import Refusal
from ledger_tui.engine.agents.script import load_script
from ledger_tui.testing import decisions as gate_decisions
from ledger_tui.testing import play_script

DOMAIN = load_domain("retail")
SCRIPTS = DOMAIN.folder / "scripts"


async def play(name: str):
    return await play_script(DOMAIN, SCRIPTS / name)


def decisions(session) -> list[tuple[str, str, list[str]]]:
    return gate_decisions(session.events)


def test_wrong_refund_method_is_revised_then_the_original_is_allowed():
    session = asyncio.run(play("refund_revise_then_allow.json"))
    assert decisions(session) == [
        ("return_delivered_order_items", "REVISE", ["refund_to_original_or_gift_card"]),
        ("return_delivered_order_items", "ALLOW", []),
    ]
    order = session.env.db.orders["#W5018104"]
    assert (order.status, order.return_payment_method_id) == ("return requested", "credit_card_6736274")


def test_address_change_on_modified_order_is_blocked_and_profile_change_allowed():
    session = asyncio.run(play("blocked_address_change_after_item_change.json"))
    assert decisions(session) == [
        ("modify_pending_order_address", "BLOCK", ["order_status_pending"]),
        ("modify_user_address", "ALLOW", []),
    ]
    assert any(isinstance(e, Refusal) for e in session.events)
    db = session.env.db
    assert db.orders["#W3042004"].address.zip == "75290"
    assert db.users["hiro_howard_2247"].address.zip == "75204"


@pytest.mark.parametrize("path", sorted(SCRIPTS.glob("*.json")), ids=lambda p: p.stem)
def test_every_script_is_for_this_domain(path):
    assert load_script(path).domain == "retail"

"""A stop whose failed checks include a broken rule and checks that only lack a read is a violation
everywhere it is shown, and the reads it also lacks are listed with it, not hidden: a return asked
for on a pending retail order whose customer's payment methods were never read."""

from __future__ import annotations

import importlib

from textual.widgets import Static

from ledger_tui.engine.events import GateDecided
from ledger_tui.engine.model.models import ScriptedModel
from ledger_tui.engine.session import Session, drain
from ledger_tui.engine.store.trajectories import write_trajectory
from ledger_tui.ui.app import make_app
from ledger_tui.ui.screens.why import WhyScreen
from ledger_tui.ui.widgets.gate_log import describe, row_class
from tests.cli.test_cli import cli

READS = ["refund_to_original_or_gift_card", "explicit_confirmation"]


async def a_return_on_a_pending_order(path):
    domain = importlib.import_module("ledger_tui.domains.retail").build()
    db = domain.load_db()
    user = next(u for u in db.users.values() if any(db.orders[o].status == "pending" for o in u.orders))
    order = next(o for o in user.orders if db.orders[o].status == "pending")
    s = Session(domain, ScriptedModel([]), "full", timestamps=False)
    await drain(s.start())
    await drain(s.user_says(f"Hi, my email is {user.email}.", respond=False))
    await drain(s.operator_call("find_user_id_by_email", {"email": user.email}))
    await drain(s.operator_call("get_order_details", {"order_id": order}))
    arguments = {"order_id": order, "item_ids": [db.orders[order].items[0].item_id], "payment_method_id": "credit_card_0000"}
    await drain(s.operator_call("return_delivered_order_items", arguments))
    write_trajectory(path, s.events)
    return next(e for e in s.events if isinstance(e, GateDecided))


async def test_a_broken_rule_with_missing_reads_is_a_violation_that_lists_the_reads(tmp_path):
    path = tmp_path / "mixed.jsonl"
    decided = await a_return_on_a_pending_order(path)
    d = decided.decision
    assert [p.name for p in d.failed()] == ["order_status_delivered", *READS]
    assert d.category() == "violation" and row_class(d) == "block"
    assert describe(d).endswith(f" · needs a read: {', '.join(READS)}")

    out = cli("why", str(path))
    assert out.returncode == 0, out.stderr
    assert "  verdict: BLOCK · violation — " in out.stdout
    for name in READS:
        assert f"[FAIL→REVISE · needs a read] {name}" in out.stdout

    app = make_app(trajectory=path)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("ctrl+g", "enter")
        await pilot.pause()
        why = app.screen
        assert isinstance(why, WhyScreen)
        summary = str(why.query_one("#why-summary", Static).render()).splitlines()
        assert summary[0].startswith("verdict BLOCK · violation: ")
        assert summary[1] == "decided by order_status_delivered"
        assert summary[2] == f"also needs a read {', '.join(READS)}"

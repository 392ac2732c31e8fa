"""The read gate in the workbench (issue 28): the operator, playing the agent in the console, reads
another customer's order; the conversation, the gate log and the ledger say it was withheld, and
the Why screen explains it with the record's owner as evidence."""

from __future__ import annotations

import importlib

from ledger_tui.ui.app import make_app
from ledger_tui.ui.screens.why import WhyScreen
from ledger_tui.ui.widgets import GateLog
from tests.ui.test_play import say


async def test_an_operator_call_reading_another_customers_order_is_withheld_and_explained(tmp_path):
    retail = importlib.import_module("ledger_tui.domains.retail").build()
    db = retail.load_db()
    a, b = [u for u in db.users.values() if u.orders][:2]
    order = b.orders[0]
    app = make_app(domain=retail, model=None, out=tmp_path / "play.jsonl")
    async with app.run_test(size=(160, 45)) as pilot:
        screen = app.screen
        await screen.wait_idle()
        await say(pilot, f"Hi, my email is {a.email}. What's in order {order}?")
        await say(pilot, f"/call find_user_id_by_email email={a.email}")
        await say(pilot, f"/call get_order_details order_id={order}")
        [decided] = screen.gate_log.decisions
        assert decided.decision.shown_verdict() == "WITHHELD" and decided.decision.call.requestor == "operator"
        log = screen.query_one(GateLog)
        assert "1 withheld" in str(log.border_title)
        label = str(screen.ledger._entries[f"orders.{order}"].label)
        assert "(withheld)" in label
        log.focus()
        await pilot.press("end", "enter")
        await pilot.pause()
        assert isinstance(app.screen, WhyScreen)
        title = str(app.screen.query_one("#why-title").render())
        assert "WITHHELD" in title and "disclosure" in title
        body = " ".join(str(w.render()) for w in app.screen.query("Static"))
        assert b.user_id in body and "identity.privacy" in body  # whose record it is, and the clause

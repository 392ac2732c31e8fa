"""The shipped telecom scripts play through the real loop with the verdicts their descriptions promise."""

from __future__ import annotations

import asyncio

from ledger_tui.domains import load_domain
from ledger_tui.engine.events import GateDecided, LedgerUpdated, Refusal, ToolResult
from ledger_tui.testing import play_script

DOMAIN = load_domain("telecom")


def play(name: str) -> list:
    return asyncio.run(play_script(DOMAIN, DOMAIN.folder / "scripts" / f"{name}.json")).events


def verdicts(events) -> list[tuple[str, str]]:
    return [(e.decision.call.name, e.decision.verdict.value) for e in events if isinstance(e, GateDecided)]


def test_overdue_bill_paid_on_the_phone_then_roaming():
    events = play("overdue_bill")
    assert verdicts(events) == [
        ("send_payment_request", "ALLOW"),
        ("resume_line", "REVISE"),
        ("resume_line", "ALLOW"),
        ("enable_roaming", "REVISE"),
        ("enable_roaming", "ALLOW"),
    ]
    stale_by_customer = {e.path for e in events if isinstance(e, LedgerUpdated) and e.change == "stale" and "by the customer" in e.source_call}
    assert stale_by_customer == {"bills.B1004", "bills.B1005", "bills.B1006"}
    revise = next(e.decision for e in events if isinstance(e, GateDecided) and e.decision.verdict.value == "REVISE")
    assert "resume_no_overdue_bill" in {p.name for p in revise.failed()}
    phone = [e.content for e in events if isinstance(e, ToolResult) and e.requestor == "user"]
    assert "Excellent" in phone[-1]


def test_roaming_session_revise_allow_then_block():
    events = play("roaming")
    assert verdicts(events) == [("enable_roaming", "REVISE"), ("enable_roaming", "ALLOW"), ("resume_line", "BLOCK")]
    first = next(e.decision for e in events if isinstance(e, GateDecided))
    assert {"customer_identified", "roaming_off_on_line", "explicit_confirmation"} <= {p.name for p in first.failed()}
    assert any(isinstance(e, Refusal) for e in events)

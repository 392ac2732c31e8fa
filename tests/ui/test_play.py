"""Play, driven like an operator would: type, watch the panes, open Why, try a what-if."""

from __future__ import annotations

import json

from textual.widgets import Input, Select

from ledger_tui.engine.events import SessionEnded, UserMessage, Verdict
from ledger_tui.engine.store import read_trajectory
from ledger_tui.ui.app import make_app
from ledger_tui.ui.screens.play import PlayScreen
from ledger_tui.ui.screens.why import WhyScreen
from ledger_tui.ui.widgets import GateLog
from tests.ui.scenarios import BLOCK_MESSAGES, block_turns, scripted_session


async def say(pilot, text: str) -> None:
    """Type a line into the console and wait until the engine has finished with it."""
    screen = pilot.app.screen
    console = screen.query_one("#console", Input)
    console.focus()
    console.value = text  # typing key by key is slow and tests nothing more
    await pilot.press("enter")
    await pilot.pause()
    await screen.wait_idle()
    await pilot.pause()


async def test_scripted_session_end_to_end_with_why_and_what_if(toy, tmp_path):
    out = tmp_path / "play.jsonl"
    app = make_app(session=scripted_session(toy, block_turns(), out))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await screen.wait_idle()
        await say(pilot, BLOCK_MESSAGES[0])
        assert screen.ledger.paths == ["identified.m1", "users.current", "loans.L2"]
        assert screen.ledger.shown("loans.L2").mark == "added"
        assert [c.proposed.call.name for c in screen.conversation.tool_calls] == ["find_member_by_email", "get_loan_details"]
        assert screen.gate_log.decisions == []

        await say(pilot, BLOCK_MESSAGES[1])
        [decided] = screen.gate_log.decisions
        assert decided.decision.verdict == Verdict.BLOCK
        assert screen.gate_log.row_count == 1
        # the customer spoke again, so the earlier reads are no longer marked new
        assert screen.ledger.shown("loans.L2").mark is None
        renew = screen.conversation.tool_calls[-1]
        assert renew.has_class("-block") and renew.collapsed

        screen.query_one(GateLog).focus()
        await pilot.press("enter")
        await pilot.pause()
        why = app.screen
        assert isinstance(why, WhyScreen)
        body = " ".join(str(w.render()) for w in why.query(".predicate"))
        assert "renewal_limit" in body and "read at step 9" in body
        assert "A loan can be renewed at most twice" in body  # the clause text from policy.md

        # what-if: the loan had been renewed once → the same call would be allowed
        await pilot.press("w")
        why.query_one("#whatif-target", Select).value = 1  # ledger loans.L2
        await pilot.pause()
        box = why.query_one("#whatif-value", Input)
        assert json.loads(box.value)["renewals"] == 2
        box.value = box.value.replace('"renewals":2', '"renewals":1')
        box.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert why.outcome is not None and why.outcome.verdict == Verdict.ALLOW
        assert "ALLOW" in str(why.query_one("#whatif-result").render())
        assert why.query_one("#whatif-result").has_class("-allow")

        await pilot.press("escape")
        await pilot.press("ctrl+q")
    recorded = read_trajectory(out).events
    assert isinstance(recorded[-1], SessionEnded)
    assert sum(isinstance(e, UserMessage) for e in recorded) == 2


async def test_no_model_console_call_goes_through_the_gate(toy, tmp_path):
    out = tmp_path / "operator.jsonl"
    app = make_app(domain=toy, model=None, out=out)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        await screen.wait_idle()
        await say(pilot, "hello, I need help")
        assert any("/call" in n.message for n in app._notifications)
        await say(pilot, "/call find_member_by_email email=ada@example.org")
        await say(pilot, "/call renew_loan loan_id=L1")
        assert "users.current" in screen.ledger.paths
        [decided] = screen.gate_log.decisions
        assert decided.decision.verdict == Verdict.REVISE  # loans.L1 was never read
        assert decided.decision.call.requestor == "operator"
    lines = out.read_text().splitlines()
    assert any('"gate_decision"' in line for line in lines)  # recorded as it happened


async def test_model_error_is_a_notification_and_the_session_goes_on(toy):
    app = make_app(session=scripted_session(toy, [], None))  # the script is empty: every turn fails
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        await screen.wait_idle()
        await say(pilot, "anyone there?")
        assert any(n.severity == "error" and "script" in n.message for n in app._notifications)
        await say(pilot, "/call find_member_by_email email=bo@example.org")
        assert "users.current" in screen.ledger.paths


async def test_bad_console_line_is_explained_and_kept_for_editing(toy):
    app = make_app(domain=toy, model=None)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.screen.wait_idle()
        await say(pilot, "/call renew_loan loan_id")
        assert app.screen.query_one("#console", Input).value == "/call renew_loan loan_id"
        assert any("key=value" in n.message for n in app._notifications)

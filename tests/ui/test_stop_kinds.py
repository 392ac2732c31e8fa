"""What the workbench shows of the two kinds of stop: a violation, and a stop that only needs a
read. The gate log row, its strip, the conversation title and the Why screen each say which, in
files written today and before the gate recorded the difference; the Why screen also shows a stated
fact's words without growing."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from ledger_tui.engine.events import LedgerUpdated
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.ui.app import make_app
from ledger_tui.ui.screens.why import WhyScreen
from ledger_tui.ui.widgets import GateReason
from ledger_tui.ui.widgets.tool_call_item import ToolCallItem
from tests.ui.scenarios import TWO_STOPS_MESSAGES, as_written_before_needs_read, record, two_stops_turns

ROOT = Path(__file__).resolve().parents[2]
VIOLATION, NEEDS_READ, ALLOWED = 10, 18, 28  # the gate decisions of the two-stops session


async def two_stops(toy, tmp_path: Path) -> Path:
    path = tmp_path / "two-stops.jsonl"
    await record(toy, two_stops_turns(), TWO_STOPS_MESSAGES, out=path)
    return path


def row(log, seq: int) -> list[str]:
    return [cell.plain for cell in log.get_row(str(seq))]


async def test_the_gate_log_tells_a_stop_that_needs_a_read_from_a_violation(toy, tmp_path):
    today = await two_stops(toy, tmp_path)
    before = as_written_before_needs_read(today, tmp_path / "before.jsonl")
    # today the first stop is the free-text reader's finding (no proposal found); a file written
    # before the gate labelled those calls it a violation
    for path, tag, kind in ((today, "REVISE · text", "inferred from text"), (before, "REVISE", "violation")):
        app = make_app(trajectory=path, domain=toy)
        async with app.run_test(size=(120, 30)) as pilot:
            log = app.screen.gate_log
            assert [row(log, s)[1] for s in (VIOLATION, NEEDS_READ, ALLOWED)] == [tag, "REVISE · read", "ALLOW"], path.name
            assert row(log, NEEDS_READ)[3] == "record_owned_by_customer, renewal_limit: loans.L1 has not been read."
            assert row(log, VIOLATION)[3].startswith("explicit_confirmation: The agent's last message")
            assert row(log, VIOLATION)[3].endswith("loans.L1 has not been read. · needs a read: record_owned_by_customer, renewal_limit")
            # its own colour and style, from the theme (the .tcss), not the REVISE one
            read_style = log.get_row(str(NEEDS_READ))[1].style
            revise_style = log.get_row(str(VIOLATION))[1].style
            assert read_style.color != revise_style.color and read_style.italic and not revise_style.italic
            assert log.title_text == "Gate  ALLOW 1 REVISE 2 BLOCK 0 · 1 read"
            # the strip under the log spells out the highlighted decision
            strip = app.screen.query_one(GateReason)
            await pilot.press("home", "n")
            await pilot.pause()
            assert str(strip.render()).startswith(f"REVISE · {kind} step {VIOLATION}: explicit_confirmation: The agent's")
            assert strip.has_class("-revise") and not strip.has_class("-needs-read")
            await pilot.press("n")
            await pilot.pause()
            assert str(strip.render()) == (
                f"REVISE · needs a read step {NEEDS_READ}: record_owned_by_customer, renewal_limit: loans.L1 has not been read."
            )
            assert strip.has_class("-needs-read") and not strip.has_class("-revise")
            # the conversation's tool-call titles say it too (as of the cursor: the second stop's
            # feedback is the next step)
            titles = [str(item.title) for item in app.screen.query(ToolCallItem) if item.proposed.call.name == "renew_loan"]
            assert [t.split("]")[0] + "]" for t in titles] == [f"[{tag} · not run]", "[REVISE · read]"]
            await pilot.press("end")
            await pilot.pause()
            titles = [str(item.title) for item in app.screen.query(ToolCallItem) if item.proposed.call.name == "renew_loan"]
            assert [t.split("]")[0] + "]" for t in titles] == [f"[{tag} · not run]", "[REVISE · read · not run]", "[ALLOW · ok]"]


async def test_the_why_screen_says_which_kind_of_stop_and_marks_the_checks_that_need_a_read(toy, tmp_path):
    app = make_app(trajectory=await two_stops(toy, tmp_path), domain=toy)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        screen.gate_log.move_cursor(row=1)
        screen.gate_log.focus()
        await pilot.press("enter")
        await pilot.pause()
        why = app.screen
        assert isinstance(why, WhyScreen) and why.decided.seq == NEEDS_READ
        assert str(why.query_one("#why-title", Static).render()).startswith(" REVISE  needs a read · step 18 · agent · renew_loan")
        assert why.query_one("#why-title").has_class("-needs-read")
        assert "verdict REVISE · needs a read: loans.L1 has not been read." in str(why.query_one("#why-summary", Static).render())
        failed = [str(w.render()).splitlines()[0] for w in why.query(".predicate.-fail")]
        assert failed == [
            "[FAIL → REVISE · needs a read] record_owned_by_customer · clause owner",
            "[FAIL → REVISE · needs a read] renewal_limit · clause renewals",
        ]
        assert all(w.has_class("-needs-read") for w in why.query(".predicate.-fail"))

        await pilot.press("escape")
        screen.gate_log.move_cursor(row=0)
        await pilot.press("enter")
        await pilot.pause()
        why = app.screen
        assert why.decided.seq == VIOLATION
        assert str(why.query_one("#why-title", Static).render()).startswith(" REVISE  inferred from text · step 10")
        heads = [(str(w.render()).splitlines()[0], w.has_class("-needs-read")) for w in why.query(".predicate.-fail")]
        assert heads[0] == ("[FAIL → REVISE · inferred from text] explicit_confirmation · clause confirm", False), "the finding comes first"
        assert [h for h, read in heads[1:] if read] == [
            "[FAIL → REVISE · needs a read] record_owned_by_customer · clause owner",
            "[FAIL → REVISE · needs a read] renewal_limit · clause renewals",
        ]


async def test_the_why_screen_shows_what_the_customer_said_on_the_line_it_had():
    session = ROOT / "sessions/airline-cancel-blocked.jsonl"
    reason = next(
        e for e in read_trajectory(session).events if isinstance(e, LedgerUpdated) and e.path == "said.cancel_reason"
    )
    app = make_app(trajectory=session)
    async with app.run_test(size=(100, 34)) as pilot:
        await pilot.press("ctrl+g", "enter")
        await pilot.pause()
        why = app.screen
        assert isinstance(why, WhyScreen)
        assert str(why.query_one("#why-title", Static).render()).startswith(" BLOCK  violation · step")
        said = next(w for w in why.query(".evidence") if str(w.render()).startswith("said.cancel_reason"))
        lines = [line.strip() for line in str(said.render()).splitlines()]
        # the words and the step of their message, on the fact's own line
        assert lines[0] == f'said.cancel_reason = "change_of_plan" · stated by the customer at step {reason.source_seq}: "{reason.quote}"'
        assert lines[1:] == ["read by cancel_eligible, cancel_reason_asked"], "nothing added after it"

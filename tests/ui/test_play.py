"""Play, driven like an operator would: type, watch the panes, open Why, try a what-if."""

from __future__ import annotations

import json

from textual.widgets import Input, Select, Static

from ledger_tui.engine.events import SessionEnded, UserMessage, Verdict
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.ui.app import make_app
from ledger_tui.ui.screens.help import HelpScreen
from ledger_tui.ui.screens.play import PlayScreen
from ledger_tui.ui.screens.why import WhyScreen
from ledger_tui.ui.widgets import GateLog
from tests.ui.scenarios import BLOCK_MESSAGES, REVISE_MESSAGES, block_turns, revise_turns, scripted_session


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
        # the latest read's path is [new]; what an earlier read of this turn added is (new)
        assert not screen.ledger.shown("loans.L2").earlier and screen.ledger.shown("users.current").earlier
        labels = {n.data.path: str(n.label) for n in screen.ledger._entries.values()}
        assert labels["loans.L2"].startswith("L2 [new]") and labels["users.current"].startswith("current (new)")
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
        body = " ".join(str(w.render()) for w in why.query(".predicate, .evidence"))
        assert "renewal_limit" in body and "read at step 9" in body
        assert "A loan can be renewed at most twice" in body  # the clause text from policy.md

        # what-if: the loan had been renewed once → the same call would be allowed
        await pilot.press("w")
        why.query_one("#whatif-target", Select).value = 2  # loans.L2 › renewals
        await pilot.pause()
        box = why.query_one("#whatif-value", Input)
        assert json.loads(box.value) == 2
        box.value = "1"
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
        await say(pilot, "hello, I'm ada@example.org and I need help")
        assert any("/call" in n.message for n in app._notifications)
        await say(pilot, "/call find_member_by_email email=ada@example.org")
        await say(pilot, "/call renew_loan loan_id=L1")
        assert "users.current" in screen.ledger.paths
        # the header counts the operator's calls (it said "calls 0": the model's, of which there are none)
        status = str(screen.query_one("#status").render())
        assert "model calls 0" in status and "tool calls 2" in status
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
        await say(pilot, "anyone there? I'm bo@example.org")
        assert any(n.severity == "error" and "script" in n.message for n in app._notifications)
        await say(pilot, "/call find_member_by_email email=bo@example.org")
        assert "users.current" in screen.ledger.paths


async def test_bad_console_line_is_explained_and_kept_for_editing(toy):
    app = make_app(domain=toy, model=None)
    async with app.run_test(size=(100, 30)) as pilot:
        await app.screen.wait_idle()
        await say(pilot, "/call renew_loan loan_id")
        console = app.screen.query_one("#console", Input)
        assert console.value == "/call renew_loan loan_id"
        assert any("key=value" in n.message for n in app._notifications)
        # the line is selected: typing the next command replaces it instead of appending
        assert console.selected_text == "/call renew_loan loan_id"
        await pilot.press(*"/help")
        assert console.value == "/help"
        # or it can be edited: End, then fix it
        await say(pilot, "/call renew_loan loan_id")
        await pilot.press("end", *"=L1")
        assert console.value == "/call renew_loan loan_id=L1"


async def open_why_on_the_block(pilot) -> WhyScreen:
    """Play the BLOCK conversation and open Why on its decision."""
    screen = pilot.app.screen
    await screen.wait_idle()
    for text in BLOCK_MESSAGES:
        await say(pilot, text)
    screen.query_one(GateLog).focus()
    await pilot.press("enter")
    await pilot.pause()
    assert isinstance(pilot.app.screen, WhyScreen)
    return pilot.app.screen


async def test_what_if_at_80x24_shows_the_new_verdict_and_the_checks_that_flipped(toy):
    app = make_app(session=scripted_session(toy, block_turns()))
    async with app.run_test(size=(80, 24)) as pilot:
        why = await open_why_on_the_block(pilot)
        target = why.query_one("#whatif-target", Select)
        box = why.query_one("#whatif-value", Input)
        # two changes, one a long value: the old layout pushed the verdict out of its two lines
        target.value = 5  # loans.L2 › book
        await pilot.pause()
        box.value = '"Emma, a novel by Jane Austen, in the annotated edition"'
        box.focus()
        await pilot.press("enter")
        await pilot.pause()
        target.value = 2  # loans.L2 › renewals
        await pilot.pause()
        box.value = "1"
        box.focus()
        await pilot.press("enter")
        await pilot.pause()
        result = why.query_one("#whatif-result", Static)
        lines = str(result.render()).splitlines()
        assert lines[0].replace(" ", "") == "→ALLOW(wasBLOCK·violation)"
        assert lines[1].split() == ["renewal_limit:", "FAIL→pass"]
        assert "All policy checks passed" in lines[2]
        # every line is on screen: nothing to scroll, above the footer
        scroll = why.query_one("#whatif-scroll")
        assert scroll.max_scroll_y == 0
        assert result.region.height >= len(lines)
        assert result.region.bottom <= 23
        assert len(why.edits) == 2 and "2 changes" in lines[-1]

        await pilot.press("ctrl+r")  # reset: the recorded decision again
        await pilot.pause()
        assert why.edits == {} and why.outcome is None
        assert target.value == 0 and box.value == "L2"  # the picker back at its first field, as recorded


async def test_evidence_values_are_shown_in_full(toy):
    app = make_app(session=scripted_session(toy, block_turns()))
    async with app.run_test(size=(80, 24)) as pilot:
        why = await open_why_on_the_block(pilot)
        loans = [w for w in why.query(".evidence") if str(w.render()).startswith("loans.L2")]
        assert len(loans) == 1, "the record is shown once, however many checks read it"
        text = str(loans[0].render())
        # the whole loan, one field a line, down to the last field (the old view cut at ~140 chars)
        assert "renewals: 2" in text and 'status: "active"' in text
        assert "…" not in text
        assert "read by renewal_limit (status, renewals" in text  # the check that read it, and the fields it used


async def operator_renews(pilot, loan: str, book: str) -> None:
    """Ada gives her email; the operator identifies her, reads the loan, lists it, gets her yes and
    proposes the renewal."""
    await say(pilot, "Hi, I'm ada@example.org, I'd like to renew a loan.")
    await say(pilot, "/call find_member_by_email email=ada@example.org")
    await say(pilot, f"/call get_loan_details loan_id={loan}")
    await say(pilot, f"/say Renew loan {loan} ({book})?")
    await say(pilot, "yes")
    await say(pilot, f"/call renew_loan loan_id={loan}")


async def test_no_model_operator_speaks_as_the_agent_and_reaches_allow(toy):
    app = make_app(domain=toy, model=None, session_options={"consent": "text"})  # the yes read from text
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        await screen.wait_idle()
        await operator_renews(pilot, "L1", "Dune")
        [decided] = screen.gate_log.decisions
        assert decided.decision.verdict == Verdict.ALLOW, decided.decision.reason
        said = [str(w.render()) for w in screen.conversation.query(".agent")]
        assert any("agent" in s and "Renew loan L1 (Dune)?" in s for s in said)
        assert screen.conversation.tool_calls[-1].has_class("-allow")
        await say(pilot, "/help")
        assert isinstance(app.screen, HelpScreen)
        assert "/say&#160;TEXT" in app.export_screenshot()  # listed with the console commands


async def test_an_operator_call_the_gate_blocks_is_labelled_as_the_operators(toy):
    app = make_app(domain=toy, model=None)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        await screen.wait_idle()
        await operator_renews(pilot, "L2", "Emma")
        [decided] = screen.gate_log.decisions
        assert decided.decision.verdict == Verdict.BLOCK
        [refusal] = [str(w.render()) for w in screen.conversation.query(".refusal")]
        assert refusal.startswith("operator's call refused") and "agent refuses" not in refusal


async def test_gate_log_filter_and_status_fit_at_80x24(toy):
    app = make_app(session=scripted_session(toy, block_turns()))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        await screen.wait_idle()
        for text in BLOCK_MESSAGES:
            await say(pilot, text)
        screen.filter_gate_log(Verdict.BLOCK)
        await pilot.press("f4")  # 80 columns: the gate log is a tab of its own
        await pilot.pause()
        title = screen.gate_log.title_text
        assert screen.gate_log.size.width >= 76
        assert title == "Gate [BLOCK only]  ALLOW 0 REVISE 0 BLOCK 1"
        assert len(title) <= screen.gate_log.size.width - 4
        status = str(screen.status.render())
        assert "toy" in status and "full" in status and "step " in status and "calls 3" in status
        # narrower (the busy indicator takes room while a turn runs): lesser parts go first
        fitted = "".join(p.text for p in screen.status.fitted(30))
        assert "tokens" not in fitted and "scripted" not in fitted
        assert "toy" in fitted and "full" in fitted and "step 19/19" in fitted


async def test_home_and_end_on_the_gate_log_move_the_cursor_not_the_header(toy):
    app = make_app(session=scripted_session(toy, revise_turns()))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        await screen.wait_idle()
        for text in REVISE_MESSAGES:
            await say(pilot, text)
        log = screen.gate_log
        assert log.row_count == 2
        log.focus()
        await pilot.press("home")
        assert log.cursor_coordinate.row == 0
        await pilot.press("end")
        assert log.cursor_coordinate.row == 1 and log.scroll_offset.y == 0


async def test_enter_opens_and_closes_tool_calls_in_the_conversation(toy):
    app = make_app(session=scripted_session(toy, block_turns()))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = app.screen
        await screen.wait_idle()
        for text in BLOCK_MESSAGES:
            await say(pilot, text)
        calls = screen.conversation.tool_calls
        await pilot.press("ctrl+o", "enter")  # on the pane: the latest call opens and takes the focus
        assert not calls[-1].collapsed and app.focused in calls[-1].walk_children()
        await pilot.press("enter")  # on the call: it closes
        assert calls[-1].collapsed
        await pilot.press("ctrl+o", "tab", "enter")  # Tab to the first call, Enter opens it
        assert not calls[0].collapsed and calls[-1].collapsed


async def test_playing_in_a_mode_without_the_gate_says_so_in_the_gate_log(toy, tmp_path):
    for mode, said in (("baseline", "no gate in mode baseline: writes run unchecked"), ("full", "")):
        app = make_app(domain=toy, model=None, mode=mode, out=tmp_path / f"{mode}.jsonl")
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.pause()
            assert (app.screen.query_one(GateLog).border_subtitle or "") == said, mode

"""Replay keys respect what the operator is looking at: n/p follow the gate log's filter, a
filtered-empty log says so, and Home/End in a focused pane move that pane's cursor."""

from __future__ import annotations

from pathlib import Path

from ledger_tui.engine.events import GateDecided, Verdict
from ledger_tui.ui.app import make_app
from ledger_tui.ui.widgets import GateLog, LedgerTree

ROOT = Path(__file__).resolve().parents[2]
REVISE_THEN_ALLOW = ROOT / "sessions" / "retail-refund-revise-then-allow.jsonl"


async def test_n_and_p_skip_decisions_the_filter_hides_and_say_so_when_none_is_left():
    app = make_app(trajectory=REVISE_THEN_ALLOW)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        replay = app.screen
        events = replay.timeline.events
        verdicts = {events[i].decision.verdict for i in replay.decision_steps}
        assert Verdict.REVISE in verdicts and Verdict.ALLOW in verdicts and Verdict.BLOCK not in verdicts
        replay.filter_gate_log(Verdict.REVISE)
        await pilot.pause()
        replay.jump_to(0)
        await pilot.pause()
        for _ in range(3):
            await pilot.press("n")
            await pilot.pause()
            event = events[replay.cursor_index]
            assert isinstance(event, GateDecided) and event.decision.verdict == Verdict.REVISE
        replay.filter_gate_log(Verdict.BLOCK)
        await pilot.pause()
        at = replay.cursor_index
        await pilot.press("n")
        await pilot.pause()
        assert replay.cursor_index == at  # nothing to go to: the cursor stays
        assert any("No BLOCK decision in this trajectory" in str(n.message) for n in app._notifications)
        log = replay.query_one(GateLog)
        assert log.row_count == 0 and "no BLOCK decision here" in str(log.border_subtitle)


async def test_home_and_end_in_a_focused_pane_move_its_cursor_not_the_replay():
    app = make_app(trajectory=REVISE_THEN_ALLOW)
    async with app.run_test(size=(120, 40)) as pilot:
        replay = app.screen
        last = len(replay.timeline) - 1
        assert replay.cursor_index == last
        tree = replay.query_one(LedgerTree)
        tree.focus()
        tree.cursor_line = 2
        await pilot.press("home")
        await pilot.pause()
        assert tree.cursor_line == 0 and replay.cursor_index == last
        await pilot.press("end")
        await pilot.pause()
        assert tree.cursor_line == tree.last_line and replay.cursor_index == last
        replay.query_one("#conversation").focus()
        await pilot.press("home")
        await pilot.pause()
        assert replay.cursor_index == 0  # elsewhere, Home is the first step


async def test_replay_marks_the_latest_results_paths_apart_from_earlier_in_the_turn():
    from ledger_tui.engine.events import LedgerUpdated

    blocked = ROOT / "sessions" / "airline-cancel-blocked.jsonl"
    app = make_app(trajectory=blocked)
    async with app.run_test(size=(120, 40)) as pilot:
        replay = app.screen
        events = replay.timeline.events
        flight = next(i for i, e in enumerate(events) if isinstance(e, LedgerUpdated) and e.path.startswith("flights."))
        replay.jump_to(flight)
        await pilot.pause()
        tree = replay.query_one(LedgerTree)
        assert tree.shown(events[flight].path).mark == "added" and not tree.shown(events[flight].path).earlier
        reservation = tree.shown("reservations.VY0QX8")
        assert reservation.mark == "added" and reservation.earlier  # read by the result before


async def test_the_conversation_tab_comes_back_at_its_latest_lines():
    blocked = ROOT / "sessions" / "airline-cancel-blocked.jsonl"
    app = make_app(trajectory=blocked)
    async with app.run_test(size=(100, 30)) as pilot:
        replay = app.screen
        await pilot.pause()
        await pilot.resize_terminal(80, 24)  # three panes become tabs
        await pilot.pause()
        await pilot.press("f3")
        await pilot.pause()
        await pilot.press("f2")
        await pilot.pause()
        await pilot.pause()
        conversation = replay.conversation
        assert conversation.max_scroll_y > 0 and conversation.scroll_y == conversation.max_scroll_y


async def test_f2_f3_and_f4_each_put_their_pane_on_the_whole_screen_at_100_columns_and_more():
    """F2 did nothing from 100 columns up (the conversation, a scrolling container, refused to be
    maximized); F3 and F4 worked. Again on the same key: the three panes."""
    from ledger_tui.examples import resolve_session

    app = make_app(trajectory=resolve_session("airline-cancel-blocked"))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        for key, pane in (("f2", "conversation"), ("f3", "ledger"), ("f4", "gate-log")):
            await pilot.press(key)
            await pilot.pause()
            assert app.screen.maximized is not None and app.screen.maximized.id == pane, key
            assert app.screen.maximized.outer_size.width == 120, key  # the whole width, no more (5fr overflowed)
            await pilot.press(key)
            await pilot.pause()
            assert app.screen.maximized is None, key

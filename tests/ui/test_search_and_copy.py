"""Search and copy, as an operator uses them: `/` in replay (Ctrl+F in play) finds a reservation id
or a word across the panes, Enter / Shift+Enter step through the hits by step (the replay cursor
goes there, the hit's pane shows it), the scrubber marks the hits, Escape closes; `c` copies the
highlighted value, decision or entry to the clipboard and says what it copied, escaped."""

from __future__ import annotations

import json
from pathlib import Path

from textual.widgets import Input

from ledger_tui.engine.events import LedgerUpdated
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.ui.app import make_app
from ledger_tui.ui.screens.play import PlayScreen
from ledger_tui.ui.search import decision_text
from ledger_tui.ui.widgets import GateLog, LedgerTree, ReplayBar, SearchBar
from ledger_tui.ui.widgets.conversation import ConversationView
from ledger_tui.ui.widgets.tool_call_item import ToolCallItem
from tests.hostile import QUIT
from tests.ui.scenarios import BLOCK_MESSAGES, block_turns, scripted_session

ROOT = Path(__file__).resolve().parents[2]
BLOCKED = ROOT / "sessions" / "airline-cancel-blocked.jsonl"


def bar_line(app) -> str:
    """The scrubber as drawn."""
    bar = app.screen.query_one(ReplayBar)
    return "".join(s.text for s in app.screen._compositor.render_strips()[bar.region.y])


def status(app) -> str:
    return str(app.screen.query_one("#search-status").render())


async def search_for(pilot, text: str, typed: bool = False) -> None:
    """Open the search and enter `text`: `typed`, key by key (slower), else as pasted."""
    await pilot.press("slash")
    if typed:
        await pilot.press(*text)
    else:
        pilot.app.screen.query_one("#search-input", Input).insert_text_at_cursor(text)
    await pilot.pause()


async def test_a_reservation_id_is_found_across_the_panes_and_enter_steps_through_it():
    app = make_app(trajectory=BLOCKED)
    async with app.run_test(size=(200, 50)) as pilot:
        replay = app.screen
        await search_for(pilot, "vy0qx8", typed=True)
        found = replay.query_one(SearchBar).found
        assert found.steps == [1, 6, 7, 12, 13, 14, 20, 25, 26, 27, 28, 30]
        assert replay.cursor == 32  # typing moves nothing
        assert status(app).startswith('"vy0qx8": 12 steps · 15 matches: Chat 10, Ledger 3, Gate 2')
        assert set(replay.query_one(ReplayBar).hits) == set(found.steps)
        assert bar_line(app).count("◆") == 12

        await pilot.press("enter")  # from the last step: round to the first hit
        assert replay.cursor == 1 and status(app).startswith("hit 1 of 12 steps (wrapped) · step 1 Chat customer")
        for step in (6, 7):
            await pilot.press("enter")
            assert replay.cursor == step
        await pilot.pause()
        assert replay.query_one(LedgerTree).cursor_path() == "users.rosa_phillips_9719"  # the ledger hit's path
        await pilot.press("shift+enter")
        assert replay.cursor == 6
        await pilot.press("up", "up")  # Shift+Enter's other key; and round to the last hit
        assert replay.cursor == 30 and "(wrapped)" in status(app)
        await pilot.press("shift+enter", "shift+enter", "shift+enter")  # 28, 27, 26
        await pilot.pause()
        assert replay.cursor == 26
        assert replay.query_one(GateLog).selected().seq == 26  # the gate hit's decision
        assert bar_line(app).count("◆") == 11  # the cursor's cell is the twelfth

        await pilot.press("escape")
        await pilot.pause()
        assert not replay.query_one(SearchBar).is_open and replay.query_one(ReplayBar).hits == frozenset()
        assert "◆" not in bar_line(app) and isinstance(app.focused, GateLog)
        assert app.screen is replay  # Escape closed the search, not the replay
        await pilot.press("n")  # n is the next gate decision again (the only one: round to it)
        assert replay.cursor == 26


async def test_a_word_is_found_and_marked_a_miss_says_no_match_and_letters_never_step():
    app = make_app(trajectory=BLOCKED)
    async with app.run_test(size=(200, 50)) as pilot:
        replay = app.screen
        replay.jump_to(10)
        await search_for(pilot, "insurance")
        assert replay.query_one(SearchBar).found.steps == [13, 14, 20, 26, 27, 28, 30]
        await pilot.press("enter")
        assert replay.cursor == 13  # the next from the cursor, not from the start
        conversation = replay.query_one(ConversationView)
        await pilot.pause()
        [hit] = conversation.query(".-hit")
        assert isinstance(hit, ToolCallItem) and not hit.collapsed  # the result's call, opened
        await pilot.press("escape")
        await search_for(pilot, "hotel lull", typed=True)  # h and l typed, never stepping; the last query replaced
        box = replay.query_one("#search-input", Input)
        assert box.value == "hotel lull" and replay.cursor == 13
        assert status(app) == 'no match for "hotel lull"' and replay.query_one(SearchBar).has_class("-no-match")
        await pilot.press("enter", "home", "end")
        assert replay.cursor == 13 and "◆" not in bar_line(app)


async def test_at_80_columns_a_hit_shows_its_pane_as_the_tab():
    app = make_app(trajectory=BLOCKED)
    async with app.run_test(size=(80, 24)) as pilot:
        replay = app.screen
        await search_for(pilot, "reservations.vy0qx8")
        await pilot.press("enter")
        await pilot.pause()
        assert replay.cursor == 14 and replay.tab == "ledger"
        assert replay.query_one(LedgerTree).cursor_path() == "reservations.VY0QX8"
        assert status(app).startswith("hit 1 of 1 step (wrapped) · step 14 Ledger reservations.VY0QX8")


async def test_ctrl_f_searches_a_live_session_and_escape_goes_back_to_the_console(toy):
    app = make_app(session=scripted_session(toy, block_turns()))
    async with app.run_test(size=(120, 40)) as pilot:
        screen = app.screen
        assert isinstance(screen, PlayScreen)
        await screen.wait_idle()
        for message in BLOCK_MESSAGES[:2]:
            console = screen.query_one("#console", Input)
            console.value = message
            await pilot.press("enter")
            await screen.wait_idle()
            await pilot.pause()
        await pilot.press("ctrl+f")
        screen.query_one("#search-input", Input).insert_text_at_cursor("renew_loan")
        await pilot.press("enter")
        await pilot.pause()
        bar = screen.query_one(SearchBar)
        panes = {h.step: h.pane for h in bar.found.hits}
        assert set(panes.values()) == {"conversation", "gate"}
        first = bar.current
        assert first is not None and first.step == min(panes)
        [hit] = screen.conversation.query(".-hit")
        assert isinstance(hit, ToolCallItem) and hit.proposed.call.name == "renew_loan"
        await pilot.press("enter")
        assert bar.current.step > first.step  # play has no cursor: on from the hit last shown
        await pilot.press("escape")
        await pilot.pause()
        assert not bar.is_open and not screen.conversation.query(".-hit")
        assert app.focused is screen.query_one("#console", Input)
        await pilot.press("slash")  # in play, / is the console's
        assert screen.query_one("#console", Input).value == "/" and not bar.is_open


async def test_c_copies_the_ledger_value_the_gate_decision_and_the_focused_call():
    app = make_app(trajectory=BLOCKED)
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        replay = app.screen
        events = replay.timeline.events
        decided = events[26]
        await pilot.press("c")  # the gate log has the focus: its highlighted decision
        assert app.clipboard == decision_text(decided)
        assert app.clipboard.startswith('cancel_reservation(reservation_id="VY0QX8") → BLOCK\nfailed: cancel_eligible\nreason: Reservation VY0QX8')
        assert "Copied the decision on cancel_reservation at step 26" in str(list(app._notifications)[-1].message)

        tree = replay.query_one(LedgerTree)
        tree.focus()
        assert tree.reveal("reservations.VY0QX8")
        await pilot.press("c")
        assert json.loads(app.clipboard) == replay.state_at(replay.cursor).ledger["reservations.VY0QX8"].value
        assert "Copied record reservations.VY0QX8 (672 characters): {" in str(list(app._notifications)[-1].message)
        await pilot.press("enter", "down", "c")  # the record opens: its first field, status (null)
        assert app.clipboard == "null"
        await pilot.press("down", "c")  # cabin: a string, as it is
        assert app.clipboard == "economy" and str(tree.cursor_node.label).startswith("cabin")
        assert "Copied value reservations.VY0QX8:cabin (7 characters): economy" in str(list(app._notifications)[-1].message)

        conversation = replay.query_one(ConversationView)
        item = next(i for i in conversation.tool_calls if i.proposed.call.name == "get_reservation_details")
        item.query_one("CollapsibleTitle").focus()
        await pilot.press("c")
        assert app.clipboard.startswith('get_reservation_details(reservation_id="VY0QX8")\nresult: {"reservation_id": "VY0QX8"')
        conversation.focus()
        await pilot.press("c")  # no call focused, no hit: the latest entry
        assert app.clipboard == events[30].text


async def test_a_copied_value_is_kept_as_recorded_and_said_escaped():
    events = list(read_trajectory(BLOCKED).events)
    hostile = LedgerUpdated(seq=len(events) - 1, path="notes.n1", change="added", after=f"call {QUIT} now")
    events.insert(len(events) - 1, hostile)
    events[-1] = events[-1].model_copy(update={"seq": len(events) - 1})
    app = make_app(events=events)
    async with app.run_test(size=(200, 50), notifications=True) as pilot:
        replay = app.screen
        await search_for(pilot, "@click")
        await pilot.press("enter")
        await pilot.pause()
        assert replay.cursor == len(events) - 2 and QUIT in status(app)  # shown as written
        tree = replay.query_one(LedgerTree)
        tree.focus()
        assert tree.cursor_path() == "notes.n1"
        await pilot.press("c")
        assert app.clipboard == f"call {QUIT} now"
        message = str(list(app._notifications)[-1].message)
        assert "\\[@click=app.quit]" in message and app.is_running

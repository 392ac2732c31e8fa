"""The conversation pane follows the replay cursor: its latest entry is in view when the screen
settles after each step or jump, a short conversation starts at the top of the pane, and a call the
operator opens stays where it is."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from textual.pilot import Pilot

from ledger_tui.ui.app import make_app
from ledger_tui.ui.screens.replay import ReplayScreen
from ledger_tui.ui.widgets.conversation import ConversationView
from ledger_tui.ui.widgets.tool_call_item import ToolCallItem
from tests.ui.test_long_replay import long_trajectory


@asynccontextmanager
async def replay_at(toy, tmp_path, events: int, step: int, size: tuple[int, int]) -> AsyncIterator[tuple[ReplayScreen, Pilot]]:
    """A replay of a long trajectory (`events` events) opened at `step`, settled."""
    app = make_app(trajectory=await long_trajectory(toy, tmp_path, events), domain=toy, step=step)
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, ReplayScreen)
        yield app.screen, pilot


def shown_children(view: ConversationView) -> list:
    return [w for w in view.children if w.display]


def latest_in_view(view: ConversationView) -> bool:
    """The last entry's last line is inside the pane, and nothing is left below it to scroll to."""
    last = shown_children(view)[-1]
    pane = view.scrollable_content_region
    return view.scroll_y == view.max_scroll_y and pane.y <= last.region.bottom - 1 < pane.bottom


async def test_the_latest_entry_is_in_view_after_every_step_and_jump(toy, tmp_path):
    async with replay_at(toy, tmp_path, 600, 300, (120, 30)) as (screen, pilot):
        view = screen.conversation
        assert view.max_scroll_y > 0, "the conversation is longer than the pane"
        rng = random.Random(3)
        moves = [1] * 25 + [-1] * 25 + [rng.randrange(40, 599) - screen.cursor for _ in range(6)]
        for move in moves:
            screen.cursor += move
            await pilot.pause()
            assert latest_in_view(view), (screen.cursor, view.scroll_y, view.max_scroll_y)


async def test_a_short_conversation_starts_at_the_top_of_the_pane(toy, tmp_path):
    async with replay_at(toy, tmp_path, 600, 6, (120, 40)) as (screen, pilot):
        view = screen.conversation
        for step in (6, 7, 8, 300, 8):  # also once a long stretch was shown and jumped back from
            screen.cursor = step
            await pilot.pause()
            if step == 300:
                assert view.max_scroll_y > 0 and latest_in_view(view)
                continue
            assert view.max_scroll_y == 0 and view.scroll_y == 0
            first = shown_children(view)[0]
            assert first.region.y == view.scrollable_content_region.y, step


async def test_a_call_the_operator_opens_stays_where_it_is(toy, tmp_path):
    async with replay_at(toy, tmp_path, 600, 400, (120, 30)) as (screen, pilot):
        view = screen.conversation
        assert latest_in_view(view)
        pane = view.scrollable_content_region
        # a call in the upper half of the pane, with entries below it
        item = next(
            w for w in shown_children(view) if isinstance(w, ToolCallItem) and pane.y < w.region.y < pane.y + pane.height // 2
        )
        y, top = item.region.y, view.scroll_y
        await pilot.click(item.query_one("CollapsibleTitle"))
        await pilot.pause()
        assert not item.collapsed
        assert (item.region.y, view.scroll_y) == (y, top), "the pane did not move to its end"
        assert view.scroll_y < view.max_scroll_y
        # the next step follows the cursor again
        screen.cursor += 1
        await pilot.pause()
        assert latest_in_view(view)


async def test_after_each_step_the_screen_is_laid_out_as_a_fresh_layout_would_lay_it_out(toy, tmp_path):
    """Lines that wrap differently, titles that grow, the reason under the gate log growing and
    shrinking: every widget is where a full layout of the screen puts it, with nothing left over
    to move."""
    async with replay_at(toy, tmp_path, 900, 6, (110, 32)) as (screen, pilot):
        rng = random.Random(8)
        # from a conversation shorter than the pane to one that scrolls (its scrollbar comes), back
        # below it (the scrollbar goes), and jumps
        moves = [1] * 70 + [-1] * 70 + [rng.randrange(900) - 450 for _ in range(6)]
        view = screen.conversation
        scrolled = set()

        def placed() -> dict:
            return {
                id(w): (type(w).__name__, w.region, w.virtual_size, w.show_vertical_scrollbar, w.scrollable_content_region)
                for w in screen.walk_children()
                if w.display
            }

        for move in moves:
            screen.cursor = max(0, min(len(screen.events) - 1, screen.cursor + move))
            await pilot.pause()
            before = placed()
            scrolled.add(view.show_vertical_scrollbar)
            screen.refresh(layout=True)
            await pilot.pause()
            assert placed() == before, screen.cursor
        assert scrolled == {True, False}


async def test_leaving_a_replay_in_the_middle_of_a_step_leaves_the_screen_drawing(tmp_path):
    """A step that mounts entries holds the screen's drawing until they are in place; closing the
    replay before they are must not leave it held."""
    from tests.ui.run_folders import imported_folder

    app = make_app(folder=imported_folder(tmp_path))
    async with app.run_test(size=(100, 30)) as pilot:
        browse = app.screen
        await pilot.press("enter")
        await pilot.pause()
        replay = app.screen
        assert replay is not browse
        for _ in range(3):
            replay.cursor = 0
            replay.cursor = len(replay.events) - 1  # mounts every entry the window shows
            await pilot.press("escape")
            await pilot.pause()
            assert app.screen is browse
            assert app._batch_count == 0, "nothing holds the screen's drawing"
            await pilot.press("enter")
            await pilot.pause()
            replay = app.screen

"""The diff screen: two runs side by side, turn by turn, opened at the turn where they diverge."""

from __future__ import annotations

from pathlib import Path

from ledger_tui.ui.app import LedgerWorkbench, make_app
from ledger_tui.ui.screens.diff import DiffScreen, open_diff
from ledger_tui.ui.screens.replay import ReplayScreen
from ledger_tui.ui.widgets.turn_row import TurnRow

ROOT = Path(__file__).resolve().parents[2]
BLOCKED = ROOT / "sessions" / "airline-cancel-blocked.jsonl"
IRMA = ROOT / "sessions" / "airline-irma-cancel-goes-through.jsonl"


def text_of(widget) -> str:
    return str(widget.render())


def cells(screen: DiffScreen, number: int) -> tuple[str, str]:
    row = screen.query_one(f"#turn-{number}", TurnRow)
    a, b = row.query(".cell")
    return text_of(a), text_of(b)


def cursor_row(screen: DiffScreen) -> int:
    (row,) = [r for r in screen.rows if r.has_class("-cursor")]
    return row.pair.number


async def test_opens_at_the_divergence_and_moves_by_turn_and_by_difference():
    app = LedgerWorkbench(DiffScreen.of_files(BLOCKED, IRMA))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        assert cursor_row(screen) == 2
        divergence = screen.query_one("#turn-2", TurnRow)
        assert divergence.has_class("-divergence") and divergence.region.y < 12  # in view, near the top
        assert "diverge at turn 2: verdicts, ledger · 1 the same before" in text_of(screen.query_one("#diff-status"))
        a, b = cells(screen, 2)
        assert "≠ cancel_reservation  BLOCK" in a and 'reservation_id="VY0QX8"' in a
        assert "≠ cancel_reservation  (no gate)" in b
        assert "≠ reservations.VY0QX8 unchanged" in a and "≠ reservations.VY0QX8 stale" in b
        assert "agent I'm sorry, but I can't do that." in a and "agent Done: reservation VY0QX8 is cancelled" in b

        await pilot.press("up")
        assert cursor_row(screen) == 1
        assert screen.query_one("#turn-1", TurnRow).has_class("-same")
        a1, b1 = cells(screen, 1)
        assert "  get_flight_status  read" in a1 and "≠" not in a1 + b1
        await pilot.press("n")  # the next turn that differs
        assert cursor_row(screen) == 2
        await pilot.press("end")
        assert cursor_row(screen) == 3
        assert cells(screen, 3)[1] == "(run B has no turn here)"
        await pilot.press("b")
        assert isinstance(app.screen, DiffScreen)  # nothing to replay there
        assert any("Run B has no turn 3" in str(n.message) for n in app._notifications)
        await pilot.press("d")
        assert cursor_row(screen) == 2


async def test_a_side_replays_at_the_end_of_the_turn_and_escape_comes_back():
    app = LedgerWorkbench(DiffScreen.of_files(BLOCKED, IRMA))
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        diff = app.screen
        await pilot.press("b")
        await pilot.pause()
        replay = app.screen
        assert isinstance(replay, ReplayScreen) and replay.source_path == IRMA
        turn = diff.pair.b
        assert replay.cursor == turn.last and replay.events[turn.first].type == "user_message"
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is diff and cursor_row(diff) == 2
        await pilot.press("escape")  # the first screen stays (Ctrl+Q quits)
        assert app.screen is diff


async def test_open_diff_from_another_screen_and_a_pair_it_refuses():
    app = make_app(trajectory=BLOCKED)
    async with app.run_test(size=(100, 30)) as pilot:
        first = app.screen
        assert open_diff(app, BLOCKED, ROOT / "sessions" / "retail-refund-revise-then-allow.jsonl") is None
        await pilot.pause()
        assert app.screen is first
        assert any("diff compares two runs of one domain" in str(n.message) for n in app._notifications)
        opened = open_diff(app, BLOCKED, BLOCKED)
        await pilot.pause()
        assert app.screen is opened
        assert "the runs do not diverge · 3 turns the same" in text_of(opened.query_one("#diff-status"))
        assert all(r.has_class("-same") for r in opened.rows)
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is first

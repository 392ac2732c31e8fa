"""SVG snapshots of what the operator sees (fixed size, scripted model, no wall clock)."""

from __future__ import annotations


from textual.widgets import Input

from ledger_tui.engine.events import GateDecided, Verdict
from ledger_tui.ui.app import make_app
from tests.ui.scenarios import BLOCK_MESSAGES, REVISE_MESSAGES, block_turns, record, revise_turns, scripted_session


async def _say_all(pilot, messages) -> None:
    screen = pilot.app.screen
    await screen.wait_idle()
    for text in messages:
        console = screen.query_one("#console", Input)
        console.value = text
        await pilot.press("enter")
        await pilot.pause()
        await screen.wait_idle()
        await pilot.pause()


def test_three_panes_mid_session(snap_compare, toy):
    app = make_app(session=scripted_session(toy, block_turns()))

    async def run_before(pilot) -> None:
        await _say_all(pilot, BLOCK_MESSAGES)
        await pilot.press("ctrl+l")  # the ledger tree has the focus: its cursor is visible

    assert snap_compare(app, terminal_size=(100, 30), run_before=run_before)


def test_why_screen_on_a_block(snap_compare, toy):
    app = make_app(session=scripted_session(toy, block_turns()))

    async def run_before(pilot) -> None:
        await _say_all(pilot, BLOCK_MESSAGES)
        await pilot.press("ctrl+g", "enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(100, 34), run_before=run_before)


def test_replay_at_a_revise(snap_compare, toy, tmp_path):
    import asyncio

    events = asyncio.run(record(toy, revise_turns(), REVISE_MESSAGES))
    revise = next(i for i, e in enumerate(events) if isinstance(e, GateDecided) and e.decision.verdict == Verdict.REVISE)
    app = make_app(events=events, step=revise, domain=toy)
    assert snap_compare(app, terminal_size=(100, 30))


def test_small_terminal_keeps_the_essentials(snap_compare, toy):
    """80×24: status line, three panes, console and footer all visible."""
    app = make_app(session=scripted_session(toy, block_turns()))

    async def run_before(pilot) -> None:
        await _say_all(pilot, BLOCK_MESSAGES)

    assert snap_compare(app, terminal_size=(80, 24), run_before=run_before)


SIZES = [(80, 24), (200, 50)]
BLOCKED = __import__("pathlib").Path(__file__).resolve().parents[2] / "sessions" / "airline-cancel-blocked.jsonl"


@__import__("pytest").mark.parametrize("size", SIZES, ids=["80x24", "200x50"])
def test_play_at_both_sizes(snap_compare, toy, size):
    """Below 100 columns the panes are tabs (the strip says F2 F3 F4); wide, all three."""
    app = make_app(session=scripted_session(toy, block_turns()))

    async def run_before(pilot) -> None:
        await _say_all(pilot, BLOCK_MESSAGES)

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@__import__("pytest").mark.parametrize("size", SIZES, ids=["80x24", "200x50"])
def test_replay_gate_tab_at_both_sizes(snap_compare, size):
    """F4: at 80×24 the gate log on the whole screen, its reasons readable; wide, maximized."""
    app = make_app(trajectory=BLOCKED)

    async def run_before(pilot) -> None:
        await pilot.press("f4")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)


@__import__("pytest").mark.parametrize("size", SIZES, ids=["80x24", "200x50"])
def test_why_at_both_sizes(snap_compare, size):
    app = make_app(trajectory=BLOCKED)

    async def run_before(pilot) -> None:
        await pilot.press("ctrl+g", "enter")
        await pilot.pause()

    assert snap_compare(app, terminal_size=size, run_before=run_before)

"""Why answers in one screen: the deciding check first, each record once, and Enter on a record
takes the replay to the step it was read at."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from ledger_tui.engine.events import GateDecided, Verdict
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.ui.app import make_app
from ledger_tui.ui.screens.why import EvidenceBlock, WhyScreen

ROOT = Path(__file__).resolve().parents[2]
BLOCKED = ROOT / "sessions" / "airline-cancel-blocked.jsonl"


async def open_why(pilot) -> WhyScreen:
    await pilot.press("ctrl+g", "enter")
    await pilot.pause()
    why = pilot.app.screen
    assert isinstance(why, WhyScreen)
    return why


async def test_a_block_fits_one_screen_with_the_answer_first():
    app = make_app(trajectory=BLOCKED)
    async with app.run_test(size=(200, 50)) as pilot:
        why = await open_why(pilot)
        summary = str(why.query_one("#why-summary", Static).render()).splitlines()
        assert summary[0].startswith("verdict BLOCK · violation: Reservation VY0QX8 cannot be cancelled")
        assert summary[1] == "decided by cancel_eligible"
        # each record once, however many of the nine checks read it
        paths = [b.evidence.read.path for b in why.query(EvidenceBlock)]
        assert len(paths) == len(set(paths))
        assert paths[0] == "reservations.VY0QX8"  # the deciding check's reads first
        reservation = str(why.query(EvidenceBlock).first().render())
        assert "cancel_eligible (created_at, cabin, reservation_id, insurance, flights)" in reservation
        assert 'insurance: "no"' in reservation
        body = why.query_one("#why-body")
        assert body.max_scroll_y == 0, f"the Why screen scrolls by {body.max_scroll_y} lines at 200x50"


async def test_enter_on_a_record_goes_to_the_step_it_was_read_at():
    blocked = next(e for e in read_trajectory(BLOCKED).events if isinstance(e, GateDecided) and e.decision.verdict == Verdict.BLOCK)
    app = make_app(trajectory=BLOCKED)
    async with app.run_test(size=(120, 40)) as pilot:
        replay = app.screen
        why = await open_why(pilot)
        block = why.query(EvidenceBlock).first()
        read_at = block.evidence.read.source_seq
        assert read_at is not None and read_at < blocked.seq
        block.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is replay
        assert replay.events[replay.cursor_index].seq == read_at

"""`f` in replay forks the run at the cursor's turn into live play (recorded to a new file in the
runs folder), the card the customer answered then waits again, and a fork replayed says whose run
it continues and from which step."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Static

from ledger_tui.engine.events import ConfirmationRequested
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.ui.app import make_app
from ledger_tui.ui.screens.play import PlayScreen
from ledger_tui.ui.screens.replay import ReplayScreen
from ledger_tui.ui.widgets import ReplayBar

ROOT = Path(__file__).resolve().parents[2]
ON_A_CARD = ROOT / "sessions" / "airline-cancel-on-a-card.jsonl"


async def test_f_forks_the_cursors_turn_and_the_fork_replays_with_its_parent_named(tmp_path, monkeypatch):
    monkeypatch.setattr("ledger_tui.examples.runs_home", lambda: tmp_path)
    app = make_app(trajectory=ON_A_CARD)
    async with app.run_test(size=(160, 45)) as pilot:
        replay = app.screen
        assert isinstance(replay, ReplayScreen)
        await pilot.press("f")
        for _ in range(100):
            await pilot.pause(0.02)
            if isinstance(app.screen, PlayScreen):
                break
        play = app.screen
        assert isinstance(play, PlayScreen)
        await play.wait_idle()
        assert isinstance(play.events[-1], ConfirmationRequested) and len(play.events) == 30
        assert str(play.query_one("#console-hint", Static).render()).startswith("A confirmation card awaits")
        await pilot.press("n")
        await pilot.pause()
        await play.wait_idle()
        await pilot.press("ctrl+q")
    (fork,) = tmp_path.glob("airline-fork-*.jsonl")
    events = read_trajectory(fork).events
    assert events[0].forked_from.file == str(ON_A_CARD) and events[0].forked_from.step == 30
    assert [e.text for e in events if e.type == "user_message"][-1] == "no"
    assert not any(e.type == "gate_decision" and e.decision.verdict.value == "ALLOW" for e in events)
    assert events[-1].type == "session_ended" and events[-1].db_digest == events[0].db_digest  # nothing ran

    async with make_app(trajectory=fork).run_test(size=(160, 45)) as pilot:
        outcome = str(pilot.app.screen.query_one("#run-outcome", Static).render())
        assert outcome == "fork of airline-cancel-on-a-card.jsonl · own from step 30"
        bar = pilot.app.screen.query_one(ReplayBar)
        drawn = "".join(segment.text for segment in bar.render_line(0))
        assert drawn.count("┳") == 1  # where it branched, on the scrubber
        track = drawn[drawn.index("▕") + 1 : drawn.index("▏")]
        assert abs(track.index("┳") - round(30 * (len(track) - 1) / (len(events) - 1))) <= 1


async def test_a_run_that_cannot_be_forked_says_why_and_stays_in_replay(tmp_path, monkeypatch):
    monkeypatch.setattr("ledger_tui.examples.runs_home", lambda: tmp_path)
    events = read_trajectory(ON_A_CARD).events
    edited = [events[0].model_copy(update={"db_digest": "f" * 64}), *events[1:]]
    app = make_app(events=edited, trajectory=None)
    async with app.run_test(size=(160, 45)) as pilot:
        await pilot.press("f")
        for _ in range(50):
            await pilot.pause(0.02)
            said = [str(n.message) for n in app._notifications]
            if said:
                break
        assert isinstance(app.screen, ReplayScreen)
        assert said and said[0].startswith("Cannot fork the recording: it started on a database with digest ffffffffffff…")
    assert not list(tmp_path.iterdir())  # the file reserved for the fork is gone

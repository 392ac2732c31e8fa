"""A replay of a file (read lazily: `read_trajectory(path, lazy=True)`) shows what a replay of the
same events held in a list shows, at the last step and after stepping, with the events read back
from their lines through a cache far smaller than the file."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledger_tui.engine.store import lazy
from ledger_tui.engine.store.lazy import LazyEvents
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.ui.app import make_app
from ledger_tui.ui.search import SearchIndex
from ledger_tui.ui.widgets import GateLog, ReplayBar
from ledger_tui.ui.widgets.conversation import ConversationView

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = ["retail-refund-revise-then-allow", "telecom-overdue-bill", "airline-cancel-on-a-card"]


def _panes(replay) -> tuple[object, ...]:
    """What the panes show: the state at the cursor, the gate log's rows, counts, title and
    selection, the bar's marks and the conversation's entries."""
    log = replay.query_one(GateLog)
    conversation = replay.query_one(ConversationView)
    selected = log.selected()
    return (
        replay.cursor_index,
        replay.state_at(replay.cursor_index),
        [d.seq for d in log._listed],
        dict(log._counts),
        str(log.border_title),
        str(log.border_subtitle),
        selected.seq if selected is not None else None,
        replay.query_one(ReplayBar).marks,
        [type(entry).__name__ for entry in conversation._log],
        replay.decision_steps,
        dict(replay._requestors),
    )


@pytest.mark.parametrize("name", SESSIONS)
async def test_a_lazy_replay_shows_what_a_replay_of_the_events_shows(name, monkeypatch):
    monkeypatch.setattr(lazy, "CACHED", 8)
    path = ROOT / "sessions" / f"{name}.jsonl"
    eager = read_trajectory(path).events
    seen: list[list[tuple[object, ...]]] = []
    for app in (make_app(trajectory=path), make_app(events=eager)):
        async with app.run_test(size=(160, 45)) as pilot:
            replay = app.screen
            shown = [_panes(replay)]
            for key in ("p", "p", "left", "n", "home", "n", "end"):
                await pilot.press(key)
                await pilot.pause()
                shown.append(_panes(replay))
            seen.append(shown)
            lazy_read = isinstance(replay.events, LazyEvents)
            assert lazy_read is (len(seen) == 1)
    assert seen[0] == seen[1]


async def test_why_opens_from_a_lazy_replay_on_the_state_the_gate_saw(monkeypatch):
    monkeypatch.setattr(lazy, "CACHED", 8)
    path = ROOT / "sessions" / "retail-refund-revise-then-allow.jsonl"
    eager = read_trajectory(path).events
    screens = []
    for app in (make_app(trajectory=path), make_app(events=eager)):
        async with app.run_test(size=(160, 45)) as pilot:
            replay = app.screen
            decided = replay.events[replay.decision_steps[0]]
            why = replay.explain(decided)
            await pilot.pause()
            screens.append((why.before, why.decided, why.waits, why.targets))
    assert screens[0] == screens[1]


@pytest.mark.parametrize("name", SESSIONS)
def test_a_search_over_a_lazy_read_finds_what_it_finds_over_the_events(name, monkeypatch):
    monkeypatch.setattr(lazy, "CACHED", 8)
    path = ROOT / "sessions" / f"{name}.jsonl"
    index, reference = SearchIndex(read_trajectory(path, lazy=True).events), SearchIndex(read_trajectory(path).events)
    assert index._entries == reference._entries and index._entries
    for query in ("refund", "allow", "the", "zzz-nothing"):
        assert index.find(query).steps == reference.find(query).steps


@pytest.mark.parametrize("collecting", [True, False])
def test_a_replay_opens_with_the_collector_as_it_was_found(collecting, monkeypatch):
    """`launch.replay` pauses the cyclic collector until the first frame: once it is shown the
    collector runs again (when it ran before), and after the app it is as it was found."""
    import gc

    from ledger_tui.ui import launch

    seen: dict[str, object] = {}

    def run(app) -> int:
        async def look(pilot) -> None:
            await pilot.pause()
            seen["painted"] = app.screen.query_one(ReplayBar).total
            seen["collecting"] = gc.isenabled()
            app.exit()

        app.run(headless=True, size=(160, 48), auto_pilot=look)
        return 0

    monkeypatch.setattr(launch, "_run", run)
    path = ROOT / "sessions" / f"{SESSIONS[0]}.jsonl"
    was = gc.isenabled()
    try:
        if not collecting:
            gc.disable()
        assert launch.replay(path, None) == 0
        assert seen == {"painted": len(read_trajectory(path).events), "collecting": collecting}
        assert gc.isenabled() is collecting
    finally:
        if was:
            gc.enable()

"""The gate log keeps the rows it drew (a listed decision never changes): stepping through decisions,
forward and back, draws the log exactly as opening the replay at that step does — the same rows,
verdict colours, cursor row and header, the latest decision in view — and a click on a row after the
rows were listed again picks that row."""

from __future__ import annotations

from textual.geometry import Region

from ledger_tui.engine.events import GateDecided, Verdict
from ledger_tui.ui.app import make_app
from ledger_tui.ui.widgets.gate_log import GateLog
from tests.ui.test_long_replay import long_trajectory

SIZE = (110, 34)


def drawn(log: GateLog) -> list[list[tuple[str, object]]]:
    """The log's lines as the screen gets them (the click targets each cell carries left out)."""
    lines = log.render_lines(Region(0, 0, log.size.width, log.size.height))
    return [[(segment.text, segment.style and segment.style.clear_meta_and_links()) for segment in line] for line in lines]


async def opened_at(path, toy, step: int) -> list[list[tuple[str, object]]]:
    app = make_app(trajectory=path, domain=toy, step=step)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        return drawn(app.screen.gate_log)


async def test_stepping_over_decisions_draws_the_log_as_opening_there_does(toy, tmp_path):
    path = await long_trajectory(toy, tmp_path, 700)
    app = make_app(trajectory=path, domain=toy, step=400)
    async with app.run_test(size=SIZE) as pilot:
        screen = app.screen
        events = screen.events
        decisions = [i for i, e in enumerate(events) if isinstance(e, GateDecided) and 400 < i < 560]
        stops = [decisions[0], decisions[0] - 1, decisions[1], decisions[3], decisions[2] - 1, decisions[5] + 1]
        seen = {}
        for stop in stops:
            while screen.cursor != stop:  # one step at a time
                screen.cursor += 1 if stop > screen.cursor else -1
                await pilot.pause()
            seen[stop] = drawn(screen.gate_log)
        log = screen.gate_log
        screen.filter_gate_log(Verdict.REVISE)  # listed again: the stops at other places
        await pilot.pause()
        revise = [str(log.get_row_at(i)[0].plain) for i in range(log.row_count)]
        screen.filter_gate_log(None)
        await pilot.pause()
        shown = [str(log.get_row_at(i)[0].plain) for i in range(log.row_count)]
        # a stop in view, drawn a moment ago at another place of the list
        target = next(i for i, seq in enumerate(shown) if seq in revise and revise.index(seq) != i)
        assert target < log.size.height - 1
        await pilot.click(log, offset=(3, 2 + target - int(log.scroll_y)))  # below the border and header
        await pilot.pause()
        assert log.selected() is not None and str(log.selected().seq) == shown[target]
    for stop, lines in seen.items():
        assert lines == await opened_at(path, toy, stop), stop

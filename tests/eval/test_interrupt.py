"""What the first Ctrl-C of an eval says (issue 27, item 6): how many runs it waits for, and that
it waits for none when it lands before the first run began (the fault script found "finishing the
0 runs in flight … press Ctrl-C again", a promise with nothing behind it)."""

from __future__ import annotations

from ledger_tui.eval.interrupt import Interrupt


def test_the_first_press_names_the_runs_in_flight_and_the_second_is_offered_only_when_there_are_some():
    said: list[str] = []
    for in_flight in (0, 1, 3):
        interrupt = Interrupt(said.append)
        interrupt.in_flight = lambda n=in_flight: n
        interrupt.pressed()
        assert interrupt.winding_down.is_set()
    assert said == [
        "interrupted: no run is in flight; starting no more.",
        "interrupted: finishing the run in flight and starting no more; press Ctrl-C again to stop now.",
        "interrupted: finishing the 3 runs in flight and starting no more; press Ctrl-C again to stop now.",
    ]

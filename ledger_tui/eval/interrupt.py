"""Ctrl-C during an eval: once finishes the runs in flight and stops, twice stops now.

The first SIGINT starts no new run: in one process the trials waiting for a session slot end
unstarted, and the shards of `--workers` and Ray are given no more (each stops once its runs in
flight are back). The runs in flight finish and are recorded, so a resume redoes none of them. The
second SIGINT cancels the eval where it is: what finished is recorded, the rest is redone by a
resume. Either way the command says so in one sentence and exits with 130, and nothing is left
running (worker processes ignore SIGINT; the writer stops them).

The handler is the event loop's (`loop.add_signal_handler`), installed by `watch` for the length
of one eval, so the signal never arrives as a KeyboardInterrupt in the middle of a coroutine, and
the loop's own shutdown has nothing left to cancel.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from collections.abc import Callable, Iterator


class Interrupted(Exception):
    """The eval stopped after a first Ctrl-C, its runs in flight finished."""


class Interrupt:
    """The state of Ctrl-C for one eval; `winding_down` once it was pressed."""

    def __init__(self, say: Callable[[str], None]) -> None:
        self.presses = 0
        self.winding_down = asyncio.Event()
        self._say = say
        self._main: asyncio.Task | None = None
        self.in_flight: Callable[[], int] = lambda: 0

    def pressed(self) -> None:
        self.presses += 1
        if self.presses == 1:
            self.winding_down.set()
            n = self.in_flight()
            if n == 0:  # pressed before the first run began, or between the last run and the end
                self._say("interrupted: no run is in flight; starting no more.")
            else:
                runs = "the run" if n == 1 else f"the {n} runs"
                self._say(f"interrupted: finishing {runs} in flight and starting no more; press Ctrl-C again to stop now.")
        elif self._main is not None and not self._main.done():
            self._main.cancel()


_CURRENT: Interrupt | None = None


def current() -> Interrupt | None:
    """The interrupt of the eval running in this process, if it is watched."""
    return _CURRENT


def winding_down() -> bool:
    return _CURRENT is not None and _CURRENT.winding_down.is_set()


@contextlib.contextmanager
def watch(say: Callable[[str], None]) -> Iterator[Interrupt]:
    """Within a coroutine: SIGINT goes to an `Interrupt` for the block (the main task is the one
    cancelled by a second press). Where the loop cannot take signals (not the main thread), the
    block runs with Python's own KeyboardInterrupt."""
    global _CURRENT
    loop = asyncio.get_running_loop()
    interrupt = Interrupt(say)
    interrupt._main = asyncio.current_task()
    try:
        loop.add_signal_handler(signal.SIGINT, interrupt.pressed)
        installed = True
    except (NotImplementedError, RuntimeError, ValueError):
        installed = False
    _CURRENT = interrupt
    try:
        yield interrupt
    finally:
        _CURRENT = None
        if installed:
            loop.remove_signal_handler(signal.SIGINT)

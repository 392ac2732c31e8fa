"""A one-line busy indicator: shows that the model (or a tool) is working, so a slow endpoint never
looks like a frozen screen. It only animates while busy, so idle screenshots are deterministic."""

from __future__ import annotations

from textual.timer import Timer
from textual.widgets import Static

from ledger_tui.engine.outside import shown

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class BusyIndicator(Static):
    """`start(what)` / `stop()`; the `-busy` class lets the stylesheet colour it."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("ready", id=id)
        self._what = ""
        self._frame = 0
        self._timer: Timer | None = None

    @property
    def busy(self) -> bool:
        return self.has_class("-busy")

    def start(self, what: str) -> None:
        self._what = what
        self.add_class("-busy")
        self._frame = 0
        self._paint()
        if self._timer is None:
            self._timer = self.set_interval(0.1, self._tick)

    def stop(self, queued: int = 0) -> None:
        self.remove_class("-busy")
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.update("ready" if not queued else f"{queued} queued")

    def _tick(self) -> None:
        self._frame = (self._frame + 1) % len(FRAMES)
        self._paint()

    def _paint(self) -> None:
        self.update(shown(f"{FRAMES[self._frame]} {self._what}", markup=True))

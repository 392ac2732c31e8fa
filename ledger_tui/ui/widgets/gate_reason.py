"""Under the gate log: the highlighted decision in words, which a narrow pane's row cuts off.

It grows to the lines the reason needs, up to `MOST_LINES` and half the pane around it (the log
above keeps rows to show); a reason longer than that ends in "…", and only then.
"""

from __future__ import annotations

from rich.text import Text
from textual.geometry import Size
from textual.widgets import Static

from ledger_tui.engine.events import GateDecided
from ledger_tui.engine.outside import shown
from ledger_tui.explain import verdict_label
from ledger_tui.ui.widgets.gate_log import describe, row_class
from ledger_tui.ui.widgets.laid_out import laid_out_size

ROW_CLASSES = ("allow", "revise", "block", "needs-read", "consent", "withheld")
MOST_LINES = 8
FEWEST_LINES = 3  # what the strip may take however short the pane


class GateReason(Static):
    """`show(decided)`: the verdict and what kind of stop it is (violation or needs a read), the
    failed checks and the reason, wrapped to as many lines as it needs (within reason)."""

    _shown: GateDecided | None = None
    _said = Text()
    virtual_size = laid_out_size()  # as many lines as the reason wraps to, within reason

    def show(self, decided: GateDecided | None) -> None:
        if decided is self._shown and self.display == (decided is not None):
            return  # already shown: an update would lay the screen out again
        self._shown = decided
        for name in ROW_CLASSES:
            self.remove_class(f"-{name}")
        if decided is None:
            self.display = False
            return
        d = decided.decision
        self.add_class(f"-{row_class(d)}")
        self._said = Text.assemble((f"{verdict_label(d)} ", "bold"), f"step {decided.seq}: ", shown(describe(d)))
        self.update(self._said)
        self.display = True

    def _lines(self, width: int) -> list[Text]:
        return list(self._said.wrap(self.app.console, max(1, width)))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        room = max(FEWEST_LINES, min(MOST_LINES, container.height // 2))
        return min(len(self._lines(width)), room)

    def render(self) -> Text:
        """The reason wrapped to the width; cut after the lines it was given, with "…"."""
        width, height = self.content_size
        if width <= 0 or height <= 0:
            return self._said
        lines = self._lines(width)
        if len(lines) <= height:
            return self._said
        lines = lines[:height]
        last = lines[-1]
        last.rstrip()
        last.truncate(width - 1)
        last.append("…")
        return Text("\n").join(lines)

"""Under the gate log: the highlighted decision in words, which a narrow pane's row cuts off."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ledger_tui.engine.events import GateDecided
from ledger_tui.engine.outside import shown
from ledger_tui.explain import verdict_label
from ledger_tui.ui.widgets.gate_log import describe, row_class
from ledger_tui.ui.widgets.laid_out import laid_out_size

ROW_CLASSES = ("allow", "revise", "block", "needs-read", "consent", "withheld")


class GateReason(Static):
    """`show(decided)`: the verdict and what kind of stop it is (violation or needs a read), the
    failed checks and the reason, wrapped to a few lines."""

    _shown: GateDecided | None = None
    virtual_size = laid_out_size()  # one to three lines, as the reason wraps

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
        self.update(Text.assemble((f"{verdict_label(d)} ", "bold"), f"step {decided.seq}: ", shown(describe(d))))
        self.display = True

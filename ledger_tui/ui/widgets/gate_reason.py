"""Under the gate log: the highlighted decision in words, which a narrow pane's row cuts off."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ledger_tui.engine.events import GateDecided
from ledger_tui.ui.widgets.gate_log import describe


class GateReason(Static):
    """`show(decided)`: the verdict, the failed checks and the reason, wrapped to a few lines."""

    def show(self, decided: GateDecided | None) -> None:
        for verdict in ("allow", "revise", "block"):
            self.remove_class(f"-{verdict}")
        if decided is None:
            self.display = False
            return
        d = decided.decision
        self.add_class(f"-{d.verdict.value.lower()}")
        self.update(Text.assemble((f"{d.verdict.value} ", "bold"), f"step {decided.seq}: ", describe(d)))
        self.display = True

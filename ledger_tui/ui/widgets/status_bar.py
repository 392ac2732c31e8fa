"""The header line: domain, model, mode, step and token counts, always visible.

Kept to one line that still fits at 80 columns; details (digests, paths) live in the help screen.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ledger_tui.engine.fold import SessionState


class StatusBar(Static):
    """`show(state, step, total)` repaints from a folded state; nothing is counted here."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)
        self.label = ""

    def show(self, state: SessionState, step: int, total: int, label: str = "") -> None:
        self.label = label or self.label
        started = state.started
        t = state.totals
        text = Text()
        if self.label:
            text.append(f"{self.label}  ", "bold")
        if started is not None:
            text.append(f"{started.domain}", "bold")
            text.append(f" · {started.model} · {started.mode}")
        else:
            text.append("(no session_started event)")
        text.append(f"  step {step}/{total}")
        text.append(f"  tokens {t.prompt_tokens}+{t.completion_tokens}")
        text.append(f"  calls {t.model_calls}")
        if state.ended is not None:
            text.append(f"  ended: {state.ended.reason}")
        self.update(text)

"""The header line: domain, model, mode, step and token counts, always visible.

Kept to one line at any width: when the line does not fit, whole parts are dropped, least useful
first (token counts, then the model name, then the call count), so domain, mode and step are never
cut off; details (digests, paths) live in the help screen.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.text import Text
from textual.widget import Widget

from ledger_tui.engine.store.fold import SessionState
from ledger_tui.engine.outside import shown


@dataclass(frozen=True)
class Part:
    """One piece of the line; `keep` ranks it (lower is dropped first when space runs out)."""

    text: str
    keep: int
    style: str = ""


TOKENS, MODEL, CALLS, LABEL, ESSENTIAL = range(5)


class StatusBar(Widget):
    """`show(state, step, total)` repaints from a folded state; nothing is counted here."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.label = ""
        self.parts: list[Part] = []

    def show(self, state: SessionState, step: int, total: int, label: str = "") -> None:
        self.label = label or self.label
        started = state.started
        t = state.totals
        parts: list[Part] = []
        if self.label:
            parts.append(Part(f"{self.label}  ", LABEL, "bold"))
        if started is not None:
            parts.append(Part(shown(started.domain), ESSENTIAL, "bold"))
            parts.append(Part(shown(f" · {started.model}"), MODEL))
            parts.append(Part(shown(f" · {started.mode}"), ESSENTIAL))
        else:
            parts.append(Part("(no session_started event)", ESSENTIAL))
        parts.append(Part(f"  step {step}/{total}", ESSENTIAL))
        parts.append(Part(f"  tokens {t.prompt_tokens}+{t.completion_tokens}", TOKENS))
        # the model's calls and the tools' (the operator's /call and the customer's own actions
        # count as tool calls; a session without a model makes no model call)
        parts.append(Part(f"  model calls {t.model_calls}", CALLS))
        parts.append(Part(f"  tool calls {t.reads + t.writes}", CALLS))
        if t.helper_calls:  # IRMA's helper calls, counted apart from the agent's
            parts.append(Part(f"  helpers {t.helper_calls} ({t.helper_prompt_tokens}+{t.helper_completion_tokens})", CALLS))
        if state.ended is not None:
            parts.append(Part(shown(f"  ended: {state.ended.reason}"), ESSENTIAL))
        self.parts = parts
        self.refresh()

    def fitted(self, width: int) -> list[Part]:
        """The parts that fit in `width` cells, dropping the least useful first."""
        kept = list(self.parts)
        for rank in (TOKENS, MODEL, CALLS, LABEL):
            if sum(len(p.text) for p in kept) <= width:
                break
            kept = [p for p in kept if p.keep != rank]
        return kept

    def render(self) -> Text:
        text = Text(no_wrap=True, overflow="ellipsis")
        for part in self.fitted(self.content_size.width or 10_000):
            text.append(part.text, part.style)
        return text

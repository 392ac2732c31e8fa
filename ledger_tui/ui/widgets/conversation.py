"""The conversation pane: customer, agent, tool calls (collapsed), refusals and notices.

`append(event)` shows one event; every append remembers how to undo itself, so replay moves
backwards by undoing the tail (`rewind_to`) and forwards by appending, never by rebuilding.
"""

from __future__ import annotations

from typing import Callable, Iterable

from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from ledger_tui.engine.events import (
    AssistantMessage,
    Event,
    GateDecided,
    Notice,
    Refusal,
    ToolCallProposed,
    ToolResult,
    UserMessage,
)
from ledger_tui.ui.widgets.tool_call_item import ToolCallItem

Undo = Callable[[], None]


def _nothing() -> None:
    return None


class ConversationView(VerticalScroll):
    """Intent methods: `append(event)`, `rewind_to(seq)`, `sync(events)`."""

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._log: list[tuple[int, Undo]] = []
        self._calls: dict[str, ToolCallItem] = {}
        self.border_title = "Conversation"
        self.can_focus = True

    @property
    def last_seq(self) -> int:
        return self._log[-1][0] if self._log else -1

    @property
    def tool_calls(self) -> list[ToolCallItem]:
        return list(self._calls.values())

    def append(self, event: Event) -> None:
        """Show one event (events that are not conversation are remembered and ignored)."""
        self._log.append((event.seq, self._show(event)))
        self.scroll_end(animate=False, immediate=False)

    def rewind_to(self, seq: int) -> None:
        """Undo everything shown after step `seq`."""
        while self._log and self._log[-1][0] > seq:
            _, undo = self._log.pop()
            undo()

    def sync(self, events: Iterable[Event]) -> None:
        """Show exactly `events` (in step order): rewind to the common prefix, append the rest."""
        wanted = list(events)
        shown = [s for s, _ in self._log]
        common = 0
        for a, b in zip(shown, wanted):
            if a != b.seq:
                break
            common += 1
        self.rewind_to(shown[common - 1] if common else -1)
        with self.app.batch_update():
            for event in wanted[common:]:
                self._log.append((event.seq, self._show(event)))
        self.scroll_end(animate=False, immediate=False)

    def reset(self) -> None:
        self.rewind_to(-2)

    # ------------------------------------------------------------------ one event each
    def _line(self, text: Text, classes: str) -> Undo:
        widget = Static(text, classes=f"line {classes}")
        self.mount(widget)
        return widget.remove

    def _show(self, event: Event) -> Undo:
        if isinstance(event, UserMessage):
            return self._line(Text.assemble(("customer  ", "bold"), event.text), "user")
        if isinstance(event, AssistantMessage):
            if not event.text.strip():
                return _nothing
            return self._line(Text.assemble(("agent  ", "bold"), event.text), "agent")
        if isinstance(event, ToolCallProposed):
            item = ToolCallItem(event)
            self._calls[event.call.id] = item
            self.mount(item)

            def undo_call() -> None:
                self._calls.pop(event.call.id, None)
                item.remove()

            return undo_call
        if isinstance(event, GateDecided):
            target = self._calls.get(event.decision.call.id)
            if target is None:
                return _nothing
            target.set_verdict(event.decision.verdict)
            return lambda: target.set_verdict(None)
        if isinstance(event, ToolResult):
            target = self._calls.get(event.call_id)
            if target is None:
                return _nothing
            target.set_result(event)
            return lambda: target.set_result(None)
        if isinstance(event, Refusal):
            return self._line(Text.assemble(("agent refuses  ", "bold"), event.text), "refusal")
        if isinstance(event, Notice):
            return self._line(Text(f"{event.level}: {event.text}"), f"notice -{event.level}")
        return _nothing

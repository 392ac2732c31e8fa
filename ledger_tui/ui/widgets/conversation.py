"""The conversation pane: customer, agent, tool calls (collapsed), refusals and notices.

`append(event)` shows one event; every append remembers how to undo itself, so replay moves
backwards by undoing the tail and forwards by appending, never by rebuilding. Only a window of the
latest entries is mounted (widgets are not free: thousands of them would make every step slow);
older ones are summarised on one line and come back when the cursor steps back to them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable

from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.widget import Widget
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
from ledger_tui.engine.outside import shown
from ledger_tui.ui.widgets.tool_call_item import ToolCallItem

Undo = Callable[[], None]

LOW = 60  # entries kept mounted after trimming
HIGH = 100  # trim when more than this many are mounted


def _nothing() -> None:
    return None


@dataclass
class Shown:
    """One event as shown: its own widget (if any) and how to take it back."""

    seq: int
    undo: Undo
    widget: Widget | None = None


class ConversationView(VerticalScroll):
    """Intent methods: `append(event)`, `rewind_to(seq)`, `sync(events)`.

    Enter on a tool call opens or closes it (Tab moves between calls); Enter on the pane itself
    opens the latest call and puts the focus on it.
    """

    BINDINGS = [Binding("enter", "open_latest_call", "Open call", id="conversation.open_call", show=False)]

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self._log: list[Shown] = []
        self._calls: dict[str, ToolCallItem] = {}
        self._earlier = Static("", classes="line earlier")
        self._earlier.display = False
        self.border_title = "Conversation"
        self.can_focus = True

    def on_mount(self) -> None:
        self.mount(self._earlier)

    @property
    def last_seq(self) -> int:
        return self._log[-1].seq if self._log else -1

    @property
    def tool_calls(self) -> list[ToolCallItem]:
        return list(self._calls.values())

    def action_open_latest_call(self) -> None:
        if not self._calls:
            return
        item = self.tool_calls[-1]
        item.collapsed = not item.collapsed
        item.query_one("CollapsibleTitle").focus()

    def append(self, event: Event) -> None:
        """Show one event (events that are not conversation are remembered and ignored)."""
        self._log.append(self._show(event))
        if len(self._log) > HIGH:
            self._trim(len(self._log) - LOW)
            self._earlier.display = True
            self._earlier.update(Text("… earlier conversation not shown", style="dim"))
        self.scroll_end(animate=False, immediate=False)

    def rewind_to(self, seq: int) -> None:
        """Undo everything shown after step `seq`."""
        while self._log and self._log[-1].seq > seq:
            self._log.pop().undo()

    def sync(self, events: Iterable[Event]) -> None:
        """Show the tail of `events` (in step order), touching only the entries that differ."""
        wanted = list(events)
        last = wanted[-1].seq if wanted else -1
        self.rewind_to(last)
        with self.app.batch_update():
            shown_last = self.last_seq
            for event in wanted:
                if event.seq > shown_last:
                    self._log.append(self._show(event))
            if len(self._log) > HIGH:
                self._trim(len(self._log) - LOW)
            first = self._log[0].seq if self._log else last + 1
            earlier = [e for e in wanted if e.seq < first]
            if len(self._log) < LOW and earlier:
                self._prepend(earlier[-(LOW - len(self._log)) :])
                first = self._log[0].seq
                earlier = [e for e in wanted if e.seq < first]
            self._earlier.display = bool(earlier)
            if earlier:
                self._earlier.update(Text(f"… {len(earlier)} earlier events (step back to see them)", style="dim"))
        self.scroll_end(animate=False, immediate=False)

    def reset(self) -> None:
        self.rewind_to(-2)

    # ------------------------------------------------------------------ the window
    def _trim(self, count: int) -> None:
        """Unmount the oldest `count` entries (their decorations go with their call items)."""
        dropped, self._log = self._log[:count], self._log[count:]
        for entry in dropped:
            if entry.widget is not None:
                if isinstance(entry.widget, ToolCallItem):
                    self._calls.pop(entry.widget.proposed.call.id, None)
                entry.widget.remove()

    def _prepend(self, events: list[Event]) -> None:
        """Mount older entries before the first one shown, in order."""
        anchor = next((s.widget for s in self._log if s.widget is not None), None)
        entries = [self._show(e, before=anchor) for e in events]
        self._log = entries + self._log

    # ------------------------------------------------------------------ one event each
    def _mount(self, widget: Widget, before: Widget | None) -> None:
        if before is not None and before.parent is self:
            self.mount(widget, before=before)
        else:
            self.mount(widget)

    def _line(self, event: Event, text: Text, classes: str, before: Widget | None) -> Shown:
        widget = Static(text, classes=f"line {classes}")
        self._mount(widget, before)
        return Shown(event.seq, widget.remove, widget)

    def _refuser(self, refusal: Refusal) -> str:
        """Who is refused: the gate turning down the operator's own /call is not the agent refusing."""
        item = self._calls.get(refusal.call_id or "")
        if item is not None and item.proposed.call.requestor == "operator":
            return "operator's call refused  "
        return "agent refuses  "

    def _show(self, event: Event, before: Widget | None = None) -> Shown:
        if isinstance(event, UserMessage):
            return self._line(event, Text.assemble(("customer  ", "bold"), shown(event.text)), "user", before)
        if isinstance(event, AssistantMessage):
            if not event.text.strip():
                return Shown(event.seq, _nothing)
            who = "agent (operator)  " if event.author == "operator" else "agent  "  # /say in play
            return self._line(event, Text.assemble((who, "bold"), shown(event.text)), "agent", before)
        if isinstance(event, ToolCallProposed):
            item = ToolCallItem(event)
            self._calls[event.call.id] = item
            self._mount(item, before)

            def undo_call() -> None:
                self._calls.pop(event.call.id, None)
                item.remove()

            return Shown(event.seq, undo_call, item)
        if isinstance(event, GateDecided):
            target = self._calls.get(event.decision.call.id)
            if target is None:
                return Shown(event.seq, _nothing)
            target.set_decision(event.decision)
            return Shown(event.seq, lambda: target.set_decision(None))
        if isinstance(event, ToolResult):
            target = self._calls.get(event.call_id)
            if target is None:
                return Shown(event.seq, _nothing)
            target.set_result(event)
            return Shown(event.seq, lambda: target.set_result(None))
        if isinstance(event, Refusal):
            return self._line(event, Text.assemble((self._refuser(event), "bold"), shown(event.text)), "refusal", before)
        if isinstance(event, Notice):
            return self._line(event, Text(shown(f"{event.level}: {event.text}")), f"notice -{event.level}", before)
        return Shown(event.seq, _nothing)

"""The conversation pane: customer, agent, tool calls (collapsed), refusals and notices.

`append(event)` shows one event; every append remembers how to undo itself, so replay moves
backwards by undoing the tail and forwards by appending, never by rebuilding. Only a window of the
latest entries is mounted (widgets are not free: thousands of them would make every step slow);
older ones are summarised on one line and come back when the cursor steps back to them. `sync`
reads only the last `HIGH` events it is given and mounts at most a window's worth of widgets, however
far the cursor moved: a jump across 100,000 events costs what a jump across 100 does.
"""

from __future__ import annotations

import asyncio
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Awaitable, Callable, Mapping, Sequence

from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.geometry import Size
from textual.layout import DockArrangeResult
from textual.widget import Widget
from textual.widgets import Static

from ledger_tui.engine.events import (
    AssistantMessage,
    ConfirmationAnswered,
    ConfirmationRequested,
    QuestionAnswered,
    QuestionRequested,
    Event,
    GateDecided,
    GateDecision,
    HelperCall,
    Notice,
    ReformulatedInput,
    Refusal,
    ToolCallProposed,
    ToolResult,
    UserMessage,
)
from ledger_tui.engine.outside import shown
from ledger_tui.ui.messages import CardAnswered
from ledger_tui.ui.search import entry as searched
from ledger_tui.ui.widgets.copying import copy_out, nothing_to_copy
from ledger_tui.ui.widgets.laid_out import laid_out_size
from ledger_tui.ui.widgets.tool_call_item import ToolCallItem

Undo = Callable[[], None]

LOW = 60  # entries kept mounted after trimming
HIGH = 100  # trim when more than this many are mounted
HOLD = 0.5  # seconds the screen waits, at most, for the widgets a step mounts or removes


def _nothing() -> None:
    return None


class Line(Static):
    """One line of the conversation (customer, agent, refusal, notice, helper, card).

    A confirmation card awaiting the customer's answer (`-open`, in play) takes the focus: `y` and
    `n` answer it for the customer."""

    virtual_size = laid_out_size()
    BINDINGS = [
        Binding("y", "answer('yes')", "Yes", id="card.yes"),
        Binding("n", "answer('no')", "No", id="card.no"),
    ]

    def action_answer(self, answer: str) -> None:
        if self.has_class("-open"):
            self.post_message(CardAnswered(answer))


def _styled_as(widget: Widget) -> frozenset[str]:
    return widget.styled_as if isinstance(widget, ToolCallItem) else frozenset(widget.classes)


def _outcomes(events: Sequence[Event]) -> dict[str, tuple[GateDecision | None, ToolResult | None]]:
    """Each call's verdict and result among these events, by call id."""
    decisions = {e.decision.call.id: e.decision for e in events if isinstance(e, GateDecided)}
    results = {e.call_id: e for e in events if isinstance(e, ToolResult)}
    return {i: (decisions.get(i), results.get(i)) for i in decisions.keys() | results.keys()}


@dataclass
class Shown:
    """One event as shown: its own widget (if any) and how to take it back."""

    seq: int
    undo: Undo
    widget: Widget | None = None
    event: Event | None = None
    applied: bool = True  # False: a result or decision whose call was not shown when it came
    target: ToolCallItem | None = None  # the call item a result or decision decorates


class ConversationView(VerticalScroll):
    """Intent methods: `append(event)`, `rewind_to(seq)`, `sync(events)`.

    Enter on a tool call opens or closes it (Tab moves between calls); Enter on the pane itself
    opens the latest call and puts the focus on it.
    """

    BINDINGS = [
        Binding("enter", "open_latest_call", "Open call", id="conversation.open_call", show=False),
        Binding("c", "copy", "Copy", id="conversation.copy", show=False, tooltip="the focused call, else the search's hit, else the latest entry"),
    ]
    # F2 maximizes it as F3 and F4 do the other panes (a scrolling container refuses by default)
    ALLOW_MAXIMIZE = True

    virtual_size = laid_out_size()  # the entries' height, measured by the layout that places them

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.cards: dict[str, Line] = {}  # each confirmation card's line, by card id
        self._log: list[Shown] = []
        self._first_pos = 0  # position of the first entry of `_log` among the events synced
        self._earlier_count = 0  # what the "earlier events" line says
        # built or reused since the last flush, to put in place in order: (widget, before, new)
        self._pending: list[tuple[Widget, Widget | None, bool]] = []
        # widgets taken out of the window during one call, hidden, to show the next entries of
        # their kind: a jump rebinds them instead of mounting new ones (mounting is most of a
        # jump's cost); those left over are removed before the call returns
        self._spare: dict[type[Widget], list[Widget]] = {Line: [], ToolCallItem: []}
        self._calls: dict[str, ToolCallItem] = {}
        # the verdict and result each call shown by `sync` gets, to reuse an item that looks so
        self._outcomes: dict[str, tuple[GateDecision | None, ToolResult | None]] = {}
        # mounts and removals under way (Textual finishes them in its message loop)
        self._unsettled: list[Awaitable[object]] = []
        self._holding: set[asyncio.Task[None]] = set()
        self._held: list[AbstractContextManager[None]] = []  # screen updates held for them
        # who asked for each call, by id (replay: the whole trajectory's), for a refusal whose
        # call is not in the window
        self.requestors: Mapping[str, str] = {}
        self._earlier = Line("", classes="line earlier")
        self._earlier.display = False
        self.border_title = "Conversation"
        self.can_focus = True
        self._hit: Widget | None = None  # the entry a search chose, highlighted

    def on_mount(self) -> None:
        self.mount(self._earlier)
        self.anchor()

    def follow(self) -> None:
        """Keep the latest entries in view. The pane is anchored to its end: the layout that places
        new or rebound entries also scrolls to them, in the same frame (scrolling after the next
        refresh drew every change twice, once at the old position, and left the pane short of its
        end when the screen settled). Scrolling up, or opening a call, lets go of the end until the
        cursor moves or the next entry comes."""
        self.anchor()

    def arrange(self, size: Size, optimal: bool = False) -> DockArrangeResult:
        """Entries shorter than the pane are not anchored: they start at its top, as unanchored
        (Textual would scroll them down to end at its bottom)."""
        arrangement = super().arrange(size, optimal)
        if self.is_anchored and arrangement.spatial_map.total_region.bottom <= size.height:
            self.anchor(False)
        return arrangement

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
        self.release_anchor()  # the pane stays where it is while the call opens below
        item.collapsed = not item.collapsed
        item.query_one("CollapsibleTitle").focus()

    def reveal(self, seq: int) -> bool:
        """Highlight the entry of step `seq` (a result or a verdict: its call, opened for a result)
        and scroll it into view; False if the window does not hold it."""
        found = next((e for e in reversed(self._log) if e.seq == seq), None)
        widget = None if found is None else found.widget or found.target
        if found is None or widget is None:
            return False
        self.unhighlight()
        self._hit = widget
        widget.add_class("-hit")
        if isinstance(found.event, ToolResult) and isinstance(widget, ToolCallItem):
            widget.collapsed = False
        self.release_anchor()  # stays on the hit, not pulled to the end
        self.call_after_refresh(self.scroll_to_widget, widget, animate=False)  # placed by then
        return True

    def unhighlight(self) -> None:
        if self._hit is not None:
            self._hit.remove_class("-hit")
            self._hit = None

    def copied(self) -> tuple[str, str] | None:
        """What `c` copies: (what it is, text): the call whose title has the focus (or the open
        card), else the entry a search chose, else the latest entry; the text as recorded."""
        focused = self.screen.focused
        item = next((w for w in focused.ancestors_with_self if isinstance(w, ToolCallItem)), None) if focused else None
        shown_now = [e for e in self._log if e.widget is not None and e.widget.display]
        if item is None:
            widget = focused if isinstance(focused, Line) and focused.parent is self else None  # an open card
            if widget is None and self._hit is not None and self._hit.parent is self:
                widget = self._hit
            if widget is None and shown_now:
                widget = shown_now[-1].widget
            item = widget if isinstance(widget, ToolCallItem) else None
            chosen = next((e for e in shown_now if e.widget is widget), None) if item is None else None
            if chosen is not None and chosen.event is not None:
                said = searched(0, chosen.event)
                if said is not None:
                    return f"{said.where} at step {chosen.seq}", said.text
        if item is None:
            return None
        call = item.proposed.call
        lines = [call.signature() + (f" → {item.decision.shown_verdict()}" if item.decision is not None else "")]
        if item.result is not None:
            head = "gate feedback" if not item.result.executed else ("error" if item.result.error else "result")
            lines.append(f"{head}: {item.result.content}")
        return f"the call {call.name} at step {item.proposed.seq}", "\n".join(lines)

    def action_copy(self) -> None:
        copied = self.copied()
        if copied is None:
            nothing_to_copy(self, "conversation")
        else:
            copy_out(self, *copied)

    def open_card(self, card: str) -> None:
        """The card awaits the customer's answer (play): it takes the focus, `y` / `n` answer it."""
        line = self.cards.get(card)
        if line is None:
            return
        line.add_class("-open")
        line.can_focus = True
        self.call_after_refresh(line.focus)

    def close_card(self, card: str) -> None:
        line = self.cards.get(card)
        if line is not None:
            line.remove_class("-open")
            line.can_focus = False

    def append(self, event: Event) -> None:
        """Show one event (events that are not conversation are remembered and ignored)."""
        self._log.append(self._show(event))
        self._flush()
        if len(self._log) > HIGH:
            self._trim(len(self._log) - LOW)
            self._release()
            self._earlier.display = True
            self._earlier.update(Text("… earlier conversation not shown", style="dim"))
            self._earlier_count = -1
        self.follow()
        self._hold_frame()

    def rewind_to(self, seq: int) -> None:
        """Undo everything shown after step `seq`."""
        self._rewind(seq)
        self._release()
        self._hold_frame()

    def _rewind(self, seq: int) -> None:
        cut = self._cut(seq)
        if cut < len(self._log):
            self._drop(self._log[cut:])
            self._log = self._log[:cut]

    def _cut(self, seq: int) -> int:
        """How many entries are at or before step `seq`."""
        cut = len(self._log)
        while cut and self._log[cut - 1].seq > seq:
            cut -= 1
        return cut

    def sync(self, events: Sequence[Event], total: int | None = None) -> None:
        """Show the tail of the visible events as of the cursor, touching only the entries that differ.

        `events` are the visible events in step order, or only their tail when `total` (how many
        there are in all) is given: the last `HIGH` are all it reads. The window is the one that
        appending every event and trimming would leave (between `LOW` and `HIGH` entries), but an
        entry that would be trimmed at once is never mounted."""
        total = len(events) if total is None else total
        self.unhighlight()  # the cursor moved: a search highlights its hit again
        tail = list(events[-HIGH:]) if total else []
        self._outcomes = _outcomes(tail)
        offset = total - len(tail)  # position of tail[0] among all the events
        last = tail[-1].seq if tail else -1
        with self.app.batch_update():
            kept = self._cut(last)
            new = total - (self._first_pos + kept) if kept else total
            if kept + new > HIGH and new >= LOW:  # nothing shown now stays: mount only the last LOW
                self._trim(len(self._log))
                new = LOW
            else:
                self._rewind(last)
                if kept + new > HIGH:
                    self._trim(kept + new - LOW)
            if not self._log:
                self._first_pos = total - new
            self._log.extend(self._show(e) for e in tail[len(tail) - new :])
            self._flush()
            if len(self._log) < LOW and self._first_pos > 0:
                count = min(self._first_pos, LOW - len(self._log))
                start = self._first_pos - count - offset
                self._prepend(tail[start : start + count])
            earlier = self._first_pos if self._log else total
            self._earlier.display = bool(earlier)
            if earlier and earlier != self._earlier_count:  # an update re-lays out the pane
                self._earlier.update(Text(f"… {earlier} earlier events (step back to see them)", style="dim"))
            self._earlier_count = earlier
            self._release()
        self.follow()
        self._hold_frame()

    def _hold_frame(self) -> None:
        """Mounting and removing widgets finish after the call that asked for them, in Textual's
        message loop; drawn meanwhile, a step would be drawn twice: first without its new entries
        (the other panes already moved), then laid out and drawn again with them. The screen is
        not drawn until they are in place or gone (at most `HOLD` seconds), so it is drawn once."""
        if not self._unsettled:
            return
        unsettled, self._unsettled = self._unsettled, []
        batch = self.app.batch_update()
        batch.__enter__()

        def release() -> None:
            if batch in self._held:
                self._held.remove(batch)
                batch.__exit__(None, None, None)
                self.screen.check_idle()  # the screen draws what waited (the app alone is told)

        async def settle(done: Awaitable[object]) -> None:
            await done

        async def wait() -> None:
            try:
                await asyncio.wait([asyncio.ensure_future(settle(done)) for done in unsettled], timeout=HOLD)
            finally:
                release()

        self._held.append(batch)
        task = asyncio.get_running_loop().create_task(wait())
        self._holding.add(task)
        task.add_done_callback(self._holding.discard)

    def on_unmount(self) -> None:
        for batch in list(self._held):  # leaving the screen: nothing to wait for any more
            self._held.remove(batch)
            batch.__exit__(None, None, None)

    def reset(self) -> None:
        self.rewind_to(-2)

    # ------------------------------------------------------------------ the window
    def _trim(self, count: int) -> None:
        """Unmount the oldest `count` entries (their decorations go with their call items)."""
        if count <= 0:
            return
        dropped, self._log = self._log[:count], self._log[count:]
        self._first_pos += len(dropped)
        going = self._drop(dropped)
        for entry in self._log:  # a result or decision kept whose call goes: pending again
            if entry.target is not None and entry.target in going:
                entry.target, entry.undo, entry.applied = None, _nothing, False

    def _drop(self, entries: list[Shown]) -> set[Widget]:
        """Take back these entries: their widgets are hidden and kept to be reused (beyond
        `HIGH` spares, removed in one call), and a result or a decision is undone only if its call
        item stays. Returns the widgets taken out."""
        widgets = [entry.widget for entry in entries if entry.widget is not None]
        going = set(widgets)
        for entry in reversed(entries):
            if entry.widget is None:
                target = entry.target
                if target is None or (target not in going and self._calls.get(target.proposed.call.id) is target):
                    entry.undo()
            elif isinstance(entry.widget, ToolCallItem):
                call_id = entry.widget.proposed.call.id
                if self._calls.get(call_id) is entry.widget:
                    del self._calls[call_id]
        extra: list[Widget] = []
        for widget in widgets:
            spare = self._spare.get(type(widget))
            if spare is None or widget.parent is not self:
                extra.append(widget)
            else:
                widget.display = False
                spare.append(widget)
        if extra:
            self._unsettled.append(self.remove_children(extra))
        return going

    def _release(self) -> None:
        """Remove the spares no entry took: the pane holds only the window's widgets."""
        left = [w for spare in self._spare.values() for w in spare]
        for spare in self._spare.values():
            spare.clear()
        if left:
            self._unsettled.append(self.remove_children(left))

    def _prepend(self, events: list[Event]) -> None:
        """Mount older entries before the first one shown, in order; a result or a decision already
        in the window whose call is among them now decorates it."""
        anchor = next((s.widget for s in self._log if s.widget is not None), None)
        entries = [self._show(e, before=anchor) for e in events]
        self._flush()
        self._first_pos -= len(entries)
        for i, entry in enumerate(self._log):
            if not entry.applied and entry.event is not None:
                again = self._show(entry.event)
                if again.applied:
                    self._log[i] = again
        self._log = entries + self._log

    def _flush(self) -> None:
        """Put the widgets built or reused since the last flush in place, in order: each run of
        new ones mounted in one call, each reused one moved and shown."""
        pending, self._pending = self._pending, []
        run: list[Widget] = []
        run_before: Widget | None = None

        def mount_run() -> None:
            if run:
                if run_before is not None and run_before.parent is self:
                    self._unsettled.append(self.mount_all(run, before=run_before))
                else:
                    self._unsettled.append(self.mount_all(run))
                run.clear()

        for widget, before, new in pending:
            if new:
                if run and before is not run_before:
                    mount_run()
                run_before = before
                run.append(widget)
                continue
            mount_run()
            if before is not None and before.parent is self:
                if before is not widget:
                    self.move_child(widget, before=before)
            elif self.children[-1] is not widget:
                self.move_child(widget, after=self.children[-1])
            widget.display = True
            if isinstance(widget, ToolCallItem):
                widget.settle()
        mount_run()

    def _reuse(self, kind: type[Widget], look: frozenset[str]) -> Widget | None:
        """A spare widget of this kind, one already styled with these classes if there is one
        (restyling a widget is most of what reusing it costs)."""
        spare = self._spare[kind]
        for i in range(len(spare) - 1, -1, -1):
            if _styled_as(spare[i]) == look:
                return spare.pop(i)
        return spare.pop() if spare else None

    # ------------------------------------------------------------------ one event each
    def _mount(self, widget: Widget, before: Widget | None, new: bool = True) -> None:
        self._pending.append((widget, before, new))

    def _line(self, event: Event, text: Text, classes: str, before: Widget | None) -> Shown:
        widget = self._reuse(Line, frozenset(("line", *classes.split())))
        if widget is None:
            widget = Line(text, classes=f"line {classes}")
            self._mount(widget, before)
        else:
            widget.update(text)
            if set(widget.classes) != {"line", *classes.split()}:
                widget.set_classes(f"line {classes}")
            self._mount(widget, before, new=False)
        return Shown(event.seq, _nothing, widget, event)

    def _refuser(self, refusal: Refusal) -> str:
        """Who is refused: the gate turning down the operator's own /call is not the agent refusing."""
        item = self._calls.get(refusal.call_id or "")
        requestor = item.proposed.call.requestor if item is not None else self.requestors.get(refusal.call_id or "")
        if requestor == "operator":
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
            decision, result = self._outcomes.get(event.call.id, (None, None))
            item = self._reuse(ToolCallItem, ToolCallItem.look(event, decision, result))
            if item is None:
                item = ToolCallItem(event)
                self._mount(item, before)
            else:
                assert isinstance(item, ToolCallItem)
                item.rebind(event)
                self._mount(item, before, new=False)
            self._calls[event.call.id] = item
            return Shown(event.seq, _nothing, item, event)
        if isinstance(event, GateDecided):
            target = self._calls.get(event.decision.call.id)
            if target is None:
                return Shown(event.seq, _nothing, event=event, applied=False)
            target.set_decision(event.decision)
            return Shown(event.seq, lambda: target.set_decision(None), event=event, target=target)
        if isinstance(event, ToolResult):
            target = self._calls.get(event.call_id)
            if target is None:
                return Shown(event.seq, _nothing, event=event, applied=False)
            target.set_result(event)
            return Shown(event.seq, lambda: target.set_result(None), event=event, target=target)
        if isinstance(event, Refusal):
            return self._line(event, Text.assemble((self._refuser(event), "bold"), shown(event.text)), "refusal", before)
        if isinstance(event, ConfirmationRequested):  # the system asks, not the model
            text = Text.assemble((f"confirmation card ({event.card})\n", "bold"), shown(event.text))
            entry = self._line(event, text, "card", before)
            assert isinstance(entry.widget, Line)
            entry.widget.can_focus = False
            self.cards[event.card] = entry.widget
            return entry
        if isinstance(event, ConfirmationAnswered):
            ran = f"; runs {', '.join(event.runs)}" if event.runs else "; nothing runs"
            text = Text.assemble(("card answered  ", "bold"), f"{event.answer} — {shown(event.reason)}{ran}")
            return self._line(event, text, f"card-answer -{event.answer}", before)
        if isinstance(event, QuestionRequested):  # the system asks, not the model
            again = ", asked again" if event.attempt > 1 else ""
            text = Text.assemble((f"question ({event.question}, about {event.record}{again})\n", "bold"), shown(event.text))
            entry = self._line(event, text, "card", before)
            assert isinstance(entry.widget, Line)
            entry.widget.can_focus = False
            return entry
        if isinstance(event, QuestionAnswered):
            if event.value is not None:
                then = f"; gated again as {', '.join(event.runs)}" if event.runs else ""
                text = Text.assemble(("question answered  ", "bold"), f"{shown(event.reason)}{then}")
                return self._line(event, text, "card-answer -yes", before)
            text = Text.assemble(("question answered  ", "bold"), f"unclear — {shown(event.reason)}; nothing recorded")
            return self._line(event, text, "card-answer -unclear", before)
        if isinstance(event, Notice):
            return self._line(event, Text(shown(f"{event.level}: {event.text}")), f"notice -{event.level}", before)
        if isinstance(event, HelperCall):  # IRMA's helper calls, before the agent answers
            from ledger_tui.engine.agents.irma import clipped  # (with the model client: only IRMA's runs need it)

            tokens = f"  ({event.prompt_tokens:,} + {event.completion_tokens:,} tokens"
            tokens += ", cut at the completion cap)" if event.finish_reason == "length" else ")"
            text = Text.assemble((f"IRMA {event.helper} helper  ", "bold"), shown(clipped(event.output) or "(empty)"), (tokens, "dim"))
            return self._line(event, text, "helper", before)
        if isinstance(event, ReformulatedInput):
            memory = f", {event.earlier} earlier customer message{'s' if event.earlier != 1 else ''}" if event.earlier else ""
            what = f"the customer's latest message with the helpers' checklist and tool suggestions{memory} ({event.text.count(chr(10)) + 1} lines)"
            return self._line(event, Text.assemble(("agent reads  ", "bold"), what), "helper", before)
        return Shown(event.seq, _nothing)

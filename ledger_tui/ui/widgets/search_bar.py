"""The search bar: a query over the whole run, and which of its hits the panes show.

It opens under the panes (`/` in replay, `Ctrl+F` in play), searches as the operator types
(`ledger_tui.ui.search`, over the events, not the widgets) and says how many steps match, in which
panes, or that nothing does. `Enter` / `Shift+Enter` (or `↓` / `↑`, for terminals that send
Shift+Enter as Enter) choose the next or previous hit by step, from where the screen says it is;
the screen moves there (`HitChosen`) and marks the hits' steps (`HitsFound`). `Escape` closes it.
"""

from __future__ import annotations

from typing import Callable, Sequence

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Input, Static

from ledger_tui.engine.events import Event
from ledger_tui.engine.outside import shown
from ledger_tui.ui.messages import HitChosen, HitsFound, SearchClosed
from ledger_tui.ui.search import Found, Hit, SearchIndex


class SearchInput(Input):
    """The query line: its keys step between hits and close the search."""

    BINDINGS = [
        Binding("shift+enter,up", "step(False)", "Previous hit", id="search.previous", show=False),
        Binding("down", "step(True)", "Next hit", id="search.next", show=False),
        Binding("escape", "close", "Close search", id="search.close", show=False),
    ]

    def action_step(self, forward: bool) -> None:
        bar = self.parent
        if isinstance(bar, SearchBar):
            bar.step(forward)

    def action_close(self) -> None:
        bar = self.parent
        if isinstance(bar, SearchBar):
            bar.close()


class SearchBar(Horizontal):
    """`open(events, origin)`, `step(forward)`, `close()`; `found` is the current query's hits."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.found = Found("", ())
        self.current: Hit | None = None  # the hit last chosen
        self._events: Sequence[Event] = ()
        self._index: SearchIndex | None = None
        self._searched: tuple[str, int] = ("", 0)  # the query and how many events `found` is for
        self._origin: Callable[[], int | None] = lambda: None
        self._return_to: Widget | None = None  # focused before the search opened

    def compose(self) -> ComposeResult:
        yield Static(Text("search", style="bold"), id="search-label")
        yield SearchInput(placeholder="an id, a word, a check…", id="search-input")
        yield Static(id="search-status")

    @property
    def is_open(self) -> bool:
        return self.has_class("-open")

    @property
    def typing(self) -> bool:
        """The query line has the focus: letters, arrows, Home and End are the query's."""
        return self.is_open and self.query_one(SearchInput).has_focus

    def open(self, events: Sequence[Event], origin: Callable[[], int | None]) -> None:
        """Show the bar over `events` (a list that may grow: play) and focus the query, its last
        text selected. `origin` gives the step Enter goes on from (None: from the hit last chosen,
        or the end)."""
        if self._events is not events:
            self._index, self.current, self._searched = None, None, ("", 0)
        self._events, self._origin = events, origin
        box = self.query_one(SearchInput)
        if not self.is_open:
            focused = self.screen.focused
            self._return_to = focused if focused is not None and not self._holds(focused) else None
            self.add_class("-open")
            if box.value:  # the last query's hits, again
                self._search(box.value)
        box.focus()
        box.select_all()

    def close(self) -> None:
        if not self.is_open:
            return
        self.remove_class("-open")
        self.current = None
        self.post_message(HitsFound([]))
        self.post_message(SearchClosed())
        back = self._return_to
        self._return_to = None
        if back is not None and back.is_attached and back.focusable:
            back.focus()
        elif self.screen.focused is None or self._holds(self.screen.focused):
            self.screen.focus_next()

    def _holds(self, widget: Widget) -> bool:
        return self in widget.ancestors_with_self

    def step(self, forward: bool = True) -> Hit | None:
        """Choose the next (or previous) hit by step and tell the screen; None when nothing matches."""
        self._search(self.query_one(SearchInput).value, announce=False)
        origin = self._origin()
        if origin is None:
            origin = self.current.step if self.current is not None else len(self._events) - 1
        chosen = self.found.next_after(origin, forward)
        if chosen is None:
            self._say(self.found.summary())
            return None
        hit, wrapped = chosen
        self.current = hit
        self._say(self.found.summary(hit, wrapped))
        self.post_message(HitChosen(hit))
        return hit

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.current = None
        self._search(event.value)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.step(True)

    def _search(self, query: str, announce: bool = True) -> None:
        if self._index is None:
            self._index = SearchIndex()
        if not announce and (query, len(self._events)) == self._searched:
            return  # the same query over the same events: the same hits
        self._searched = (query, len(self._events))
        self._index.catch_up(self._events)
        before = self.found
        self.found = self._index.find(query)
        if self.current is not None and self.found.at(self.current.step) is None:
            self.current = None
        if announce or self.found.steps != before.steps:
            self._say(self.found.summary(self.current))
            self.post_message(HitsFound(self.found.steps))

    def _say(self, line: str) -> None:
        self.set_class(bool(self.found.query) and not self.found.hits, "-no-match")
        self.query_one("#search-status", Static).update(Text(shown(line)))

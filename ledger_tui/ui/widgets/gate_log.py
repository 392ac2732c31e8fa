"""The gate log: one row per gate decision, coloured by verdict; Enter explains the row.

A stop that only needs a read (the agent lacks evidence a suggested read supplies) says
`REVISE · read` and has its own colour; a bare `REVISE` or `BLOCK` is a violation.

Rows are keyed by the decision's step, so `record` appends in place and `sync` (replay) only adds
or removes the rows that differ. A verdict filter hides rows without forgetting them.

Only the latest decisions are listed (between `LIST_MIN` and `LIST_MAX` rows; a table of thousands
of rows costs ~0.1 ms a row to fill and removing one row rebuilds its index): the border's subtitle
counts the earlier ones, which come back when the cursor steps back to them. The title's counts
are kept as decisions come and go, so a step costs the same at the 5,000th decision as at the 5th.
A drawn cell is kept by what it says (its verdict's colour and text) and where it is; the table
itself forgets every cell whenever a row comes or goes. A step that lists one more decision draws
that row, not every row, and a jump draws mostly step numbers: verdicts, tools and reasons recur.

The reason takes the width the other columns leave, ending in "…" where it is cut (the line under
the log says it whole); maximized, the log wraps each reason onto as many lines as it needs.
"""

from __future__ import annotations

from typing import Callable, Sequence

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.cache import LRUCache
from textual.content import Content
from textual.widgets import DataTable
from textual.widgets.data_table import Column, ColumnKey

from ledger_tui.engine.events import GateDecided, GateDecision, Verdict
from ledger_tui.engine.outside import shown
from ledger_tui.engine.store.lazy import briefs
from ledger_tui.explain import verdict_tag
from ledger_tui.ui.messages import DecisionChosen, DecisionHighlighted
from ledger_tui.ui.search import decision_text
from ledger_tui.ui.widgets.copying import copy_out, nothing_to_copy

LIST_MIN = 25  # fewer rows listed (and earlier ones exist): list LIST_FILL again
LIST_FILL = 50
LIST_MAX = 100  # more rows listed: keep the latest LIST_FILL
REBUILD = 20  # removing more rows than this at once: rebuild instead (removing a row is O(rows))
REASON_MIN = 12  # the reason column's width when the others leave less


class FillColumn(Column):
    """A column as wide as the table's other columns leave, so its text ends at the pane's edge."""

    def get_render_width(self, data_table: DataTable[object]) -> int:
        others = sum(c.get_render_width(data_table) for c in data_table.columns.values() if c is not self)
        return max(REASON_MIN + 2 * data_table.cell_padding, data_table.scrollable_content_region.width - others)


class GateLog(DataTable[Text]):
    """`record(decided)` for live events; `sync(gate_log)` for replay; `filter(verdict)`."""

    COMPONENT_CLASSES = {
        "gate-log--allow", "gate-log--revise", "gate-log--block", "gate-log--needs-read", "gate-log--consent", "gate-log--withheld",
    }
    BINDINGS = [
        Binding("enter", "explain", "Why?", id="gate_log.explain"),
        Binding("c", "copy", "Copy", id="gate_log.copy", show=False, tooltip="the highlighted decision: call, verdict, failed checks, reason"),
        # the cursor goes to the first/last row; the header row stays in view
        Binding("home", "scroll_top", "First row", id="gate_log.first", show=False),
        Binding("end", "scroll_bottom", "Last row", id="gate_log.last", show=False),
    ]

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=False)
        self._decisions: Sequence[GateDecided] = []  # every decision as of now, in order
        self._listed: list[GateDecided] = []  # the rows: the latest decisions the filter shows
        self._by_key: dict[str, GateDecided] = {}
        self._counts: dict[str, int] = {}  # verdict value (and "read") -> decisions
        # each decision's verdict and whether it only needs a read, worked out once (by identity:
        # the decision is kept with it, so its id is not reused)
        self._kinds: dict[int, tuple[GateDecided, str, bool]] = {}
        self._verdict_filter: Verdict | None = None
        self.title_text = "Gate log"
        self.border_title = self.title_text
        self.ungated = ""  # the session's mode when it has no gate (baseline, ledger, irma)
        self._drawn_title = ""
        self._cells: LRUCache[tuple[object, ...], list[list[Segment]]] = LRUCache(16 * LIST_MAX)
        self._looks: dict[int, tuple[tuple[str, str], ...]] = {}  # each listed row's cells: (class, text)
        self._wrapping = False  # maximized: each reason on as many lines as it needs
        self._wrapped_width = 0

    def on_mount(self) -> None:
        self.add_column("step", key="step")  # as wide as the longest step listed (100,000 and up: 6)
        self.add_column("verdict", key="verdict")  # as wide as its widest label ("REVISE · read")
        self.add_column("tool", key="call")
        self.add_column(Text("failed checks and reason", overflow="ellipsis", no_wrap=True), key="reason")
        column = self.columns[ColumnKey("reason")]
        self.columns[column.key] = FillColumn(column.key, column.label, column.width, column.content_width, column.auto_width)

    # ------------------------------------------------------------------ intent methods
    @property
    def decisions(self) -> list[GateDecided]:
        """Every decision recorded (filtered or not), in order."""
        return list(self._decisions)

    @property
    def verdict_filter(self) -> Verdict | None:
        return self._verdict_filter

    @property
    def earlier(self) -> int:
        """Decisions the filter shows that are before the first row listed."""
        return self._passing() - len(self._listed)

    def record(self, decided: GateDecided) -> None:
        """Append one decision (shown if it passes the filter) and move the cursor to it."""
        if not isinstance(self._decisions, list):
            self._decisions = list(self._decisions)
        self._decisions.append(decided)
        self._count(decided, 1)
        if self._shows(decided):
            if len(self._listed) >= LIST_MAX:
                self._relist()
            else:
                self._list(decided)
            self.move_cursor(row=self.row_count - 1)
        self._update_title()

    def sync(self, decisions: Sequence[GateDecided]) -> None:
        """Show exactly these decisions (replay), touching only the rows that differ.

        `decisions` are read from their end: a replay's decisions at any step are a prefix of the
        trajectory's, so what differs is the tail."""
        old, new = self._decisions, decisions
        common = min(len(old), len(new))
        while common and old[common - 1].seq != new[common - 1].seq:
            common -= 1
        shows = self._shows_at(old)
        gone = [i for i in range(common, len(old)) if shows(i)]
        self._count_from(old, common, -1)
        added = len(new) - common
        self._count_from(new, common, 1)
        self._decisions = new
        if len(gone) > REBUILD:
            self._relist()
        else:
            for decided in map(old.__getitem__, reversed(gone)):
                if self._listed and self._listed[-1].seq == decided.seq:
                    self._listed.pop()
                    self._by_key.pop(str(decided.seq), None)
                    self.remove_row(str(decided.seq))
            shows = self._shows_at(new)
            shown = [new[i] for i in range(common, len(new)) if shows(i)] if added <= LIST_MAX else None
            if shown is None or len(self._listed) + len(shown) > LIST_MAX:
                self._relist()
            else:
                for decided in shown:
                    self._list(decided)
                if len(self._listed) < LIST_MIN and self.earlier:
                    self._relist()
        if self.row_count:
            self._settle()
            if self.cursor_row != self.row_count - 1 or added or gone:  # else it is there already
                self.move_cursor(row=self.row_count - 1)
        else:
            self.post_message(DecisionHighlighted(None))
        self._update_title()

    def filter(self, verdict: Verdict | None) -> None:
        """Show only decisions with this verdict (None: all)."""
        self._verdict_filter = verdict
        self._relist()
        if not self.row_count:
            self.post_message(DecisionHighlighted(None))
        self._update_title()

    def selected(self) -> GateDecided | None:
        """The decision under the cursor."""
        if not self.row_count:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        return self._by_key.get(key or "")

    def reveal(self, seq: int) -> bool:
        """Put the cursor on the decision recorded at `seq`; False if it is not listed (filtered
        out, or earlier than the rows kept)."""
        index = next((i for i, d in enumerate(self._listed) if d.seq == seq), None)
        if index is None:
            return False
        self.move_cursor(row=index)
        return True

    def action_copy(self) -> None:
        decided = self.selected()
        if decided is None:
            nothing_to_copy(self, "gate log")
        else:
            copy_out(self, f"the decision on {decided.decision.call.name} at step {decided.seq}", decision_text(decided))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.post_message(DecisionHighlighted(self.selected()))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """A click on a highlighted row explains it, like Enter."""
        event.stop()
        self.action_explain()

    def action_explain(self) -> None:
        decided = self.selected()
        if decided is not None:
            self.post_message(DecisionChosen(decided))

    # ------------------------------------------------------------------ internals
    def _shows(self, decided: GateDecided) -> bool:
        d = decided.decision
        return self._passes(d.verdict, d.category)

    def _passes(self, verdict: Verdict, category: Callable[[], str]) -> bool:
        wanted = self._verdict_filter
        return wanted is None or (verdict == wanted and not (verdict == Verdict.REVISE and category() == "disclosure"))

    def _shows_at(self, decisions: Sequence[GateDecided]) -> Callable[[int], bool]:
        """Whether the filter shows the decision at each position of `decisions`: from what a lazy
        read kept of each (`briefs`), without reading the decision, when it can."""
        brief = briefs(decisions)
        if brief is None:
            return lambda i: self._shows(decisions[i])
        return lambda i: self._passes(brief(i)[0], lambda: brief(i)[1])

    def _count_from(self, decisions: Sequence[GateDecided], start: int, step: int) -> None:
        """`_count` every decision from position `start` on."""
        brief = briefs(decisions)
        if brief is None:
            for i in range(start, len(decisions)):
                self._count(decisions[i], step)
            return
        for i in range(start, len(decisions)):
            verdict, category = brief(i)
            self._tally("withheld" if category == "disclosure" else verdict.value, category == "needs_read", step)

    def _passing(self) -> int:
        if self._verdict_filter is None:
            return len(self._decisions)
        return self._counts.get(self._verdict_filter.value, 0)

    def _count(self, decided: GateDecided, step: int) -> None:
        known = self._kinds.get(id(decided))
        if known is None or known[0] is not decided:
            d = decided.decision
            category = d.category()
            # a read the read gate withheld is counted apart from the writes' verdicts
            verdict = "withheld" if category == "disclosure" else d.verdict.value
            known = self._kinds[id(decided)] = (decided, verdict, category == "needs_read")
        self._tally(known[1], known[2], step)

    def _tally(self, verdict: str, needs_read: bool, step: int) -> None:
        counts = self._counts
        counts[verdict] = counts.get(verdict, 0) + step
        if needs_read:
            counts["read"] = counts.get("read", 0) + step

    def _list(self, decided: GateDecided) -> None:
        self._listed.append(decided)
        self._by_key[str(decided.seq)] = decided
        self._add_row(decided)

    def _settle(self) -> None:
        """Measure the rows just added now, not when the table is next idle: the cursor then
        scrolls to the last row before the next frame is drawn, instead of a frame drawn at the
        old scroll position and a second one at the new (each draws every visible row). Uses the
        DataTable's own measuring step; skipped if this Textual does not have it."""
        if not (self.is_mounted and getattr(self, "_require_update_dimensions", False)):
            return
        new_rows, update = getattr(self, "_new_rows", None), getattr(self, "_update_dimensions", None)
        if not isinstance(new_rows, set) or not callable(update):
            return
        self._require_update_dimensions = False
        rows = new_rows.copy()
        new_rows.clear()
        update(rows)

    def _relist(self) -> None:
        """List the latest LIST_FILL decisions the filter shows, from scratch."""
        self.clear()
        self._looks.clear()  # what each listed row's cells say
        self._listed = []
        self._by_key = {}
        rows: list[GateDecided] = []
        shows = self._shows_at(self._decisions)
        for i in range(len(self._decisions) - 1, -1, -1):
            if len(rows) >= LIST_FILL:
                break
            if shows(i):
                rows.append(self._decisions[i])
        for decided in reversed(rows):
            self._list(decided)

    def _add_row(self, decided: GateDecided) -> None:
        d = decided.decision
        kind = row_class(d)
        style = self.get_component_rich_style(f"gate-log--{kind}", partial=True)
        cells = (str(decided.seq), verdict_tag(d), shown(d.call.name), shown(describe(d)))
        self._looks[decided.seq] = tuple((kind, text) for text in cells)
        self.add_row(
            Text(cells[0], style=style),
            Text(cells[1], style=style + Style(bold=True), no_wrap=True),
            Text(cells[2], style=style, overflow="ellipsis", no_wrap=True),
            Text(cells[3], style=style, overflow="ellipsis", no_wrap=not self._wrapping),
            key=str(decided.seq),
            height=None if self._wrapping else 1,
        )

    def _render_cell(
        self, row_index: int, column_index: int, base_style: Style, width: int, cursor: bool = False, hover: bool = False
    ) -> list[list[Segment]]:
        """A listed decision's cell as the table draws it, kept by what the table draws it from:
        what it says, its row and column (a click finds the row by them), width, style, cursor and
        hover, and the table's focus and cursor settings."""
        if not 0 <= row_index < len(self._listed) or column_index < 0 or self._wrapping:  # the header; rows as tall as they need
            return super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        key = (
            self._looks[self._listed[row_index].seq][column_index],
            row_index,
            column_index,
            width,
            base_style,
            cursor,
            hover,
            self.show_cursor,
            getattr(self, "_show_hover_cursor", None),
            getattr(self, "_pseudo_class_state", None),
        )
        lines = self._cells.get(key)
        if lines is None:
            lines = self._cells[key] = super()._render_cell(row_index, column_index, base_style, width, cursor, hover)
        return lines

    def notify_style_update(self) -> None:
        self._cells.clear()
        super().notify_style_update()

    def on_resize(self) -> None:
        self._update_title()
        wrapping = self.is_maximized
        if wrapping != self._wrapping or (wrapping and self.size.width != self._wrapped_width):
            self._wrap(wrapping)
            return
        if self.row_count and self.cursor_row == self.row_count - 1:
            # shorter (the reason under the log grew to more lines): the latest stays in view
            self.move_cursor(row=self.cursor_row)

    def _wrap(self, wrapping: bool) -> None:
        """List the rows again, wrapped (maximized) or one line each, the same row under the cursor."""
        self._wrapping, self._wrapped_width = wrapping, self.size.width if wrapping else 0
        self._cells.clear()
        chosen = self.selected()
        self._relist()
        if self.row_count:
            row = next((i for i, d in enumerate(self._listed) if d is chosen), self.row_count - 1)
            self._settle()
            self.move_cursor(row=row)

    def without_gate(self, mode: str) -> None:
        """The session's mode has no gate: the empty log says so instead of looking idle."""
        self.ungated = mode
        self._update_title()

    def _update_title(self) -> None:
        """The filter first (it explains missing rows), then the counts, shortened to fit the border."""
        counts = [(v.value, self._counts.get(v.value, 0)) for v in Verdict]
        reads = self._counts.get("read", 0)
        withheld = self._counts.get("withheld", 0)
        head = "Gate" if self._verdict_filter is None else f"Gate [{self._verdict_filter.value} only]"
        long = (
            f"{head}  " + " ".join(f"{name} {n}" for name, n in counts) + (f" · {reads} read" if reads else "")
            + (f" · {withheld} withheld" if withheld else "")
        )
        room = self.size.width - 4  # the corners and a space either side
        title = long if room <= 0 or len(long) <= room else f"{head} " + " ".join(f"{name[0]}{n}" for name, n in counts)
        if title != self._drawn_title:  # a new border title repaints the whole table
            self.title_text = self._drawn_title = title
            self.border_title = Content(title)  # literal: "[BLOCK only]" is not markup
        earlier = self.earlier
        subtitle = f"… {earlier:,} earlier (step back to list them)" if earlier else ""
        if self._verdict_filter is not None and not self._passing():  # an empty list says why
            subtitle = f"no {self._verdict_filter.value} decision here · Ctrl+P: show all"
        elif self.ungated and not self._decisions:
            subtitle = f"no gate in mode {self.ungated}: writes run unchecked"
        if subtitle != (self.border_subtitle or ""):
            self.border_subtitle = subtitle


def row_class(d: GateDecision) -> str:
    """`allow`, `revise`, `block`, `needs-read` for a stop that only needs a read, or `consent`
    for a call held while the customer answers a card."""
    category = d.category()
    if category == "needs_read":
        return "needs-read"
    if category == "disclosure":
        return "withheld"
    if d.held():
        return "consent"
    return d.verdict.value.lower()


def describe(decision: GateDecision) -> str:
    """What a narrow pane must show first: the failed checks, then the reason. In a violation, the
    broken checks lead and those that only need a read come last, after the reason."""
    failed = decision.failed()
    if not failed:
        return "all checks passed"
    if decision.held():
        if any(p.asks_question() for p in failed):
            return "asking the customer a question, then on a card: every other check passed"
        return "asking the customer on a card: every other check passed"
    # a missing consent is the smaller news next to a broken rule: it comes after it
    broken = [p.name for p in failed if not p.needs_a_read() and not p.asks_consent()]
    broken += [p.name for p in failed if p.asks_consent()]
    reads = [p.name for p in failed if p.needs_a_read()]
    if not broken:
        return f"{', '.join(reads)}: {decision.reason}"
    return f"{', '.join(broken)}: {decision.reason}" + (f" · needs a read: {', '.join(reads)}" if reads else "")

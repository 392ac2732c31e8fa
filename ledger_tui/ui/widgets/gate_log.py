"""The gate log: one row per gate decision, coloured by verdict; Enter explains the row.

A stop that only needs a read (the agent lacks evidence a suggested read supplies) says
`REVISE · read` and has its own colour; a bare `REVISE` or `BLOCK` is a violation.

Rows are keyed by the decision's step, so `record` appends in place and `sync` (replay) only adds
or removes the rows that differ. A verdict filter hides rows without forgetting them.
"""

from __future__ import annotations

from typing import Iterable

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.content import Content
from textual.widgets import DataTable

from ledger_tui.engine.events import GateDecided, GateDecision, Verdict
from ledger_tui.engine.outside import shown
from ledger_tui.explain import verdict_tag
from ledger_tui.ui.messages import DecisionChosen, DecisionHighlighted


class GateLog(DataTable[Text]):
    """`record(decided)` for live events; `sync(gate_log)` for replay; `filter(verdict)`."""

    COMPONENT_CLASSES = {"gate-log--allow", "gate-log--revise", "gate-log--block", "gate-log--needs-read"}
    BINDINGS = [
        Binding("enter", "explain", "Why?", id="gate_log.explain"),
        # the cursor goes to the first/last row; the header row stays in view
        Binding("home", "scroll_top", "First row", id="gate_log.first", show=False),
        Binding("end", "scroll_bottom", "Last row", id="gate_log.last", show=False),
    ]

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes, cursor_type="row", zebra_stripes=False)
        self._decisions: list[GateDecided] = []
        self._verdict_filter: Verdict | None = None
        self.title_text = "Gate log"
        self.border_title = self.title_text

    def on_mount(self) -> None:
        self.add_column("step", key="step", width=4)
        self.add_column("verdict", key="verdict")  # as wide as its widest label ("REVISE · read")
        self.add_column("tool", key="call")
        self.add_column("failed checks and reason", key="reason")

    # ------------------------------------------------------------------ intent methods
    @property
    def decisions(self) -> list[GateDecided]:
        """Every decision recorded (filtered or not), in order."""
        return list(self._decisions)

    @property
    def verdict_filter(self) -> Verdict | None:
        return self._verdict_filter

    def record(self, decided: GateDecided) -> None:
        """Append one decision (shown if it passes the filter) and move the cursor to it."""
        self._decisions.append(decided)
        if self._shows(decided):
            self._add_row(decided)
            self.move_cursor(row=self.row_count - 1)
        self._update_title()

    def sync(self, decisions: Iterable[GateDecided]) -> None:
        """Show exactly these decisions (replay), touching only the rows that differ."""
        wanted = list(decisions)
        common = 0
        for old, new in zip(self._decisions, wanted):
            if old.seq != new.seq:
                break
            common += 1
        for gone in self._decisions[common:]:
            if self._shows(gone):
                self.remove_row(str(gone.seq))
        self._decisions = self._decisions[:common]
        for decided in wanted[common:]:
            self._decisions.append(decided)
            if self._shows(decided):
                self._add_row(decided)
        if self.row_count:
            self.move_cursor(row=self.row_count - 1)
        else:
            self.post_message(DecisionHighlighted(None))
        self._update_title()

    def filter(self, verdict: Verdict | None) -> None:
        """Show only decisions with this verdict (None: all)."""
        self._verdict_filter = verdict
        self.clear()
        for decided in self._decisions:
            if self._shows(decided):
                self._add_row(decided)
        if not self.row_count:
            self.post_message(DecisionHighlighted(None))
        self._update_title()

    def selected(self) -> GateDecided | None:
        """The decision under the cursor."""
        if not self.row_count:
            return None
        key = self.coordinate_to_cell_key(self.cursor_coordinate).row_key.value
        return next((d for d in self._decisions if str(d.seq) == key), None)

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
        return self._verdict_filter is None or decided.decision.verdict == self._verdict_filter

    def _add_row(self, decided: GateDecided) -> None:
        d = decided.decision
        style = self.get_component_rich_style(f"gate-log--{row_class(d)}", partial=True)
        self.add_row(
            Text(str(decided.seq), style=style),
            Text(verdict_tag(d), style=style + Style(bold=True), no_wrap=True),
            Text(shown(d.call.name), style=style, overflow="ellipsis", no_wrap=True),
            Text(shown(describe(d)), style=style, overflow="ellipsis", no_wrap=True),
            key=str(decided.seq),
        )

    def on_resize(self) -> None:
        self._update_title()

    def _update_title(self) -> None:
        """The filter first (it explains missing rows), then the counts, shortened to fit the border."""
        counts = [(v.value, sum(1 for d in self._decisions if d.decision.verdict == v)) for v in Verdict]
        reads = sum(1 for d in self._decisions if d.decision.category() == "needs_read")
        head = "Gate" if self._verdict_filter is None else f"Gate [{self._verdict_filter.value} only]"
        long = f"{head}  " + " ".join(f"{name} {n}" for name, n in counts) + (f" · {reads} read" if reads else "")
        room = self.size.width - 4  # the corners and a space either side
        self.title_text = long if room <= 0 or len(long) <= room else f"{head} " + " ".join(f"{name[0]}{n}" for name, n in counts)
        self.border_title = Content(self.title_text)  # literal: "[BLOCK only]" is not markup


def row_class(d: GateDecision) -> str:
    """`allow`, `revise`, `block`, or `needs-read` for a stop that only needs a read."""
    return "needs-read" if d.category() == "needs_read" else d.verdict.value.lower()


def describe(decision: GateDecision) -> str:
    """What a narrow pane must show first: the failed checks, then the reason. In a violation, the
    broken checks lead and those that only need a read come last, after the reason."""
    failed = decision.failed()
    if not failed:
        return "all checks passed"
    broken = [p.name for p in failed if not p.needs_a_read()]
    reads = [p.name for p in failed if p.needs_a_read()]
    if not broken:
        return f"{', '.join(reads)}: {decision.reason}"
    return f"{', '.join(broken)}: {decision.reason}" + (f" · needs a read: {', '.join(reads)}" if reads else "")

"""The run list: one row per run, failed rows marked, verdict counts coloured; Enter opens the run.

`show(rows)` redraws the rows it is given (already filtered and sorted by the screen) and keeps the
cursor on the same run when it is still shown, so filtering and coming back from a replay never
lose the operator's place.
"""

from __future__ import annotations

from typing import Sequence

from rich.text import Text
from textual.binding import Binding
from textual.widgets import DataTable

from ledger_tui.engine.outside import shown
from ledger_tui.ui.messages import RunChosen
from ledger_tui.ui.run_index import SHORT_CLASS, RunRow

TASK_MIN = 12
FAILURE_WIDTH = 14  # the longest short class, "gate violation"
TERMINATION = {"infrastructure_error": "infra error"}


def termination(value: str) -> str:
    """A run's termination in words, short enough for the list."""
    return TERMINATION.get(value, value.replace("_", " "))


class RunTable(DataTable[Text]):
    """`show(rows)`, `selected()`; the task column takes the width the others leave."""

    COMPONENT_CLASSES = {"run-table--passed", "run-table--failed", "run-table--allow", "run-table--revise", "run-table--block"}
    BINDINGS = [Binding("enter", "open", "Open", id="run_table.open", tooltip="replay this run (Escape comes back here)")]

    def __init__(self, *, id: str | None = None, show_domain: bool = False) -> None:
        super().__init__(id=id, cursor_type="row", zebra_stripes=False)
        self._rows: list[RunRow] = []
        self._show_domain = show_domain
        self._layout: tuple[int, bool] = (TASK_MIN, False)  # task column width, termination column shown
        self._longest = TASK_MIN

    def on_mount(self) -> None:
        self._add_columns()

    def _add_columns(self) -> None:
        if self._show_domain:
            self.add_column("domain", key="domain", width=9)
        task_width, show_end = self._layout
        self.add_column("task", key="task", width=task_width)
        self.add_column("#", key="trial", width=2)
        self.add_column("mode", key="mode", width=8)
        self.add_column("reward", key="reward", width=6)
        if show_end:
            self.add_column("end", key="end", width=11)
        self.add_column("failure", key="failure", width=FAILURE_WIDTH)
        for verdict, width in (("ALLOW", 5), ("REVISE", 6), ("BLOCK", 5)):
            style = self.get_component_rich_style(f"run-table--{verdict.lower()}", partial=True)
            self.add_column(Text(verdict, style=style, justify="right"), key=verdict.lower(), width=width)

    # ------------------------------------------------------------------ intent methods
    @property
    def rows_shown(self) -> list[RunRow]:
        return list(self._rows)

    def show(self, rows: Sequence[RunRow]) -> None:
        """Show exactly `rows`, in order; the cursor stays on the run it was on if it is still here."""
        keep = self.selected()
        self._rows = list(rows)
        self._longest = max(self._longest, *(len(shown(r.task_id)) for r in self._rows), 0)
        self._redraw(keep.key if keep is not None else None)

    def selected(self) -> RunRow | None:
        """The run under the cursor."""
        if not self._rows or not 0 <= self.cursor_row < len(self._rows):
            return None
        return self._rows[self.cursor_row]

    def action_open(self) -> None:
        row = self.selected()
        if row is not None:
            self.post_message(RunChosen(row))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """A click on the highlighted row opens it, like Enter."""
        event.stop()
        self.action_open()

    def on_resize(self) -> None:
        """Give the task column the width the other columns leave (long task ids end in …)."""
        if self._fitting_layout() != self._layout:
            keep = self.selected()
            self._redraw(keep.key if keep is not None else None)

    # ------------------------------------------------------------------ internals
    def _redraw(self, keep: str | None) -> None:
        layout = self._fitting_layout()
        if layout != self._layout:
            self._layout = layout
            self.clear(columns=True)
            self._add_columns()
        else:
            self.clear()
        for row in self._rows:
            self._add_row(row)
        index = next((i for i, r in enumerate(self._rows) if r.key == keep), 0)
        if self._rows:
            self.move_cursor(row=index, animate=False)

    def _fitting_layout(self) -> tuple[int, bool]:
        """Task column width and whether the termination column fits (it is in the detail line anyway)."""
        room = self.scrollable_content_region.width
        padding = 2  # DataTable's cell padding, both sides of a column
        others = (9 + padding if self._show_domain else 0) + sum(w + padding for w in (2, 8, 6, FAILURE_WIDTH, 5, 6, 5))
        show_end = room - others - (11 + padding) - (min(self._longest, 24) + padding) >= 0
        if show_end:
            others += 11 + padding
        return max(TASK_MIN, min(self._longest, room - others - padding)), show_end

    def _add_row(self, row: RunRow) -> None:
        state = "passed" if row.passed else "failed"
        style = self.get_component_rich_style(f"run-table--{state}", partial=True)
        task_width, show_end = self._layout
        task_id = shown(row.task_id)
        task = task_id if len(task_id) <= task_width else task_id[: task_width - 1] + "…"
        cells = []
        if self._show_domain:
            cells.append(Text(shown(row.domain), style=style))
        cells += [
            Text(task, style=style, no_wrap=True),
            Text(str(row.trial), justify="right"),
            Text(shown(row.mode)),
            Text(f"{row.reward:.1f}", style=style, justify="right"),
        ]
        if show_end:
            cells.append(Text(shown(termination(row.termination)), overflow="ellipsis", no_wrap=True))
        cells += [
            Text(shown(SHORT_CLASS.get(row.primary, row.primary)) if row.primary else "", style=style, no_wrap=True),
        ]
        for verdict, n in (("allow", row.allow), ("revise", row.revise), ("block", row.block)):
            vstyle = self.get_component_rich_style(f"run-table--{verdict}", partial=True) if n else None
            cells.append(Text(str(n), style=vstyle or "dim", justify="right"))
        self.add_row(*cells, key=row.key)

"""Browse: every run of an evaluation folder in one list, filtered and sorted; Enter replays one.

The screen holds the folder's `RunIndex` and the operator's `RunFilter`; the widgets only show
them. Opening a run pushes the ordinary replay screen on top, so Escape comes back to this very
screen with its filter and cursor untouched.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import DataTable, Footer

from ledger_tui.engine.outside import shown
from ledger_tui.ui.messages import RunChosen
from ledger_tui.ui.run_index import SORTS, RunFilter, RunIndex, RunRow, cycle
from ledger_tui.ui.screens.help import HelpScreen, screen_keys
from ledger_tui.ui.widgets import BrowseBar, RunDetail, RunTable

PALETTE_NOTE = "Ctrl+P opens the command palette: filter by failure class, domain or mode, sort the runs, open a session."


class BrowseScreen(Screen[None]):
    """The run list of one folder; `run_filter` survives opening and closing runs."""

    BINDINGS = [
        Binding("f", "toggle_failed", "Failed", id="browse.failed_only", tooltip="show only failed runs (again: all)"),
        Binding("g", "toggle_gate_flagged", "Flagged", id="browse.gate_flagged", tooltip="only runs where the gate said REVISE or BLOCK"),
        Binding("c", "next_class", "Class", id="browse.next_class", tooltip="next failure class to filter by (then all)"),
        Binding("d", "next_domain", "Domain", id="browse.next_domain", tooltip="next domain to filter by (then all)"),
        Binding("m", "next_mode", "Mode", id="browse.next_mode", tooltip="next mode to filter by (then all)"),
        Binding("s", "next_sort", "Sort", id="browse.next_sort", tooltip="order by task, reward, class, gate verdicts"),
        Binding("x", "clear_filters", "Clear filters", id="browse.clear_filters", show=False),
        Binding("v", "compare", "Compare", id="browse.compare", tooltip="mark this run; v on another run of its task compares the two side by side"),
        Binding("f1", "help", "Help", id="browse.help"),
    ]

    def __init__(self, index: RunIndex) -> None:
        super().__init__()
        self.index = index
        self.run_filter = RunFilter()
        self.marked: RunRow | None = None  # the first run of a comparison (`v`)

    def compose(self) -> ComposeResult:
        yield BrowseBar(id="browse-bar")
        yield RunTable(id="runs", show_domain=len(self.index.domains) > 1)
        yield RunDetail(id="run-detail")
        yield Footer(compact=True)

    @property
    def table(self) -> RunTable:
        return self.query_one(RunTable)

    def on_mount(self) -> None:
        self._refresh()
        self.table.focus()
        for warning in self.index.warnings:
            self.notify(shown(warning, markup=True), title="Some runs could not be read", severity="warning", timeout=10)

    # ------------------------------------------------------------------ intent methods
    def filter_runs(self, **changes: object) -> None:
        """Change some filters (`failed_only`, `gate_flagged`, `cls`, `domain`, `mode`) and redraw."""
        self.run_filter = self.run_filter.with_(**changes)
        self._refresh()

    def sort_runs(self, key: str) -> None:
        """Order the list by `key` (one of `SORTS`)."""
        self.run_filter = self.run_filter.with_(sort=key)
        self._refresh()

    def clear_filters(self) -> None:
        self.run_filter = self.run_filter.cleared()
        self._refresh()

    def open_run(self, row: RunRow) -> None:
        """Replay `row` on top of the list (a damaged file is a notification; the list stays),
        with its reward and failure class on the replay's top line."""
        replay = self.app.open_replay(row.trajectory)  # type: ignore[attr-defined]
        if replay is not None:
            replay.show_run(row)

    def compare(self, a: RunRow, b: RunRow) -> None:
        """The two runs side by side, aligned by turn from where they diverge (Escape returns)."""
        from ledger_tui.ui.screens.diff import open_diff

        open_diff(self.app, a.trajectory, b.trajectory)

    # ------------------------------------------------------------------ keys
    def action_compare(self) -> None:
        """`v` marks the highlighted run; `v` on another run of the same task compares them."""
        row = self.table.selected()
        if row is None:
            return
        first = self.marked
        if first is None or first.key == row.key:
            self.marked = None if first is not None else row
            said = "Unmarked." if first is not None else f"Marked {row.task_id} ({row.mode}, trial {row.trial}): v on another run of this task compares them."
            self.notify(shown(said, markup=True))
            return
        if (first.domain, first.task_id) != (row.domain, row.task_id):
            self.notify(shown(f"The marked run is of task {first.task_id}; v on a run of that task compares them (Escape: v on it again unmarks).", markup=True), severity="warning")
            return
        self.marked = None
        self.compare(first, row)

    def action_toggle_failed(self) -> None:
        self.filter_runs(failed_only=not self.run_filter.failed_only)

    def action_toggle_gate_flagged(self) -> None:
        self.filter_runs(gate_flagged=not self.run_filter.gate_flagged)

    def action_next_class(self) -> None:
        if not self.index.classes:
            self.notify("No run failed, so there is no failure class to filter by.")
            return
        self.filter_runs(cls=cycle(self.run_filter.cls, self.index.classes))

    def action_next_domain(self) -> None:
        self.filter_runs(domain=cycle(self.run_filter.domain, self.index.domains))

    def action_next_mode(self) -> None:
        self.filter_runs(mode=cycle(self.run_filter.mode, self.index.modes))

    def action_next_sort(self) -> None:
        self.sort_runs(SORTS[(SORTS.index(self.run_filter.sort) + 1) % len(SORTS)])

    def action_clear_filters(self) -> None:
        self.clear_filters()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide the domain and mode keys when the folder has only one of them."""
        if action == "next_domain":
            return len(self.index.domains) > 1
        if action == "next_mode":
            return len(self.index.modes) > 1
        return True

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(screen_keys(self), console=False, note=PALETTE_NOTE))

    # ------------------------------------------------------------------ messages
    def on_run_chosen(self, message: RunChosen) -> None:
        self.open_run(message.row)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.query_one(RunDetail).show(self.table.selected(), self.index)

    def _refresh(self) -> None:
        rows = self.run_filter.apply(self.index.rows)
        self.table.show(rows)
        self.query_one(BrowseBar).show(self.index, self.run_filter, len(rows))
        self.query_one(RunDetail).show(self.table.selected(), self.index)

"""The browse header line: which folder, how many runs shown of how many, the filters and the order."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ledger_tui.engine.outside import shown
from ledger_tui.ui.run_index import RunFilter, RunIndex


class BrowseBar(Static):
    """`show(index, run_filter, shown)` repaints; the filter itself lives on the screen."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)

    def show(self, index: RunIndex, run_filter: RunFilter, listed: int) -> None:
        failed = sum(1 for r in index.rows if not r.passed)
        kind = "eval" if index.source == "eval" else "imported" if any(r.mode == "imported" for r in index.rows) else "trajectories"
        text = Text()
        text.append("browse  ", "bold")
        text.append(shown(index.folder.name or str(index.folder)), "bold")
        text.append(f" · {kind} · {len(index.rows)} runs, {failed} failed")
        text.append(f"  showing {listed}")
        filters = run_filter.describe()
        if filters:
            text.append(shown(f" [{', '.join(filters)}]"), "bold")
        text.append(f"  by {run_filter.sort}")
        self.update(text)

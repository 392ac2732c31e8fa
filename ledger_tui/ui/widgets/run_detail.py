"""Under the run list: what the highlighted run is, and why it failed (every finding, in order).

Findings come from the failure report as recorded; each names its step so the operator knows
where to look once the run is open.
"""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from ledger_tui.engine.outside import shown
from ledger_tui.ui.run_index import RunIndex, RunRow


class RunDetail(Static):
    """`show(row, index)` repaints for the highlighted run; `show(None, index)` when none is shown."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__("", id=id)

    def show(self, row: RunRow | None, index: RunIndex) -> None:
        if row is None:
            self.update(Text("No run matches the filters; x clears them.", style="italic"))
            return
        text = Text()
        text.append(shown(f"{row.domain} task {row.task_id}"), "bold")
        ended = row.termination.replace("_", " ") or "?"
        text.append(shown(f"  trial {row.trial} · {row.mode} · reward {row.reward:g} · ended {ended}"))
        text.append("\ngate ")
        for verdict, n in (("ALLOW", row.allow), ("REVISE", row.revise), ("BLOCK", row.block)):
            text.append(f" {verdict} {n}", "bold" if n else "dim")
        if row.gate_flagged:
            kinds = [f"{n} {label}" for n, label in ((row.violations, "violation"), (row.inferred, "inferred from text"), (row.needs_read, "needs a read")) if n]
            text.append(f"  stops: {', '.join(kinds) or 'unknown'}")
        if row.mode == "imported" and row.gate_flagged:
            text.append("  (what the gate would have said: these writes ran)", "italic")
        if row.passed:
            text.append("\npassed", "bold")
        for finding in row.findings:
            at = f" at step {finding.seq}" if finding.seq is not None else ""
            text.append(shown(f"\n{finding.cls}{at}: "), "bold")
            text.append(shown(finding.detail))
        text.append(shown(f"\n{index.relative(row.trajectory)}"), "dim")
        self.update(text)

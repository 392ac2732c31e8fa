"""One tool call in the conversation: collapsed to its signature, expandable to arguments and result.

The title carries who asked, the verdict (if the gate judged it) and the outcome, so the transcript
can be skimmed without opening anything.
"""

from __future__ import annotations

import json

from rich.text import Text
from textual.content import Content
from textual.widgets import Collapsible, Static

from ledger_tui.engine.events import ToolCallProposed, ToolResult, Verdict

WHO = {"assistant": "agent", "operator": "operator", "user": "customer"}


class ToolCallItem(Collapsible):
    """`set_verdict` and `set_result` fill it in as the events arrive; `clear_*` undo (replay)."""

    def __init__(self, proposed: ToolCallProposed) -> None:
        self.proposed = proposed
        self.verdict: Verdict | None = None
        self.result: ToolResult | None = None
        self._args = json.dumps(proposed.call.arguments, ensure_ascii=False, sort_keys=True)
        self._detail = Static(self._detail_text(), classes="tool-detail")
        super().__init__(
            self._detail,
            title=self._heading(),  # type: ignore[arg-type]
            collapsed=True,
            classes=f"tool-call -{proposed.kind}",
        )

    def set_verdict(self, verdict: Verdict | None) -> None:
        if self.verdict is not None:
            self.remove_class(f"-{self.verdict.value.lower()}")
        self.verdict = verdict
        if verdict is not None:
            self.add_class(f"-{verdict.value.lower()}")
        self.title = self._heading()  # type: ignore[assignment]

    def set_result(self, result: ToolResult | None) -> None:
        self.result = result
        self.set_class(result is not None and result.error, "-error")
        self._detail.update(self._detail_text())
        self.title = self._heading()  # type: ignore[assignment]

    def _detail_text(self) -> Text:
        text = Text(f"arguments {self._args}")
        if self.result is not None:
            head = "gate feedback" if not self.result.executed else ("error" if self.result.error else "result")
            text.append(f"\n{head}: {self.result.content}")
        return text

    def _heading(self) -> Content:
        """Outcome first, so a narrow pane cuts the arguments, not the verdict."""
        call = self.proposed.call
        status = []
        if self.verdict is not None:
            status.append(self.verdict.value)
        if self.result is not None:
            status.append("not run" if not self.result.executed else ("error" if self.result.error else "ok"))
        head = f"[{' '.join(status)}] " if status else ""
        return Content(f"{head}{WHO.get(call.requestor, call.requestor)} → {call.signature()}")  # literal, never markup

"""One tool call in the conversation: collapsed to its signature, expandable to arguments and result.

The title carries who asked, the verdict (if the gate judged it; `REVISE · read` when the stop only
needs a read) and the outcome, so the transcript can be skimmed without opening anything.
"""

from __future__ import annotations

import json

from rich.text import Text
from textual.app import ComposeResult
from textual.content import Content
from textual.visual import VisualType
from textual.widgets import Collapsible, Static
from textual.widgets._collapsible import CollapsibleTitle

from ledger_tui.engine.events import GateDecision, ToolCallProposed, ToolResult
from ledger_tui.engine.outside import shown
from ledger_tui.explain import verdict_tag
from ledger_tui.ui.widgets.gate_log import row_class
from ledger_tui.ui.widgets.laid_out import laid_out_size

WHO = {"assistant": "agent", "operator": "operator", "user": "customer"}


class CallTitle(CollapsibleTitle):
    """The call's one line: its width follows the title, and the layout that measures it is enough."""

    virtual_size = laid_out_size()

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        # written before it is mounted, it is measured by the layout that places it: asking for a
        # layout of its own laid the screen out again after every call item mounted
        super().update(content, layout=layout and self.is_mounted)


class ToolCallItem(Collapsible):
    """`set_decision` and `set_result` fill it in as the events arrive; `None` undoes them (replay).

    The arguments and result are mounted the first time the item is opened: a closed item is two
    widgets (itself and its title), not four, and replay mounts dozens of them at a jump."""

    virtual_size = laid_out_size()  # the title, and the details once opened

    def __init__(self, proposed: ToolCallProposed) -> None:
        self.proposed = proposed
        self.decision: GateDecision | None = None
        self.result: ToolResult | None = None
        self._args = shown(json.dumps(proposed.call.arguments, ensure_ascii=False, sort_keys=True))
        self._detail: Static | None = None
        self._deferred = False  # rebound: classes and title are applied once, by `settle`
        self._styled: frozenset[str] = frozenset()  # the classes its styles were worked out for
        super().__init__(
            title=self._heading(),  # type: ignore[arg-type]
            collapsed=True,
            classes=f"tool-call -{proposed.kind} -collapsed",  # as mounting would set it: no restyle then
        )
        self._title = CallTitle(label=self._title.label, collapsed_symbol="▶", expanded_symbol="▼", collapsed=True)

    @staticmethod
    def look(proposed: ToolCallProposed, decision: GateDecision | None, result: ToolResult | None) -> frozenset[str]:
        """The classes of an item showing this call closed, with this verdict and result."""
        classes = {"tool-call", f"-{proposed.kind}", "-collapsed"}
        if decision is not None:
            classes.add(f"-{row_class(decision)}")
        if result is not None and result.error:
            classes.add("-error")
        return frozenset(classes)

    @property
    def styled_as(self) -> frozenset[str]:
        """The classes its styles were last worked out for."""
        return self._styled

    def rebind(self, proposed: ToolCallProposed) -> None:
        """Show another call (closed, with no verdict or result yet): the conversation reuses items
        instead of mounting new ones. Its classes and title are applied by `settle`, once, after
        the verdict and result that follow in the same step are set."""
        self._deferred = True
        self.set_decision(None)
        self.set_result(None)
        if proposed.kind != self.proposed.kind:
            self.remove_class(f"-{self.proposed.kind}", update=False)
            self.add_class(f"-{proposed.kind}", update=False)
        self.proposed = proposed
        self._args = shown(json.dumps(proposed.call.arguments, ensure_ascii=False, sort_keys=True))
        self.collapsed = True
        if self._detail is not None:
            self._detail.update(self._detail_text())

    def settle(self) -> None:
        """Apply the classes and title a rebound item was given: one restyle, not one a change,
        and none when it has the classes it was last styled with (a read allowed and run, shown
        again where another was)."""
        if self._deferred:
            self._deferred = False
            if frozenset(self.classes) != self._styled:
                self.update_node_styles()
            self.title = self._heading()  # type: ignore[assignment]

    def update_node_styles(self, animate: bool = True) -> None:
        self._styled = frozenset(self.classes)
        super().update_node_styles(animate)

    def on_collapsible_title_toggle(self) -> None:
        """The operator opens or closes this call: the pane around it stays where it is (not
        pulled to its end, where it follows the latest entries)."""
        if self.parent is not None:
            self.parent.release_anchor()

    def compose(self) -> ComposeResult:
        yield self._title
        if not self.collapsed:
            yield self._contents()

    def watch_collapsed(self, collapsed: bool) -> None:
        if not collapsed and self._detail is None and self.is_mounted:
            self.mount(self._contents())

    def _contents(self) -> Collapsible.Contents:
        self._detail = Static(self._detail_text(), classes="tool-detail")
        return self.Contents(self._detail)

    def set_decision(self, decision: GateDecision | None) -> None:
        # styles are applied at mount, or by `settle`: until then a class is only noted. Attached, not
        # `is_mounted`: mount() styles the item and its compose its title before `is_mounted` is set
        # (on Python 3.12+ at once, in mount(), as Textual starts tasks eagerly there)
        update = self.is_attached and not self._deferred
        if self.decision is not None:
            self.remove_class(f"-{row_class(self.decision)}", update=update)
        self.decision = decision
        if decision is not None:
            self.add_class(f"-{row_class(decision)}", update=update)
        if not self._deferred:
            self.title = self._heading()  # type: ignore[assignment]

    def set_result(self, result: ToolResult | None) -> None:
        self.result = result
        self.set_class(result is not None and result.error, "-error", update=self.is_attached and not self._deferred)
        if self._detail is not None:
            self._detail.update(self._detail_text())
        if not self._deferred:
            self.title = self._heading()  # type: ignore[assignment]

    def _detail_text(self) -> Text:
        text = Text(f"arguments {self._args}")
        if self.result is not None:
            head = "gate feedback" if not self.result.executed else ("error" if self.result.error else "result")
            text.append(f"\n{head}: {shown(self.result.content)}")
        return text

    def _heading(self) -> Content:
        """Outcome first, so a narrow pane cuts the arguments, not the verdict."""
        call = self.proposed.call
        status = []
        if self.decision is not None:
            status.append(verdict_tag(self.decision))
        if self.result is not None:
            status.append("not run" if not self.result.executed else ("error" if self.result.error else "ok"))
        head = f"[{' · '.join(status)}] " if status else ""
        return Content(shown(f"{head}{WHO.get(call.requestor, call.requestor)} → {call.signature()}"))  # literal, never markup

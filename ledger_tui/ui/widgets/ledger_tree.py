"""The ledger as a tree: namespace → record → fields, updated in place as reads arrive.

Nodes are found by path, so an update changes one node's label (and its field children) without
rebuilding the tree: expansion and the cursor survive. What the latest step added, changed or read
again is marked `[new]`, `[changed]`, `[re-read]`; what moved earlier since the customer last
spoke is marked quietly, `(new)`, `(changed)`, `(re-read)`; stale entries stay `[STALE]` until
they are read again. Colours come
from component classes styled in app.tcss, resolved at render time so themes apply.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Collection, Mapping

from rich.style import Style
from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from ledger_tui.engine.events import LedgerUpdated
from ledger_tui.engine.ledger import Ledger
from ledger_tui.engine.outside import shown
from ledger_tui.engine.serialize import compact

Change = str  # "added" | "changed" | "refreshed" | "stale"


@dataclass
class Shown:
    """What one node displays: a namespace, a ledger entry, or one field of an entry's value."""

    kind: str  # "group" | "entry" | "field"
    path: str
    value: Any = None
    text: str = ""
    origin: str = "observed"
    stale: bool = False
    mark: Change | None = None
    earlier: bool = False  # the mark is from earlier in this turn, not from the latest step
    withheld: bool = False  # read, but kept from the model by the read gate (another customer's)


def split_path(path: str) -> tuple[str, str]:
    """`loans.L2` → (`loans`, `L2`); `flights.HAT170.2024-05-16` → (`flights`, `HAT170.2024-05-16`)."""
    head, dot, rest = path.partition(".")
    return (head, rest) if dot else ("·", path)


def _short(text: str, limit: int = 48) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


BADGE = {"added": "new", "changed": "changed", "refreshed": "re-read", "stale": "STALE"}


class LedgerTree(Tree[Shown]):
    """`apply(update)` for live events, `sync(ledger, marks)` for replay; both update in place."""

    COMPONENT_CLASSES = {
        "ledger-tree--added",
        "ledger-tree--changed",
        "ledger-tree--refreshed",
        "ledger-tree--stale",
        "ledger-tree--earlier",
        "ledger-tree--stated",
        "ledger-tree--value",
        "ledger-tree--group",
    }

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__("ledger", id=id, classes=classes)
        self.show_root = False
        self.guide_depth = 2
        self._groups: dict[str, TreeNode[Shown]] = {}
        self._entries: dict[str, TreeNode[Shown]] = {}
        self.border_title = "Ledger"

    # ------------------------------------------------------------------ intent methods
    @property
    def paths(self) -> list[str]:
        """The ledger paths shown, in display order."""
        return list(self._entries)

    def shown(self, path: str) -> Shown | None:
        node = self._entries.get(path)
        return None if node is None else node.data

    def apply(self, update: LedgerUpdated) -> None:
        """One recorded ledger update, shown in place and marked."""
        node = self._entries.get(update.path)
        if update.change == "stale":
            if node is not None and node.data is not None:
                node.data.stale = True
                node.data.mark = "stale"
                self._relabel(node)
            return
        self._put(update.path, update.after, update.origin, stale=False, mark=update.change, withheld=bool(update.withheld))

    def age_marks(self) -> None:
        """The latest step is over: its new/changed/re-read marks become "earlier in this turn"."""
        for node in self._entries.values():
            data = node.data
            if data is not None and data.mark and not data.stale and not data.earlier:
                data.earlier = True
                self._relabel(node)

    def clear_marks(self) -> None:
        """Forget new/changed marks (the customer spoke again); stale marks stay until re-read."""
        for node in self._entries.values():
            data = node.data
            if data is not None and data.mark and not data.stale:
                data.mark = None
                self._relabel(node)

    def sync(self, ledger: Ledger, marks: Mapping[str, Change] | None = None, current: Collection[str] | None = None) -> None:
        """Show exactly `ledger` (replay): add, relabel or remove only the nodes that differ.
        `marks` are the changes since the customer spoke; those of paths not in `current` (the
        latest step's) are shown as earlier in the turn (all are current when it is None)."""
        marks = marks or {}
        for path in [p for p in self._entries if p not in ledger]:
            self._remove(path)
        for path, entry in ledger.items():
            mark = "stale" if entry.stale else marks.get(path)
            earlier = bool(mark) and not entry.stale and current is not None and path not in current
            node = self._entries.get(path)
            data = None if node is None else node.data
            if (
                data is not None and data.text == entry.text and data.stale == entry.stale and data.mark == mark
                and data.earlier == earlier and data.withheld == entry.withheld
            ):
                continue
            self._put(path, entry.value, entry.origin, stale=entry.stale, mark=mark, text=entry.text, earlier=earlier, withheld=entry.withheld)

    def reset(self) -> None:
        self.clear()
        self._groups.clear()
        self._entries.clear()

    def cursor_path(self) -> str | None:
        """The ledger path under the cursor (a field's entry path), if any."""
        node = self.cursor_node
        if node is None or node.data is None or node.data.kind == "group":
            return None
        return node.data.path

    # ------------------------------------------------------------------ node bookkeeping
    def _group(self, name: str) -> TreeNode[Shown]:
        node = self._groups.get(name)
        if node is None:
            node = self.root.add(Text(shown(name)), Shown("group", name), expand=True)  # a string label would be Rich markup
            self._groups[name] = node
        return node

    def _put(
        self, path: str, value: Any, origin: str, *, stale: bool, mark: Change | None, text: str | None = None, earlier: bool = False,
        withheld: bool = False,
    ) -> None:
        text = compact(value) if text is None else text
        node = self._entries.get(path)
        if node is None:
            group_name, _ = split_path(path)
            group = self._group(group_name)
            node = group.add("", Shown("entry", path), allow_expand=isinstance(value, (dict, list)) and bool(value))
            self._entries[path] = node
            self._relabel(group)
        data = node.data
        assert data is not None
        changed_value = data.text != text
        data.value, data.text, data.origin, data.stale, data.mark, data.earlier = value, text, origin, stale, mark, earlier
        data.withheld = withheld
        if changed_value:
            self._set_fields(node, value)
        self._relabel(node)

    def _set_fields(self, node: TreeNode[Shown], value: Any) -> None:
        """Field children of a record; relabelled in place when the field names are unchanged."""
        items: list[tuple[str, Any]]
        if isinstance(value, dict):
            items = [(str(k), v) for k, v in value.items()]
        elif isinstance(value, list):
            items = [(f"[{i}]", v) for i, v in enumerate(value)]
        else:
            items = []
        node.allow_expand = bool(items)
        path = node.data.path if node.data else ""
        children = list(node.children)
        if [c.data.path for c in children if c.data] == [f"{path}:{k}" for k, _ in items]:
            for child, (key, v) in zip(children, items):
                if child.data is not None and child.data.value != v:
                    child.data.value = v
                    child.set_label(self._field_label(key, v))
            return
        node.remove_children()
        for key, v in items:
            node.add_leaf(self._field_label(key, v), Shown("field", f"{path}:{key}", value=v))

    def _field_label(self, key: str, value: Any) -> Text:
        return Text(shown(f"{key}: {_short(compact(value), 60)}"))

    def _remove(self, path: str) -> None:
        node = self._entries.pop(path, None)
        if node is None:
            return
        group = node.parent
        node.remove()
        if group is not None and not group.children and group.data is not None:
            self._groups.pop(group.data.path, None)
            group.remove()
        elif group is not None:
            self._relabel(group)

    def _relabel(self, node: TreeNode[Shown]) -> None:
        data = node.data
        if data is None:
            return
        if data.kind == "group":
            node.set_label(Text(shown(f"{data.path} ({len(node.children)})")))
            return
        _, key = split_path(data.path)
        label = Text(shown(key))
        badge = "STALE" if data.stale else BADGE.get(data.mark or "", "")
        if badge and data.earlier:  # earlier in this turn: quieter, in parentheses
            label.append(f" ({badge})")
        elif badge:  # before the value, so a narrow pane cuts the value, not the mark
            label.append(f" [{badge}]")
        if data.origin == "stated":
            label.append(" (said)")
        if data.withheld:  # in the ledger for the gate's checks, not in the model's prompt
            label.append(" (withheld)")
        label.append("  ")
        label.append(shown(_short(data.text)))
        node.set_label(label)

    # ------------------------------------------------------------------ rendering
    def render_label(self, node: TreeNode[Shown], base_style: Style, style: Style) -> Text:
        """Colour entries by state from component classes, so the theme decides the colours."""
        text = super().render_label(node, base_style, style)
        data = node.data
        if data is None:
            return text
        component = None
        if data.kind == "group":
            component = "ledger-tree--group"
        elif data.kind == "entry":
            if data.stale:
                component = "ledger-tree--stale"
            elif data.mark in ("added", "changed", "refreshed") and data.earlier:
                component = "ledger-tree--earlier"
            elif data.mark in ("added", "changed", "refreshed"):
                component = f"ledger-tree--{data.mark}"
            elif data.origin == "stated":
                component = "ledger-tree--stated"
        else:
            component = "ledger-tree--value"
        if component:
            text.stylize(self.get_component_rich_style(component, partial=True))
        return text

    def get_label_width(self, node: TreeNode[Shown]) -> int:
        """Width from the plain label: styling never changes it, and rendering every label to
        measure it made each rebuild of a 1,000-path tree cost a frame."""
        return node._label.cell_len + (2 if node._allow_expand else 0)

"""The ledger as a tree: namespace → record → fields, updated in place as reads arrive.

Nodes are found by path, so an update changes one node's label (and its field children) without
rebuilding the tree: expansion and the cursor survive. What the latest step added, changed or read
again is marked `[new]`, `[changed]`, `[re-read]`; what moved earlier since the customer last
spoke is marked quietly, `(new)`, `(changed)`, `(re-read)`; stale entries stay `[STALE]` until
they are read again. Colours come
from component classes styled in app.tcss, resolved at render time so themes apply.

A record opens onto its fields, and a field holding an object or a list opens onto its own; every
label shows as much of its value as the pane's width leaves and ends in "…" only where it is cut.
Previews and fields list first what the policies' checks decide on (`CHECKED_FIRST`: a status, a
cabin, insurance), then the other plain values, then the nested ones: an order's `status` before its
`address`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Collection, Mapping

from rich.style import Style
from rich.text import Text
from textual.binding import Binding
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from ledger_tui.engine.events import LedgerUpdated
from ledger_tui.engine.ledger import Ledger
from ledger_tui.engine.outside import shown
from ledger_tui.engine.store.serialize import compact
from ledger_tui.ui.widgets.copying import copy_out, nothing_to_copy

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
    preview: str = ""  # the value as its label shows it, checked fields first


def split_path(path: str) -> tuple[str, str]:
    """`loans.L2` → (`loans`, `L2`); `flights.HAT170.2024-05-16` → (`flights`, `HAT170.2024-05-16`)."""
    head, dot, rest = path.partition(".")
    return (head, rest) if dot else ("·", path)


# the fields the shipped domains' checks decide on (the gate's evidence names them), in the order a
# preview shows them; any other field follows, plain values before objects and lists
CHECKED_FIRST = (
    "status", "cabin", "insurance", "membership", "flight_type", "created_at", "total_due", "roaming_enabled",
    "contract_end_date", "start", "duration_minutes", "specialty",
)
_RANK = {name: i for i, name in enumerate(CHECKED_FIRST)}
PREVIEW_MOST = 1000  # characters of a preview kept: wider than any pane; the rest ends in "…"


def fields_of(value: Any) -> list[tuple[str, Any]]:
    """A value's fields in display order: `[i]` for a list's items, checked fields first for an object."""
    if isinstance(value, list):
        return [(f"[{i}]", v) for i, v in enumerate(value)]
    if not isinstance(value, dict):
        return []
    return sorted(
        ((str(k), v) for k, v in value.items()),
        key=lambda kv: (kv[0] not in _RANK, _RANK.get(kv[0], 0), isinstance(kv[1], (dict, list)), kv[0]),
    )


def preview(value: Any) -> str:
    """Compact JSON, an object's fields in display order, at most `PREVIEW_MOST` characters."""
    if not isinstance(value, dict) or not value:
        text = compact(value)
        return text if len(text) <= PREVIEW_MOST else text[: PREVIEW_MOST - 1] + "…"
    parts, size = [], 1
    for key, v in fields_of(value):
        part = f"{json.dumps(key, ensure_ascii=False)}:{compact(v)}"
        parts.append(part)
        size += len(part) + 1
        if size > PREVIEW_MOST:
            return ("{" + ",".join(parts))[: PREVIEW_MOST - 1] + "…"
    return "{" + ",".join(parts) + "}"


def _field_path(parent: Shown | None, key: str) -> str:
    """`users.u1:address` for a record's field; `users.u1:address.city`, `orders.o1:items[0]` below it."""
    path = parent.path if parent else ""
    if parent is None or parent.kind == "entry":
        return f"{path}:{key}"
    return f"{path}{key}" if key.startswith("[") else f"{path}.{key}"


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
    BINDINGS = [Binding("c", "copy", "Copy", id="ledger.copy", show=False, tooltip="the highlighted value (a record as JSON)")]

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

    def reveal(self, path: str) -> bool:
        """Put the cursor on the entry at `path` (its namespace opened); False if it is not shown."""
        node = self._entries.get(path)
        if node is None:
            return False
        if node.parent is not None:
            node.parent.expand()
        if node.line < 0 or self.last_line < node.line:  # not laid out yet: `last_line` lays the lines out
            self.last_line
        self.move_cursor(node)
        return True

    def copied(self) -> tuple[str, str] | None:
        """What `c` copies: (what it is, text). A record or a nested value as JSON, a plain value
        as it is, a namespace as an object of its records."""
        node = self.cursor_node
        data = None if node is None else node.data
        if node is None or data is None:
            return None
        if data.kind == "group":
            records = {split_path(c.data.path)[1]: c.data.value for c in node.children if c.data is not None}
            n = len(records)
            return f"namespace {data.path} ({n} record{'s' if n != 1 else ''})", json.dumps(records, indent=2, ensure_ascii=False)
        value = data.value
        kind = "record" if data.kind == "entry" and isinstance(value, dict) else "value"
        return f"{kind} {data.path}", value if isinstance(value, str) else json.dumps(value, indent=2, ensure_ascii=False)

    def action_copy(self) -> None:
        copied = self.copied()
        if copied is None:
            nothing_to_copy(self, "ledger")
        else:
            copy_out(self, *copied)

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
            data.preview = preview(value)
            self._set_fields(node, value)
        self._relabel(node)

    def _set_fields(self, node: TreeNode[Shown], value: Any) -> None:
        """Field children of a record or of a field holding an object or a list, to any depth;
        relabelled in place where the field names are unchanged (what is open stays open)."""
        items = fields_of(value)
        node.allow_expand = bool(items)
        paths = [_field_path(node.data, key) for key, _ in items]
        children = list(node.children)
        if [c.data.path for c in children if c.data] == paths:
            for child, (key, v) in zip(children, items):
                if child.data is not None and child.data.value != v:
                    child.data.value = v
                    child.set_label(self._field_label(key, v))
                    self._set_fields(child, v)
            return
        node.remove_children()
        for (key, v), child_path in zip(items, paths):
            shown_as = Shown("field", child_path, value=v)
            if fields_of(v):
                self._set_fields(node.add(self._field_label(key, v), shown_as), v)
            else:
                node.add_leaf(self._field_label(key, v), shown_as)

    def _field_label(self, key: str, value: Any) -> Text:
        return Text(shown(f"{key}: {preview(value)}"))

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
        label.append(shown(data.preview))
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
        room = self._room(node)
        if text.cell_len > room:
            text.truncate(room, overflow="ellipsis")
        return text

    def get_label_width(self, node: TreeNode[Shown]) -> int:
        """Width from the plain label: styling never changes it, and rendering every label to
        measure it made each rebuild of a 1,000-path tree cost a frame. At most the room it is
        drawn in: the tree is never wider than its pane (nothing to scroll sideways to)."""
        return min(node._label.cell_len + (2 if node._allow_expand else 0), self._room(node))

    def _room(self, node: TreeNode[Shown]) -> int:
        """The cells a node's label has: the pane's width less its indent."""
        depth = 0
        while node.parent is not None:
            depth, node = depth + 1, node.parent
        return max(4, self.scrollable_content_region.width - max(0, depth - 1) * self.guide_depth)

    def watch_show_vertical_scrollbar(self) -> None:
        """The scrollbar takes a column from the labels (or gives it back): cut them again."""
        self._invalidate()

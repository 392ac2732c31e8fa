"""`c` in a pane: the focused value, record or reason, to the clipboard.

Through Textual's `copy_to_clipboard` (OSC 52: the terminal holds it, over ssh too). The clipboard
gets the text as recorded; the notice saying what was copied shows it escaped, as everything from
outside is shown.
"""

from __future__ import annotations

from textual.widget import Widget

from ledger_tui.engine.outside import printable, shown

PREVIEW = 60  # characters of what was copied the notice repeats


def copy_out(widget: Widget, what: str, text: str) -> None:
    """Put `text` on the clipboard and say so: what it is, how long, how it starts."""
    widget.app.copy_to_clipboard(text)
    size = f"{len(text):,} character{'s' if len(text) != 1 else ''}"
    widget.notify(shown(f"Copied {what} ({size}): {printable(text, PREVIEW)}", markup=True))


def nothing_to_copy(widget: Widget, where: str) -> None:
    widget.notify(f"Nothing to copy in the {where}: move its cursor to a line first.", severity="warning")

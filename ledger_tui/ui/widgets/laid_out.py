"""Widgets whose size the layout alone decides: a new size needs no second layout.

Textual tells every widget its size after a layout; for most widgets a changed size then asks for
one more layout of the whole screen (the `virtual_size` reactive lays out on change, because a
widget that sets its own scrollable size, a tree or a table, needs that). For a widget that never
sets it, a line of text or a container sized by what it holds, the layout that measured it has
already placed it and everything around it: the second pass moves nothing and redraws what the
first drew. A replay step that changes a conversation line or a call's title paid for it at every
step. Scrollbars still appear and go in the same pass: their own reactives ask for the layout.
"""

from __future__ import annotations

from textual.geometry import Size
from textual.reactive import Reactive


def laid_out_size() -> Reactive[Size]:
    """A `virtual_size` for a widget that does not set its own: `virtual_size = laid_out_size()`."""
    return Reactive(Size(0, 0), layout=False)

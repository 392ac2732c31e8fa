"""Text that comes from outside (files, models, endpoints) made safe to show.

Customer and agent text, call arguments and results, task ids, model names, notices, grades and
file names all come from files and servers someone else controls. They are data: shown as they
are, never obeyed. `shown` is the one function that makes them so, wherever they are displayed
(every widget, notification and title of the TUI, every line the CLI prints); what is recorded
(trajectories, exports, model input, grades) keeps the original bytes.

`printable` is the one-line form, for a server's error body quoted in a sentence.
"""

from __future__ import annotations

import re

# What a terminal would obey rather than show: C0 controls but tab and newline, DEL, C1 controls,
# and the bidi embeddings, overrides and isolates that reorder the text after them.
_HIDDEN = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def _written_out(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def shown(text: object, *, markup: bool = False) -> str:
    """`text` as it may be displayed: every control character other than newline and tab, DEL,
    and every bidi override or isolate written out visibly (ESC as `\\x1b`, U+202E as `\\u202e`).

    `markup=True` is for strings a Textual widget parses as content markup (`notify`, `Static`
    and `Label` strings, palette prompts): every `[` is escaped as `\\[`, so `[@click=app.quit]`
    or `[link=…]` is shown as written and never runs or links. Rich text objects (`Text`,
    `Content`) are never parsed, and take `shown(text)`; Rich's own markup (a `Tree` label or a
    `DataTable` cell given as a string) escapes differently, so outside text never goes there.
    """
    visible = _HIDDEN.sub(_written_out, text if isinstance(text, str) else str(text))
    return visible.replace("[", "\\[") if markup else visible


# CSI / OSC / other ESC sequences, then any remaining C0/C1 control character
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]|[\x00-\x1f\x7f-\x9f]")


def printable(text: str, limit: int = 300) -> str:
    """One line of `text` with no control characters, at most `limit` characters (… when cut)."""
    flat = " ".join(_ESCAPES.sub(" ", text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"

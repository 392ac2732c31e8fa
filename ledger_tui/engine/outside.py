"""Text that comes from outside (a server's error body, a reply that is not JSON) made safe to
show in one line: control characters and terminal escape sequences removed, whitespace folded,
cut to a length. What is recorded elsewhere keeps the original."""

from __future__ import annotations

import re

# CSI / OSC / other ESC sequences, then any remaining C0/C1 control character
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]|[\x00-\x1f\x7f-\x9f]")


def printable(text: str, limit: int = 300) -> str:
    """One line of `text` with no control characters, at most `limit` characters (… when cut)."""
    flat = " ".join(_ESCAPES.sub(" ", text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"

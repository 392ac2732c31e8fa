"""The operator console: what a line typed in play mode means.

Kept free of Textual so the parsing rules (values are JSON when they parse, strings otherwise) are
unit-tested on their own and shared by the input box and any future scripting.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

CommandKind = Literal["customer", "agent", "call", "me", "help", "tools", "end"]


class ConsoleError(ValueError):
    """A console line that cannot be run; the message is one sentence naming the fix."""


@dataclass(frozen=True)
class Command:
    """One console line, parsed: the customer speaks, the operator speaks or calls a tool as the agent, …"""

    kind: CommandKind
    text: str = ""
    name: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)


USAGE = "/call NAME key=value …  (values are JSON when they parse, else strings)"

_DECODER = json.JSONDecoder()


def parse_arguments(text: str) -> dict[str, Any]:
    """`key=value key2={"a": 1}` → dict. Quoted, bracketed and braced values may contain spaces."""
    args: dict[str, Any] = {}
    i, n = 0, len(text)
    while i < n:
        while i < n and text[i].isspace():
            i += 1
        if i >= n:
            break
        eq = text.find("=", i)
        space = next((j for j in range(i, n) if text[j].isspace()), n)
        if eq == -1 or eq > space:
            raise ConsoleError(f"{text[i:space]!r} is not key=value; write {USAGE}.")
        key = text[i:eq].strip()
        if not key:
            raise ConsoleError(f"An argument has no name before '='; write {USAGE}.")
        i = eq + 1
        if i < n and text[i] in "{[\"":
            try:
                value, end = _DECODER.raw_decode(text, i)
            except json.JSONDecodeError as exc:
                raise ConsoleError(f"The value of {key} is not valid JSON ({exc.msg}); fix it or leave the quotes out.") from None
            i = end
        else:
            end = next((j for j in range(i, n) if text[j].isspace()), n)
            raw = text[i:end]
            i = end
            if not raw:
                raise ConsoleError(f'{key}= has no value; write {key}=VALUE ({key}="" for an empty string).')
            try:
                value = json.loads(raw)
            except ValueError:
                value = raw
        args[key] = value
    return args


def parse_line(line: str) -> Command:
    """Turn one typed line into a Command; plain text is the customer speaking."""
    stripped = line.strip()
    if not stripped.startswith("/"):
        return Command("customer", text=stripped)
    head, _, rest = stripped.partition(" ")
    verb = head[1:].lower()
    if verb in ("help", "?"):
        return Command("help")
    if verb == "tools":
        return Command("tools")
    if verb == "say":
        if not rest.strip():
            raise ConsoleError("/say needs the words the agent says; write /say TEXT.")
        return Command("agent", text=rest.strip())
    if verb == "end":
        return Command("end", text=rest.strip() or "ended by the operator")
    if verb in ("call", "me"):
        name, _, arg_text = rest.strip().partition(" ")
        if not name:
            raise ConsoleError(f"/{verb} needs a tool name; write /{verb} NAME key=value ….")
        return Command("call" if verb == "call" else "me", name=name, arguments=parse_arguments(arg_text))
    raise ConsoleError(f"Unknown command {head}; use /say, /call, /me, /tools, /end or /help.")

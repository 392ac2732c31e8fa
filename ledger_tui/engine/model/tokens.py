"""Token estimates: what a chat message and a text cost, cheaply and deterministically (about four
characters a token). The model clients, the prompt builder and the context manager share them."""

from __future__ import annotations

from typing import Any

Message = dict[str, Any]


def estimate_tokens(text: str) -> int:
    """A cheap, deterministic token estimate (about four characters a token)."""
    return (len(text) + 3) // 4


_MESSAGE_TOKENS: dict[int, tuple[Message, int]] = {}


def message_tokens(message: Message) -> int:
    """Estimated tokens of one chat message; cached per message object (transcripts only grow)."""
    hit = _MESSAGE_TOKENS.get(id(message))
    if hit is not None and hit[0] is message:
        return hit[1]
    size = len(str(message.get("content") or "")) + 8
    for call in message.get("tool_calls") or ():
        size += len(call["function"]["name"]) + len(call["function"]["arguments"]) + 16
    tokens = (size + 3) // 4
    if len(_MESSAGE_TOKENS) > 200_000:
        _MESSAGE_TOKENS.clear()
    _MESSAGE_TOKENS[id(message)] = (message, tokens)
    return tokens

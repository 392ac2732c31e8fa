"""Keeping prompts inside the model's context window.

The window comes from `--context-window` or from the server (llama.cpp's `/props`, vLLM's
`/v1/models`); with no known window nothing is folded. A prompt is measured by the estimate of
`prompt.message_tokens` plus a stated safety margin, and, when that comes near the budget and the
server offers a tokenizer (`/tokenize`), by the server's own count.

When the next prompt would not leave room for the completion cap, the session folds, oldest first:
1. (ledger modes) tool results whose records the task state already holds: the result becomes a
   reference, as `--compact` sends it;
2. (all modes) whole turns: the oldest messages, up to a customer message, become one note.
Folding goes down to `LOW_WATER` of the budget in one step, so the folded prefix then stays the same
for many calls (what a server's prefix cache can reuse). Each fold is a notice. A prompt that still
does not fit ends the run as `context_window_exceeded`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ledger_tui.engine.model.models import Message, estimate_tokens, unwrap
from ledger_tui.engine.model.prompt import message_tokens

# The estimate (about four characters a token) against a real tokenizer on this project's prompts:
# SmolLM2's (llama-server /tokenize) counts 4.0-4.2 characters a token on the three policies and
# 3.5-3.6 on their tool schemas (JSON), 14 % more tokens than estimated. The margin covers that.
ESTIMATE_MARGIN = 0.15
# fold down to this share of the budget, so the next folds are many calls away
LOW_WATER = 0.7
# per-message tokens a chat template adds around each message (role markers)
TEMPLATE_TOKENS = 6


@dataclass(frozen=True)
class Window:
    tokens: int  # the model's context window
    reserve: int  # room kept for the completion (the completion cap)
    source: str  # where the size came from: "--context-window", "llama.cpp /props", …

    @property
    def budget(self) -> int:
        return max(0, self.tokens - self.reserve)


def estimate(messages: list[Message], tools: list[dict[str, Any]]) -> int:
    """Prompt tokens by estimate, safety margin included."""
    raw = sum(message_tokens(m) + TEMPLATE_TOKENS for m in messages) + (_tools_tokens(tools) if tools else 0)
    return int(raw * (1 + ESTIMATE_MARGIN))


# the tool list's estimate by the list's identity (a domain's schemas are one list, asked for on
# every call); the list is kept with it so its id is not reused, and the memo is kept small
_TOOLS_TOKENS: dict[int, tuple[list[dict[str, Any]], int]] = {}


def _tools_tokens(tools: list[dict[str, Any]]) -> int:
    known = _TOOLS_TOKENS.get(id(tools))
    if known is not None and known[0] is tools:
        return known[1]
    if len(_TOOLS_TOKENS) >= 64:
        _TOOLS_TOKENS.clear()
    tokens = estimate_tokens(json.dumps(tools))
    _TOOLS_TOKENS[id(tools)] = (tools, tokens)
    return tokens


def prompt_text(messages: list[Message], tools: list[dict[str, Any]]) -> str:
    """The prompt's words, for a server tokenizer (the chat template's own tokens are added apart)."""
    parts = [json.dumps(tools)] if tools else []
    for m in messages:
        parts.append(str(m.get("content") or ""))
        for call in m.get("tool_calls") or ():
            parts.append(call["function"]["name"] + call["function"]["arguments"])
    return "\n".join(parts)


def folded_note(dropped: list[Message], task_state: bool = True) -> str:
    """What the first kept message says of the messages folded before it (the agent's prompt also
    has the task state, which still holds every record read)."""
    turns = sum(1 for m in dropped if m.get("role") == "user")
    held = "; the task state holds every record read" if task_state else ""
    return (
        f"[The first {len(dropped)} messages of this conversation ({turns} from the other party) were folded to "
        f"fit the context window{held}.]\n\n"
    )


def foldable_turn_starts(transcript: list[Message], keep_from: int) -> list[int]:
    """Indexes where the transcript can be cut without parting a tool call from its result: each
    customer message before `keep_from` (the latest customer message and what follows are kept)."""
    return [i for i, m in enumerate(transcript) if m.get("role") == "user" and 0 < i < keep_from]


async def discover(model: Any, context_window: int | None) -> Window | None:
    """The window a model call must fit: `context_window` if given, else what the server says of
    itself (None when neither knows), with the model's completion cap kept free."""
    inner = unwrap(model)
    options = getattr(inner, "options", None)
    reserve = (getattr(options, "max_tokens", None) or 0) if options is not None else 0
    if context_window:
        return Window(context_window, reserve, "--context-window")
    if hasattr(inner, "context_window"):
        found = await inner.context_window()
        if found:
            return Window(found[0], reserve, found[1])
    return None

"""IRMA, the Input-Reformulation Multi-Agent baseline (arXiv 2508.20931), as a comparison mode.

The LedgerAgent paper compares itself with plain function calling and with IRMA. IRMA keeps no
ledger and has no gate; before the agent answers a customer message it rewrites what the agent
reads, from three parts:

- *memory*: every message the customer has sent so far, verbatim, so the first request stays in
  view however long the conversation grows (no model call);
- *constraints*: a helper call reads the policy and the conversation and returns a short checklist
  of the rules that bear on what the customer asks now;
- *tool suggestions*: a helper call reads the agent's tools and the conversation and returns the
  tools the next step likely needs, each with why.

The agent then reads `reformulate(...)` in place of the customer's latest message (earlier
messages stay as the customer wrote them: the memory already repeats them). The two helper calls
are independent of each other and run at the same time; each is recorded as a `HelperCall` event
(prompt, output, tokens) and the agent's input as a `ReformulatedInput`, so replay shows what the
agent read and `eval` counts the helpers' tokens in the mode's overhead.

The helper prompts are this project's own; the paper describes the method, not its prompts.
"""

from __future__ import annotations

from collections import deque
from dataclasses import replace
from collections.abc import Iterable, Sequence
from typing import Any

from ledger_tui.engine.errors import ScriptExhaustedError
from ledger_tui.engine.events import Event, HelperCall
from ledger_tui.engine.limits import HELPER_MAX_TOKENS
from ledger_tui.engine.model.models import ClientOptions, Message, ModelTurn

HELPERS = ("constraints", "tools")

# What a helper sees of each tool result and each message: a helper summarises, it does not need a
# whole reservation; the cap keeps its prompt from growing with the results the agent fetched.
RESULT_CHARS = 600
MESSAGE_CHARS = 2000
# What the agent is given of a helper's answer, at most (a runaway helper cannot flood its prompt).
OUTPUT_CHARS = 2000

CONSTRAINTS_SYSTEM = (
    "You assist a customer-service agent who must follow the company policy below. You do not talk "
    "to the customer and you do not call tools. Read the policy and the conversation, then write a "
    "checklist of the policy rules that matter for what the customer is asking for now: what the "
    "agent must look up or verify first, what it must confirm with the customer, and what it must "
    "not do. At most 8 lines, each starting with \"- \", each one rule in your own short words. "
    "Nothing else."
)

TOOLS_SYSTEM = (
    "You assist a customer-service agent who works through the tools listed below. You do not talk "
    "to the customer and you do not call tools. Read the conversation and name the tools the agent "
    "most likely needs for its next step, in the order it should use them: at most 4 lines, each "
    "\"- tool_name: why\". Name only tools from the list; if no tool is needed, write \"- none: "
    "answer the customer\". Nothing else."
)


def _clip(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def conversation_text(transcript: Sequence[Message]) -> str:
    """The conversation as a helper reads it: who said or called what, tool results clipped."""
    lines: list[str] = []
    for message in transcript:
        role = message.get("role")
        content = str(message.get("content") or "")
        if role == "user":
            lines.append(f"customer: {_clip(content, MESSAGE_CHARS)}")
        elif role == "assistant":
            if content.strip():
                lines.append(f"agent: {_clip(content, MESSAGE_CHARS)}")
            for call in message.get("tool_calls") or ():
                function = call.get("function", {})
                lines.append(f"agent calls {function.get('name', '?')}({function.get('arguments', '')})")
        elif role == "tool":
            lines.append(f"tool result: {_clip(content, RESULT_CHARS)}")
    return "\n".join(lines) if lines else "(nothing yet)"


def tool_list(schemas: Iterable[dict[str, Any]]) -> str:
    """The agent's tools, one line each: name, arguments and the first sentence of the description."""
    lines = []
    for schema in schemas:
        function = schema.get("function", schema)
        arguments = ", ".join((function.get("parameters") or {}).get("properties") or {})
        description = " ".join(str(function.get("description") or "").split())
        first = description.split(". ")[0].rstrip(".")
        lines.append(f"- {function.get('name', '?')}({arguments}): {first}" if first else f"- {function.get('name', '?')}({arguments})")
    return "\n".join(lines)


def helper_messages(helper: str, *, policy: str, tools: Sequence[dict[str, Any]], transcript: Sequence[Message]) -> list[Message]:
    """The prompt of one helper call: its instructions (with the policy or the tool list) and the
    conversation up to and including the customer's latest message."""
    conversation = conversation_text(transcript)
    if helper == "constraints":
        system = f"{CONSTRAINTS_SYSTEM}\n\n# Policy\n\n{policy}"
    elif helper == "tools":
        system = f"{TOOLS_SYSTEM}\n\n# Tools\n\n{tool_list(tools)}"
    else:
        raise ValueError(f"unknown IRMA helper {helper!r}")
    return [{"role": "system", "content": system}, {"role": "user", "content": f"# Conversation\n\n{conversation}"}]


def helper_options(options: ClientOptions) -> ClientOptions:
    """A helper model's client options: the agent's, with the completion cap at most HELPER_MAX_TOKENS."""
    cap = min(options.max_tokens, HELPER_MAX_TOKENS) if options.max_tokens else HELPER_MAX_TOKENS
    return replace(options, max_tokens=cap)


def helper_event(helper: str, model: str, messages: list[Message], turn: ModelTurn) -> HelperCall:
    """The record of one helper call."""
    return HelperCall(
        helper=helper,
        model=model,
        messages=messages,
        output=turn.text,
        prompt_tokens=turn.prompt_tokens,
        completion_tokens=turn.completion_tokens,
        cached_tokens=turn.cached_tokens,
        finish_reason=turn.finish_reason,
    )


def clipped(output: str) -> str:
    """A helper's answer as the agent gets it: stripped, at most OUTPUT_CHARS characters."""
    return _clip(output, OUTPUT_CHARS)


def reformulate(latest: str, earlier: Sequence[str], checklist: str, suggestions: str) -> str:
    """The agent's input for this turn: the customer's latest message with the memory of everything
    they asked before, the helpers' checklist and their tool suggestions."""
    parts = [f"The customer's latest message:\n{latest}"]
    if earlier:
        memory = "\n".join(f"{i}. {text}" for i, text in enumerate(earlier, start=1))
        parts.append(f"Everything the customer said before, in order (verbatim):\n{memory}")
    if checklist.strip():
        parts.append(f"Policy checklist for this request:\n{clipped(checklist)}")
    if suggestions.strip():
        parts.append(f"Tools likely needed next:\n{clipped(suggestions)}")
    return "\n\n".join(parts)


class ReplayHelper:
    """Re-emits the helper answers of a recorded IRMA run in their recorded order, so the run can be
    re-judged (`regress`) without a model. The session starts its helper calls in a fixed order
    (constraints, then tools), so each gets its recorded answer."""

    name = "replay-helper"

    def __init__(self, events: Iterable[Event]) -> None:
        self._outputs = deque(e.output for e in events if isinstance(e, HelperCall))

    async def complete(self, messages: list[Message], tools: list[dict[str, Any]]) -> ModelTurn:
        if not self._outputs:
            raise ScriptExhaustedError(
                "The recording has no helper answer left here: the replay took another path than the recorded run."
            )
        return ModelTurn(text=self._outputs.popleft())

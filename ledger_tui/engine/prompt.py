"""What the model sees: the policy, the transcript, and (in ledger modes) the rendered ledger.

The ledger block is placed as the last message before every model call, so the transcript prefix
stays stable between calls and the current state is always nearest the model's answer.
"""

from __future__ import annotations

from typing import Any

from ledger_tui.engine.models import Message, estimate_tokens

INSTRUCTIONS = """You are a customer-service agent. Follow the policy below exactly.
- Use the tools to look things up; never invent records, ids or amounts.
- Before any action that changes a booking, order, account or record, list its details and get the
  customer's explicit yes.
- Make at most one change at a time. Reply to the customer in plain text when you need their input.
"""

def system_prompt(policy: str, mode: str = "full") -> str:
    """The system prompt, the same in every mode: the task state block explains itself (its header,
    and a note on each stale line), and so does the gate's feedback ("POLICY GATE: REVISE … To
    proceed: …"). The modes then differ only in what the engine adds, and no words are spent on
    every call for what matters on few."""
    del mode
    return f"{INSTRUCTIONS}\n# Policy\n\n{policy}"


def build_messages(system: str, transcript: list[Message], ledger_block: str | None) -> list[Message]:
    messages: list[Message] = [{"role": "system", "content": system}]
    messages.extend(transcript)
    if ledger_block is not None:
        messages.append({"role": "system", "content": ledger_block})
    return messages


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


def token_split(
    prompt_tokens: int, system: str, ledger_block: str | None, transcript: list[Message]
) -> tuple[int, int, int]:
    """(ledger, policy, transcript) shares of `prompt_tokens`, proportional to estimated sizes."""
    if prompt_tokens == 0:
        return 0, 0, 0
    ledger = estimate_tokens(ledger_block or "")
    policy = estimate_tokens(system)
    rest = sum(message_tokens(m) for m in transcript)
    total = ledger + policy + rest
    if total == 0 or prompt_tokens == 0:
        return 0, 0, 0
    led = round(prompt_tokens * ledger / total)
    pol = round(prompt_tokens * policy / total)
    return led, pol, max(0, prompt_tokens - led - pol)


def assistant_message(text: str, calls: list[Any]) -> Message:
    import json

    message: Message = {"role": "assistant", "content": text or ""}
    if calls:
        message["tool_calls"] = [
            {
                "id": c.id,
                "type": "function",
                "function": {"name": c.name, "arguments": json.dumps(c.arguments)},
            }
            for c in calls
        ]
    return message

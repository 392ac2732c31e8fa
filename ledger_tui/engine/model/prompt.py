"""What the model sees: the policy, the transcript, and (in ledger modes) the rendered ledger.

Where the ledger block goes is `LEDGER_AT` (`--ledger-at`):
- `customer` (the default): a system message just before the latest customer message. What came
  before that message is the same on every call of a turn and between turns, so a server's prefix
  cache reuses it, and the last message is the customer's or a tool result, which a small model
  answers (a trailing block was answered instead of the customer).
- `end`: the last message of every prompt (the most of each prompt is a cached prefix, but small
  models take it for the message to answer).
- `system`: appended to the system prompt (every change of the ledger invalidates the whole prompt).
`benchmarks/prompt_cache.py` measures the three (see the README).
"""

from __future__ import annotations

from typing import Any

from ledger_tui.engine.model.tokens import Message, estimate_tokens, message_tokens

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


LEDGER_AT = ("customer", "end", "system")


def build_messages(system: str, transcript: list[Message], ledger_block: str | None, ledger_at: str = "customer") -> list[Message]:
    if ledger_block is None:
        return [{"role": "system", "content": system}, *transcript]
    if ledger_at == "system":
        return [{"role": "system", "content": f"{system}\n\n{ledger_block}"}, *transcript]
    block: Message = {"role": "system", "content": ledger_block}
    if ledger_at == "end":
        return [{"role": "system", "content": system}, *transcript, block]
    latest = max((i for i, m in enumerate(transcript) if m.get("role") == "user"), default=len(transcript))
    return [{"role": "system", "content": system}, *transcript[:latest], block, *transcript[latest:]]


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

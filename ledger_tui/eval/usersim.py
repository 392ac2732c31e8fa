"""The simulated customer: a model that plays the task's customer, one message at a time.

It reads the task's instructions (and persona), sees the agent's messages as the other side of the
conversation, and ends the conversation with a stop token as τ²-bench's simulator does:
`###STOP###` when satisfied or done, `###TRANSFER###` when transferred to a human, and
`###OUT-OF-SCOPE###` when the instructions do not cover what the agent asks. In dual-control
domains it may also act on its own device through the domain's customer-side tools.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ledger_tui.engine.domain import Domain
from ledger_tui.engine.models import Model, ModelTurn
from ledger_tui.engine.tasks import Task

STOP_TOKENS = ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###")

GUIDE = """You are role-playing a customer contacting customer service. Stay in character.
- Follow the instructions below; reveal information only when it is needed or asked for.
- Write one short message at a time, as a customer would; never act as the agent.
- Do not invent facts the instructions do not give you.
- When your request is handled, or cannot be handled, end your message with ###STOP###.
- If you are transferred to a human agent, reply with ###TRANSFER### only.
- If the agent asks something your instructions do not cover, reply with ###OUT-OF-SCOPE###.
"""


def stop_token(text: str) -> str | None:
    for token in STOP_TOKENS:
        if token in text:
            return token
    return None


@dataclass
class UserSimulator:
    model: Model
    task: Task
    domain: Domain
    messages: list[dict[str, Any]] = field(default_factory=list)

    def system(self) -> str:
        parts = [GUIDE]
        if self.task.user_scenario.persona:
            parts.append(f"# Persona\n{self.task.user_scenario.persona}")
        parts.append(f"# Instructions\n{self.task.user_scenario.text() or self.task.ledger_tui.opening}")
        if self.domain.user_tools:
            parts.append("You can act on your own phone with the tools you have; do so when the agent asks you to.")
        return "\n\n".join(parts)

    def heard(self, agent_text: str) -> None:
        """The agent said something (the simulator sees it as the other party)."""
        self.messages.append({"role": "user", "content": agent_text})

    def tool_result(self, call_id: str, content: str) -> None:
        self.messages.append({"role": "tool", "tool_call_id": call_id, "content": content})

    async def next(self) -> ModelTurn:
        turn = await self.model.complete(
            [{"role": "system", "content": self.system()}, *self.messages], self.domain.tool_schemas("user")
        )
        message: dict[str, Any] = {"role": "assistant", "content": turn.text or ""}
        if turn.tool_calls:
            import json

            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                for c in turn.tool_calls
            ]
        self.messages.append(message)
        return turn

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
from ledger_tui.engine.model.models import Model, ModelTurn
from ledger_tui.engine.agents.tasks import Task

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
    # the context window its prompts must fit (from --context-window or the server), and how many
    # leading messages were folded away to fit it
    context_window: int | None = None
    folded: int = 0
    _window: Any = None
    _window_known: bool = False

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

    async def _prompt(self) -> list[dict[str, Any]]:
        """The simulator's prompt, its oldest turns folded (at an agent message, so a phone call
        keeps its result) when it would not fit the context window; as the agent's, in chunks."""
        from ledger_tui.engine.model import context
        from ledger_tui.engine.errors import ContextWindowExceededError

        system = {"role": "system", "content": self.system()}
        tools = self.domain.tool_schemas("user")
        if not self._window_known:
            self._window_known = True
            self._window = await context.discover(self.model, self.context_window)
        window = self._window

        def prompt() -> list[dict[str, Any]]:
            kept = self.messages[self.folded :]
            if self.folded and kept:
                note = context.folded_note(self.messages[: self.folded], task_state=False)
                kept = [{**kept[0], "content": note + str(kept[0].get("content") or "")}, *kept[1:]]
            return [system, *kept]

        messages = prompt()
        if window is None or context.estimate(messages, tools) <= window.budget:
            return messages
        latest = max((i for i, m in enumerate(self.messages) if m.get("role") == "user"), default=0)
        cuts = [c for c in context.foldable_turn_starts(self.messages, latest + 1) if c > self.folded]
        target = int(window.budget * context.LOW_WATER)
        for cut in cuts:
            self.folded = cut
            messages = prompt()
            if context.estimate(messages, tools) <= target:
                break
        if context.estimate(messages, tools) > window.budget:
            raise ContextWindowExceededError(
                f"The customer simulator's prompt no longer fits the {window.tokens:,}-token context window "
                f"({window.source}), even folded; use a model with a larger window, or lower --max-tokens."
            )
        return messages

    async def next(self) -> ModelTurn:
        turn = await self.model.complete(await self._prompt(), self.domain.tool_schemas("user"))
        message: dict[str, Any] = {"role": "assistant", "content": turn.text or ""}
        if turn.tool_calls:
            import json

            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                for c in turn.tool_calls
            ]
        self.messages.append(message)
        return turn

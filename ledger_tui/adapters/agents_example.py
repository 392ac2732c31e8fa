"""An Agents SDK agent on the airline domain, every write gated: the example of `LedgerGuard`.

The agent's tools run on the airline domain's mock database; the model is any OpenAI-compatible
chat-completions endpoint. Customer messages come one a line on stdin:

    printf 'Hi, this is grace_scott_6483; please cancel reservation 633IZT, my plans changed.\\n' |
        python -m ledger_tui.adapters.agents_example --base-url http://127.0.0.1:8080/v1 --model local
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from dataclasses import dataclass, field
from typing import Any, Iterable

from ledger_tui.adapters.agents_sdk import LedgerGuard

from agents import Agent, OpenAIChatCompletionsModel, RunConfig, Runner  # noqa: E402  (agents_sdk checked the extra)

INSTRUCTIONS = (
    "You are an airline customer-service agent. Follow the policy below. Before any change, identify the "
    "customer and read the records it acts on. When a tool answers POLICY GATE, do what it says; when it "
    "gives a text to send the customer, send exactly that text.\n\n"
)


@dataclass
class Conversation:
    guard: LedgerGuard
    replies: list[str] = field(default_factory=list)
    history: list[Any] = field(default_factory=list)


async def converse(customer: Iterable[str], *, base_url: str, model: str, api_key: str = "none", max_turns: int = 12) -> Conversation:
    """Play the customer's messages in order against the agent; returns the agent's replies, the
    guard (its gate's events, its decisions) and the SDK's history."""
    from openai import AsyncOpenAI

    from ledger_tui.engine.environment import Environment
    from ledger_tui.engine.events import ToolCall

    guard = LedgerGuard("airline")
    env = Environment(guard.domain)

    calls = iter(range(1, 1_000_000))

    def run(name: str, arguments: dict[str, Any]) -> str:
        return env.execute(ToolCall(id=f"sdk_{next(calls)}", name=name, arguments=arguments)).content

    client = AsyncOpenAI(base_url=base_url, api_key=api_key, max_retries=0)
    agent = Agent(
        name="airline",
        instructions=INSTRUCTIONS + guard.domain.policy,
        tools=guard.domain_tools(run),  # type: ignore[arg-type]
        model=OpenAIChatCompletionsModel(model=model, openai_client=client),
    )
    talk = Conversation(guard)
    config = RunConfig(tracing_disabled=True)
    for text in customer:
        guard.customer_says(text)
        result = await Runner.run(agent, talk.history + [{"role": "user", "content": text}], max_turns=max_turns, run_config=config)
        reply = str(result.final_output or "")
        guard.agent_says(reply)
        talk.replies.append(reply)
        talk.history = result.to_input_list()
    return talk


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--api-key", default="none")
    args = parser.parse_args(argv)
    lines = [line.strip() for line in sys.stdin if line.strip()]
    talk = asyncio.run(converse(lines, base_url=args.base_url, model=args.model, api_key=args.api_key))
    for said, reply in zip(lines, talk.replies):
        print(f"customer: {said}\nagent: {reply}")
    for d in talk.guard.decisions:
        print(f"gate: {d.verdict} {d.decision.call.name if d.decision else ''}: {d.reason}")


if __name__ == "__main__":
    main()

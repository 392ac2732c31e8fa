"""The gate in the OpenAI Agents SDK: a tool guardrail pair over a domain's function tools.

`LedgerGuard.input` is a tool input guardrail: a write (or any tool the domain does not know) goes
to the gate before it runs; REVISE and BLOCK become `reject_content`, so the model reads the gate's
feedback instead of a result and the tool never runs. `LedgerGuard.output` is a tool output
guardrail: a read's result is absorbed into the ledger and a write that ran marks what it touched
stale. The SDK does not tell a guardrail what the customer said, so the host passes each customer
message through `customer_says` (and, for consent "text", the agent's replies through `agent_says`).

    guard = LedgerGuard("airline")
    tools = guard.domain_tools(run)          # or your own @function_tool(tool_input_guardrails=...)
    agent = Agent(name="airline", instructions=..., tools=tools, model=...)
    guard.customer_says(text); result = await Runner.run(agent, history + [{"role": "user", "content": text}])
"""

from __future__ import annotations

import json
from typing import Any, Callable

from ledger_tui.adapters._core import require

require("agents", "the OpenAI Agents SDK (openai-agents)")

from agents import FunctionTool, ToolGuardrailFunctionOutput, tool_input_guardrail, tool_output_guardrail  # noqa: E402
from agents.tool_guardrails import ToolInputGuardrailData, ToolOutputGuardrailData  # noqa: E402

from ledger_tui.api import Decision, PolicyGate, Reply  # noqa: E402
from ledger_tui.engine.domain import Domain  # noqa: E402

__all__ = ["LedgerGuard"]

SHOW_CARD = "Send the customer exactly this, then wait for their answer:"


def _arguments(raw: str) -> dict[str, Any]:
    try:
        parsed = json.loads(raw or "{}")
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


class LedgerGuard:
    """One conversation's ledger and gate, as Agents SDK tool guardrails. `gate` is the
    `PolicyGate` underneath (its `events` are a trajectory `ledger-tui why` reads)."""

    def __init__(self, domain: str | Domain, *, consent: str = "card") -> None:
        self.gate = PolicyGate(domain, consent=consent)
        self.domain = self.gate.domain
        self.decisions: list[Decision] = []
        self.input = tool_input_guardrail(self._gate_call, name="ledger_gate")
        self.output = tool_output_guardrail(self._absorb, name="ledger_absorb")

    # ------------------------------------------------------------------ the conversation
    def customer_says(self, text: str) -> Reply | None:
        """The customer's message (before the run it starts): its facts, their answer to a card."""
        return self.gate.customer_says(text)

    def agent_says(self, text: str) -> None:
        """The agent's reply to the customer (consent "text" reads proposals from it)."""
        if text:
            self.gate.agent_says(text)

    @property
    def pending_card(self) -> str | None:
        """The confirmation card the last held call waits on, for a host that shows it itself."""
        last = self.decisions[-1] if self.decisions else None
        return last.card or last.question if last is not None and not last.allowed else None

    # ------------------------------------------------------------------ the guardrails
    def _gate_call(self, data: ToolInputGuardrailData) -> ToolGuardrailFunctionOutput:
        name, arguments = data.context.tool_name, _arguments(data.context.tool_arguments)
        spec = self.domain.tool(name)
        if spec is not None and spec.kind == "read":
            return ToolGuardrailFunctionOutput.allow()
        decision = self.gate.check(name, arguments)
        self.decisions.append(decision)
        if decision.allowed:
            return ToolGuardrailFunctionOutput.allow(output_info=decision.verdict)
        message = decision.feedback
        shown = decision.card or decision.question
        if shown:
            message = f"{message} {SHOW_CARD}\n{shown}"
        return ToolGuardrailFunctionOutput.reject_content(message, output_info=decision.verdict)

    def _absorb(self, data: ToolOutputGuardrailData) -> ToolGuardrailFunctionOutput:
        name, arguments = data.context.tool_name, _arguments(data.context.tool_arguments)
        spec = self.domain.tool(name)
        output = data.output
        error = isinstance(output, str) and output.startswith("Error")
        if spec is None:
            return ToolGuardrailFunctionOutput.allow()
        if spec.kind == "read":
            seen = self.gate.observe(name, arguments, output, error=error)
            if seen.withheld:  # another customer's record: the model reads why, not the record
                return ToolGuardrailFunctionOutput.reject_content(seen.model_text, output_info="WITHHELD")
        else:
            self.gate.ran(name, arguments, output, error=error)
        return ToolGuardrailFunctionOutput.allow()

    # ------------------------------------------------------------------ tools
    def guarded(self, tool: FunctionTool) -> FunctionTool:
        """`tool` with both guardrails attached (a copy; the SDK's own object is left as it is)."""
        import dataclasses

        return dataclasses.replace(
            tool,
            tool_input_guardrails=[*(tool.tool_input_guardrails or []), self.input],
            tool_output_guardrails=[*(tool.tool_output_guardrails or []), self.output],
        )

    def domain_tools(self, run: Callable[[str, dict[str, Any]], str]) -> list[FunctionTool]:
        """The domain's agent tools as guarded function tools, with the domain's own schemas;
        `run(name, arguments)` executes one in your stack and returns its text ("Error: …" when
        it failed)."""
        out = []
        for spec in self.domain.tools:
            schema = spec.schema()["function"]

            async def invoke(ctx: Any, raw: str, _name: str = spec.name) -> str:
                return run(_name, _arguments(raw))

            tool = FunctionTool(
                name=spec.name, description=schema["description"], params_json_schema=schema["parameters"],
                on_invoke_tool=invoke, strict_json_schema=False,
            )
            out.append(self.guarded(tool))
        return out

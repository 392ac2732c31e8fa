"""The gate as an Inspect AI approver: every tool call a policy guards is approved, rejected or
ends the sample, on the ledger built from the conversation so far.

The approver keeps nothing between calls: each time, the history Inspect hands it (the customer's
messages, the agent's texts and calls, the tools' results) is folded into a fresh `PolicyGate`,
the same ledger for the same history, then the call is asked of the gate. ALLOW approves; REVISE
rejects with the gate's feedback for the model to act on; BLOCK terminates the sample (or, with
`on_block="reject"`, rejects it like a REVISE). Consent is read from the conversation ("text").

    from inspect_ai.approval import ApprovalPolicy
    from ledger_tui.adapters.inspect_approver import ledger_gate
    eval(task, approval=[ApprovalPolicy(ledger_gate("airline"), "*")])
"""

from __future__ import annotations

from typing import Any

from ledger_tui.adapters._core import require

require("inspect", "Inspect AI (inspect-ai)")

from inspect_ai.approval import Approval, Approver, approver  # noqa: E402
from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool, ChatMessageUser  # noqa: E402
from inspect_ai.tool import ToolCall, ToolCallView  # noqa: E402

from ledger_tui.api import PolicyGate  # noqa: E402
from ledger_tui.engine.domain import Domain  # noqa: E402

__all__ = ["ledger_gate", "gate_from_history"]


def gate_from_history(domain: str | Domain, history: list[ChatMessage]) -> PolicyGate:
    """The conversation as the gate sees it: customer messages, agent texts, reads absorbed and
    writes that ran (their touched paths stale)."""
    gate = PolicyGate(domain, consent="text")
    calls: dict[str, tuple[str, dict[str, Any]]] = {}
    for message in history:
        if isinstance(message, ChatMessageUser):
            gate.customer_says(message.text)
        elif isinstance(message, ChatMessageAssistant):
            if message.text:
                gate.agent_says(message.text)
            for call in message.tool_calls or ():
                calls[call.id] = (call.function, dict(call.arguments or {}))
        elif isinstance(message, ChatMessageTool):
            name, arguments = calls.get(message.tool_call_id or "", (message.function or "", {}))
            spec = gate.domain.tool(name)
            if spec is None:
                continue
            error = message.error is not None
            if spec.kind == "read":
                gate.observe(name, arguments, message.text, error=error)
            else:
                gate.ran(name, arguments, message.text, error=error)
    return gate


@approver(name="ledger_gate")
def ledger_gate(domain: str = "airline", on_block: str = "terminate") -> Approver:
    """Approve a call on the gate's ALLOW; reject on REVISE; terminate (or reject) on BLOCK."""

    async def approve(message: str, call: ToolCall, view: ToolCallView, history: list[ChatMessage]) -> Approval:
        gate = gate_from_history(domain, history)
        spec = gate.domain.tool(call.function)
        if spec is not None and spec.kind == "read":
            return Approval(decision="approve", explanation="A read: its result goes to the ledger.")
        decision = gate.check(call.function, dict(call.arguments or {}))
        meta = {"verdict": decision.verdict, "failed": [c.name for c in decision.failed()]}
        if decision.allowed:
            return Approval(decision="approve", explanation=decision.reason, metadata=meta)
        stop = decision.verdict == "BLOCK" and on_block == "terminate"
        return Approval(decision="terminate" if stop else "reject", explanation=decision.feedback, metadata=meta)

    return approve

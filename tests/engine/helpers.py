from __future__ import annotations

from typing import Any

from ledger_tui.engine.events import Event, GateDecided, ToolCall
from ledger_tui.engine.model.models import ModelTurn
from ledger_tui.engine.session import drain

__all__ = ["call", "drain", "turn", "verdicts"]


def call(name: str, call_id: str | None = None, **arguments: Any) -> ToolCall:
    return ToolCall(id=call_id or f"c_{name}_{len(arguments)}_{id(arguments)}", name=name, arguments=arguments)


def turn(*calls: ToolCall, text: str = "") -> ModelTurn:
    return ModelTurn(text=text, tool_calls=tuple(calls))


def verdicts(events: list[Event]) -> list[str]:
    return [e.decision.verdict.value for e in events if isinstance(e, GateDecided)]

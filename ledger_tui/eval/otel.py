"""Trajectories as OpenTelemetry traces: OTLP JSON of GenAI spans, for tools that read those.

One trace per trajectory (its id derived from the session id, so exporting again gives the same
ids): a root span `invoke_agent <domain>` for the session; under it, one `chat <model>` span per
model call (its tokens) and one `execute_tool <tool>` span per tool call, with the gate's decision
on that call as a span event carrying the verdict, the kind of stop, the reason, the failed checks
and the evidence they read. Attribute names follow OpenTelemetry's GenAI semantic conventions
(`gen_ai.*`); what they have no name for is under `ledger_tui.*`.

A trajectory records the order of events, not their durations: a span's times are the session's
`started_at` (else the Unix epoch) plus one millisecond per step, so spans nest and sort as the
events did. Ids are hex, as OTLP JSON wants them (protobuf's own JSON mapping would take base64).
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ledger_tui import __version__
from ledger_tui.engine.events import (
    AssistantMessage,
    Event,
    GateDecided,
    SessionEnded,
    SessionStarted,
    TokenUsage,
    ToolCallProposed,
    ToolResult,
)
from ledger_tui.explain import category_label

STEP_NS = 1_000_000  # one step of a trajectory, as span time
KIND_INTERNAL, KIND_CLIENT = 1, 3  # OTLP SpanKind
STATUS_OK, STATUS_ERROR = 1, 2


def _value(v: Any) -> dict[str, Any]:
    """An OTLP AnyValue."""
    if isinstance(v, bool):
        return {"boolValue": v}
    if isinstance(v, int):
        return {"intValue": str(v)}  # int64 is a string in OTLP JSON
    if isinstance(v, float):
        return {"doubleValue": v}
    if isinstance(v, (list, tuple)):
        return {"arrayValue": {"values": [_value(x) for x in v]}}
    return {"stringValue": v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, sort_keys=True, default=str)}


def _attributes(values: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"key": k, "value": _value(v)} for k, v in values.items() if v is not None]


def _id(*parts: object, size: int) -> str:
    return hashlib.sha256("\x1f".join(str(p) for p in parts).encode()).hexdigest()[: size * 2]


@dataclass
class _Span:
    trace: str
    span: str
    parent: str | None
    name: str
    kind: int
    start: int
    end: int
    attributes: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None

    def otlp(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "traceId": self.trace,
            "spanId": self.span,
            "name": self.name,
            "kind": self.kind,
            "startTimeUnixNano": str(self.start),
            "endTimeUnixNano": str(max(self.end, self.start)),
            "attributes": _attributes(self.attributes),
            "status": {"code": STATUS_ERROR, "message": self.error} if self.error else {"code": STATUS_OK},
        }
        if self.parent:
            out["parentSpanId"] = self.parent
        if self.events:
            out["events"] = self.events
        return out


def _epoch_ns(started: SessionStarted | None) -> int:
    if started is not None and started.started_at:
        try:
            return int(_dt.datetime.fromisoformat(started.started_at).timestamp() * 1e9)
        except ValueError:
            pass
    return 0


def trajectory_spans(events: list[Event], name: str = "") -> list[dict[str, Any]]:
    """The OTLP spans of one trajectory, root first."""
    started = events[0] if events and isinstance(events[0], SessionStarted) else None
    session = started.session_id if started else name
    trace = _id("trace", session, size=16)
    t0 = _epoch_ns(started)
    at = lambda seq: t0 + max(seq, 0) * STEP_NS  # noqa: E731
    last = events[-1].seq if events else 0
    ended = next((e for e in reversed(events) if isinstance(e, SessionEnded)), None)
    root = _Span(
        trace, _id("span", session, "root", size=8), None,
        f"invoke_agent {started.domain}" if started else "invoke_agent", KIND_INTERNAL, at(0), at(last + 1),
        {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "ledger-tui",
            "gen_ai.conversation.id": session,
            "gen_ai.request.model": started.model if started else None,
            "ledger_tui.domain": started.domain if started else None,
            "ledger_tui.mode": started.mode if started else None,
            "ledger_tui.task_id": started.task_id if started else None,
            "ledger_tui.consent": started.consent if started else None,
            "ledger_tui.db_digest.start": started.db_digest if started else None,
            "ledger_tui.db_digest.end": ended.db_digest if ended else None,
            "ledger_tui.end_reason": ended.reason if ended else None,
            "ledger_tui.reward": ended.reward if ended else None,
        },
    )
    spans = [root]
    model = started.model if started else "model"
    previous = 0
    tools: dict[str, _Span] = {}
    for i, e in enumerate(events):
        if isinstance(e, AssistantMessage) and e.author == "model":
            usage = next((u for u in events[i + 1 : i + 3] if isinstance(u, TokenUsage)), None)
            spans.append(_Span(
                trace, _id("span", session, "chat", e.seq, size=8), root.span, f"chat {model}", KIND_CLIENT,
                at(previous), at(e.seq),
                {
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": model,
                    "gen_ai.usage.input_tokens": usage.prompt_tokens if usage else None,
                    "gen_ai.usage.output_tokens": usage.completion_tokens if usage else None,
                    "gen_ai.response.finish_reasons": [e.finish_reason] if e.finish_reason else None,
                    "ledger_tui.step": e.seq,
                    "ledger_tui.tool_calls": len(e.tool_calls),
                },
            ))
        elif isinstance(e, ToolCallProposed):
            span = _Span(
                trace, _id("span", session, "tool", e.call.id, e.seq, size=8), root.span, f"execute_tool {e.call.name}",
                KIND_INTERNAL, at(e.seq), at(e.seq),
                {
                    "gen_ai.operation.name": "execute_tool",
                    "gen_ai.tool.name": e.call.name,
                    "gen_ai.tool.call.id": e.call.id,
                    "gen_ai.tool.type": "function",
                    "gen_ai.tool.call.arguments": e.call.arguments,
                    "ledger_tui.tool.kind": e.kind,
                    "ledger_tui.requestor": e.call.requestor,
                    "ledger_tui.step": e.seq,
                },
            )
            tools[e.call.id] = span
            spans.append(span)
        elif isinstance(e, GateDecided) and e.decision.call.id in tools:
            tools[e.decision.call.id].events.append(_decision_event(e, at(e.seq)))
        elif isinstance(e, ToolResult) and e.call_id in tools:
            span = tools.pop(e.call_id)
            span.end = at(e.seq)
            span.attributes["ledger_tui.executed"] = e.executed
            if e.withheld:
                span.attributes["ledger_tui.withheld"] = True
            if e.error:
                span.error = e.content[:500]
        previous = e.seq
    return [s.otlp() for s in spans]


def _decision_event(e: GateDecided, time: int) -> dict[str, Any]:
    d = e.decision
    failed = d.failed()
    evidence = [
        {"check": p.name, "clause": p.clause, "passed": p.passed, "reads": [r.model_dump(mode="json") for r in p.reads]}
        for p in d.predicates
    ]
    return {
        "timeUnixNano": str(time),
        "name": "ledger_tui.gate.decision",
        "attributes": _attributes({
            "ledger_tui.gate.verdict": d.shown_verdict(),
            "ledger_tui.gate.category": category_label(d),
            "ledger_tui.gate.reason": d.reason,
            "ledger_tui.gate.hint": d.hint or None,
            "ledger_tui.gate.failed_checks": [p.name for p in failed] or None,
            "ledger_tui.gate.clauses": [p.clause for p in failed] or None,
            "ledger_tui.gate.suggested_calls": [s.signature() for s in d.suggested_calls] or None,
            "ledger_tui.gate.evidence": json.dumps(evidence, ensure_ascii=False, sort_keys=True, default=str),
            "ledger_tui.step": e.seq,
        }),
    }


def export_request(trajectories: Iterable[tuple[Path, list[Event]]]) -> dict[str, Any]:
    """An OTLP ExportTraceServiceRequest (JSON) holding one trace per trajectory."""
    spans: list[dict[str, Any]] = []
    for path, events in trajectories:
        spans += trajectory_spans(events, name=str(path))
    return {
        "resourceSpans": [{
            "resource": {"attributes": _attributes({"service.name": "ledger-tui", "service.version": __version__})},
            "scopeSpans": [{"scope": {"name": "ledger_tui", "version": __version__}, "spans": spans}],
        }]
    }

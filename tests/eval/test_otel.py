"""`ledger-tui export --otel` writes what OpenTelemetry tools read: OTLP JSON that the
opentelemetry-proto message classes parse, one trace per trajectory, a span per model call and
per tool call under the session's span, and each gate decision an event on its call's span with
the verdict, the reason and the evidence the checks read."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from google.protobuf import json_format
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from ledger_tui.engine.events import AssistantMessage, GateDecided, TokenUsage, ToolCallProposed
from ledger_tui.engine.store.trajectories import read_trajectory
from tests.cli.test_cli import cli, one_sentence_error

ROOT = Path(__file__).resolve().parents[2]
BLOCKED = ROOT / "sessions" / "airline-cancel-blocked.jsonl"


def parsed(path: Path) -> ExportTraceServiceRequest:
    """Parse as an OTLP receiver does: OTLP JSON ids are hex, protobuf's JSON mapping wants base64."""
    data = json.loads(path.read_text(encoding="utf-8"))
    for resource in data["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key in ("traceId", "spanId", "parentSpanId"):
                    if key in span:
                        span[key] = base64.b64encode(bytes.fromhex(span[key])).decode()
    return json_format.ParseDict(data, ExportTraceServiceRequest())


def attrs(kvs) -> dict:
    out = {}
    for kv in kvs:
        which = kv.value.WhichOneof("value")
        value = getattr(kv.value, which)
        out[kv.key] = [getattr(v, v.WhichOneof("value")) for v in value.values] if which == "array_value" else value
    return out


def test_a_session_exports_as_one_trace_of_genai_spans_with_the_gates_decision_and_evidence(tmp_path):
    out = tmp_path / "otel.json"
    done = cli("export", str(BLOCKED), "--otel", str(out))
    assert done.returncode == 0, done.stderr
    events = read_trajectory(BLOCKED).events
    calls = [e for e in events if isinstance(e, ToolCallProposed)]
    model_calls = [e for e in events if isinstance(e, AssistantMessage) and e.author == "model"]
    assert done.stdout.strip().endswith(f"1 trace, {1 + len(calls) + len(model_calls)} spans, 1 gate decision")

    request = parsed(out)
    (resource,) = request.resource_spans
    assert attrs(resource.resource.attributes)["service.name"] == "ledger-tui"
    spans = resource.scope_spans[0].spans
    root, rest = spans[0], spans[1:]
    assert len(root.trace_id) == 16 and len(root.span_id) == 8 and not root.parent_span_id
    assert root.name == "invoke_agent airline" and attrs(root.attributes)["gen_ai.operation.name"] == "invoke_agent"
    assert all(s.trace_id == root.trace_id and s.parent_span_id == root.span_id for s in rest)
    assert all(root.start_time_unix_nano <= s.start_time_unix_nano <= s.end_time_unix_nano <= root.end_time_unix_nano for s in rest)

    chats = [s for s in rest if s.name.startswith("chat ")]
    tools = [s for s in rest if s.name.startswith("execute_tool ")]
    assert len(chats) == len(model_calls) and len(tools) == len(calls)
    tokens = sum(e.prompt_tokens for e in events if isinstance(e, TokenUsage))
    assert sum(attrs(s.attributes)["gen_ai.usage.input_tokens"] for s in chats) == tokens
    assert [attrs(s.attributes)["gen_ai.tool.name"] for s in tools] == [c.call.name for c in calls]

    blocked = next(e for e in events if isinstance(e, GateDecided))
    (span,) = [s for s in tools if s.events]
    assert attrs(span.attributes)["gen_ai.tool.call.id"] == blocked.decision.call.id
    assert attrs(span.attributes)["ledger_tui.executed"] is False
    (event,) = span.events
    decided = attrs(event.attributes)
    assert event.name == "ledger_tui.gate.decision"
    assert (decided["ledger_tui.gate.verdict"], decided["ledger_tui.gate.category"]) == ("BLOCK", "violation")
    assert decided["ledger_tui.gate.reason"] == blocked.decision.reason
    assert decided["ledger_tui.gate.failed_checks"] == [p.name for p in blocked.decision.failed()]
    evidence = json.loads(decided["ledger_tui.gate.evidence"])
    reads = {r["path"]: r["value"] for check in evidence if check["check"] == "cancel_eligible" for r in check["reads"]}
    assert reads["reservations.VY0QX8"]["insurance"] == "no"


def test_exporting_again_gives_the_same_ids_and_a_folder_gives_a_trace_per_run(tmp_path):
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    assert cli("export", str(BLOCKED), "--otel", str(first)).returncode == 0
    assert cli("export", "airline-cancel-blocked", "--otel", str(second)).returncode == 0
    assert first.read_text() == second.read_text()
    folder = tmp_path / "runs"
    folder.mkdir()
    for name in ("airline-cancel-blocked", "retail-refund-revise-then-allow", "telecom-roaming"):
        (folder / f"{name}.jsonl").write_bytes((ROOT / "sessions" / f"{name}.jsonl").read_bytes())
    out = tmp_path / "folder.json"
    done = cli("export", str(folder), "--otel", str(out))
    assert done.returncode == 0, done.stderr
    roots = [s for s in parsed(out).resource_spans[0].scope_spans[0].spans if not s.parent_span_id]
    assert len(roots) == 3 and len({s.trace_id for s in roots}) == 3
    assert one_sentence_error(cli("export", str(BLOCKED), "--otel", str(out))) == f"error: {out} exists; pass --force to replace it, or another --otel file."

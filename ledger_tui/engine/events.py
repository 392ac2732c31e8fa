"""The typed event stream: the one interface between the engine and everything that consumes it.

A trajectory *is* the list of these events, one JSON object per line (see `store.py`). Live play,
replay, `why` and the evaluator all read the same events, and state at step *i* is a fold over
events `0..i` (see `fold.py`). The schema is versioned by `SCHEMA_VERSION` in `SessionStarted`;
adding an optional field keeps the version, anything else bumps it.

Versions: 1, the first; 2 added two kinds, `helper_call` and `reformulated_input` (the IRMA
comparison mode). A version-1 trajectory is read as it is: its events are version-2 events.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any, ClassVar, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_serializer

SCHEMA_VERSION = 2

Requestor = Literal["assistant", "user", "operator"]
Category = Literal["allowed", "violation", "needs_read"]
CATEGORY_LABELS: dict[str, str] = {"allowed": "allowed", "violation": "violation", "needs_read": "needs a read"}


class Verdict(str, Enum):
    ALLOW = "ALLOW"
    REVISE = "REVISE"
    BLOCK = "BLOCK"


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(Frozen):
    """A proposed call: by the agent's model, the customer (dual control) or the operator."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    requestor: Requestor = "assistant"

    def signature(self) -> str:
        """`name(key=value, …)` with JSON values: how calls are shown and suggested."""
        import json

        args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in self.arguments.items())
        return f"{self.name}({args})"


class SuggestedCall(Frozen):
    """A machine-readable hint: the read call that would supply missing evidence."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)

    def signature(self) -> str:
        return ToolCall(id="", name=self.name, arguments=self.arguments).signature()


class EvidenceRead(Frozen):
    """One ledger path a predicate read, with the value it saw and where that value came from."""

    path: str
    value: Any = None
    present: bool = True
    stale: bool = False
    origin: Literal["observed", "stated", "context"] = "observed"
    source_seq: int | None = None
    source_call: str | None = None
    quote: str | None = None  # a stated fact: the customer's words it came from
    # the record's top-level fields the check used, in the order it first used them (recorded from
    # its accesses to the value; absent in trajectories written before they were recorded)
    fields: list[str] | None = None

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        if data.get("fields", 0) is None:
            del data["fields"]
        return data


class PredicateResult(Frozen):
    name: str
    clause: str
    passed: bool
    verdict_on_fail: Verdict
    reason: str = ""
    hint: str = ""
    suggested_call: SuggestedCall | None = None
    reads: list[EvidenceRead] = Field(default_factory=list)
    error: bool = False  # the predicate itself failed to evaluate (fail closed)
    # The check failed only because evidence it needs is absent or stale, and `suggested_call` is a
    # read that supplies it: "needs a read", not a violation. None in trajectories written before
    # the field existed (see `needs_a_read`).
    needs_read: bool | None = None

    def needs_a_read(self) -> bool:
        if self.passed:
            return False
        if self.needs_read is not None:
            return self.needs_read
        # older trajectories: the gate's missing-evidence wording, with the read it suggested
        return self.suggested_call is not None and (" has not been read" in self.reason or " is stale" in self.reason)


class GateDecision(Frozen):
    """The gate's verdict on one write call, with everything needed to explain it later."""

    call: ToolCall
    verdict: Verdict
    reason: str
    hint: str = ""
    suggested_calls: list[SuggestedCall] = Field(default_factory=list)
    predicates: list[PredicateResult] = Field(default_factory=list)

    def failed(self) -> list[PredicateResult]:
        return [p for p in self.predicates if not p.passed]

    def category(self) -> Category:
        """allowed; needs a read (every failed check only lacks evidence a suggested read
        supplies); or violation (any other failed check)."""
        if self.verdict == Verdict.ALLOW:
            return "allowed"
        failed = self.failed()
        if failed and all(p.needs_a_read() for p in failed):
            return "needs_read"
        return "violation"


# ----------------------------------------------------------------------------- events


class _Event(Frozen):
    seq: int = -1  # position in the trajectory, set by the session when emitted

    # Optional facts added after a kind was first written: left out of the JSON while unset, so
    # trajectories that never had them keep their bytes.
    _OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: Any) -> dict[str, Any]:
        data = handler(self)
        for name in self._OMIT_WHEN_NONE:
            if data.get(name, 0) is None:
                del data[name]
        return data


class SessionStarted(_Event):
    type: Literal["session_started"] = "session_started"
    schema_version: int = SCHEMA_VERSION
    session_id: str
    domain: str
    model: str
    mode: str
    policy_digest: str
    db_digest: str
    user_db_digest: str | None = None
    clock: str
    task_id: str | None = None
    started_at: str | None = None  # wall clock; the only non-deterministic field


class UserMessage(_Event):
    type: Literal["user_message"] = "user_message"
    text: str


class AssistantMessage(_Event):
    """One model turn as the model produced it: text and/or tool calls."""

    type: Literal["assistant_message"] = "assistant_message"
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    # who produced it: the model, the operator acting as the agent, or a fixed greeting
    author: Literal["model", "operator", "fixed"] = "model"
    # why the server stopped, when it said ("length": cut at the completion cap)
    finish_reason: str | None = None

    _OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ("finish_reason",)


class ToolCallProposed(_Event):
    type: Literal["tool_call"] = "tool_call"
    call: ToolCall
    kind: Literal["read", "write", "generic", "unknown"]


class GateDecided(_Event):
    type: Literal["gate_decision"] = "gate_decision"
    decision: GateDecision


class ToolResult(_Event):
    type: Literal["tool_result"] = "tool_result"
    call_id: str
    name: str
    requestor: Requestor = "assistant"
    content: str
    error: bool = False
    executed: bool = True  # false when the gate stopped the call and this is its feedback


class LedgerUpdated(_Event):
    """One path changed: added, changed, refreshed (same value re-read), or marked stale."""

    type: Literal["ledger_update"] = "ledger_update"
    path: str
    change: Literal["added", "changed", "refreshed", "stale"]
    before: Any = None
    after: Any = None
    origin: Literal["observed", "stated"] = "observed"
    source_call: str = ""
    source_seq: int | None = None
    quote: str | None = None  # a stated fact: the customer's words it came from


class Refusal(_Event):
    type: Literal["refusal"] = "refusal"
    call_id: str | None = None
    text: str


class TokenUsage(_Event):
    """Tokens of one model call, split by what the prompt was made of (approximate split)."""

    type: Literal["token_usage"] = "token_usage"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    ledger_tokens: int = 0
    policy_tokens: int = 0
    transcript_tokens: int = 0
    # prompt tokens the server reused from its prefix cache, where it reports them
    cached_tokens: int | None = None

    _OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ("cached_tokens",)


class Notice(_Event):
    """Something went wrong that the session survived (model error, unusable reply, …)."""

    type: Literal["notice"] = "notice"
    level: Literal["info", "warning", "error"] = "warning"
    text: str


class HelperCall(_Event):
    """One call of a comparison mode's helper model (IRMA's constraints or tool suggestions),
    before the agent answers a customer message: the prompt as sent, what came back, its tokens."""

    type: Literal["helper_call"] = "helper_call"
    helper: str  # which helper: "constraints" or "tools" in IRMA
    model: str
    messages: list[dict[str, Any]] = Field(default_factory=list)
    output: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int | None = None
    finish_reason: str | None = None  # "length": the answer was cut at the completion cap

    _OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ("cached_tokens", "finish_reason")


class ReformulatedInput(_Event):
    """What the agent reads in place of the customer's latest message (IRMA): that message with the
    customer's earlier requests, the helpers' checklist and their tool suggestions."""

    type: Literal["reformulated_input"] = "reformulated_input"
    user_seq: int  # the customer message it stands for
    text: str
    earlier: int = 0  # the customer's earlier messages it repeats (the memory)


class SessionEnded(_Event):
    type: Literal["session_ended"] = "session_ended"
    reason: str = "completed"
    db_digest: str
    user_db_digest: str | None = None
    # Set by the evaluator (or an importer): the run's grade and how it ended, τ²-bench style.
    reward: float | None = None
    termination: str | None = None
    grade: dict[str, Any] | None = None


Event = Annotated[
    Union[
        SessionStarted,
        UserMessage,
        AssistantMessage,
        ToolCallProposed,
        GateDecided,
        ToolResult,
        LedgerUpdated,
        Refusal,
        TokenUsage,
        Notice,
        HelperCall,
        ReformulatedInput,
        SessionEnded,
    ],
    Field(discriminator="type"),
]

EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event)


def parse_event(data: str | bytes | dict[str, Any]) -> Event:
    if isinstance(data, dict):
        return EVENT_ADAPTER.validate_python(data)
    return EVENT_ADAPTER.validate_json(data)


def dump_event(event: Event) -> str:
    return event.model_dump_json()

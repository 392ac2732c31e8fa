"""The typed event stream: the one interface between the engine and everything that consumes it.

A trajectory *is* the list of these events, one JSON object per line (see `store.py`). Live play,
replay, `why` and the evaluator all read the same events, and state at step *i* is a fold over
events `0..i` (see `fold.py`). The schema is versioned by `SCHEMA_VERSION` in `SessionStarted`;
adding an optional field keeps the version, anything else bumps it.

Versions: 1, the first; 2 added two kinds, `helper_call` and `reformulated_input` (the IRMA
comparison mode); 3 added `confirmation_requested` and `confirmation_answered` (consent asked on a
card and observed, see `cards.py`), the author "gate" of an assistant message (the calls the
engine runs on a confirmed card) and the category "consent"; 4 added `question_requested` and
`question_answered` (what only the customer can say, asked in closed form and observed, see
`questions.py`). Trajectories of versions 1 to 3 are read as they are: their events are version-4
events; as they were recorded without cards (1, 2) their consent was read from the conversation's
text (`SessionStarted.consent` unset means "text"), and without questions (1 to 3) so were the
facts only the customer can say.
"""

from __future__ import annotations

import inspect
import json
import typing
from enum import Enum
from typing import Annotated, Any, ClassVar, Iterable, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_serializer

SCHEMA_VERSION = 4

Requestor = Literal["assistant", "user", "operator"]
Category = Literal["allowed", "violation", "disclosure", "inferred", "consent", "needs_read"]
CATEGORY_LABELS: dict[str, str] = {
    "allowed": "allowed", "violation": "violation", "disclosure": "disclosure", "inferred": "inferred from text",
    "consent": "asks the customer", "needs_read": "needs a read",
}
ConsentMode = Literal["card", "text"]


class Verdict(str, Enum):
    ALLOW = "ALLOW"
    REVISE = "REVISE"
    BLOCK = "BLOCK"


class Frozen(BaseModel):
    # each model's validator and serializer are built when it is first used, not when this module
    # is imported: `why` validates 6 of the 17 kinds of event, each with its own model (see
    # EVENT_ADAPTER)
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)


# A pydantic with `exclude_if` (newer than the 2.7 floor) leaves a field out by its value in its
# own serializer; with an older one OmitsUnset's serializer does it in Python, which builds a dict
# of every event first and made an event's line take three times as long. The bytes are the same.
_OMITTED_BY_PYDANTIC = "exclude_if" in inspect.signature(Field).parameters


def _is_none(value: Any) -> bool:
    return value is None


def unset() -> Any:
    """The default of a field named in its model's `_OMIT_WHEN_NONE`: None, left out of the JSON."""
    return Field(None, exclude_if=_is_none) if _OMITTED_BY_PYDANTIC else None


class OmitsUnset(Frozen):
    """A model with optional facts added after it was first written: they are left out of the
    JSON while unset, so files that never had them keep their bytes. Each is named in
    `_OMIT_WHEN_NONE` and defaults to `unset()`."""

    _OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ()

    if not _OMITTED_BY_PYDANTIC:

        @model_serializer(mode="wrap")
        def _omit_unset(self, handler: Any) -> dict[str, Any]:
            data = handler(self)
            for name in self._OMIT_WHEN_NONE:
                if data.get(name, 0) is None:
                    del data[name]
            return data


class ToolCall(Frozen):
    """A proposed call: by the agent's model, the customer (dual control) or the operator."""

    id: str
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    requestor: Requestor = "assistant"

    def signature(self) -> str:
        """`name(key=value, …)` with JSON values: how calls are shown and suggested."""
        return signature(self.name, self.arguments)


class SuggestedCall(Frozen):
    """A machine-readable hint: the read call that would supply missing evidence."""

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)

    def signature(self) -> str:
        return signature(self.name, self.arguments)


def signature(name: str, arguments: dict[str, Any]) -> str:
    """A call's `name(key=value, …)`, each value as `json.dumps(value, ensure_ascii=False)` writes
    it (one encoder for every value: `json.dumps` with an option makes a new one on each call)."""
    args = ", ".join(f"{k}={json_text(v)}" for k, v in arguments.items())
    return f"{name}({args})"


# `json.dumps(value, ensure_ascii=False)`, its encoder made once (calls and quotes are shown this way)
json_text = json.JSONEncoder(ensure_ascii=False).encode


class EvidenceRead(OmitsUnset):
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
    fields: list[str] | None = unset()

    _OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ("fields",)


class PredicateResult(OmitsUnset):
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
    # The check failed only because the customer has not confirmed this exact call on a card: the
    # system asks them (consent mode "card"). None in trajectories written before cards.
    consent: bool | None = unset()
    # The check decided on what the free-text reader took from words the system did not observe
    # (a yes read from a reply, a reason or a report found in a message): an inferred finding,
    # not a ledger violation. None when it did not (and in trajectories written before).
    inferred: bool | None = unset()
    # The check failed only because the customer has not answered a closed question the system
    # asks them (consent mode "card", see questions.py): the ledger path of the answer it needs.
    # None when it did not (and in trajectories written before schema 4).
    question: str | None = unset()
    # The read gate (disclosure.py): the check found the read's result is a record of a customer
    # other than the identified one (or of a customer, before anyone is identified), so the result
    # is withheld from the model. None on every write check (and in trajectories written before).
    withheld: bool | None = unset()

    _OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ("consent", "inferred", "question", "withheld")

    def asks_consent(self) -> bool:
        """The check waits for the customer: their yes on a card, or their answer to a question."""
        return not self.passed and (bool(self.consent) or bool(self.question))

    def asks_question(self) -> str | None:
        return self.question if not self.passed else None

    def needs_a_read(self) -> bool:
        if self.passed:
            return False
        if self.needs_read is not None:
            return self.needs_read
        # older trajectories: the gate's missing-evidence wording, with the read it suggested
        return self.suggested_call is not None and (" has not been read" in self.reason or " is stale" in self.reason)


class GateDecision(Frozen):
    """The gate's verdict on one write call, with everything needed to explain it later; or, in
    gated modes, on a read whose result it withholds (category "disclosure", verdict REVISE: the
    call ran, the model is told whose record it is not, and goes on)."""

    call: ToolCall
    verdict: Verdict
    reason: str
    hint: str = ""
    suggested_calls: list[SuggestedCall] = Field(default_factory=list)
    predicates: list[PredicateResult] = Field(default_factory=list)

    def failed(self) -> list[PredicateResult]:
        return [p for p in self.predicates if not p.passed]

    def category(self) -> Category:
        """allowed; violation (any failed check that is neither a missing read, a missing consent,
        a withheld read nor read from text); disclosure (a read's result withheld: another
        customer's record, or a customer's before anyone is identified); inferred (the rest include a check the free-text reader decided:
        what the words seemed to say, not what the ledger holds); consent (every failed check is
        the customer's consent to this exact call, which the system asks for on a card); needs a
        read (every failed check only lacks evidence a suggested read supplies, or consent, which
        is asked once the read is made)."""
        if self.verdict == Verdict.ALLOW:
            return "allowed"
        failed = self.failed()
        if not failed or not all(p.needs_a_read() or p.asks_consent() or p.inferred or p.withheld for p in failed):
            return "violation"
        if any(p.withheld for p in failed):
            return "disclosure"
        if any(p.inferred for p in failed):
            return "inferred"
        if all(p.asks_consent() for p in failed):
            return "consent"
        return "needs_read"

    def shown_verdict(self, category: Category | None = None) -> str:
        """The verdict as the workbench and the commands show it: WITHHELD for a read whose result
        the read gate keeps from the model (it ran; nothing is revised), else the verdict
        (`category`: the decision's, where the caller has it already)."""
        if self.verdict != Verdict.REVISE:
            return self.verdict.value
        return "WITHHELD" if (category or self.category()) == "disclosure" else self.verdict.value

    def held(self) -> bool:
        """The call waits for the customer's answer on a card: every other check passed."""
        return self.verdict == Verdict.REVISE and self.category() == "consent"


# ----------------------------------------------------------------------------- events


class _Event(OmitsUnset):
    seq: int = -1  # position in the trajectory, set by the session when emitted


class ForkedFrom(Frozen):
    """A fork's parent: the trajectory it continues and the step it branched at (the parent's
    customer message it replaced; the fork's own events begin there)."""

    file: str
    step: int


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
    # how the customer's consent is observed in a gated mode: "card" (asked by the system, see
    # cards.py) or "text" (read from the conversation); unset: text (ungated modes, older files)
    consent: ConsentMode | None = unset()
    # a fork of a recorded run (fork.py): its parent and the step it branched at; unset otherwise
    forked_from: ForkedFrom | None = unset()

    _OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ("consent", "forked_from")


class UserMessage(_Event):
    type: Literal["user_message"] = "user_message"
    text: str


class AssistantMessage(_Event):
    """One model turn as the model produced it: text and/or tool calls."""

    type: Literal["assistant_message"] = "assistant_message"
    text: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    # who produced it: the model, the operator acting as the agent, a fixed greeting, or the gate
    # (the calls a confirmed card named, run by the engine with fresh call ids)
    author: Literal["model", "operator", "fixed", "gate"] = "model"
    # why the server stopped, when it said ("length": cut at the completion cap)
    finish_reason: str | None = unset()

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
    # a read that ran but whose result the read gate withheld from the model (`content` says why;
    # the record is in the ledger, withheld from the prompt): see disclosure.py
    withheld: bool | None = unset()

    _OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ("withheld",)


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
    # read by a call whose result the read gate withheld: in the ledger (the gate's checks read
    # it), left out of the prompt's block until a read shows it to its owner
    withheld: bool | None = unset()

    _OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ("withheld",)


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
    cached_tokens: int | None = unset()

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
    cached_tokens: int | None = unset()
    finish_reason: str | None = unset()  # "length": the answer was cut at the completion cap

    _OMIT_WHEN_NONE: ClassVar[tuple[str, ...]] = ("cached_tokens", "finish_reason")


class ReformulatedInput(_Event):
    """What the agent reads in place of the customer's latest message (IRMA): that message with the
    customer's earlier requests, the helpers' checklist and their tool suggestions."""

    type: Literal["reformulated_input"] = "reformulated_input"
    user_seq: int  # the customer message it stands for
    text: str
    earlier: int = 0  # the customer's earlier messages it repeats (the memory)


class CardLine(Frozen):
    """One held call as its card shows it to the customer."""

    call_id: str
    action: str  # "Cancel reservation CAA302: JFK to LAX, flight HAT123 on 2024-05-20"
    details: list[str] = Field(default_factory=list)  # "Refund: your Visa ending in 9431"


class ConfirmationRequested(_Event):
    """The system (not the model) asks the customer to confirm the writes held in one assistant
    message, on a card rendered from their exact arguments and the ledger. Agent text: graders
    and the customer simulator see `text` as something the agent said."""

    type: Literal["confirmation_requested"] = "confirmation_requested"
    card: str  # "card_1", unique in the session
    calls: list[ToolCall]  # exactly the held calls, in order
    lines: list[CardLine] = Field(default_factory=list)
    text: str  # what the customer is shown
    # what a plain yes may repeat (see answers.py): the actions' verb families, the values shown
    families: list[str] = Field(default_factory=list)
    values: list[str] = Field(default_factory=list)


class ConfirmationAnswered(_Event):
    """The customer's reply to a card, as the closed reader reads it (`answers.py`)."""

    type: Literal["confirmation_answered"] = "confirmation_answered"
    card: str
    answer: Literal["yes", "no", "unclear"]
    quote: str  # the customer's words
    reason: str = ""  # the reader's reason: "a plain yes", "more than a yes: it also says '2 bags'"
    runs: list[str] = Field(default_factory=list)  # on a yes: the fresh ids the calls run under, in card order


class QuestionChoice(Frozen):
    value: str  # what the checks compare: "health"
    label: str  # what the customer reads


class QuestionRequested(_Event):
    """The system (not the model) asks the customer a closed question about one record, which a
    check of the held calls needs and no read returns (the reason for cancelling reservation
    ZFA04Y; being abroad, with line L1001). Agent text, as a card is."""

    type: Literal["question_requested"] = "question_requested"
    question: str  # "question_1", unique in the session
    key: str  # the fact: "cancel_reason"
    record: str  # "ZFA04Y"
    calls: list[ToolCall]  # the held calls that wait on it, in order
    choices: list[QuestionChoice]
    text: str  # what the customer is shown
    attempt: int = 1  # 2 when asked once more after an unclear answer


class QuestionAnswered(_Event):
    """The customer's reply to a question, as the closed reader reads it (`questions.read_answer`)."""

    type: Literal["question_answered"] = "question_answered"
    question: str
    value: str | None = None  # the choice named; None: unclear
    choice: int | None = None  # its number, 1-based
    quote: str  # the customer's words
    reason: str = ""  # "choice 3 (Health: ...)"; "a question"; "more than one choice: ..."
    runs: list[str] = Field(default_factory=list)  # on an answer: the fresh ids the held calls are gated again under


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
        ConfirmationRequested,
        ConfirmationAnswered,
        QuestionRequested,
        QuestionAnswered,
        SessionEnded,
    ],
    Field(discriminator="type"),
]


def agent_text(event: Any) -> str | None:
    """What the customer heard from the agent's side in this event: a message's text, a refusal,
    a confirmation card, a question; None for every other event."""
    if isinstance(event, (AssistantMessage, Refusal, ConfirmationRequested, QuestionRequested)):
        return event.text
    return None


def asked_of(events: Iterable[Event], call_id: str, asks: type, answers: type, key: str) -> tuple[Any, Any] | None:
    """What the system asked the customer (a card, a question: `asks`, named by its field `key`)
    that a call is held for, or was run or gated again after (on its answer), with that answer."""
    shown: dict[str, Any] = {}
    given: dict[str, Any] = {}
    held = None
    for e in events:
        if isinstance(e, asks):
            shown[getattr(e, key)] = e
            if any(c.id == call_id for c in e.calls):
                held = getattr(e, key)
        elif isinstance(e, answers):
            given.setdefault(getattr(e, key), e)
            if call_id in e.runs and getattr(e, key) in shown:
                return shown[getattr(e, key)], e
    return (shown[held], given.get(held)) if held is not None else None


# (built when first used, with every kind's model: a reader of some kinds only validates each
# line with its kind's model, `EVENT_MODELS`)
EVENT_ADAPTER: TypeAdapter[Event] = TypeAdapter(Event, config=ConfigDict(defer_build=True))
# each kind of event as a line names it (`"type": "gate_decision"`), and its model
EVENT_MODELS: dict[str, type[BaseModel]] = {cls.model_fields["type"].default: cls for cls in typing.get_args(typing.get_args(Event)[0])}


def parse_event(data: str | bytes | dict[str, Any]) -> Event:
    if isinstance(data, dict):
        return EVENT_ADAPTER.validate_python(data)
    return EVENT_ADAPTER.validate_json(data)


def dump_event(event: Event) -> str:
    return event.model_dump_json()

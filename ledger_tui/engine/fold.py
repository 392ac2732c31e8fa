"""State at step *i* is a fold over events 0..i.

Live sessions, replay, `why` and the evaluator all derive the ledger, the gate log, the
conversation and the session context the same way: by applying events in order with `advance`.
Nothing is recomputed differently in replay.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Iterable, Sequence

from ledger_tui.engine.events import (
    AssistantMessage,
    Event,
    GateDecided,
    LedgerUpdated,
    Notice,
    Refusal,
    SessionEnded,
    SessionStarted,
    TokenUsage,
    ToolCall,
    ToolCallProposed,
    ToolResult,
    UserMessage,
    Verdict,
)
from ledger_tui.engine.gate import SessionContext
from ledger_tui.engine.ledger import Ledger, apply_update

CURRENT_USER = "users.current"
IDENTIFIED_PREFIX = "identified."


@dataclass(frozen=True)
class Totals:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    ledger_tokens: int = 0
    policy_tokens: int = 0
    transcript_tokens: int = 0
    model_calls: int = 0
    reads: int = 0
    writes: int = 0
    allow: int = 0
    revise: int = 0
    block: int = 0


@dataclass(frozen=True)
class SessionState:
    """Everything the panes show, as of one step."""

    seq: int = -1
    started: SessionStarted | None = None
    ended: SessionEnded | None = None
    ledger: Ledger = field(default_factory=Ledger)
    conversation: tuple[Event, ...] = ()
    gate_log: tuple[GateDecided, ...] = ()
    user_messages: tuple[str, ...] = ()
    assistant_texts: tuple[str, ...] = ()
    last_assistant_before_user: str = ""
    totals: Totals = field(default_factory=Totals)
    # agent writes proposed and awaiting their result, and those that ran since the customer spoke
    open_writes: tuple[ToolCall, ...] = ()
    recent_writes: tuple[ToolCall, ...] = ()
    open_reads: tuple[ToolCall, ...] = ()
    reads_done: frozenset[str] = frozenset()
    reads_failed: frozenset[str] = frozenset()
    writes_done: tuple[ToolCall, ...] = ()  # every agent write that ran, in order

    def context(self) -> SessionContext:
        identified = tuple(
            p[len(IDENTIFIED_PREFIX) :] for p in self.ledger if p.startswith(IDENTIFIED_PREFIX)
        )
        user = self.ledger.value(CURRENT_USER)
        return SessionContext(
            now=self.started.clock if self.started else "",
            user_id=user if isinstance(user, str) else None,
            identified=identified,
            last_user_message=self.user_messages[-1] if self.user_messages else "",
            last_assistant_text=self.last_assistant_before_user,
            user_messages=self.user_messages,
            assistant_texts=self.assistant_texts,
            recent_writes=self.recent_writes,
            reads_done=self.reads_done,
            reads_failed=self.reads_failed,
            writes_done=self.writes_done,
        )


def _count(totals: Totals, verdict: Verdict) -> Totals:
    if verdict == Verdict.ALLOW:
        return replace(totals, allow=totals.allow + 1)
    if verdict == Verdict.REVISE:
        return replace(totals, revise=totals.revise + 1)
    return replace(totals, block=totals.block + 1)


def advance(state: SessionState, event: Event) -> SessionState:
    """Apply one event. Pure: returns a new state."""
    s = replace(state, seq=event.seq if event.seq >= 0 else state.seq + 1)
    if isinstance(event, SessionStarted):
        return replace(s, started=event)
    if isinstance(event, SessionEnded):
        return replace(s, ended=event)
    if isinstance(event, LedgerUpdated):
        return replace(s, ledger=apply_update(s.ledger, event))
    if isinstance(event, UserMessage):
        last = s.assistant_texts[-1] if s.assistant_texts else ""
        return replace(
            s,
            conversation=s.conversation + (event,),
            user_messages=s.user_messages + (event.text,),
            last_assistant_before_user=last,
            recent_writes=(),
        )
    if isinstance(event, AssistantMessage):
        texts = s.assistant_texts + (event.text,) if event.text.strip() else s.assistant_texts
        return replace(s, conversation=s.conversation + (event,), assistant_texts=texts)
    if isinstance(event, Refusal):
        return replace(s, conversation=s.conversation + (event,), assistant_texts=s.assistant_texts + (event.text,))
    if isinstance(event, ToolCallProposed):
        t = s.totals
        if event.kind == "read":
            t = replace(t, reads=t.reads + 1)
            if event.call.requestor != "user":
                return replace(s, conversation=s.conversation + (event,), totals=t, open_reads=s.open_reads + (event.call,))
        elif event.kind == "write":
            t = replace(t, writes=t.writes + 1)
            if event.call.requestor != "user":
                return replace(s, conversation=s.conversation + (event,), totals=t, open_writes=s.open_writes + (event.call,))
        return replace(s, conversation=s.conversation + (event,), totals=t)
    if isinstance(event, ToolResult):
        s = replace(s, conversation=s.conversation + (event,))
        read = next((c for c in s.open_reads if c.id == event.call_id), None)
        if read is not None:
            rest_reads = tuple(c for c in s.open_reads if c is not read)
            if event.error:
                return replace(s, open_reads=rest_reads, reads_failed=s.reads_failed | {read.signature()})
            return replace(s, open_reads=rest_reads, reads_done=s.reads_done | {read.signature()})
        call = next((c for c in s.open_writes if c.id == event.call_id), None)
        if call is None:
            return s
        rest = tuple(c for c in s.open_writes if c is not call)
        if event.executed and not event.error:
            return replace(s, open_writes=rest, recent_writes=s.recent_writes + (call,), writes_done=s.writes_done + (call,))
        return replace(s, open_writes=rest)
    if isinstance(event, Notice):
        return replace(s, conversation=s.conversation + (event,))
    if isinstance(event, GateDecided):
        return replace(s, gate_log=s.gate_log + (event,), totals=_count(s.totals, event.decision.verdict))
    if isinstance(event, TokenUsage):
        t = s.totals
        return replace(
            s,
            totals=replace(
                t,
                prompt_tokens=t.prompt_tokens + event.prompt_tokens,
                completion_tokens=t.completion_tokens + event.completion_tokens,
                ledger_tokens=t.ledger_tokens + event.ledger_tokens,
                policy_tokens=t.policy_tokens + event.policy_tokens,
                transcript_tokens=t.transcript_tokens + event.transcript_tokens,
                model_calls=t.model_calls + 1,
            ),
        )
    return s


def fold(events: Iterable[Event], upto: int | None = None) -> SessionState:
    """The state after events[0..upto] (inclusive); all events when `upto` is None."""
    state = SessionState()
    for i, event in enumerate(events):
        if upto is not None and i > upto:
            break
        state = advance(state, event)
    return state


class Timeline:
    """Cached states for random access (replay): state i costs one fold step from a checkpoint."""

    def __init__(self, events: Sequence[Event], every: int = 64) -> None:
        self.events = list(events)
        self.every = every
        self._checkpoints: list[SessionState] = []
        state = SessionState()
        for i, event in enumerate(self.events):
            if i % every == 0:
                self._checkpoints.append(state)
            state = advance(state, event)
        self.final = state

    def __len__(self) -> int:
        return len(self.events)

    def at(self, index: int) -> SessionState:
        """State after event `index` (-1: before any event)."""
        if index < 0:
            return SessionState()
        index = min(index, len(self.events) - 1)
        base = index // self.every
        state = self._checkpoints[base]
        for event in self.events[base * self.every : index + 1]:
            state = advance(state, event)
        return state

"""State at step *i* is a fold over events 0..i.

Live sessions, replay, `why` and the evaluator all derive the ledger, the gate log, the
conversation and the session context the same way: by applying events in order with `advance`.
Nothing is recomputed differently in replay.
"""

from __future__ import annotations

import gc
from collections.abc import Hashable, Iterator, Sequence, Set as AbstractSet
from dataclasses import dataclass, field
from itertools import islice
from typing import Any, Iterable, TypeVar, overload

from ledger_tui.engine.events import (
    AssistantMessage,
    ConfirmationAnswered,
    ConfirmationRequested,
    Event,
    GateDecided,
    HelperCall,
    LedgerUpdated,
    Notice,
    QuestionAnswered,
    QuestionRequested,
    ReformulatedInput,
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

T = TypeVar("T")
H = TypeVar("H", bound=Hashable)


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
    held: int = 0  # writes held for the customer's answer on a card (a REVISE only for consent)
    withheld: int = 0  # reads whose result the read gate kept from the model (disclosure.py)
    cards: int = 0  # confirmation cards shown
    questions: int = 0  # closed questions asked (each time asked)
    # a comparison mode's helper calls (IRMA), counted apart from the agent's model calls
    helper_calls: int = 0
    helper_prompt_tokens: int = 0
    helper_completion_tokens: int = 0


class Chain(Sequence[T]):
    """An immutable sequence of the first `len` items of a list that only grows at its end.

    `appended(x)` is O(1): it appends to the shared list and returns a view one item longer, so a
    state and every state folded after it share one list and each sees only its own prefix. A
    state extended a second time with another value (a branch: a what-if, or a fold restarted from
    an older state) copies its prefix first; extended again with the value already stored after
    its prefix (a `Timeline` replaying from a checkpoint), it shares. Compares equal to a tuple or
    a `Chain` with the same items; slicing returns a tuple. Not for threads advancing one state
    at the same time.
    """

    __slots__ = ("_items", "_n")

    def __init__(self, items: Iterable[T] = ()) -> None:
        self._items: list[T] = list(items)
        self._n = len(self._items)

    @classmethod
    def _view(cls, items: list[T], n: int) -> Chain[T]:
        chain = object.__new__(cls)
        chain._items = items
        chain._n = n
        return chain

    def appended(self, item: T) -> Chain[T]:
        items, n = self._items, self._n
        if n == 0:
            return Chain._view([item], 1)  # never grow an empty default another state may hold
        if len(items) == n:
            items.append(item)
            return Chain._view(items, n + 1)
        if items[n] is item:  # the same append was made from this prefix before
            return Chain._view(items, n + 1)
        branch = items[:n]
        branch.append(item)
        return Chain._view(branch, n + 1)

    def __len__(self) -> int:
        return self._n

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...
    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._n)
            if step == 1:
                return tuple(self._items[start:stop])
            items = self._items
            return tuple(items[i] for i in range(start, stop, step))
        n = self._n
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("Chain index out of range")
        return self._items[index]

    def __iter__(self) -> Iterator[T]:
        return islice(self._items, self._n)

    def __reversed__(self) -> Iterator[T]:
        items = self._items
        for i in range(self._n - 1, -1, -1):
            yield items[i]

    def __bool__(self) -> bool:
        return self._n > 0

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Chain):
            if other._n != self._n:
                return False
            if other._items is self._items:
                return True
            return all(a == b for a, b in zip(self, other))
        if isinstance(other, tuple):
            return len(other) == self._n and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __add__(self, other: Iterable[T]) -> tuple[T, ...]:
        if not isinstance(other, (tuple, Chain)):
            return NotImplemented
        return tuple(self) + tuple(other)

    def __radd__(self, other: Iterable[T]) -> tuple[T, ...]:
        if not isinstance(other, tuple):
            return NotImplemented
        return other + tuple(self)

    def __repr__(self) -> str:
        return repr(tuple(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Chain, (list(self),))  # the prefix only, never the items other states appended


class GrowSet(AbstractSet[H]):
    """An immutable set, grown like `Chain`: members in the order they were first added, shared by
    every state that added them; `added(x)` is O(1). Set operators return frozensets; it compares
    equal to a frozenset with the same members."""

    __slots__ = ("_order", "_pos", "_n")

    def __init__(self, items: Iterable[H] = ()) -> None:
        self._order: list[H] = list(dict.fromkeys(items))
        self._pos: dict[H, int] = {x: i for i, x in enumerate(self._order)}
        self._n = len(self._order)

    @classmethod
    def _view(cls, order: list[H], pos: dict[H, int], n: int) -> GrowSet[H]:
        s = object.__new__(cls)
        s._order, s._pos, s._n = order, pos, n
        return s

    @classmethod
    def _from_iterable(cls, it: Iterable[H]) -> frozenset[H]:
        return frozenset(it)

    def added(self, item: H) -> GrowSet[H]:
        if item in self:
            return self
        order, n = self._order, self._n
        if n == 0:
            return GrowSet._view([item], {item: 0}, 1)
        if len(order) == n:
            order.append(item)
            self._pos[item] = n
            return GrowSet._view(order, self._pos, n + 1)
        if order[n] == item:
            return GrowSet._view(order, self._pos, n + 1)
        branch = order[:n]
        branch.append(item)
        return GrowSet._view(branch, {x: i for i, x in enumerate(branch)}, n + 1)

    def __contains__(self, item: object) -> bool:
        try:
            at = self._pos.get(item)  # type: ignore[call-overload]
        except TypeError:  # unhashable: not a member
            return False
        return at is not None and at < self._n

    def __iter__(self) -> Iterator[H]:
        return islice(self._order, self._n)

    def __len__(self) -> int:
        return self._n

    def __hash__(self) -> int:
        return hash(frozenset(self))

    def __repr__(self) -> str:
        return repr(frozenset(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (GrowSet, (list(self),))


EMPTY: Chain[Any] = Chain()
NO_MEMBERS: GrowSet[Any] = GrowSet()

_CHAINS = ("conversation", "gate_log", "user_messages", "assistant_texts", "recent_writes", "writes_done", "declined")
_SETS = ("reads_done", "reads_failed")


@dataclass(frozen=True)
class SessionState:
    """Everything the panes show, as of one step.

    The growing fields are `Chain`s and `GrowSet`s (immutable; given a tuple or a frozenset, a
    state converts it), so `advance` costs the same at event 100,000 as at event 10: a fold is
    linear in events.
    """

    seq: int = -1
    started: SessionStarted | None = None
    ended: SessionEnded | None = None
    ledger: Ledger = field(default_factory=Ledger)
    conversation: Chain[Event] = EMPTY
    gate_log: Chain[GateDecided] = EMPTY
    user_messages: Chain[str] = EMPTY
    assistant_texts: Chain[str] = EMPTY
    last_assistant_before_user: str = ""
    totals: Totals = field(default_factory=Totals)
    # agent writes proposed and awaiting their result, and those that ran since the customer spoke
    open_writes: tuple[ToolCall, ...] = ()
    recent_writes: Chain[ToolCall] = EMPTY
    open_reads: tuple[ToolCall, ...] = ()
    reads_done: GrowSet[str] = NO_MEMBERS
    reads_failed: GrowSet[str] = NO_MEMBERS
    writes_done: Chain[ToolCall] = EMPTY  # every agent write that ran, in order
    # consent on cards: the card awaiting the customer's answer, and (call key, the customer's
    # words) for every call of a card answered without a yes
    pending_card: ConfirmationRequested | None = None
    declined: Chain[tuple[str, str]] = EMPTY
    # the closed question awaiting the customer's answer (questions.py)
    pending_question: QuestionRequested | None = None

    def __post_init__(self) -> None:
        for name in _CHAINS:
            if not isinstance(getattr(self, name), Chain):
                object.__setattr__(self, name, Chain(getattr(self, name)))
        for name in _SETS:
            if not isinstance(getattr(self, name), GrowSet):
                object.__setattr__(self, name, GrowSet(getattr(self, name)))

    def confirming(self, call_id: str) -> str | None:
        """The card whose yes ran this call (the engine's run of a confirmed card), if any."""
        for event in reversed(self.conversation):
            if isinstance(event, ConfirmationAnswered) and call_id in event.runs:
                return event.card
        return None

    def context(self) -> SessionContext:
        ledger = self.ledger
        found = sorted(ledger.under(IDENTIFIED_PREFIX), key=ledger.position)  # in the order they were identified
        identified = tuple(p[len(IDENTIFIED_PREFIX) :] for p in found)
        user = self.ledger.value(CURRENT_USER)
        return SessionContext(
            now=self.started.clock if self.started else "",
            user_id=user if isinstance(user, str) else None,
            identified=identified,
            last_user_message=self.user_messages[-1] if self.user_messages else "",
            last_assistant_text=self.last_assistant_before_user,
            user_messages=self.user_messages,  # type: ignore[arg-type]  # a Chain is an immutable sequence
            assistant_texts=self.assistant_texts,  # type: ignore[arg-type]
            recent_writes=self.recent_writes,  # type: ignore[arg-type]
            reads_done=self.reads_done,  # type: ignore[arg-type]  # a GrowSet is an immutable set
            reads_failed=self.reads_failed,  # type: ignore[arg-type]
            writes_done=self.writes_done,  # type: ignore[arg-type]
            consent=(self.started.consent or "text") if self.started else "text",
            declined=self.declined,  # type: ignore[arg-type]
        )


def _with(state: SessionState, changes: dict[str, Any]) -> SessionState:
    """`replace(state, **changes)` without re-running the constructor (the fields are already of
    their types): the fold's one copy per event."""
    new = object.__new__(SessionState)
    d = new.__dict__
    d.update(state.__dict__)
    d.update(changes)
    return new


def _bumped(totals: Totals, **changes: int) -> Totals:
    """`replace(totals, **changes)` without the constructor (a third of a long fold's time)."""
    new = object.__new__(Totals)
    d = new.__dict__
    d.update(totals.__dict__)
    d.update(changes)
    return new


def _counted(decision: Any) -> str:
    """The total a decision counts in: held (`GateDecision.held`: a REVISE only for consent),
    withheld (a REVISE that is a disclosure), else its verdict's. The category is asked once (a
    few µs)."""
    verdict = decision.verdict
    if verdict == Verdict.REVISE:
        category = decision.category()
        if category == "consent":
            return "held"
        if category == "disclosure":
            return "withheld"
        return "revise"
    return "allow" if verdict == Verdict.ALLOW else "block"


def _add(s: SessionState, c: dict[str, Any], **more: int) -> None:
    """Add `more` to the totals they name: in place when `c` is the draft's own fields
    (`Timeline.absorb`, whose totals no other state holds), else in a new `Totals`."""
    t = s.totals.__dict__
    if c is s.__dict__:
        for name, n in more.items():
            t[name] += n
    else:
        c["totals"] = _bumped(s.totals, **{name: t[name] + n for name, n in more.items()})


def advance(state: SessionState, event: Event) -> SessionState:
    """Apply one event. Pure: returns a new state (the states before it are unchanged)."""
    return _with(state, _changes(state, event))


# The kinds of event `_changes` folds, each tested by identity: a pydantic model's class test
# (`isinstance`) goes through its metaclass's `__instancecheck__`, and a long fold made about three
# failed ones an event.
_FOLDED = frozenset(
    {
        TokenUsage, LedgerUpdated, ToolCallProposed, ToolResult, AssistantMessage, GateDecided, UserMessage, SessionStarted,
        SessionEnded, Refusal, Notice, ReformulatedInput, ConfirmationRequested, ConfirmationAnswered, QuestionRequested,
        QuestionAnswered, HelperCall,
    }
)


def _changes(s: SessionState, event: Event, c: dict[str, Any] | None = None) -> dict[str, Any]:
    """The fields one event changes, and their new values, in `c` (a new dict when None). The state
    is only read, each field before it is written: `Timeline.absorb` passes its draft state's own
    fields as `c`, which saves a dict and its copy an event."""
    if c is None:
        c = {}
    c["seq"] = event.seq if event.seq >= 0 else s.seq + 1
    kind: type = type(event)
    if kind not in _FOLDED:  # (a subclass of a kind, never read from a file: folded as that kind)
        kind = next((k for k in _FOLDED if isinstance(event, k)), kind)
    # (the kinds most frequent in a long session first: one test for most events)
    if kind is TokenUsage:
        _add(
            s, c, prompt_tokens=event.prompt_tokens, completion_tokens=event.completion_tokens, ledger_tokens=event.ledger_tokens,
            policy_tokens=event.policy_tokens, transcript_tokens=event.transcript_tokens, model_calls=1,
        )
    elif kind is LedgerUpdated:
        c["ledger"] = apply_update(s.ledger, event)
    elif kind is ToolCallProposed:
        c["conversation"] = s.conversation.appended(event)
        if event.kind == "read":
            _add(s, c, reads=1)
            if event.call.requestor != "user":
                c["open_reads"] = s.open_reads + (event.call,)
        elif event.kind == "write":
            _add(s, c, writes=1)
            if event.call.requestor != "user":
                c["open_writes"] = s.open_writes + (event.call,)
    elif kind is ToolResult:
        c["conversation"] = s.conversation.appended(event)
        read = _open_call(s.open_reads, event.call_id)
        if read is not None:
            c["open_reads"] = _closed(s.open_reads, read)
            if event.error:
                c["reads_failed"] = s.reads_failed.added(read.signature())
            else:
                c["reads_done"] = s.reads_done.added(read.signature())
        else:
            call = _open_call(s.open_writes, event.call_id)
            if call is not None:
                c["open_writes"] = _closed(s.open_writes, call)
                if event.executed and not event.error:
                    c["recent_writes"] = s.recent_writes.appended(call)
                    c["writes_done"] = s.writes_done.appended(call)
    elif kind is AssistantMessage:
        c["conversation"] = s.conversation.appended(event)
        if event.text.strip():
            c["assistant_texts"] = s.assistant_texts.appended(event.text)
    elif kind is GateDecided:
        c["gate_log"] = s.gate_log.appended(event)
        _add(s, c, **{_counted(event.decision): 1})
    elif kind is UserMessage:
        c["conversation"] = s.conversation.appended(event)
        c["user_messages"] = s.user_messages.appended(event.text)
        c["last_assistant_before_user"] = s.assistant_texts[-1] if s.assistant_texts else ""
        c["recent_writes"] = EMPTY
    elif kind is SessionStarted:
        c["started"] = event
    elif kind is SessionEnded:
        c["ended"] = event
    elif kind is Refusal:
        c["conversation"] = s.conversation.appended(event)
        c["assistant_texts"] = s.assistant_texts.appended(event.text)
    elif kind is Notice or kind is ReformulatedInput:
        c["conversation"] = s.conversation.appended(event)
    elif kind is ConfirmationRequested:
        c["conversation"] = s.conversation.appended(event)
        c["assistant_texts"] = s.assistant_texts.appended(event.text)
        c["pending_card"] = event
        _add(s, c, cards=1)
    elif kind is ConfirmationAnswered:
        c["conversation"] = s.conversation.appended(event)
        card = s.pending_card if s.pending_card is not None and s.pending_card.card == event.card else None
        c["pending_card"] = None
        if card is not None and event.answer != "yes":
            from ledger_tui.engine.conversation.cards import call_key

            declined = s.declined
            for call in card.calls:
                declined = declined.appended((call_key(call), event.quote))
            c["declined"] = declined
    elif kind is QuestionRequested:
        c["conversation"] = s.conversation.appended(event)
        c["assistant_texts"] = s.assistant_texts.appended(event.text)
        c["pending_question"] = event
        _add(s, c, questions=1)
    elif kind is QuestionAnswered:
        c["conversation"] = s.conversation.appended(event)
        c["pending_question"] = None
    elif kind is HelperCall:
        c["conversation"] = s.conversation.appended(event)
        _add(s, c, helper_calls=1, helper_prompt_tokens=event.prompt_tokens, helper_completion_tokens=event.completion_tokens)
    return c


def _open_call(calls: tuple[ToolCall, ...], call_id: str) -> ToolCall | None:
    """The first of `calls` with this id, or None (a loop: a generator costs more than the one or
    two calls open at a time)."""
    for call in calls:
        if call.id == call_id:
            return call
    return None


def _closed(calls: tuple[ToolCall, ...], call: ToolCall) -> tuple[ToolCall, ...]:
    """`calls` (which hold `call`) without `call`: this object, not another equal to it."""
    if len(calls) == 1:
        return ()
    return tuple(c for c in calls if c is not call)


def fold(events: Iterable[Event], upto: int | None = None) -> SessionState:
    """The state after events[0..upto] (inclusive); all events when `upto` is None. Linear in
    events."""
    state = SessionState()
    for i, event in enumerate(events):
        if upto is not None and i > upto:
            break
        state = advance(state, event)
    return state


class Timeline:
    """States for random access (replay), folded lazily: state i costs one fold step from a
    checkpoint.

    Nothing is folded until a state is asked for; then the fold runs from the last checkpoint
    before it, keeping one every `every` events on its way, so opening at the last step folds
    once and stepping back from there costs at most `every` steps. The checkpoints share their
    conversation, gate log and the other growing fields with each other and with the final
    state, so they cost little memory."""

    def __init__(self, events: Sequence[Event], every: int = 64) -> None:
        self.events: Sequence[Event] = list(events)
        self.every = every
        self._checkpoints: list[SessionState] = [SessionState()]  # state before event k * every
        self._final: SessionState | None = None

    @classmethod
    def growing(cls, events: Sequence[Event], first: SessionState, every: int = 64) -> Timeline:
        """A timeline of `events` (kept as given, not copied) that a reader fills as it reads:
        each event it appends there it passes to `absorb`, in order; states start from `first`."""
        timeline = cls((), every)
        timeline.events = events
        timeline._checkpoints = [first]
        timeline._final = _with(first, {"totals": _bumped(first.totals)})  # (the draft's own: see `absorb`)
        timeline._absorbed = 0
        return timeline

    def absorb(self, event: Event) -> None:
        """Fold the event just appended to `events` (a `growing` timeline), keeping a checkpoint
        every `every` events: the fold runs as the file is read, once."""
        draft = self._final  # (the one state not yet shared: changed in place, copied at each checkpoint)
        _changes(draft, event, draft.__dict__)  # type: ignore[arg-type]
        self._absorbed += 1  # (as many as `events` holds: one call for each appended)
        if self._absorbed % self.every == 0:
            self._checkpoints.append(_with(draft, {}))  # type: ignore[arg-type]
            # the draft counts its totals in place (`_changes`): the checkpoint keeps these
            draft.__dict__["totals"] = _bumped(draft.totals)  # type: ignore[union-attr]

    def __len__(self) -> int:
        return len(self.events)

    @property
    def final(self) -> SessionState:
        """The state after the last event."""
        if self._final is None:
            self._final = self.at(len(self.events) - 1) if self.events else SessionState()
        return self._final

    def _fold_to(self, base: int) -> None:
        """Fold on from the last checkpoint until checkpoint `base` exists. States hold no
        reference cycles: the cyclic collector, run every few hundred states, would rescan every
        event of a long trajectory each time (2 s of 2.4 s at 100k events); what is kept goes to
        the oldest generation at once (see `store._collector_paused`)."""
        every, events, checkpoints = self.every, self.events, self._checkpoints
        k = len(checkpoints) - 1
        state = checkpoints[k]
        enabled = gc.isenabled()
        gc.disable()
        try:
            while k < base:
                for i in range(k * every, (k + 1) * every):
                    state = advance(state, events[i])
                k += 1
                checkpoints.append(state)
        finally:
            gc.freeze()
            gc.unfreeze()
            if enabled:
                gc.enable()

    def at(self, index: int) -> SessionState:
        """State after event `index` (-1: before any event)."""
        if index < 0 or not self.events:
            return self._checkpoints[0]
        index = min(index, len(self.events) - 1)
        base = index // self.every
        if base >= len(self._checkpoints):
            self._fold_to(base)
        state = self._checkpoints[base]
        events = self.events
        for i in range(base * self.every, index + 1):
            state = advance(state, events[i])
        return state

"""The fold is linear in events (states share what they grow) and equals the naive fold it replaced:
for random event sequences, for `Timeline.at` in any order, and when a state is advanced with
another event than the one recorded after it (a branch must not change any other state)."""

from __future__ import annotations

import copy
import pickle
from dataclasses import dataclass, field, replace

from hypothesis import given, settings
from hypothesis import strategies as st

from ledger_tui.engine.events import (
    AssistantMessage,
    Event,
    GateDecided,
    GateDecision,
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
from ledger_tui.engine.store.fold import Chain, GrowSet, SessionState, Timeline, Totals, advance, fold
from ledger_tui.engine.ledger import Ledger, apply_update

# ----------------------------------------------------------------------------- the naive reference
# The fold as it was before it was made linear: every field a tuple or frozenset, copied whole on
# every event. Kept here, verbatim in its logic, as the definition the fast fold must meet.


@dataclass(frozen=True)
class Reference:
    seq: int = -1
    started: SessionStarted | None = None
    ended: SessionEnded | None = None
    ledger: Ledger = field(default_factory=Ledger)
    conversation: tuple = ()
    gate_log: tuple = ()
    user_messages: tuple = ()
    assistant_texts: tuple = ()
    last_assistant_before_user: str = ""
    totals: Totals = field(default_factory=Totals)
    open_writes: tuple = ()
    recent_writes: tuple = ()
    open_reads: tuple = ()
    reads_done: frozenset = frozenset()
    reads_failed: frozenset = frozenset()
    writes_done: tuple = ()


def _count(totals: Totals, verdict: Verdict) -> Totals:
    if verdict == Verdict.ALLOW:
        return replace(totals, allow=totals.allow + 1)
    if verdict == Verdict.REVISE:
        return replace(totals, revise=totals.revise + 1)
    return replace(totals, block=totals.block + 1)


def naive_advance(state: Reference, event: Event) -> Reference:
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


def naive_fold(events: list[Event], upto: int) -> Reference:
    state = Reference()
    for event in events[: upto + 1]:
        state = naive_advance(state, event)
    return state


FIELDS = [f for f in Reference.__dataclass_fields__]


def assert_same(state: SessionState, ref: Reference) -> None:
    """Every field equal, read through the public sequence and set behaviour."""
    for name in FIELDS:
        got, want = getattr(state, name), getattr(ref, name)
        if isinstance(want, tuple):
            assert tuple(got) == want, name
            assert got == want and len(got) == len(want) and bool(got) == bool(want), name
            assert list(reversed(got)) == list(reversed(want)), name
            if want:
                assert got[-1] == want[-1] and got[0] == want[0] and got[1:] == want[1:], name
        elif isinstance(want, frozenset):
            assert got == want and frozenset(got) == want and len(got) == len(want), name
            assert all(x in got for x in want), name
        elif isinstance(want, Ledger):
            assert dict(got) == dict(want), name
        else:
            assert got == want, name
    ctx = state.context()
    assert tuple(ctx.user_messages) == ref.user_messages and frozenset(ctx.reads_done) == ref.reads_done


# ----------------------------------------------------------------------------- random sessions

IDS = ["c0", "c1", "c2", "c3"]
CALLS = st.builds(
    ToolCall,
    id=st.sampled_from(IDS),
    name=st.sampled_from(["get_loan", "renew_loan"]),
    arguments=st.fixed_dictionaries({"loan_id": st.sampled_from(["L1", "L2"])}),
    requestor=st.sampled_from(["assistant", "user", "operator"]),
)
TEXT = st.sampled_from(["", "  ", "hello", "yes please", "no"])


def _event_strategy() -> st.SearchStrategy[Event]:
    return st.one_of(
        st.builds(UserMessage, text=TEXT),
        st.builds(AssistantMessage, text=TEXT),
        st.builds(Refusal, text=TEXT, call_id=st.none() | st.sampled_from(IDS)),
        st.builds(ToolCallProposed, call=CALLS, kind=st.sampled_from(["read", "write", "generic"])),
        st.builds(
            ToolResult,
            call_id=st.sampled_from(IDS),
            name=st.just("get_loan"),
            content=st.just("{}"),
            error=st.booleans(),
            executed=st.booleans(),
        ),
        st.builds(Notice, text=TEXT),
        st.builds(GateDecided, decision=st.builds(GateDecision, call=CALLS, verdict=st.sampled_from(Verdict), reason=st.just("r"))),
        st.builds(TokenUsage, prompt_tokens=st.integers(0, 9), completion_tokens=st.integers(0, 9)),
        st.builds(
            LedgerUpdated,
            path=st.sampled_from(["loans.L1", "loans.L2", "identified.m1", "users.current"]),
            change=st.sampled_from(["added", "changed", "refreshed", "stale"]),
            after=st.integers(0, 3),
        ),
        st.builds(SessionEnded, db_digest=st.just("-")),
    )


EVENT = _event_strategy()


@st.composite
def sessions(draw: st.DrawFn, max_size: int = 60) -> list[Event]:
    body = draw(st.lists(EVENT, max_size=max_size))
    start = SessionStarted(session_id="s", domain="toy", model="m", mode="full", policy_digest="-", db_digest="-", clock="2025-01-01")
    events = [start, *body]
    # a recorded seq is kept; -1 (unset) advances from the state's own
    return [e.model_copy(update={"seq": i}) if draw(st.booleans()) or i == 0 else e for i, e in enumerate(events)]


@settings(max_examples=150, deadline=None, derandomize=True)
@given(sessions())
def test_fold_equals_the_naive_fold(events):
    for upto in range(-1, len(events)):
        assert_same(fold(events, upto) if upto >= 0 else SessionState(), naive_fold(events, upto))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(st.data())
def test_timeline_in_any_order_and_branches_leave_every_other_state_unchanged(data):
    events = data.draw(sessions(max_size=80))
    timeline = Timeline(events, every=data.draw(st.sampled_from([1, 3, 8, 64])))
    kept: list[tuple[SessionState, Reference]] = []
    for _ in range(data.draw(st.integers(1, 25))):
        index = data.draw(st.integers(-1, len(events) + 2))
        state = timeline.at(index)
        ref = naive_fold(events, min(index, len(events) - 1)) if index >= 0 else Reference()
        assert_same(state, ref)
        kept.append((state, ref))
        if data.draw(st.booleans()):
            # a what-if: the state advanced with another event (or the recorded one again)
            other = data.draw(EVENT | st.sampled_from(events))
            branched = advance(state, other)
            assert_same(branched, naive_advance(ref, other))
            kept.append((branched, naive_advance(ref, other)))
            if data.draw(st.booleans()):
                again = data.draw(EVENT)
                kept.append((advance(branched, again), naive_advance(naive_advance(ref, other), again)))
    for state, ref in kept:  # nothing any later fold, branch or checkpoint replay did changed them
        assert_same(state, ref)
    assert_same(timeline.final, naive_fold(events, len(events) - 1))


def test_a_state_built_from_tuples_behaves_like_one_folded():
    call = ToolCall(id="c1", name="renew_loan", arguments={"loan_id": "L1"})
    state = SessionState(user_messages=("hi",), writes_done=(call,), reads_done=frozenset({"get_loan()"}))
    assert isinstance(state.user_messages, Chain) and isinstance(state.reads_done, GrowSet)
    after = advance(state, UserMessage(seq=1, text="again"))
    assert after.user_messages == ("hi", "again") and state.user_messages == ("hi",)
    assert after.reads_done == frozenset({"get_loan()"})
    assert after.reads_done & {"get_loan()", "x"} == frozenset({"get_loan()"})
    assert state == SessionState(user_messages=("hi",), writes_done=(call,), reads_done=frozenset({"get_loan()"}))


def test_states_copy_and_pickle_as_their_own_prefix():
    events = [UserMessage(seq=i, text=f"m{i}") for i in range(5)]
    timeline = Timeline(events, every=2)
    middle = timeline.at(2)
    for clone in (copy.deepcopy(middle), pickle.loads(pickle.dumps(middle))):
        assert clone.user_messages == ("m0", "m1", "m2")
        assert clone.conversation == tuple(events[:3])
        assert len(clone.conversation._items) == 3  # not the items later states appended
        grown = advance(clone, UserMessage(seq=3, text="other"))
        assert grown.user_messages[-1] == "other"
    assert timeline.at(3).user_messages[-1] == "m3"


def test_chain_reads_like_a_tuple():
    chain = Chain([1, 2, 3]).appended(4)
    assert chain == (1, 2, 3, 4) and (1, 2, 3, 4) == chain and chain != (1, 2, 3)
    assert chain[1:3] == (2, 3) and chain[::-1] == (4, 3, 2, 1) and chain[-2] == 3
    assert chain + (5,) == (1, 2, 3, 4, 5) and (0,) + chain == (0, 1, 2, 3, 4)
    assert chain.index(3) == 2 and 4 in chain and 5 not in chain and chain.count(1) == 1
    assert hash(chain) == hash((1, 2, 3, 4)) and repr(chain) == "(1, 2, 3, 4)"
    shorter = Chain([1, 2, 3])
    longer = shorter.appended(4)
    assert shorter == (1, 2, 3) and list(shorter) == [1, 2, 3] and len(shorter) == 3
    try:
        shorter[3]
    except IndexError:
        pass
    else:
        raise AssertionError("a prefix must not see the items appended after it")
    assert not Chain() and Chain() == ()
    assert longer.appended(5) == (1, 2, 3, 4, 5) and shorter.appended(9) == (1, 2, 3, 9)
    assert longer == (1, 2, 3, 4)


def test_grow_set_branches_do_not_see_each_other():
    base = GrowSet(["a"])
    left = base.added("b")
    right = base.added("c")  # another member after the same prefix: a branch
    again = base.added("b")  # the member already stored after it: shared
    assert left == frozenset("ab") and right == frozenset("ac") and again == frozenset("ab")
    assert "c" not in left and "b" not in right and base == frozenset("a") and len(base) == 1
    assert left.added("a") is left and list(right.added("d")) == ["a", "c", "d"]
    assert (left | {"z"}) == frozenset("abz") and (frozenset("b") | left) == frozenset("ab")
    assert left - {"a"} == frozenset("b") and isinstance(left & {"a"}, frozenset)
    assert hash(left) == hash(frozenset("ab")) and [] not in left

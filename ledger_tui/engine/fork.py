"""Fork a recorded run into a live session: take over from the customer message that opened a
turn, and go on differently.

The recording's events before that message are kept as they are. The session that continues from
them is rebuilt, not restored: a fresh database whose digest must equal the recording's
`session_started`, and the recorded conversation driven through it again (the recorded model
turns, customer messages, card answers, customer and operator actions), so every recorded call
runs again through today's gate and tools. The rebuilt run must equal the recording (each call's
result its recorded content, each verdict and ledger change the same); where it does not, the
fork is refused in one sentence, since what follows would not continue this run. Token counts,
notices and step numbers may differ (a replayed model reports no tokens): they are not compared,
and the recording's own events are what the fork's file holds.

`redrive` is also how `regress` replays a recording under today's gate.
"""

from __future__ import annotations

import datetime as _dt
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.events import (
    AssistantMessage,
    Event,
    ForkedFrom,
    GateDecided,
    HelperCall,
    Notice,
    SessionStarted,
    TokenUsage,
    ToolCallProposed,
    ToolResult,
    UserMessage,
)
from ledger_tui.engine.store.fold import SessionState, advance
from ledger_tui.engine.agents.irma import ReplayHelper
from ledger_tui.engine.model.models import Model, ReplayModel
from ledger_tui.engine.session import MODES, Session, drain
from ledger_tui.engine.store.trajectories import TrajectoryWriter

# what a rebuilt run may differ in from its recording: a replayed model reports no tokens, and
# the notices of a live run (a slow server, a retried call) are not made again; so step numbers shift
_NOT_COMPARED = (TokenUsage, Notice)
_STEP_FIELDS = frozenset({"seq", "source_seq", "user_seq"})
# a helper call's tokens and model name are the replayed helper's, not the recorded server's
_HELPER_FIELDS = ("model", "prompt_tokens", "completion_tokens", "cached_tokens", "finish_reason")


class ForkError(LedgerTuiError):
    """A recording that cannot be forked at the step asked; one sentence naming why and the fix."""


async def redrive(session: Session, events: list[Event]) -> str | None:
    """Send the recorded conversation to `session` again, in order: the customer's messages (the
    agent answering where it answered), the customer's and the operator's actions and words. The
    model's turns come from the session's model (a `ReplayModel` of the recording). Returns where
    it diverged (a model turn missing or refused), else None."""
    diverged = None
    for i, event in enumerate(events):
        if isinstance(event, UserMessage):
            stream = session.user_says(event.text, respond=_model_answered(events, i))
        elif isinstance(event, ToolCallProposed) and event.call.requestor == "user":
            stream = session.customer_action(event.call.name, event.call.arguments)
        elif isinstance(event, ToolCallProposed) and event.call.requestor == "operator":
            stream = session.operator_call(event.call.name, event.call.arguments)
        elif isinstance(event, AssistantMessage) and event.author == "operator" and not event.tool_calls:
            stream = session.agent_says(event.text)
        elif isinstance(event, AssistantMessage) and event.author == "fixed":
            stream = session.greet(event.text)
        else:
            continue
        async for e in stream:
            if isinstance(e, Notice) and e.level == "error" and diverged is None:
                diverged = f"at recorded step {event.seq}: {e.text}"
    return diverged


def _model_answered(events: list[Event], index: int) -> bool:
    """Did a model turn follow this customer message in the recording (not just operator calls)?"""
    for event in events[index + 1 :]:
        if isinstance(event, UserMessage):
            return False
        if isinstance(event, AssistantMessage) and event.author == "model":
            return True
    return False


def fork_point(events: list[Event], step: int) -> int:
    """The number of events a fork at `step` keeps: those before the customer message that opened
    the turn `step` is in (the first customer message, when `step` comes before any; all of them
    in a recording without one)."""
    said = [i for i, e in enumerate(events) if isinstance(e, UserMessage)]
    if not said:
        return len(events)
    opened = [i for i in said if events[i].seq <= step]
    return opened[-1] if opened else said[0]


@dataclass
class Fork:
    session: Session  # live, its model the one given; its events the kept ones after its own start
    parent: Path | None
    step: int  # the step it branched at: the parent's customer message it replaces (its own next step)
    kept: int  # events kept from the parent, its session_started included


async def fork(
    domain: Any,
    events: list[Event],
    step: int,
    *,
    model: Model | None,
    parent: Path | None = None,
    out: Path | None = None,
    db_path: Path | None = None,
    helper: Model | None = None,
    timestamps: bool = True,
) -> Fork:
    """A live session that continues the recording from the turn of `step`, its model `model`
    (and IRMA's helper `helper`), recorded to `out` (a new trajectory: its own session_started,
    naming the parent and the step, then the parent's kept events). ForkError when it cannot.
    `model=None` keeps the recorded agent: its later turns are replayed while they fit."""
    from ledger_tui.engine.agents.gold import fresh_environment
    from ledger_tui.engine.agents.tasks import load_tasks

    name = parent.name if parent is not None else "the recording"
    start = events[0] if events else None
    if not isinstance(start, SessionStarted):
        raise ForkError(f"Cannot fork {name}: it does not begin with session_started; fork a trajectory this project recorded.")
    if start.mode not in MODES:
        raise ForkError(f"Cannot fork {name}: its mode {start.mode!r} is not one a live session runs ({', '.join(MODES)}); an imported run replays, it does not fork.")
    if start.domain != domain.name:
        raise ForkError(f"Cannot fork {name} with the {domain.name} domain: it is a {start.domain} run.")
    task = None
    if start.task_id and domain.tasks_path.exists():
        task = next((t for t in load_tasks(domain.tasks_path) if t.id == start.task_id), None)
    env = fresh_environment(domain, task, db_path)
    agent_digest, user_digest = env.digests()
    if agent_digest != start.db_digest or (start.user_db_digest is not None and user_digest != start.user_db_digest):
        where = f"the database {db_path}" if db_path else f"the {domain.name} domain's database" + (f" with task {task.id}'s set-up" if task else "")
        raise ForkError(
            f"Cannot fork {name}: it started on a database with digest {start.db_digest[:12]}…, and {where} has "
            f"{agent_digest[:12]}…; pass --db with the database it was recorded on."
        )
    cut = fork_point(events, step)
    kept = events[:cut]
    session = Session(
        domain, ReplayModel(events), start.mode,  # type: ignore[arg-type]
        env=env, task_id=start.task_id, timestamps=timestamps, helper=ReplayHelper(events),
        # consent as the recording observed it (a recording without cards reads consent as text)
        consent=start.consent or ("text" if start.mode in ("gate", "full") else None),
    )
    await drain(session.start())
    diverged = await redrive(session, kept)
    problem = _first_difference(kept[1:], session.events[1:])
    if problem is not None or diverged is not None:
        raise ForkError(
            f"Cannot fork {name} at step {step}: run again today, {problem or diverged}, so a fork would not "
            f"continue this run (`ledger-tui regress {parent or 'FILE'}` shows what changed)."
        )
    if model is not None:
        session.model, session.helper = model, helper
    started = start.model_copy(update={
        "session_id": uuid.uuid4().hex[:12],
        "model": session.model.name if model is not None else start.model,
        "started_at": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds") if timestamps else None,
        "forked_from": ForkedFrom(file=str(parent) if parent else "", step=kept[-1].seq + 1),
    })
    session.events = [started, *kept[1:]]
    state = SessionState()
    for event in session.events:
        state = advance(state, event)
    session.state = state
    session.timestamps = timestamps
    if out is not None:
        session.out = out
        session._writer = TrajectoryWriter(out)
        for event in session.events:
            session._writer.write(event)
    return Fork(session, parent, started.forked_from.step, len(kept))  # type: ignore[union-attr]


def _compared(events: Iterable[Event]) -> list[tuple[Event, dict[str, Any]]]:
    out = []
    for e in events:
        if isinstance(e, _NOT_COMPARED):
            continue
        data = _without_steps(e.model_dump(mode="json"))
        if isinstance(e, HelperCall):
            data = {k: v for k, v in data.items() if k not in _HELPER_FIELDS}
        out.append((e, data))
    return out


def _without_steps(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_steps(v) for k, v in value.items() if k not in _STEP_FIELDS}
    if isinstance(value, list):
        return [_without_steps(v) for v in value]
    return value


def _first_difference(recorded: list[Event], rebuilt: list[Event]) -> str | None:
    """Where the rebuilt run first differs from the recording, in words; None when it does not."""
    then, now = _compared(recorded), _compared(rebuilt)
    for (a, da), (b, db) in zip(then, now):
        if da == db:
            continue
        if isinstance(a, ToolResult) and isinstance(b, ToolResult) and a.call_id == b.call_id and a.content != b.content:
            return f"the call of recorded step {a.seq} returns other content than recorded (the database or the tool changed)"
        if isinstance(a, GateDecided) and isinstance(b, GateDecided):
            return f"the gate decides the call of recorded step {a.seq} otherwise ({a.decision.shown_verdict()} then, {b.decision.shown_verdict()} now)"
        return f"recorded step {a.seq} ({a.type}) comes out as {b.type}, not as recorded"
    if len(then) != len(now):
        longer, which = (then, "the recording") if len(then) > len(now) else (now, "the rebuilt run")
        extra = longer[min(len(then), len(now))][0]
        return f"{which} has more: {extra.type} at step {extra.seq}"
    return None

"""Random conversations that fire write calls at the gate, and the invariant they must keep.

The invariant: **no write executes without an ALLOW recorded before it.** In mode "full", for
every session:

- every executed ToolResult of a gated agent call comes after a GateDecided ALLOW for the same call
  id, and no executed ToolResult follows a REVISE or BLOCK for that call id;
- the environment itself never runs a call the gate stopped, and the database digest changes only
  on a write that executed (checked call by call, around the environment), and from the session's
  first event to its last only if a write executed.

Each episode is one session on one domain, seeded (`random.Random`), built from the domain's real
data. Most are *well-formed*, shaped as the policy asks: the customer says who they are (the
domain's `identity_sentence`) with the task's opening before the agent looks them up; the agent
makes the task's reads and, before each of the task's writes, proposes that very call in the
customer's terms (`consent.proposal_text` of its `Terms`, built from the session's ledger when the
agent says it, as the gold agent does); the customer says yes and the agent calls it, making the
reads a REVISE suggests and proposing again after a REVISE. Slips are mixed in: no proposal,
another write proposed than the one called, a mutated call, a refusal or a reason instead of the
yes, a write repeated on a used-up yes. The other episodes keep the random shapes: customer
messages from a small pool (task openings, yes, no, reasons), writes listed as a signature rather
than proposed, random reads of real records. Everywhere, writes are a task's gold or forbidden
write (valid, real ids), a mutation of one (another real id, a missing or extra field, a wrong
type, a non-finite number) or built from the tool's schema with real values; now and then the
operator proposes a write too (same gate), and the agent calls a generic tool. Earlier writes in
the session, allowed or not, are the history later calls meet.

Used by tests/engine/test_gate_property.py (a bounded slice in CI) and benchmarks/gate_property.py
(the full run). `episode_rng(seed, domain, i)` rebuilds any one episode to debug a violation.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable

from ledger_tui.domains import load_domain
from ledger_tui.engine.domain import Domain
from ledger_tui.engine.environment import Environment, Outcome
from ledger_tui.engine.events import (
    Event,
    GateDecided,
    SessionEnded,
    SessionStarted,
    ToolCall,
    ToolCallProposed,
    ToolResult,
    UserMessage,
    Verdict,
)
from ledger_tui.engine.gate import guarded
from ledger_tui.engine.agents.gold import fresh_environment
from ledger_tui.engine.model.models import ModelTurn, ScriptedModel
from ledger_tui.engine.rules import proposal_for
from ledger_tui.engine.session import Session, drain
from ledger_tui.engine.agents.tasks import Action, Task, load_tasks

DOMAINS: tuple[str, ...] = ("airline", "retail", "telecom", "telehealth")

YES = ("Yes, please go ahead.", "yes", "Yes.", "Sure, do it.", "ok", "Yes, that's right, please proceed.")
NO = ("No, don't do that.", "no", "Wait, not yet.", "Nope.", "No. Do not proceed.")
REASONS = (
    "My plans changed, I no longer need it.",
    "I ordered it by mistake.",
    "I'm sick and can't travel.",
    "There's a storm coming.",
    "The flight was cancelled by the airline.",
    "It was delayed and I'd like compensation for the trouble.",
    "I'm travelling abroad next week.",
    "I've been having headaches.",
    "Please send it to the pharmacy near me.",
    "I'll pay the $4.00, that's fine.",
    "Can I talk to a human?",
    "Thanks.",
)
FUZZ_STRINGS = ("", "NaN", "Infinity", "unknown", "12345", "null", "'; DROP TABLE users; --", "ÄÖÜ-✓")
NON_FINITE = (float("nan"), float("inf"), float("-inf"), "NaN", "Infinity", "-Infinity")


# ----------------------------------------------------------------------------- the domain's material


@dataclass
class World:
    """What episodes on one domain draw from, built once per process."""

    domain: Domain
    tasks: list[Task]
    pools: dict[str, list[Any]]  # field name -> real values of that field in the database
    writes: list[str]
    reads: list[str]
    generic: list[str]  # calculate, transfer to a human: not gated, never change the database
    task_writes: list[Action]  # every task's gold and forbidden writes (valid arguments, real ids)


def _harvest(value: Any, pools: dict[str, set[Any]]) -> None:
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            for k, x in v.items():
                if isinstance(x, (str, int, float)) and not isinstance(x, bool):
                    if isinstance(x, str) and len(x) > 80:
                        continue
                    pools.setdefault(k, set()).add(x)
                else:
                    stack.append(x)
        elif isinstance(v, list):
            stack.extend(v)


@lru_cache(maxsize=None)
def world(name: str) -> World:
    domain = load_domain(name)
    files = [domain.db_path] + ([domain.folder / "user_db.json"] if (domain.folder / "user_db.json").exists() else [])
    found: dict[str, set[Any]] = {}
    for path in files:
        _harvest(json.loads(path.read_text(encoding="utf-8")), found)
    tasks = load_tasks(domain.tasks_path)
    for task in tasks:  # ids the tasks use (e.g. a phone number) are real values too
        for action in task.gold_actions:
            _harvest(action.arguments, found)
    pools = {k: sorted(v, key=lambda x: (type(x).__name__, str(x))) for k, v in found.items()}
    task_writes = [
        a
        for t in tasks
        for a in [*t.gold_actions, *([t.ledger_tui.forbidden_action] if t.ledger_tui.forbidden_action else [])]
        if a.requestor == "assistant" and domain.kind(a.name) == "write"
    ]
    return World(
        domain=domain,
        tasks=tasks,
        pools=pools,
        writes=sorted(t.name for t in domain.tools if t.kind == "write"),
        reads=sorted(t.name for t in domain.tools if t.kind == "read"),
        generic=sorted(t.name for t in domain.tools if t.kind == "generic"),
        task_writes=task_writes,
    )


# ----------------------------------------------------------------------------- random calls


class Calls:
    """Random tool calls and messages for one episode."""

    def __init__(self, w: World, rng: random.Random) -> None:
        self.w = w
        self.rng = rng
        self.counter = 0

    def new_id(self) -> str:
        self.counter += 1
        return "" if self.rng.random() < 0.02 else f"r{self.counter}"  # "": the session names it

    # values ------------------------------------------------------------------
    def real(self, name: str) -> Any:
        pool = self.w.pools.get(name)
        if pool and self.rng.random() < 0.9:
            return self.rng.choice(pool)
        return self.rng.choice(FUZZ_STRINGS)

    def from_schema(self, schema: dict[str, Any], defs: dict[str, Any], name: str = "") -> Any:
        """A value for a JSON schema: real values for fields named like the database's, else fuzz."""
        rng = self.rng
        if "$ref" in schema:
            schema = defs[schema["$ref"].rsplit("/", 1)[1]]
        if "anyOf" in schema:
            return self.from_schema(rng.choice(schema["anyOf"]), defs, name)
        if "enum" in schema:
            return rng.choice(schema["enum"])
        kind = schema.get("type")
        if kind == "object" or "properties" in schema:
            props = schema.get("properties", {})
            required = set(schema.get("required", ()))
            return {
                k: self.from_schema(s, defs, k)
                for k, s in props.items()
                if k in required or rng.random() < 0.5
            }
        if kind == "array":
            return [self.from_schema(schema.get("items", {}), defs, name) for _ in range(rng.randint(0, 2))]
        if kind == "integer":
            real = [v for v in self.w.pools.get(name, ()) if isinstance(v, int)]
            return rng.choice(real) if real and rng.random() < 0.5 else rng.randint(-1, 6)
        if kind == "number":
            return rng.choice([0.5, 1, 2.0, 3, 25.0, -1.0, 1e6])
        if kind == "boolean":
            return rng.random() < 0.5
        if kind == "null":
            return None
        return self.real(name)

    def arguments_for(self, tool_name: str) -> dict[str, Any]:
        params = self.w.domain.tool(tool_name).schema()["function"]["parameters"]  # type: ignore[union-attr]
        return self.from_schema(params, params.get("$defs", {}))

    # mutations ---------------------------------------------------------------
    def mutate(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """One random change somewhere in a copy of `arguments`."""
        rng = self.rng
        args = json.loads(json.dumps(arguments))
        spots: list[tuple[Any, Any]] = []  # (container, key or index)
        stack: list[Any] = [args]
        while stack:
            c = stack.pop()
            items = c.items() if isinstance(c, dict) else enumerate(c) if isinstance(c, list) else ()
            for k, v in items:
                spots.append((c, k))
                if isinstance(v, (dict, list)):
                    stack.append(v)
        how = rng.choice(("other_real", "other_real", "non_finite", "drop", "extra", "wrong_type", "number", "list"))
        if how == "extra" or not spots:
            args[rng.choice(("note", "amount", "force", "user_id"))] = rng.choice((1, "x", True, float("nan")))
            return args
        container, key = rng.choice(spots)
        value = container[key]
        name = key if isinstance(key, str) else ""
        if how == "other_real":
            container[key] = self.real(name) if name else rng.choice(FUZZ_STRINGS)
        elif how == "non_finite":
            container[key] = rng.choice(NON_FINITE)
        elif how == "drop":
            del container[key]
        elif how == "wrong_type":
            container[key] = rng.choice((None, 7, [value], {"value": value}, str(value), True))
        elif how == "number":
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                container[key] = rng.choice((value * 10, -value, 0, value + 1, value + 0.5))
            else:
                container[key] = rng.choice((0, -3, 2.5, 10**9))
        else:  # list: duplicate or empty a list, or wrap a value
            if isinstance(value, list):
                container[key] = value + value[:1] if value and rng.random() < 0.5 else []
            else:
                container[key] = [value]
        return args

    # calls -------------------------------------------------------------------
    def write(self, task: Task, gold_first: bool = False) -> ToolCall:
        """A write: the task's own (gold or forbidden), another task's, or one built from the
        tool's schema; mutated some of the time. `gold_first`: the task's own, mostly unchanged."""
        rng = self.rng
        own = [a for a in task.gold_actions if self.w.domain.kind(a.name) == "write" and a.requestor == "assistant"]
        if task.ledger_tui.forbidden_action:
            own.append(task.ledger_tui.forbidden_action)
        roll = 0.0 if gold_first else rng.random()
        if own and roll < 0.35:
            action = own[0] if gold_first and rng.random() < 0.7 else rng.choice(own)
            name, args = action.name, dict(action.arguments)
        elif roll < 0.5 and self.w.task_writes:
            action = rng.choice(self.w.task_writes)
            name, args = action.name, dict(action.arguments)
        else:
            name = rng.choice(self.w.writes)
            args = self.arguments_for(name)
        if rng.random() < (0.2 if gold_first else 0.45):
            args = self.mutate(args)
        if rng.random() < 0.01:
            name = rng.choice(("delete_everything", name + "_v2"))  # not a tool: the gate BLOCKs it
        return ToolCall(id=self.new_id(), name=name, arguments=args)

    def read(self, task: Task) -> ToolCall:
        rng = self.rng
        own = [a for a in task.gold_actions if self.w.domain.kind(a.name) == "read" and a.requestor == "assistant"]
        if own and rng.random() < 0.6:
            action = rng.choice(own)
            return ToolCall(id=self.new_id(), name=action.name, arguments=dict(action.arguments))
        name = rng.choice(self.w.generic if self.w.generic and rng.random() < 0.05 else self.w.reads)
        return ToolCall(id=self.new_id(), name=name, arguments=self.arguments_for(name))

    def message(self, task: Task, first: bool) -> str:
        rng = self.rng
        if (first and rng.random() < 0.8) or rng.random() < 0.1:
            other = task if rng.random() < 0.85 else rng.choice(self.w.tasks)
            return other.ledger_tui.opening or "Hi."
        return rng.choice(rng.choice((YES, YES, NO, REASONS)))


# ----------------------------------------------------------------------------- one episode


@dataclass(frozen=True)
class Execution:
    """One call the environment ran, with the digests around it."""

    call_id: str
    name: str
    requestor: str
    before: tuple[str, str | None]
    after: tuple[str, str | None]
    error: bool


def record_executions(session: Session) -> list[Execution]:
    """Wrap the session's environment so every call it runs is logged with the digests around it
    (computed afresh, not from the environment's memo, so a read that changed data would show)."""
    env: Environment = session.env
    log: list[Execution] = []
    state = {"digest": env.domain.digests(env.db)}
    inner = env.execute

    def execute(call: ToolCall) -> Outcome:
        before = state["digest"]
        outcome = inner(call)
        after = state["digest"] = env.domain.digests(env.db)
        log.append(Execution(call.id, call.name, call.requestor, before, after, outcome.error))
        return outcome

    env.execute = execute  # type: ignore[method-assign]
    return log


def episode_rng(seed: int, domain: str, index: int) -> random.Random:
    return random.Random(f"{seed}:{domain}:{index}")


@dataclass
class Episode:
    events: list[Event]
    executions: list[Execution]
    session: Session


async def episode(w: World, rng: random.Random) -> Episode:
    """One session in mode "full": a few customer messages, each answered by random model turns.

    Three shapes. *Well-formed* (60%): the customer says who they are (the domain's
    `identity_sentence`) with the task's opening, before the agent's lookup of it; the agent makes
    the task's reads in order and, before each of its writes, proposes that very call in the
    customer's terms (`proposal_text`, built from the session's ledger when the agent says it);
    the customer says yes and the agent calls it, retrying after the reads a REVISE suggests (and
    proposing again after a REVISE no read fixes). Now and then a step slips: no proposal, another
    write proposed than the one called, a mutated call, a refusal or a reason instead of the yes,
    the same write twice on one yes (and some proposals state the write without asking).
    *Directed* (15%): the task's opening and reads, a write listed
    as a signature (not in the customer's terms), mostly a yes. *Random* (25%): random messages,
    reads and writes. Every shape mixes in random reads and writes of real and mutated records,
    reads a REVISE suggested, and writes the operator proposes."""
    calls = Calls(w, rng)
    task = rng.choice(w.tasks)
    roll = rng.random()
    shape = "well_formed" if roll < 0.6 else "directed" if roll < 0.75 else "random"
    if shape == "well_formed":
        return await _well_formed(w, rng, calls, task)
    directed = shape == "directed"
    env = _environment(w, rng, task, 0.3)
    model = ScriptedModel(name="property")
    session = Session(w.domain, model, "full", env=env, timestamps=False, max_steps=8, consent="text")
    executions = record_executions(session)
    await drain(session.start())
    pending: ToolCall | None = None  # a write whose details the agent listed, proposed after the reply
    for step in range(rng.randint(2, 6)):
        turns: list[ModelTurn] = []
        if pending is not None and rng.random() < 0.85:
            turns.append(ModelTurn(tool_calls=(pending.model_copy(update={"id": calls.new_id()}),)))
        pending = None
        turns.extend(_suggested_turns(session, calls) if rng.random() < 0.7 else ())
        if directed and step == 0:
            for action in task.gold_actions:
                if action.requestor == "assistant" and w.domain.kind(action.name) == "read":
                    turns.append(ModelTurn(tool_calls=(ToolCall(id=calls.new_id(), name=action.name, arguments=action.arguments),)))
        for _ in range(rng.randint(0 if directed else 1, 2)):
            share = 0.0 if directed and step == 0 else 0.45  # a write refused here would end the turn unconfirmed
            turns.append(_batch(calls, task, share))
        if rng.random() < (0.9 if directed else 0.5):
            pending = calls.write(task, gold_first=directed)
            turns.append(ModelTurn(text=f"To confirm: {pending.signature()}. Shall I go ahead?"))
        else:
            turns.append(ModelTurn(text=rng.choice(CLOSINGS)))
        model.queue.clear()
        model.extend(turns)
        if directed and step == 0:
            text = task.ledger_tui.opening
        elif directed and rng.random() < 0.7:
            text = rng.choice(YES)
        else:
            text = calls.message(task, first=step == 0)
        await drain(session.user_says(text or "Hi."))
        await _operator(session, calls, task)
    model.queue.clear()
    await drain(session.end())
    return Episode(list(session.events), executions, session)


CLOSINGS = ("How else can I help?", "Done.", "Could you tell me more?")


def _batch(calls: Calls, task: Task, share: float) -> ModelTurn:
    """One model turn of 1-3 random calls, each a write with probability `share`, else a read."""
    rng = calls.rng
    batch = [calls.write(task) if rng.random() < share else calls.read(task) for _ in range(rng.randint(1, 3))]
    return ModelTurn(text=rng.choice(("", "", "Let me check.")), tool_calls=tuple(batch))


def _suggested_turns(session: Session, calls: Calls) -> list[ModelTurn]:
    """The reads the gate suggested since the customer last spoke, one turn each."""
    return [
        ModelTurn(tool_calls=(ToolCall(id=calls.new_id(), name=s.name, arguments=s.arguments),))
        for s in _suggested(session.events)
    ]


async def _operator(session: Session, calls: Calls, task: Task) -> None:
    if calls.rng.random() < 0.1:  # the operator, acting as the agent, proposes a write of their own
        operator = calls.write(task)
        await drain(session.operator_call(operator.name, operator.arguments))


# ----------------------------------------------------------------------------- well-formed sessions

Lazy = Callable[[], "ModelTurn | None"]  # a model turn decided when the model is asked


def _environment(w: World, rng: random.Random, task: Task, changed: float):
    """A fresh environment for the task; with probability `changed`, as earlier conversations left
    it (one or two of the task's writes already made)."""
    env = fresh_environment(w.domain, task)
    if rng.random() < changed:
        for action in rng.sample(w.task_writes, k=min(len(w.task_writes), rng.randint(1, 2))):
            env.execute(ToolCall(id="before", name=action.name, arguments=action.arguments))
    return env


async def _well_formed(w: World, rng: random.Random, calls: Calls, task: Task) -> Episode:
    """A session shaped as the policy asks (see `episode`), with slips now and then."""
    env = _environment(w, rng, task, 0.1)
    model = LazyScript(name="property")
    session = Session(w.domain, model, "full", env=env, timestamps=False, max_steps=12, consent="text")
    executions = record_executions(session)
    await drain(session.start())
    plan = _plan(w, task)
    retries = 2  # a planned write the gate sent back (REVISE) is proposed again, this many times
    pending: ToolCall | None = None  # the write the agent proposed (or listed), called after the reply
    proposed = False  # the agent's last message proposed `pending` in the customer's terms
    for step in range(8):
        if step >= 2 and pending is None and not plan and rng.random() < 0.8:
            break  # the task's writes are done: the session ends (some of the time it goes on)
        if step == 0:
            text = _identity(w, env, task) if rng.random() < 0.9 else (task.ledger_tui.opening or "Hi.")
        elif proposed and rng.random() < 0.88:
            text = rng.choice(YES)
        elif proposed:
            text = rng.choice(rng.choice((NO, NO, REASONS)))
        else:
            text = calls.message(task, first=False)
        turns: list[ModelTurn | Lazy] = []
        fired: list[str] = []  # ids of the calls of `pending` this turn
        if pending is not None and rng.random() < 0.95:
            call = pending.model_copy(update={"id": calls.new_id()})
            if rng.random() < 0.05:  # the call is not what was proposed
                call = call.model_copy(update={"arguments": calls.mutate(call.arguments)})
            turns.append(ModelTurn(tool_calls=(call,)))
            fired.append(call.id)
            if rng.random() < 0.85:
                turns.append(_retry_after_reads(session, call, calls, fired))
            if rng.random() < 0.04:  # the same write again: the yes was used up by the first
                again = call.model_copy(update={"id": calls.new_id()})
                turns.append(ModelTurn(tool_calls=(again,)))
                fired.append(again.id)
        planned, pending = pending, None
        turns.extend(_suggested_turns(session, calls) if rng.random() < 0.7 else ())
        if step == 0:
            turns.append(_lookup(w, session, calls))
        while plan and w.domain.kind(plan[0].name) != "write":
            action = plan.pop(0)
            turns.append(ModelTurn(tool_calls=(ToolCall(id=calls.new_id(), name=action.name, arguments=action.arguments),)))
        if step > 0 and rng.random() < 0.3:
            turns.append(_batch(calls, task, 0.3))
        proposed = False
        if (plan or rng.random() < 0.25) and rng.random() < 0.93:
            if plan:
                action = plan.pop(0)
                pending = ToolCall(id=calls.new_id(), name=action.name, arguments=dict(action.arguments))
                if rng.random() < 0.05:  # a wrong record or value, proposed and called as it is
                    pending = pending.model_copy(update={"arguments": calls.mutate(pending.arguments)})
            else:
                pending = calls.write(task, gold_first=True)
            said = calls.write(task) if rng.random() < 0.05 else pending  # another write proposed
            turns.append(_proposal_turn(w, session, said, asks=rng.random() < 0.93))
            proposed = True
        elif plan and rng.random() < 0.5:
            pending = calls.write(task, gold_first=True)  # listed, not proposed in the customer's terms
            turns.append(ModelTurn(text=f"To confirm: {pending.signature()}. Shall I go ahead?"))
        else:
            turns.append(ModelTurn(text=rng.choice(CLOSINGS)))
        model.queue.clear()
        model.extend(turns)
        await drain(session.user_says(text))
        if planned is not None and retries and _sent_back(session, fired):
            retries -= 1
            plan.insert(0, Action(name=planned.name, arguments=planned.arguments))
        await _operator(session, calls, task)
    model.queue.clear()
    await drain(session.end())
    return Episode(list(session.events), executions, session)


def _sent_back(session: Session, ids: list[str]) -> bool:
    """Did none of these calls run, the last decision on them being a REVISE?"""
    last = None
    for e in session.events:
        if isinstance(e, GateDecided) and e.decision.call.id in ids:
            last = e.decision.verdict
        elif isinstance(e, ToolResult) and e.call_id in ids and e.executed:
            return False
    return last == Verdict.REVISE


class LazyScript(ScriptedModel):
    """A scripted model whose queue may hold callables: a turn decided when the model is asked,
    from the session as it is then (a proposal built from the reads made earlier in the turn, the
    reads a REVISE just suggested). A callable that returns None is skipped."""

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelTurn:
        while self.queue and callable(self.queue[0]):
            turn = self.queue.popleft()()  # type: ignore[operator]
            if turn is not None:
                self.queue.appendleft(turn)
                break
        return await super().complete(messages, tools)


def _plan(w: World, task: Task) -> list[Action]:
    """The task's agent actions in order (reads and writes), its forbidden write last."""
    plan = [a for a in task.gold_actions if a.requestor == "assistant" and w.domain.kind(a.name) in ("read", "write")]
    if task.ledger_tui.forbidden_action is not None:
        plan.append(task.ledger_tui.forbidden_action)
    return plan


def _owner_arguments(w: World, task: Task) -> dict[str, Any]:
    """The arguments that say whose records the task is about: its first write's (or forbidden
    write's), else its first action's."""
    actions = _plan(w, task) + task.gold_actions
    for action in actions:
        if w.domain.kind(action.name) == "write":
            return action.arguments
    return actions[0].arguments if actions else {}


def _identity(w: World, env: Environment, task: Task) -> str:
    """The customer's first message: who they are, in the domain's words, then the task's opening."""
    opening = task.ledger_tui.opening or "Hi."
    if w.domain.identity_sentence is None:
        return opening
    try:
        said = w.domain.identity_sentence(env.db, _owner_arguments(w, task))
    except Exception:
        said = None
    return f"{said} {opening}" if said else opening


def _lookup(w: World, session: Session, calls: Calls) -> Lazy:
    """The lookup of what the customer said about who they are (after they said it)."""

    def turn() -> ModelTurn | None:
        if w.domain.identify_hint is None:
            return None
        hint = w.domain.identify_hint({}, list(session.state.user_messages))
        if hint is None:
            return None
        return ModelTurn(tool_calls=(ToolCall(id=calls.new_id(), name=hint.name, arguments=hint.arguments),))

    return turn


def _retry_after_reads(session: Session, call: ToolCall, calls: Calls, fired: list[str]) -> Lazy:
    """If the gate answered `call` with a REVISE that suggests reads: those reads, then the call
    again (the customer's yes still stands)."""

    def turn() -> ModelTurn | None:
        decision = next(
            (e.decision for e in reversed(session.events) if isinstance(e, GateDecided) and e.decision.call.id == call.id),
            None,
        )
        if decision is None or decision.verdict != Verdict.REVISE or not decision.suggested_calls:
            return None
        reads = tuple(ToolCall(id=calls.new_id(), name=s.name, arguments=s.arguments) for s in decision.suggested_calls)
        again = call.model_copy(update={"id": calls.new_id()})
        fired.append(again.id)
        return ModelTurn(tool_calls=reads + (again,))

    return turn


def _proposal_turn(w: World, session: Session, call: ToolCall, asks: bool) -> Lazy:
    """The agent's proposal of `call` in the customer's terms, built from the session's ledger and
    context when it is said (as the gold agent does); `asks` False: the same words, no question."""

    def turn() -> ModelTurn:
        text = proposal(w.domain, session, call) or f"To confirm: {call.signature()}. Shall I go ahead?"
        if not asks:
            text = text.replace(" Shall I go ahead?", "").replace("To confirm, I will", "I can")
        return ModelTurn(text=text)

    return turn


def proposal(domain: Domain, session: Session, call: ToolCall) -> str | None:
    """`proposal_text` of this call's `Terms` from the session's ledger and context, or None when the
    domain has none or the call does not validate."""
    try:
        return proposal_for(domain, call, session.state.ledger, session.state.context())
    except Exception:
        return None


def _suggested(events: list[Event]) -> list[Any]:
    """The read calls the gate suggested in its decisions since the customer last spoke."""
    out: list[Any] = []
    for e in reversed(events):
        if isinstance(e, UserMessage):
            break
        if isinstance(e, GateDecided):
            out.extend(c for c in e.decision.suggested_calls if c not in out)
    return out


# ----------------------------------------------------------------------------- the invariant


def violations(domain: Domain, ep: Episode) -> list[str]:
    """Every way this episode broke the invariant (empty: it held)."""
    found: list[str] = []
    calls: dict[str, ToolCall] = {}
    verdicts: dict[str, list[Verdict]] = {}
    withheld: set[str] = set()
    executed_writes = 0
    for e in ep.events:
        if isinstance(e, ToolCallProposed):
            calls[e.call.id] = e.call
        elif isinstance(e, GateDecided) and e.decision.category() == "disclosure":
            withheld.add(e.decision.call.id)  # the read gate: the read ran, its result must not be shown
            if guarded(domain, e.decision.call):
                found.append(f"seq {e.seq}: the read gate judged {e.decision.call.name}, a gated write")
        elif isinstance(e, GateDecided):
            verdicts.setdefault(e.decision.call.id, []).append(e.decision.verdict)
        elif isinstance(e, ToolResult) and e.call_id in withheld and not e.withheld:
            found.append(f"seq {e.seq}: {e.name} ({e.call_id}) showed a result the read gate withheld")
        elif isinstance(e, ToolResult) and e.executed and e.requestor != "user":
            call = calls.get(e.call_id)
            seen = verdicts.get(e.call_id, [])
            if call is None:
                found.append(f"seq {e.seq}: {e.name} ({e.call_id}) executed without being proposed")
                continue
            if guarded(domain, call):
                executed_writes += 1
                if not seen or seen[-1] != Verdict.ALLOW:
                    found.append(f"seq {e.seq}: {e.name} ({e.call_id}) executed with no ALLOW before it (verdicts {seen})")
            if any(v != Verdict.ALLOW for v in seen):
                found.append(f"seq {e.seq}: {e.name} ({e.call_id}) executed after {[v.value for v in seen]}")
    for x in ep.executions:
        seen = verdicts.get(x.call_id, [])
        if any(v != Verdict.ALLOW for v in seen):
            found.append(f"the environment ran {x.name} ({x.call_id}) after the gate said {[v.value for v in seen]}")
        if x.before != x.after:
            call = calls.get(x.call_id)
            if call is None or not guarded(domain, call) or domain.kind(x.name) != "write":
                found.append(f"{x.name} ({x.call_id}) changed the database but is not a gated write")
            elif seen[-1:] != [Verdict.ALLOW]:
                found.append(f"{x.name} ({x.call_id}) changed the database without an ALLOW")
    started = next((e for e in ep.events if isinstance(e, SessionStarted)), None)
    ended = next((e for e in ep.events if isinstance(e, SessionEnded)), None)
    if started and ended and executed_writes == 0:
        if (started.db_digest, started.user_db_digest) != (ended.db_digest, ended.user_db_digest):
            found.append("the database digest changed although no write executed")
    return found


# ----------------------------------------------------------------------------- many episodes


@dataclass
class Tally:
    domain: str
    episodes: int = 0
    writes: int = 0  # write calls the model proposed (each one the gate must decide on)
    verdicts: Counter[str] = field(default_factory=Counter)
    executed: int = 0  # writes the environment ran (tool errors included)
    changed: int = 0  # of which changed the database
    violations: list[str] = field(default_factory=list)
    seconds: float = 0.0


def tally_episode(t: Tally, domain: Domain, ep: Episode, label: str) -> None:
    t.episodes += 1
    for e in ep.events:
        if isinstance(e, ToolCallProposed) and e.call.requestor != "user" and e.kind in ("write", "unknown"):
            t.writes += 1
        elif isinstance(e, GateDecided) and domain.kind(e.decision.call.name) in ("write", "unknown"):
            t.verdicts[e.decision.verdict.value] += 1
    writes = {x.call_id: x for x in ep.executions if domain.kind(x.name) == "write"}
    t.executed += len(writes)
    t.changed += sum(1 for x in writes.values() if x.before != x.after)
    t.violations.extend(f"{label}: {v}" for v in violations(domain, ep))


async def run_domain(name: str, seed: int, writes: int) -> Tally:
    """Episodes on one domain until the model (or operator) proposed at least `writes` writes."""
    w = world(name)
    t = Tally(name)
    start = time.perf_counter()
    i = 0
    while t.writes < writes and i < writes:  # an episode proposes writes more often than not
        ep = await episode(w, episode_rng(seed, name, i))
        tally_episode(t, w.domain, ep, f"{name} seed {seed} episode {i}")
        i += 1
    t.seconds = time.perf_counter() - start
    return t

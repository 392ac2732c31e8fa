"""The failure classes: why a failed run failed, deterministically, from its trajectory.

A reward says *that* a run failed; this module says *why*, deterministically, from the run's
trajectory and its task's gold actions (no model, no re-run). Every failed run (reward < 1) gets
one or more failure classes, each with a one-line finding that points at what happened:

- **missed required write**: a gold write that was never made successfully (and no other class
  below explains it);
- **wrong arguments**: the gold write's tool ran successfully, but with other arguments (compared
  on the action's `compare_args` when given, else on all its gold arguments, as τ²-bench does);
- **extra or unauthorized write**: a successful agent write with no gold counterpart (a refusal
  task's forbidden write is one);
- **gate stop: violation** / **gate stop: inferred from text** / **gate stop: needs a read**: the
  REVISE loop ran out (a refusal naming the revise limit), or the gate BLOCKED the very write the
  task's gold actions ask for; split by what the gate's last decision on that write was: a broken
  rule, a check the free-text reader decided (a yes, a reason or a report it did not find in the
  words), or only evidence the agent never read (the finding names the read the gate asked for);
- **missing communicated fact**: a `communicate_info` string said in no agent text (commas removed,
  any case: τ²-bench's rule), for tasks whose reward counts COMMUNICATE;
- **transfer to a human**: the agent called `transfer_to_human_agents` and the gold actions do not;
- **infrastructure error**: the run ended in `infrastructure_error` (it says nothing of the agent);
- **context window exceeded**: the prompt outgrew the model's context window even folded, and the
  run ended there (`context_window_exceeded`);
- **unknown task**: the run names a task the task file does not have;
- **unclassified**: none of the above; the finding repeats what the grade recorded.

Gold writes are matched to successful writes one to one, on the side that makes them (agent or,
in dual-control domains, customer): first exact matches, then same-tool writes (wrong arguments).
Only agent writes can be extra. In imported runs the gate only said what it *would* have done (the
writes ran), so only calls that really were not executed count as stopped by the gate.

Each failed run also gets one **primary** class, the first of `PRECEDENCE` it shows: the cause most
specific to the agent and most consequential first (an infrastructure error explains everything
else; an unauthorized write changed data irreversibly; a gate stop, wrong arguments or a transfer
each explain a missed write, which is only the symptom; an unsaid fact matters once the data is
right).

`classify` is pure: `ledger_tui.eval.report` reads a folder and calls it for every failed run.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, replace
from typing import Any, Callable, Iterable, Sequence

from ledger_tui.engine.domain import Domain, ToolKinds
from ledger_tui.engine.events import (
    Event,
    GateDecided,
    Refusal,
    SessionEnded,
    ToolCall,
    ToolCallProposed,
    ToolResult,
    Verdict,
)
from ledger_tui.engine.agents.tasks import Action, Task
from ledger_tui.eval.grade import PASSING_TERMINATIONS, communicated

MISSED_WRITE = "missed required write"
WRONG_ARGUMENTS = "wrong arguments"
EXTRA_WRITE = "extra or unauthorized write"
GATE_VIOLATION = "gate stop: violation"
GATE_NEEDS_READ = "gate stop: needs a read"
GATE_INFERRED = "gate stop: inferred from text"
GATE_STOPS = (GATE_VIOLATION, GATE_INFERRED, GATE_NEEDS_READ)
MISSING_FACT = "missing communicated fact"
TRANSFER = "transfer to a human"
INFRASTRUCTURE = "infrastructure error"
CONTEXT_WINDOW = "context window exceeded"
UNKNOWN_TASK = "unknown task"
UNCLASSIFIED = "unclassified"

PRECEDENCE: tuple[str, ...] = (
    INFRASTRUCTURE,
    CONTEXT_WINDOW,
    UNKNOWN_TASK,
    EXTRA_WRITE,
    GATE_VIOLATION,
    GATE_INFERRED,
    GATE_NEEDS_READ,
    WRONG_ARGUMENTS,
    TRANSFER,
    MISSED_WRITE,
    MISSING_FACT,
    UNCLASSIFIED,
)

TRANSFER_TOOL = "transfer_to_human_agents"
REVISE_LIMIT = "revise limit"


@dataclass(frozen=True)
class Finding:
    """One reason a run failed: its class, one line saying what happened, and the step it is at."""

    cls: str
    detail: str
    seq: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"class": self.cls, "detail": self.detail, "seq": self.seq}


@dataclass(frozen=True)
class Classification:
    findings: tuple[Finding, ...]

    @property
    def classes(self) -> list[str]:
        """The distinct classes, in precedence order."""
        present = {f.cls for f in self.findings}
        return [c for c in PRECEDENCE if c in present]

    @property
    def primary(self) -> str:
        classes = self.classes
        return classes[0] if classes else UNCLASSIFIED


@dataclass
class Attempt:
    """One proposed call and what became of it: gate verdict, executed, succeeded."""

    call: ToolCall
    seq: int
    kind: str
    side: str  # "assistant" (agent or operator) or "user" (customer-side, dual control)
    verdict: Verdict | None = None
    failed_predicates: tuple[str, ...] = ()
    category: str | None = None  # allowed / violation / needs_read, when the gate judged it
    suggested_reads: tuple[str, ...] = ()
    executed: bool = False
    error: bool = False

    @property
    def succeeded(self) -> bool:
        return self.executed and not self.error

    @property
    def stopped_by_gate(self) -> bool:
        return self.verdict in (Verdict.REVISE, Verdict.BLOCK) and not self.executed

    @property
    def needs_read(self) -> bool:
        return self.category == "needs_read"

    def gate_stop(self, what: str) -> Finding:
        """`what` (the gate blocked…, the revise limit was reached on…) as the kind of stop it was,
        with the failed checks and, for a stop that only needed a read, the read asked for."""
        preds = f" ({', '.join(self.failed_predicates)})" if self.failed_predicates else ""
        if self.category == "inferred":  # decided on what the words seemed to say
            return Finding(GATE_INFERRED, f"{what}{preds}", self.seq)
        if not self.needs_read:
            return Finding(GATE_VIOLATION, f"{what}{preds}", self.seq)
        asked = f": it asked for {', '.join(self.suggested_reads)}" if self.suggested_reads else ""
        return Finding(GATE_NEEDS_READ, f"{what}{preds}{asked}", self.seq)


def _side(requestor: str) -> str:
    return "user" if requestor == "user" else "assistant"


def attempts(events: Iterable[Event], domain: Domain | ToolKinds | None = None) -> list[Attempt]:
    """Every proposed call in order, joined with its gate decision and its tool result by call id.

    The kind comes from the domain when it knows the tool, else from what the trajectory recorded.
    """
    out: list[Attempt] = []
    waiting: dict[str, list[Attempt]] = defaultdict(list)  # call id -> attempts without a result yet
    for event in events:
        if isinstance(event, ToolCallProposed):
            side = _side(event.call.requestor)
            kind = domain.kind(event.call.name, side) if domain is not None else "unknown"
            attempt = Attempt(event.call, event.seq, kind if kind != "unknown" else event.kind, side)
            out.append(attempt)
            waiting[event.call.id].append(attempt)
        elif isinstance(event, GateDecided):
            pending = waiting.get(event.decision.call.id)
            if pending:
                d = event.decision
                pending[0].verdict = d.verdict
                pending[0].failed_predicates = tuple(p.name for p in d.failed())
                pending[0].category = d.category()
                pending[0].suggested_reads = tuple(s.signature() for s in d.suggested_calls)
        elif isinstance(event, ToolResult):
            pending = waiting.get(event.call_id)
            if pending:
                attempt = pending.pop(0)
                attempt.executed = event.executed
                attempt.error = event.error
    return out


def compare_keys(action: Action) -> list[str]:
    return list(action.compare_args) if action.compare_args is not None else list(action.arguments)


def matches(call: ToolCall, action: Action) -> bool:
    """Same tool, and equal on the arguments the gold action is compared on."""
    return call.name == action.name and all(call.arguments.get(k) == action.arguments.get(k) for k in compare_keys(action))


def _signature(name: str, arguments: dict[str, Any]) -> str:
    return ToolCall(id="", name=name, arguments=arguments).signature()


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _gold_writes(task: Task, domain: Domain | ToolKinds | None, seen: list[Attempt]) -> list[Action]:
    def kind(action: Action) -> str:
        if domain is not None:
            k = domain.kind(action.name, action.requestor)
            if k != "unknown":
                return k
        return next((a.kind for a in seen if a.call.name == action.name), "unknown")

    return [a for a in task.gold_actions if kind(a) == "write"]


def _write_findings(seen: list[Attempt], task: Task, domain: Domain | ToolKinds | None) -> list[Finding]:
    findings: list[Finding] = []
    done = [a for a in seen if a.kind == "write" and a.succeeded]
    used: set[int] = set()

    def take(predicate: Callable[[Attempt], bool]) -> Attempt | None:
        for i, a in enumerate(done):
            if i not in used and predicate(a):
                used.add(i)
                return a
        return None

    unmet = [g for g in _gold_writes(task, domain, seen) if take(lambda a, g=g: a.side == _side(g.requestor) and matches(a.call, g)) is None]
    for gold in unmet:
        side = _side(gold.requestor)
        wrong = take(lambda a: a.side == side and a.call.name == gold.name)
        if wrong is not None:
            diffs = [
                f"{k}={_json(wrong.call.arguments.get(k))} (gold {_json(gold.arguments.get(k))})"
                for k in compare_keys(gold)
                if wrong.call.arguments.get(k) != gold.arguments.get(k)
            ]
            findings.append(Finding(WRONG_ARGUMENTS, f"{gold.name} ran with {', '.join(diffs)}", wrong.seq))
            continue
        blocked = next(
            (a for a in seen if a.verdict == Verdict.BLOCK and not a.executed and a.side == side and matches(a.call, gold)),
            None,
        )
        if blocked is not None:
            findings.append(blocked.gate_stop(f"the gate blocked {blocked.call.signature()}, which the gold actions make"))
            continue
        tried = [a for a in seen if a.side == side and matches(a.call, gold)]
        note = ""
        if tried:
            last = tried[-1]
            if last.stopped_by_gate:
                preds = ", ".join(last.failed_predicates) or "a predicate"
                asked = "asked for a read first" if last.needs_read else "found a violation"
                note = f"; the gate {asked} ({preds}) and it was not made after that"
            elif last.executed and last.error:
                note = "; the tool returned an error"
        findings.append(Finding(MISSED_WRITE, f"{_signature(gold.name, gold.arguments)} was never made{note}", tried[-1].seq if tried else None))
    forbidden = task.ledger_tui.forbidden_action if task.is_refusal else None
    for i, a in enumerate(done):
        if i in used or a.side != "assistant":
            continue
        if forbidden is not None and matches(a.call, forbidden):
            findings.append(Finding(EXTRA_WRITE, f"{a.call.signature()} ran: the write this refusal task forbids", a.seq))
        else:
            findings.append(Finding(EXTRA_WRITE, f"{a.call.signature()} ran, and no gold action asks for it", a.seq))
    return findings


def _revise_limit_findings(events: Sequence[Event], seen: list[Attempt], task: Task | None) -> list[Finding]:
    by_id = {a.call.id: a for a in seen}
    forbidden = task.ledger_tui.forbidden_action if task is not None and task.is_refusal else None
    out = []
    for e in events:
        if not (isinstance(e, Refusal) and REVISE_LIMIT in e.text):
            continue
        attempt = by_id.get(e.call_id or "")
        if attempt is not None and forbidden is not None and matches(attempt.call, forbidden):
            continue  # the gate kept the forbidden write from running: what the task wants
        if attempt is not None and any(
            a.seq > attempt.seq and a.succeeded and a.call.name == attempt.call.name and a.call.arguments == attempt.call.arguments
            for a in seen
        ):
            continue  # the same write was made later: the loop ran out but stopped nothing
        if attempt is None:
            out.append(Finding(GATE_VIOLATION, "the revise limit was reached on a write", e.seq))
        else:
            out.append(replace(attempt.gate_stop(f"the revise limit was reached on {attempt.call.signature()}"), seq=e.seq))
    return out


def _transfer_findings(seen: list[Attempt], task: Task | None) -> list[Finding]:
    if task is not None and any(a.name == TRANSFER_TOOL for a in task.gold_actions):
        return []
    for a in seen:
        if a.side == "assistant" and a.call.name == TRANSFER_TOOL:
            summary = str(a.call.arguments.get("summary", "")).strip()
            detail = "the agent transferred the customer to a human agent"
            return [Finding(TRANSFER, detail + (f": {summary[:120]}" if summary else ""), a.seq)]
    return []


def _fact_findings(events: Sequence[Event], task: Task) -> list[Finding]:
    criteria = task.evaluation_criteria
    if not criteria.communicate_info or "COMMUNICATE" not in (criteria.reward_basis or ["DB", "COMMUNICATE"]):
        return []  # (nothing to look for: the agent's texts are not read)
    said = communicated(criteria.communicate_info or [], events)
    return [Finding(MISSING_FACT, f"{info!r} was never said to the customer") for info, ok in said.items() if not ok]


def unexplained(termination: str | None, grade: dict[str, Any] | None) -> str:
    notes = []
    if termination and termination not in PASSING_TERMINATIONS:
        notes.append(f"the run ended with termination {termination}")
    grade = grade or {}
    if grade.get("db_match") is False:
        notes.append("the final database differs from the gold one")
    db_check = grade.get("db_check")
    if isinstance(db_check, dict) and db_check.get("db_match") is False:
        notes.append("the final database differs from the gold one")
    assertions = grade.get("env_assertions")
    for a in assertions if isinstance(assertions, list) else []:
        if isinstance(a, dict) and a.get("met") is False:
            notes.append(f"environment assertion {a.get('func_name')} not met")
    notes = list(dict.fromkeys(notes))
    return "no cause found in the trajectory" + (f"; {'; '.join(notes)}" if notes else "")


def classify(
    events: Sequence[Event],
    task: Task | None,
    domain: Domain | ToolKinds | None = None,
    *,
    termination: str | None = None,
    grade: dict[str, Any] | None = None,
) -> Classification:
    """The failure classes of one failed run, from its events and its task (None: unknown task).

    `termination` and `grade` default to what the trajectory's session_ended event recorded.
    """
    ended = next((e for e in reversed(events) if isinstance(e, SessionEnded)), None)
    if termination is None and ended is not None:
        termination = ended.termination
    if grade is None and ended is not None:
        grade = ended.grade
    seen = attempts(events, domain)
    findings: list[Finding] = []
    if termination == "infrastructure_error":
        findings.append(Finding(INFRASTRUCTURE, "the run ended in an infrastructure error (model or network), not an agent fault"))
    if termination == "context_window_exceeded":
        findings.append(Finding(CONTEXT_WINDOW, "the prompt outgrew the model's context window, even folded; the run ended there"))
    if task is None:
        findings.append(Finding(UNKNOWN_TASK, "the task file has no task with this id"))
    else:
        findings += _write_findings(seen, task, domain)
    findings += _revise_limit_findings(events, seen, task)
    findings += _transfer_findings(seen, task)
    if task is not None:
        findings += _fact_findings(events, task)
    if not findings:
        findings.append(Finding(UNCLASSIFIED, unexplained(termination, grade)))
    return Classification(tuple(findings))

"""Every needs-a-read REVISE suggests a read that supplies the path it is missing (issue 10).

When the gate stops a write only because evidence is missing or stale, the failed predicate is
"needs a read" (`PredicateResult.needs_a_read()`) and carries a `suggested_call`. This test takes
every such suggestion that the repository's conversations produce and runs it:

- the conversations: the gold agent on every task of every domain's own `tasks.json`, both
  conversations (forbidden and twin) of every adversarial case in `tests/adversarial`, and every
  shipped script in `domains/*/scripts/*.json`;
- for each `GateDecided` event, each failed predicate that needs a read and has a suggested call
  (whatever the decision's verdict: a BLOCK from another predicate does not excuse a wrong hint);
- its *missing paths*: the predicate's evidence reads with `present=False` or `stale=True`, observed
  ledger paths only (not `said.*` customer statements, not other `context.*` session facts). One
  session fact is a ledger path under another name: `context.user_id` is the value of the ledger
  path `users.current` (`SessionContext.user_id`), so a `context.user_id` read as None (nobody
  identified) counts as `users.current` missing;
- the replay: a fresh environment of the conversation (the domain's db, with the task's initial
  state when the conversation started from one), on which every call the conversation executed
  before that decision runs again, in order (reads, writes, the customer's device actions). The
  suggested call then runs there and its outcome becomes ledger pairs by `observe.read_pairs`, plus
  the identification pairs (`identified.<id>`, `users.current`) that `observe.observe_read` adds for
  an identification read, given what the customer had said by then.

What "supplies" means: at least one of the predicate's missing paths is among the paths of those
pairs. A predicate may find several paths absent (a trip's flights, a record and the records it
refers to), and one read need not supply them all: a search lists the flights of one route and
date, and the gate asks for the next read once this one is made. A suggestion that supplies none of
them fails: a read that answers an error, a read of another record, a search that does not list the
flight, a call that is not a read, or a read whose path map does not produce the path. A
needs-a-read predicate whose evidence names no missing path fails too: nothing recorded says what
the read is for, so nothing shows that it supplies it.

The report of a failure gives the conversation, the decision, the predicate's reason, the suggested
call, the missing paths, what the call returned and the paths of its pairs. The whole corpus plays
in a few seconds; `python benchmarks/suggested_reads.py [-v]` prints the same checks with counts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

import pytest

from ledger_tui.engine.events import (
    Event,
    GateDecided,
    GateDecision,
    PredicateResult,
    SessionStarted,
    ToolCall,
    ToolCallProposed,
    ToolResult,
)
from ledger_tui.engine.store.fold import CURRENT_USER

ROOT = Path(__file__).resolve().parents[2]
DOMAINS = ("airline", "retail", "telecom", "telehealth")
NOT_EVIDENCE = ("said.", "context.")
# session facts that are the value of a ledger path (see `SessionState.context`)
CONTEXT_PATHS = {"context.user_id": CURRENT_USER}  # users.current


# ----------------------------------------------------------------------------- conversations


@dataclass
class Conversation:
    """One played conversation, and how to rebuild its environment from scratch."""

    label: str  # e.g. "gold airline/3", "adversarial retail/okay_but_dont_cancel (twin)"
    domain_name: str
    task_id: str | None
    events: list[Event]


def _task(domain_name: str, task_id: str | None) -> Any:
    if task_id is None:
        return None
    from ledger_tui.domains import load_domain
    from ledger_tui.engine.agents.tasks import by_name, load_tasks

    domain = load_domain(domain_name)
    return by_name(load_tasks(domain.tasks_path))[str(task_id)]  # the cases name some tasks by their former ids


def fresh_env(domain_name: str, task_id: str | None) -> Any:
    from ledger_tui.domains import load_domain
    from ledger_tui.engine.agents.gold import fresh_environment

    return fresh_environment(load_domain(domain_name), _task(domain_name, task_id))


def sources() -> list[tuple[str, str, Any]]:
    """Every conversation source, as (kind, domain, what): kind "gold" (what = task id),
    "adversarial" (what = (case path, "forbidden" | "twin")) or "script" (what = script path)."""
    from ledger_tui.domains import load_domain
    from ledger_tui.engine.agents.tasks import load_tasks
    from tests.adversarial.runner import case_files, load_case

    out: list[tuple[str, str, Any]] = []
    for name in DOMAINS:
        for task in load_tasks(load_domain(name).tasks_path):
            out.append(("gold", name, task.id))
    for path in case_files():
        case = load_case(path)
        for side in ("forbidden", "twin"):
            out.append(("adversarial", case["domain"], (path, side)))
    for path in sorted(ROOT.glob("domains/*/scripts/*.json")):
        out.append(("script", json.loads(path.read_text(encoding="utf-8"))["domain"], path))
    return out


def source_label(kind: str, domain_name: str, what: Any) -> str:
    if kind == "gold":
        return f"gold {domain_name}/{what}"
    if kind == "adversarial":
        path, side = what
        return f"adversarial {path.parent.name}/{path.stem} ({side})"
    return f"script {Path(what).relative_to(ROOT)}"


async def play(kind: str, domain_name: str, what: Any) -> Conversation:
    from ledger_tui.domains import load_domain

    label = source_label(kind, domain_name, what)
    if kind == "gold":
        from ledger_tui.engine.agents.gold import run_gold

        report = await run_gold(load_domain(domain_name), _task(domain_name, what))
        return Conversation(label, domain_name, str(what), list(report.events))
    if kind == "adversarial":
        from tests.adversarial.runner import load_case, play_case

        path, side = what
        case = load_case(path)
        session = await play_case(case["domain"], case[side], task=case.get("task"))
        return Conversation(label, domain_name, case.get("task"), list(session.events))
    from ledger_tui.engine.agents.script import load_script
    from ledger_tui.testing import play_script

    script = load_script(what)
    session = await play_script(load_domain(domain_name), Path(what), mode=script.mode or "full")
    # play_script starts from the domain's db as it is (it does not apply a script's task)
    return Conversation(label, domain_name, None, list(session.events))


# ----------------------------------------------------------------------------- the check


@dataclass
class Check:
    """One suggested read of one needs-a-read predicate, replayed."""

    conversation: str
    domain: str
    seq: int  # the GateDecided event's position
    decision: GateDecision
    predicate: PredicateResult
    missing: list[str]
    pairs: list[tuple[str, Any]] = field(default_factory=list)
    returned: str = ""  # what the suggested call returned (tool text, or its error)
    error: bool = False

    @property
    def suggestion(self) -> str:
        assert self.predicate.suggested_call is not None
        return self.predicate.suggested_call.signature()

    @property
    def supplied(self) -> list[str]:
        paths = {p for p, _ in self.pairs}
        return [m for m in self.missing if m in paths]

    @property
    def ok(self) -> bool:
        return bool(self.supplied)

    def explain(self) -> str:
        pair_paths = [p for p, _ in self.pairs]
        shown = pair_paths if len(pair_paths) <= 12 else pair_paths[:12] + [f"… {len(pair_paths) - 12} more"]
        returned = self.returned if len(self.returned) <= 300 else self.returned[:300] + "…"
        return (
            f"{self.conversation}, step {self.seq}: {self.decision.call.signature()} -> {self.decision.verdict.value}\n"
            f"  predicate {self.predicate.name}: {self.predicate.reason}\n"
            f"  suggested: {self.suggestion}\n"
            f"  missing: {self.missing or '(no absent or stale observed path in its evidence)'}\n"
            f"  the call {'answered an error' if self.error else 'returned'}: {returned}\n"
            f"  its ledger pairs: {shown}"
        )


def missing_paths(predicate: PredicateResult) -> list[str]:
    """The observed ledger paths the predicate found absent or stale (not said.*, not context.*),
    and `users.current` when it found nobody identified (`context.user_id` None)."""
    out: list[str] = []
    for r in predicate.reads:
        if r.path in CONTEXT_PATHS and r.value is None and CONTEXT_PATHS[r.path] not in out:
            out.append(CONTEXT_PATHS[r.path])
            continue
        if r.path.startswith(NOT_EVIDENCE) or r.origin != "observed":
            continue
        if (not r.present or r.stale) and r.path not in out:
            out.append(r.path)
    return out


def needs_read_predicates(decision: GateDecision) -> list[PredicateResult]:
    return [p for p in decision.failed() if p.needs_a_read() and p.suggested_call is not None]


def executed_before(events: list[Event], seq: int) -> Iterator[ToolCall]:
    """The calls that ran (executed results, errors included) before event `seq`, in order."""
    proposed: dict[str, ToolCall] = {}
    for e in events:
        if e.seq >= seq:
            return
        if isinstance(e, ToolCallProposed):
            proposed[e.call.id] = e.call
        elif isinstance(e, ToolResult) and e.executed and e.call_id in proposed:
            yield proposed[e.call_id]


def supplied_pairs(domain: Any, call: ToolCall, outcome: Any, customer_text: tuple[str, ...]) -> list[tuple[str, Any]]:
    """What the session would put in the ledger from this read: `read_pairs`, and the
    identification pairs `observe_read` adds when the read identifies the customer."""
    from ledger_tui.engine.store.fold import IDENTIFIED_PREFIX
    from ledger_tui.engine.ledger import Ledger
    from ledger_tui.engine.observe import observe_read, read_pairs

    pairs = read_pairs(call, outcome)
    _, updates = observe_read(domain, Ledger(), call, outcome, None, customer_text)
    pairs += [(u.path, u.after) for u in updates if u.path == CURRENT_USER or u.path.startswith(IDENTIFIED_PREFIX)]
    return pairs


def replayed_env(conv: Conversation, seq: int) -> Any:
    """The conversation's environment just before event `seq`, rebuilt from scratch."""
    env = fresh_env(conv.domain_name, conv.task_id)
    for call in executed_before(conv.events, seq):
        env.execute(call)
    return env


def check_conversation(conv: Conversation) -> list[Check]:
    """Replay every suggested read of every needs-a-read predicate of one conversation."""
    from ledger_tui.domains import load_domain
    from ledger_tui.engine.events import SessionEnded
    from ledger_tui.engine.store.fold import fold

    domain = load_domain(conv.domain_name)
    started = next(e for e in conv.events if isinstance(e, SessionStarted))
    ended = next(e for e in conv.events if isinstance(e, SessionEnded))
    # the rebuild is faithful: it starts from the conversation's db, and replaying every executed
    # call ends on the conversation's final db
    assert fresh_env(conv.domain_name, conv.task_id).digests() == (started.db_digest, started.user_db_digest), (
        f"{conv.label}: the rebuilt environment does not start from the conversation's db"
    )
    assert replayed_env(conv, ended.seq).digests() == (ended.db_digest, ended.user_db_digest), (
        f"{conv.label}: replaying the executed calls does not reproduce the conversation's final db"
    )
    checks: list[Check] = []
    for event in conv.events:
        if not isinstance(event, GateDecided):
            continue
        for predicate in needs_read_predicates(event.decision):
            env = replayed_env(conv, event.seq)
            s = predicate.suggested_call
            assert s is not None
            call = ToolCall(id="suggested", name=s.name, arguments=s.arguments)
            outcome = env.execute(call)
            said = fold(conv.events, upto=event.seq).user_messages
            checks.append(
                Check(
                    conversation=conv.label,
                    domain=conv.domain_name,
                    seq=event.seq,
                    decision=event.decision,
                    predicate=predicate,
                    missing=missing_paths(predicate),
                    pairs=supplied_pairs(domain, call, outcome, said),
                    returned=outcome.content,
                    error=outcome.error,
                )
            )
    return checks


async def check_sources(selected: Iterable[tuple[str, str, Any]]) -> tuple[int, int, list[Check]]:
    """(conversations played, needs-a-read decisions, checks) over the given sources."""
    conversations = decisions = 0
    checks: list[Check] = []
    for kind, domain_name, what in selected:
        conv = await play(kind, domain_name, what)
        conversations += 1
        decisions += sum(
            1 for e in conv.events if isinstance(e, GateDecided) and needs_read_predicates(e.decision)
        )
        checks.extend(check_conversation(conv))
    return conversations, decisions, checks


# ----------------------------------------------------------------------------- the tests


async def test_every_suggested_read_supplies_a_missing_path() -> None:
    conversations, decisions, checks = await check_sources(sources())
    assert checks, "no conversation produced a needs-a-read suggestion; the test checks nothing"
    failed = [c for c in checks if not c.ok]
    if failed:
        pytest.fail(
            f"{len(failed)} of {len(checks)} suggested reads ({decisions} needs-a-read decisions, "
            f"{conversations} conversations) do not supply a path their predicate is missing:\n\n"
            + "\n\n".join(c.explain() for c in failed),
            pytrace=False,
        )


def test_missing_paths_are_observed_absent_or_stale_paths_only() -> None:
    from ledger_tui.engine.events import EvidenceRead, Verdict

    def result(*reads: EvidenceRead) -> PredicateResult:
        return PredicateResult(
            name="x", clause="c", passed=False, verdict_on_fail=Verdict.REVISE, needs_read=True, reads=list(reads)
        )

    p = result(
        EvidenceRead(path="orders.#1", value={"a": 1}),
        EvidenceRead(path="orders.#2", present=False),
        EvidenceRead(path="orders.#3", value={}, stale=True),
        EvidenceRead(path="said.reason", present=False),
        EvidenceRead(path="context.user_id", value="u1", origin="context"),
        EvidenceRead(path="context.proposal", value=None, origin="context"),
        EvidenceRead(path="orders.#2", present=False),
    )
    assert missing_paths(p) == ["orders.#2", "orders.#3"]
    # nobody identified: the session's user id is the ledger's users.current, missing
    assert missing_paths(result(EvidenceRead(path="context.user_id", value=None, origin="context"))) == ["users.current"]

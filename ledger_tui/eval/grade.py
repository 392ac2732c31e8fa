"""Grading a finished run as τ²-bench does: DB digest vs the gold actions, communicated facts,
environment assertions and gold-action matches, multiplied over the task's reward basis."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Iterable

from ledger_tui.engine.domain import Domain
from ledger_tui.engine.environment import Environment
from ledger_tui.engine.events import AssistantMessage, Event, Refusal, ToolCallProposed
from ledger_tui.engine.gold import gold_digests
from ledger_tui.engine.tasks import Task

PASSING_TERMINATIONS = ("agent_stop", "user_stop")


@dataclass
class Grade:
    reward: float
    termination: str
    db_match: bool | None = None
    communicate: dict[str, bool] = field(default_factory=dict)
    env_assertions: list[dict[str, Any]] = field(default_factory=list)
    action_matches: list[dict[str, Any]] = field(default_factory=list)
    breakdown: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def communicated(required: Iterable[str], events: Iterable[Event]) -> dict[str, bool]:
    """Each required string must occur in some non-blank assistant text, commas removed, any case."""
    texts = [
        e.text.replace(",", "").lower()
        for e in events
        if isinstance(e, (AssistantMessage, Refusal)) and e.text.strip()
    ]
    return {info: any(info.lower() in t for t in texts) for info in required}


def _action_matches(task: Task, events: list[Event]) -> list[dict[str, Any]]:
    calls = [e.call for e in events if isinstance(e, ToolCallProposed)]
    out = []
    for action in task.gold_actions:
        keys = action.compare_args if action.compare_args is not None else list(action.arguments)
        hit = any(
            c.name == action.name and all(c.arguments.get(k) == action.arguments.get(k) for k in keys) for c in calls
        )
        out.append({"action": action.name, "arguments": action.arguments, "matched": hit})
    return out


def grade_run(domain: Domain, task: Task, env: Environment, events: list[Event], termination: str) -> Grade:
    basis = task.evaluation_criteria.reward_basis or ["DB", "COMMUNICATE"]
    grade = Grade(reward=0.0, termination=termination)
    gold_agent, gold_user = gold_digests(domain, task)
    agent_digest, user_digest = env.digests()
    grade.db_match = gold_agent == agent_digest and gold_user == user_digest
    grade.communicate = communicated(task.evaluation_criteria.communicate_info or [], events)
    grade.action_matches = _action_matches(task, events)
    assertions = task.evaluation_criteria.env_assertions or []
    checker = getattr(domain, "check_assertion", None)
    for a in assertions:
        if checker is None:
            grade.env_assertions.append({**a, "met": None})
            continue
        try:
            met = bool(checker(env.db, a))  # the hook compares with assert_value itself
        except Exception as exc:  # an assertion that cannot run counts as not met
            grade.notes.append(f"assertion {a.get('func_name')} failed to run: {exc}")
            met = False
        grade.env_assertions.append({**a, "met": met})
    components = {
        "DB": 1.0 if grade.db_match else 0.0,
        "COMMUNICATE": 1.0 if all(grade.communicate.values()) else 0.0,
        "ENV_ASSERTION": 1.0 if all(a["met"] for a in grade.env_assertions if a["met"] is not None) else 0.0,
        "ACTION": 1.0 if all(m["matched"] for m in grade.action_matches) else 0.0,
        "NL_ASSERTION": 1.0,
    }
    if "NL_ASSERTION" in basis and task.evaluation_criteria.nl_assertions:
        grade.notes.append("NL assertions need an LLM judge and are not scored here (counted as met).")
    if any(a["met"] is None for a in grade.env_assertions):
        grade.notes.append(f"domain {domain.name} cannot check environment assertions; they are not scored.")
    grade.breakdown = {b: components.get(b, 1.0) for b in basis}
    reward = 1.0
    for value in grade.breakdown.values():
        reward *= value
    grade.reward = reward if termination in PASSING_TERMINATIONS else 0.0
    return grade

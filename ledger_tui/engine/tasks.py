"""Tasks in τ²-bench's format, plus this project's optional `ledger_tui` block.

The τ²-bench fields are kept as they are (unknown keys allowed) so the benchmark's own `tasks.json`
loads unchanged. The `ledger_tui` block says what the offline gold agent and the gold customer need:
the customer's opening message, and for refusal tasks the forbidden write and the verdict the gate
must give it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ledger_tui.engine.errors import TaskError


class Loose(BaseModel):
    model_config = ConfigDict(extra="allow")


class Action(Loose):
    action_id: str = ""
    requestor: Literal["assistant", "user"] = "assistant"
    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    info: str | None = None
    compare_args: list[str] | None = None


class EvaluationCriteria(Loose):
    actions: list[Action] | None = None
    env_assertions: list[dict[str, Any]] | None = None
    communicate_info: list[str] | None = None
    nl_assertions: list[str] | None = None
    reward_basis: list[str] = Field(default_factory=lambda: ["DB", "COMMUNICATE"])


class UserScenario(Loose):
    persona: str | None = None
    instructions: str | dict[str, Any] = ""

    def text(self) -> str:
        if isinstance(self.instructions, str):
            return self.instructions
        parts = []
        for key in ("domain", "reason_for_call", "known_info", "unknown_info", "task_instructions"):
            value = self.instructions.get(key)
            if value:
                parts.append(f"{key.replace('_', ' ').capitalize()}: {value}")
        return "\n".join(parts)


class LedgerTuiTaskInfo(Loose):
    """This project's additions: what the gold customer says and what a refusal task expects."""

    outcome: Literal["allow", "refuse"] = "allow"
    opening: str = ""  # the customer's first message (identification + request + stated facts)
    # The read that identifies the customer with what they said (e.g. find_user_id_by_email); the
    # gold agent makes it first. Omit it when a gold action already identifies the customer.
    identify: Action | None = None
    forbidden_action: Action | None = None  # refusal tasks: the write the gate must stop
    expected_verdict: Literal["BLOCK", "REVISE"] = "BLOCK"
    expected_predicate: str | None = None


class Task(Loose):
    id: str
    description: dict[str, Any] | None = None
    user_scenario: UserScenario = Field(default_factory=UserScenario)
    ticket: str | None = None
    initial_state: dict[str, Any] | None = None
    evaluation_criteria: EvaluationCriteria = Field(default_factory=EvaluationCriteria)
    ledger_tui: LedgerTuiTaskInfo = Field(default_factory=LedgerTuiTaskInfo)

    @property
    def gold_actions(self) -> list[Action]:
        return list(self.evaluation_criteria.actions or [])

    @property
    def is_refusal(self) -> bool:
        return self.ledger_tui.outcome == "refuse"


def load_tasks(path: Path) -> list[Task]:
    try:
        raw = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise TaskError(f"Task file {path} does not exist.") from None
    except json.JSONDecodeError as exc:
        raise TaskError(f"Task file {path} is not valid JSON (line {exc.lineno}); fix or regenerate it.") from None
    if isinstance(raw, dict) and "tasks" in raw:
        raw = raw["tasks"]
    try:
        return [Task.model_validate(t) for t in raw]
    except ValidationError as exc:
        raise TaskError(f"Task file {path} does not follow the task format ({str(exc).splitlines()[0]}).") from None

"""Tasks in τ²-bench's format, plus this project's optional `ledger_tui` block.

The τ²-bench fields are kept as they are (unknown keys allowed) so the benchmark's own `tasks.json`
loads unchanged. The `ledger_tui` block says what the offline gold agent and the gold customer need:
the customer's opening message, and for refusal tasks the forbidden write and the verdict the gate
must give it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from ledger_tui.engine.errors import TaskError
from ledger_tui.engine.store.reading import parse_json, read_text, words


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
    # ids the task had before (every domain's ids are now `<domain>_<nn>_<slug>`): `--tasks`,
    # `run --task`, a resumed results.jsonl and `report` still find it by them
    formerly: list[str] = Field(default_factory=list)


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

    @property
    def names(self) -> list[str]:
        """Its id, then the ids it had before."""
        return [self.id, *self.ledger_tui.formerly]


def by_name(tasks: Iterable[Task]) -> dict[str, Task]:
    """Every task by its id and by the ids it had before (a current id wins over a former one)."""
    out: dict[str, Task] = {}
    tasks = list(tasks)
    for t in tasks:
        for name in t.ledger_tui.formerly:
            out.setdefault(name, t)
    out.update({t.id: t for t in tasks})
    return out


class _EnvCall(BaseModel):
    """τ²-bench's EnvFunctionCall / EnvAssertion: a set-up or assertion function by name."""

    model_config = ConfigDict(extra="allow")
    env_type: Literal["assistant", "user"] = "assistant"
    func_name: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    assert_value: bool = True


class _InitializationData(BaseModel):
    model_config = ConfigDict(extra="allow")
    agent_data: dict[str, Any] | None = None
    user_data: dict[str, Any] | None = None


class _InitialState(BaseModel):
    """τ²-bench's InitialState, checked on a task file's `initial_state` (kept as a plain dict)."""

    model_config = ConfigDict(extra="allow")
    initialization_data: _InitializationData | None = None
    initialization_actions: list[_EnvCall] | None = None
    message_history: list[dict[str, Any]] | None = None


_STATE: TypeAdapter[_InitialState | None] = TypeAdapter(_InitialState | None)
_ASSERTIONS: TypeAdapter[list[_EnvCall] | None] = TypeAdapter(list[_EnvCall] | None)


def _plain_parts_problem(task: Task) -> str | None:
    """What is wrong with the parts of a task kept as plain JSON (`initial_state`,
    `env_assertions`), checked against τ²-bench's shapes since domain code runs them."""
    for root, adapter, value in (
        ("initial_state", _STATE, task.initial_state),
        ("evaluation_criteria.env_assertions", _ASSERTIONS, task.evaluation_criteria.env_assertions),
    ):
        try:
            adapter.validate_python(value)
        except ValidationError as exc:
            return words(exc, root)
    return None


def parse_task(raw: Any, number: int, source: str) -> Task:
    """Task `number` (from 1) of `source` as a Task, or one sentence (TaskError) saying which field
    is wrong and how."""
    try:
        task = Task.model_validate(raw)
        problem = _plain_parts_problem(task)
    except ValidationError as exc:
        problem = words(exc)
    if problem is None:
        return task
    name = f" (id {raw['id'][:40]!r})" if isinstance(raw, dict) and isinstance(raw.get("id"), str) else ""
    raise TaskError(f"Task {number}{name} of {source} does not follow the task format: {problem}; fix or regenerate the file.")


def load_tasks(path: Path) -> list[Task]:
    """A task file (a list of tasks, or an object with "tasks"), or one sentence (TaskError)."""
    path = Path(path)
    text = read_text(path, TaskError, "pass a task file in τ²-bench's format", missing=f"Task file {path} does not exist.")
    raw = parse_json(text, TaskError, f"Task file {path}", "fix or regenerate it")
    if isinstance(raw, dict) and "tasks" in raw:
        raw = raw["tasks"]
    if not isinstance(raw, list):
        raise TaskError(f"Task file {path} should hold a list of tasks; pass a task file in τ²-bench's format.")
    return [parse_task(t, i, str(path)) for i, t in enumerate(raw, 1)]

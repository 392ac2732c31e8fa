"""The results file of an evaluation (`results.jsonl`): one graded run a line (`TrialResult`),
appended as each run ends; read back for resume, `report`, `browse` and `audit`.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from pydantic import TypeAdapter, ValidationError

from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.store.reading import MAX_DEPTH, brief, json_lines, line_problem, read_text, words
from ledger_tui.engine.agents.tasks import Task

RESULTS = "results.jsonl"

# A run whose prompt outgrew the model's context window: graded (reward 0) and counted in pass^k,
# as τ²-bench counts agent errors, and not redone on resume: the same model would overflow again.
CONTEXT_WINDOW_EXCEEDED = "context_window_exceeded"


@dataclass
class TrialResult:
    domain: str
    task_id: str
    trial: int
    mode: str
    agent: str
    reward: float
    termination: str
    trajectory: str
    grade: dict[str, Any] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    ledger_tokens: int = 0
    policy_tokens: int = 0
    transcript_tokens: int = 0
    model_calls: int = 0
    # IRMA's helper calls and their tokens (0 in every other mode; absent in results written before)
    helper_calls: int = 0
    helper_prompt_tokens: int = 0
    helper_completion_tokens: int = 0
    allow: int = 0
    revise: int = 0
    block: int = 0
    revise_exhausted: int = 0
    seconds: float = 0.0
    error: str | None = None  # why the run stopped early (model or simulator failure), one sentence
    # how consent was observed in a gated mode ("card" or "text"; None: an ungated mode, or a row
    # written before cards, whose gated runs read it from text), the writes held for a card and the
    # cards shown, the closed questions asked (each time asked), and whether the customer simulator
    # ended the run as out of scope
    consent: str | None = None
    held: int = 0
    cards: int = 0
    questions: int = 0
    out_of_scope: bool = False
    # reads whose result the read gate withheld from the model (another customer's record, or a
    # customer's before anyone was identified; disclosure.py)
    withheld: int = 0
    # a failed run's failure classes, found when it was written, with the digests of what they were
    # found against (eval/recorded.py); None for a passed run, and absent in results written before
    failure: dict[str, Any] | None = None

    @property
    def infrastructure_error(self) -> bool:
        return self.termination == "infrastructure_error"

    @property
    def context_window_exceeded(self) -> bool:
        return self.termination == CONTEXT_WINDOW_EXCEEDED

    @property
    def passed(self) -> bool:
        return self.reward >= 1.0 - 1e-6

    def key(self) -> tuple[str, int, str]:
        return (self.task_id, self.trial, self.mode)


def trajectory_files(folder: Path) -> list[Path]:
    """Every trajectory under an eval or import-tau2 folder, in order: its .jsonl files but the
    results file."""
    return sorted(p for p in Path(folder).rglob("*.jsonl") if p.name != RESULTS)

class ResultsError(LedgerTuiError):
    """A results.jsonl that cannot be read."""


_RESULT: TypeAdapter[TrialResult] = TypeAdapter(TrialResult)


def parse_result(line: str) -> TrialResult:
    """One line of results.jsonl, or ValueError saying in words what is wrong with it."""
    problem = line_problem(line)
    if problem is not None:
        raise ValueError(problem)
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"it is not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise ValueError(f"it is nested more than {MAX_DEPTH} levels deep") from None
    if not isinstance(data, dict):
        raise ValueError(f"it should be a JSON object (got {brief(data)})")
    try:
        result = _RESULT.validate_python(data)
    except ValidationError as exc:
        raise ValueError(words(exc)) from None
    if not (math.isfinite(result.reward) and 0.0 <= result.reward <= 1.0):
        raise ValueError(f"reward should be a number from 0 to 1 (got {result.reward!r})")
    if result.trial < 0:
        raise ValueError(f"trial should not be negative (got {result.trial})")
    return result


def read_results_file(out: Path) -> tuple[list[TrialResult], list[str]]:
    """The runs recorded in `out`/results.jsonl and warnings. A damaged last line (a run cut short
    while its line was written) is skipped with a warning and that run is redone; damage before
    it is one sentence (ResultsError) naming the line, before anything is written."""
    path = out / RESULTS
    if not path.exists():
        return [], []
    text = read_text(path, ResultsError, "pass the --out folder of `ledger-tui eval`")
    numbered = list(json_lines(text))
    results: list[TrialResult] = []
    warnings: list[str] = []
    for pos, (lineno, line) in enumerate(numbered):
        try:
            results.append(parse_result(line))
        except ValueError as exc:
            if pos == len(numbered) - 1:
                warnings.append(
                    f"Line {lineno} of {path} is incomplete or damaged ({exc}) and was skipped; "
                    "`ledger-tui eval` on the folder redoes that run."
                )
                break
            raise ResultsError(
                f"Line {lineno} of {path} is damaged: {exc}; repair or remove that line "
                "(`ledger-tui eval` on the folder then redoes that run)."
            ) from None
    return results, warnings


def canonical_ids(results: list[TrialResult], tasks: Iterable[Task]) -> list[TrialResult]:
    """Results recorded under a task's former id, under its id now (a resume does not redo them)."""
    from ledger_tui.engine.agents.tasks import by_name

    named = by_name(tasks)
    for r in results:
        task = named.get(r.task_id)
        if task is not None and task.id != r.task_id:
            r.task_id = task.id
    return results


def load_results(out: Path) -> list[TrialResult]:
    """The runs recorded in `out` (see `read_results_file`; its warnings are left out)."""
    return read_results_file(out)[0]

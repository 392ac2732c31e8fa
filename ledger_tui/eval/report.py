"""Failure analysis: why each failed run failed, and what the ledger and the gate changed.

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

`classify` and `compare_modes` are pure; `build_report` reads a folder (eval output with
`results.jsonl`, or an import-tau2 folder) and `report_lines` / `Report.to_json` present it.
"""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from ledger_tui.engine.domain import Domain
from ledger_tui.engine.errors import LedgerTuiError
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
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.engine.agents.tasks import Action, Task, by_name, load_tasks
from ledger_tui.eval.grade import PASSING_TERMINATIONS, communicated
from ledger_tui.eval.ordering import mode_key, natural_key
from ledger_tui.eval.results import RESULTS, trajectory_files

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


class ReportError(LedgerTuiError):
    """A folder `report` cannot read."""


# ----------------------------------------------------------------------------- classification


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


def attempts(events: Iterable[Event], domain: Domain | None = None) -> list[Attempt]:
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


def _gold_writes(task: Task, domain: Domain | None, seen: list[Attempt]) -> list[Action]:
    def kind(action: Action) -> str:
        if domain is not None:
            k = domain.kind(action.name, action.requestor)
            if k != "unknown":
                return k
        return next((a.kind for a in seen if a.call.name == action.name), "unknown")

    return [a for a in task.gold_actions if kind(a) == "write"]


def _write_findings(seen: list[Attempt], task: Task, domain: Domain | None) -> list[Finding]:
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
    if "COMMUNICATE" not in (criteria.reward_basis or ["DB", "COMMUNICATE"]):
        return []
    said = communicated(criteria.communicate_info or [], events)
    return [Finding(MISSING_FACT, f"{info!r} was never said to the customer") for info, ok in said.items() if not ok]


def _unexplained(termination: str | None, grade: dict[str, Any] | None) -> str:
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
    domain: Domain | None = None,
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
        findings.append(Finding(UNCLASSIFIED, _unexplained(termination, grade)))
    return Classification(tuple(findings))


# ----------------------------------------------------------------------------- runs and comparison


@dataclass
class RunReport:
    domain: str
    task_id: str
    trial: int
    mode: str
    reward: float
    termination: str | None
    trajectory: str
    classification: Classification | None = None  # set for failed runs
    # reads the read gate withheld, or in an imported run would have: another customer's record,
    # or a customer's before anyone was identified (disclosure.py), passed runs included
    disclosures: int = 0

    @property
    def passed(self) -> bool:
        return self.reward >= 1.0 - 1e-6

    @property
    def infrastructure_error(self) -> bool:
        return self.termination == "infrastructure_error"

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "domain": self.domain, "task_id": self.task_id, "trial": self.trial, "mode": self.mode,
            "reward": self.reward, "termination": self.termination, "trajectory": self.trajectory,
        }
        if self.disclosures:
            out["disclosures"] = self.disclosures
        if self.classification is not None:
            out["primary"] = self.classification.primary
            out["classes"] = self.classification.classes
            out["findings"] = [f.to_json() for f in self.classification.findings]
        return out


@dataclass
class ModeOutcome:
    """One task in one mode: runs graded (infrastructure errors left out, as in pass^k), passes."""

    runs: int = 0
    passed: int = 0
    infrastructure_errors: int = 0
    primaries: list[str] = field(default_factory=list)

    @property
    def rate(self) -> float | None:
        return self.passed / self.runs if self.runs else None

    def cell(self) -> str:
        if not self.runs:
            return "infra" if self.infrastructure_errors else "-"
        if self.runs == 1:
            return "pass" if self.passed else "FAIL"
        return f"{self.passed}/{self.runs}"


@dataclass
class TaskComparison:
    domain: str
    task_id: str
    modes: dict[str, ModeOutcome]
    changes: list[str]

    def to_json(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "task_id": self.task_id,
            "modes": {
                m: {"runs": o.runs, "passed": o.passed, "infrastructure_errors": o.infrastructure_errors,
                    "pass_rate": o.rate, "failures": o.primaries}
                for m, o in self.modes.items()
            },
            "changes": self.changes,
        }


def compare_modes(runs: Iterable[RunReport]) -> list[TaskComparison]:
    """Per task, each mode's passes, and what each mode fixed or broke compared with `baseline`.

    A mode *fixed* a task when its pass rate is higher than baseline's, *broke* it when lower
    (with one trial per task: passes where baseline fails, fails where baseline passes).
    """
    table: dict[tuple[str, str], dict[str, ModeOutcome]] = defaultdict(dict)
    for r in runs:
        o = table[(r.domain, r.task_id)].setdefault(r.mode, ModeOutcome())
        if r.infrastructure_error:
            o.infrastructure_errors += 1
        else:
            o.runs += 1
            o.passed += int(r.passed)
        if r.classification is not None and r.classification.primary not in o.primaries:
            o.primaries.append(r.classification.primary)
    out = []
    for (domain, task_id), modes in sorted(table.items(), key=lambda kv: (kv[0][0], natural_key(kv[0][1]))):
        modes = dict(sorted(modes.items(), key=lambda kv: mode_key(kv[0])))
        for o in modes.values():
            o.primaries.sort(key=PRECEDENCE.index)
        changes = []
        base = modes.get("baseline")
        if base is not None and base.rate is not None:
            for mode, o in modes.items():
                if mode == "baseline" or o.rate is None:
                    continue
                if o.rate > base.rate:
                    changes.append(f"fixed by {mode}")
                elif o.rate < base.rate:
                    changes.append(f"broken by {mode}")
        out.append(TaskComparison(domain, task_id, modes, changes))
    return out


@dataclass
class ModeCounts:
    domain: str
    mode: str
    runs: int = 0
    passed: int = 0
    primary: Counter = field(default_factory=Counter)
    any: Counter = field(default_factory=Counter)  # runs showing the class at all

    @property
    def failed(self) -> int:
        return self.runs - self.passed

    @property
    def label(self) -> str:
        return f"{self.domain}/{self.mode}"

    def to_json(self) -> dict[str, Any]:
        return {
            "domain": self.domain, "mode": self.mode, "runs": self.runs, "passed": self.passed, "failed": self.failed,
            "primary": {c: self.primary[c] for c in PRECEDENCE if self.primary[c]},
            "any": {c: self.any[c] for c in PRECEDENCE if self.any[c]},
        }


def count_classes(runs: Iterable[RunReport]) -> list[ModeCounts]:
    groups: dict[tuple[str, str], ModeCounts] = {}
    for r in runs:
        g = groups.setdefault((r.domain, r.mode), ModeCounts(r.domain, r.mode))
        g.runs += 1
        g.passed += int(r.passed)
        if r.classification is not None:
            g.primary[r.classification.primary] += 1
            for c in r.classification.classes:
                g.any[c] += 1
    return [groups[k] for k in sorted(groups, key=lambda k: (k[0], mode_key(k[1])))]


# ----------------------------------------------------------------------------- reading a folder


@dataclass
class Report:
    folder: Path
    source: str  # "eval" (results.jsonl) or "trajectories" (import-tau2, or trajectories alone)
    runs: list[RunReport]
    warnings: list[str] = field(default_factory=list)
    paper: list[Any] = field(default_factory=list)  # the paper's table (eval/paper.py)
    costs: list[Any] = field(default_factory=list)  # token overhead against baseline (eval folders)

    @property
    def failed(self) -> list[RunReport]:
        return [r for r in self.runs if not r.passed]

    def counts(self) -> list[ModeCounts]:
        return count_classes(self.runs)

    def tasks(self) -> list[TaskComparison]:
        return compare_modes(self.runs)

    def to_json(self) -> dict[str, Any]:
        return {
            "folder": str(self.folder),
            "source": self.source,
            "runs": len(self.runs),
            "failed": len(self.failed),
            "precedence": list(PRECEDENCE),
            "counts": [c.to_json() for c in self.counts()],
            "tasks": [t.to_json() for t in self.tasks()],
            "failed_runs": [r.to_json() for r in self.failed],
            "paper": [r.to_json() for r in self.paper],
            "token_overhead": [c.to_json() for c in self.costs],
            "warnings": self.warnings,
        }


class _Tasks:
    """Task lookup per domain: an explicit file, the folder's tasks.json, or the domain's own."""

    def __init__(self, folder: Path, tasks_file: Path | None, warnings: list[str]) -> None:
        self.folder = folder
        self.shared: dict[str, Task] | None = None
        self.warnings = warnings
        self.by_domain: dict[str, dict[str, Task]] = {}
        if tasks_file is not None:
            self.shared = by_name(load_tasks(tasks_file))

    def use_folder_file(self) -> None:
        if self.shared is None and (self.folder / "tasks.json").exists():
            self.shared = by_name(load_tasks(self.folder / "tasks.json"))

    def get(self, domain: str, domain_obj: Domain | None, task_id: str, own_tasks: bool) -> Task | None:
        if self.shared is not None:
            return self.shared.get(task_id)
        if domain not in self.by_domain:
            self.by_domain[domain] = {}
            if own_tasks and domain_obj is not None:
                self.by_domain[domain] = by_name(load_tasks(domain_obj.tasks_path))  # former ids too
            elif not own_tasks:
                self.warnings.append(
                    f"{self.folder} has no tasks.json for the {domain} runs, so they cannot be classified; pass --tasks FILE."
                )
        return self.by_domain[domain].get(task_id)


def _domain(name: str, cache: dict[str, Domain | None], warnings: list[str]) -> Domain | None:
    if name not in cache:
        from ledger_tui.domains import load_domain

        try:
            cache[name] = load_domain(name)
        except LedgerTuiError as exc:
            warnings.append(f"{exc} (runs of {name!r} are classified from the recorded tool kinds)")
            cache[name] = None
    return cache[name]


def _read_events(path: Path, warnings: list[str]) -> list[Event] | None:
    try:
        loaded = read_trajectory(path)
    except LedgerTuiError as exc:
        warnings.append(str(exc))
        return None
    warnings.extend(loaded.warnings)
    return loaded.events


def find_trajectory(folder: Path, recorded: str, domain: str, mode: str, task_id: str, trial: int) -> tuple[Path, bool]:
    """The trajectory a `results.jsonl` line names, looked up inside `folder` only: the recorded
    path read from the folder (`runs/eval/trajectories/…` recorded, `COPY/trajectories/…` read: a
    copied folder reads its own files, never the original's), else where eval puts it. Returns the
    path and whether it exists; a missing one is the in-folder path it should have had."""
    from ledger_tui.eval.outputs import OutputError
    from ledger_tui.eval.trial import trajectory_path

    root = folder.resolve()
    path = Path(recorded)
    parts = path.parts[1:] if path.is_absolute() else path.parts
    candidates = [folder.joinpath(*parts[i:]) for i in range(len(parts))]
    try:
        expected = trajectory_path(folder, domain, mode, task_id, trial)
        candidates.append(expected)
    except (OutputError, TypeError, ValueError):
        expected = folder / "trajectories"
    for candidate in candidates:
        try:
            if candidate.is_file() and candidate.resolve().is_relative_to(root):
                return candidate, True
        except (OSError, ValueError):  # a recorded name too long for the file system, or with a NUL
            continue
    return expected, False


def _eval_runs(folder: Path, tasks: _Tasks, warnings: list[str]) -> tuple[list[RunReport], list[Any]]:
    """The runs of results.jsonl, classified, and the results as recorded."""
    from ledger_tui.eval.results import read_results_file

    runs: list[RunReport] = []
    domains: dict[str, Domain | None] = {}
    results, damaged = read_results_file(folder)
    warnings.extend(damaged)
    for result in results:
        path, exists = find_trajectory(folder, str(result.trajectory), result.domain, result.mode, result.task_id, result.trial)
        run = RunReport(result.domain, result.task_id, result.trial, result.mode, result.reward, result.termination, str(path))
        run.disclosures = result.withheld
        runs.append(run)
        if run.passed:
            continue
        domain = _domain(result.domain, domains, warnings)
        task = tasks.get(result.domain, domain, result.task_id, own_tasks=True)
        events = _read_events(path, warnings) if exists else None
        if not exists:
            warnings.append(
                f"The trajectory of {result.domain} task {result.task_id} ({result.mode}, trial {result.trial}) is not in {folder}: "
                f"{result.trajectory}."
            )
        if events is None:
            run.classification = _without_trajectory(result.termination, result.grade, task is not None)
        else:
            run.classification = classify(events, task, domain, termination=result.termination, grade=result.grade)
    return runs, results


def _without_trajectory(termination: str | None, grade: dict[str, Any] | None, task_known: bool) -> Classification:
    findings = []
    if termination == "infrastructure_error":
        findings.append(Finding(INFRASTRUCTURE, "the run ended in an infrastructure error (model or network), not an agent fault"))
    if termination == "context_window_exceeded":
        findings.append(Finding(CONTEXT_WINDOW, "the prompt outgrew the model's context window, even folded; the run ended there"))
    if not task_known:
        findings.append(Finding(UNKNOWN_TASK, "the task file has no task with this id"))
    if not findings:
        findings.append(Finding(UNCLASSIFIED, "the trajectory could not be read; " + _unexplained(termination, grade)))
    return Classification(tuple(findings))


_NAME = re.compile(r"^task-(?P<task>.+?)-trial-(?P<trial>\d+)")


def _trajectory_runs(folder: Path, tasks: _Tasks, warnings: list[str]) -> list[RunReport]:
    files = trajectory_files(folder)
    if not files:
        raise ReportError(
            f"{folder} holds neither {RESULTS} nor trajectories (*.jsonl); pass an `ledger-tui eval` output folder or an `import-tau2` folder."
        )
    tasks.use_folder_file()
    runs: list[RunReport] = []
    domains: dict[str, Domain | None] = {}
    for path in files:
        events = _read_events(path, warnings)
        if events is None:
            continue
        started = events[0] if events and events[0].type == "session_started" else None
        ended = next((e for e in reversed(events) if isinstance(e, SessionEnded)), None)
        if ended is None or ended.reward is None:
            warnings.append(f"{path.name} records no reward (no graded session_ended event), so it is left out; it may have been cut short.")
            continue
        name = _NAME.match(path.name)
        task_id = started.task_id if started is not None and started.task_id else (name["task"] if name else path.stem)
        trial = int(name["trial"]) if name else 0
        domain_name = started.domain if started is not None else "unknown"
        mode = started.mode if started is not None else "unknown"
        run = RunReport(domain_name, task_id, trial, mode, ended.reward, ended.termination, str(path))
        run.disclosures = sum(1 for e in events if isinstance(e, GateDecided) and e.decision.category() == "disclosure")
        runs.append(run)
        if run.passed:
            continue
        domain = _domain(domain_name, domains, warnings)
        task = tasks.get(domain_name, domain, task_id, own_tasks=mode != "imported")
        run.classification = classify(events, task, domain)
    return runs


def build_report(folder: Path | str, tasks_file: Path | str | None = None) -> Report:
    """Classify every failed run of an eval output folder or an import-tau2 folder.

    Eval folders (with results.jsonl) take rewards and modes from it, tasks from `tasks_file` or
    each domain's own tasks.json. Other folders take them from each trajectory's events (mode
    "imported" for import-tau2), tasks from `tasks_file` or the folder's tasks.json.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ReportError(f"{folder} is not a folder; pass an `ledger-tui eval` output folder or an `import-tau2` folder.")
    warnings: list[str] = []
    tasks = _Tasks(folder, Path(tasks_file) if tasks_file is not None else None, warnings)
    results: list[Any] = []  # an eval folder's recorded results (their tokens give the overhead)
    if (folder / RESULTS).is_file():
        runs, results = _eval_runs(folder, tasks, warnings)
        source = "eval"
    else:
        runs = _trajectory_runs(folder, tasks, warnings)
        source = "trajectories"
    if not runs:
        raise ReportError(f"{folder} holds no graded runs; run `ledger-tui eval` into it or `ledger-tui import-tau2 --out {folder}` first.")
    unknown = sorted({r.task_id for r in runs if r.classification is not None and UNKNOWN_TASK in r.classification.classes}, key=natural_key)
    if unknown:
        shown = ", ".join(unknown[:5]) + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        where = tasks_file if tasks_file is not None else "the task file used"
        warnings.append(f"{len(unknown)} task id(s) of failed runs are not in {where} ({shown}); pass the tasks they were run on with --tasks FILE.")
    report = Report(folder, source, runs, warnings)
    report.paper, report.costs = _paper(source, runs, results, tasks)
    return report


def _paper(source: str, runs: list[RunReport], results: list[Any], tasks: _Tasks) -> tuple[list[Any], list[Any]]:
    """The paper's table over the runs (tasks with a write told from their gold actions) and, for
    an eval folder, each mode's token overhead against baseline."""
    from ledger_tui.eval import paper

    domains: dict[str, Domain | None] = {}
    writes: dict[str, set[str]] = {}
    for name, task_id in {(r.domain, r.task_id) for r in runs}:
        domain = _domain(name, domains, [])
        task = tasks.get(name, domain, task_id, own_tasks=source == "eval")
        if domain is not None and task is not None and paper.write_task_ids(domain, [task]):
            writes.setdefault(name, set()).add(task_id)
    return paper.rows(runs, writes), paper.overheads(results)


# ----------------------------------------------------------------------------- presentation


def _cell(primary: int, any_: int) -> str:
    if not any_:
        return "-"
    return str(primary) if primary == any_ else f"{primary} ({any_})"


WIDTH = 80  # what the tables fit in unless --wide


def class_table(counts: list[ModeCounts], wide: bool = False) -> list[str]:
    """Classes down, domain/mode across: primary count, with runs showing the class at all in brackets.

    Unless `wide`, a table that would pass 80 columns is split into one table per domain."""
    if not counts:
        return []
    domains = list(dict.fromkeys(c.label.split("/")[0] for c in counts))
    classes = [cls for cls in PRECEDENCE if any(c.any[cls] for c in counts)]
    first = max(len("failed"), *(len(cls) for cls in classes)) + 2 if classes else 8
    if not wide and len(domains) == 1:
        labels = [c.label.split("/", 1)[-1] for c in counts]
    else:
        labels = [c.label for c in counts]
    width = max(8, *(len(label) + 2 for label in labels))
    if not wide and first + width * len(counts) > WIDTH and len(domains) > 1:
        lines: list[str] = []
        for d in domains:
            lines += ([""] if lines else []) + class_table([c for c in counts if c.label.split("/")[0] == d])
        return lines
    title = f"{domains[0]}: " if len(domains) == 1 and labels[0] != counts[0].label else ""
    head = f"{title + 'class':<{first}}" + "".join(f"{label:>{width}}" for label in labels)
    lines = [head, "-" * len(head)]
    lines.append(f"{'runs':<{first}}" + "".join(f"{c.runs:>{width}}" for c in counts))
    lines.append(f"{'failed':<{first}}" + "".join(f"{c.failed:>{width}}" for c in counts))
    for cls in classes:
        lines.append(f"{cls:<{first}}" + "".join(f"{_cell(c.primary[cls], c.any[cls]):>{width}}" for c in counts))
    return lines


def class_bars(counts: list[ModeCounts], width: int = 30) -> list[str]:
    """One bar per primary class per domain/mode, on one scale so modes compare by eye."""
    top = max((n for c in counts for n in c.primary.values()), default=0)
    if not top:
        return ["no failed runs"]
    lines = []
    for c in counts:
        lines.append(f"{c.label}  ({c.failed} failed of {c.runs})")
        for cls in PRECEDENCE:
            n = c.primary[cls]
            if n:
                bar = "#" * max(1, round(n / top * width))
                lines.append(f"  {cls:<28} {bar:<{width}} {n}")
    return lines


def task_lines(comparisons: list[TaskComparison], wide: bool = False) -> list[str]:
    """Passes per task and mode. Unless `wide`, rows fit 80 columns: a long task name ends in "…"
    and the change against baseline goes on its own line when the row has no room for it."""
    if not comparisons:
        return []
    modes = sorted({m for t in comparisons for m in t.modes}, key=mode_key)
    several = len({t.domain for t in comparisons}) > 1
    names = [f"{t.domain}/{t.task_id}" if several else t.task_id for t in comparisons]
    column = max(9, *(len(m) + 2 for m in modes))
    width = max(6, *(len(n) for n in names)) + 2
    width = width if wide else max(12, min(width, 42, WIDTH - column * len(modes)))
    compare = "baseline" in modes and len(modes) > 1
    head = f"{'task':<{width}}" + "".join(f"{m:>{column}}" for m in modes)
    inline = compare and (wide or len(head) + 3 + len("change against baseline") <= WIDTH)
    if inline:
        head += "   change against baseline"
    lines = [head, "-" * len(head)]
    if compare and not inline:
        lines.insert(0, "(a task without an 'against baseline' line passed as often as in baseline)")
    for name, t in zip(names, comparisons):
        shown = name if len(name) <= width - 2 else name[: width - 3] + "…"
        row = f"{shown:<{width}}" + "".join(f"{(t.modes[m].cell() if m in t.modes else '-'):>{column}}" for m in modes)
        change = ", ".join(t.changes) or "same"
        if compare and (wide or len(row) + 3 + len(change) <= WIDTH):
            row += "   " + change
        elif compare and change != "same":
            lines.append(row.rstrip())
            row = f"    against baseline: {change}"
        lines.append(row.rstrip())
        for m, o in t.modes.items():
            if o.primaries:
                lines.append(f"    {m}: {', '.join(o.primaries)}")
    return lines


def report_lines(report: Report, wide: bool = False) -> list[str]:
    kind = "eval output" if report.source == "eval" else "trajectories"
    from ledger_tui.explain import plural

    lines = [f"report    {report.folder}  ({kind}: {len(report.runs)} runs, {len(report.failed)} failed)"]
    disclosing = [r for r in report.runs if r.disclosures]
    if disclosing:
        imported = all(r.mode == "imported" for r in disclosing)
        lines.append(
            f"disclosure  {plural(sum(r.disclosures for r in disclosing), 'read')} of a record not the identified customer's, "
            f"in {plural(len(disclosing), 'run')}"
        )
        lines.append(
            f"            ({'seen by the recorded agent, withheld in gated modes' if imported else 'withheld from the model'}: "
            "`why FILE`)"
        )
    lines.append("")
    counts = report.counts()
    lines.append("failed runs by primary class (in brackets: runs showing the class at all)")
    lines += class_table(counts, wide)
    lines += ["", "primary class of failed runs"]
    lines += class_bars(counts)
    tasks = report.tasks()
    modes = {m for t in tasks for m in t.modes}
    against = ", what changed against baseline" if "baseline" in modes and len(modes) > 1 else ""
    lines += ["", f"per task: passes by mode{against}; failed modes' classes"]
    lines += task_lines(tasks, wide)
    from ledger_tui.eval import paper

    table = paper.table(report.paper, report.costs)
    if table:
        lines += ["", *table]
    return lines


def _print(text: str, err: bool = False) -> None:
    import sys

    from ledger_tui.engine.outside import shown

    print(shown(text), file=sys.stderr if err else sys.stdout)


def report_command(
    folder: Path,
    tasks_file: Path | None = None,
    json_out: Path | None = None,
    echo: Callable[..., None] = _print,
    wide: bool = False,
) -> Report:
    """`ledger-tui report`: warnings (to stderr), the tables and chart, then the JSON file."""
    report = build_report(folder, tasks_file)
    for w in report.warnings:
        echo(f"warning: {w}", err=True)
    for line in report_lines(report, wide):
        echo(line)
    path = Path(json_out) if json_out is not None else Path(folder) / "report.json"
    if json_out is None:
        from ledger_tui.eval.folder_lock import writer_of

        writer = writer_of(Path(folder))
        if writer is not None:  # the figures above are of the runs written so far
            echo(f"\nnote: {folder} is being written by {writer}: the report above is of the runs so far; "
                 f"{path.name} is not rewritten (run report again when it has finished, or pass --json).", err=True)
            return report
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report.to_json(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"Cannot write the report to {path} ({exc.strerror}); pass another file with --json.") from None
    echo(f"\njson      {path}")
    return report

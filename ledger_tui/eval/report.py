"""`ledger-tui report`: read a folder of runs (an eval output folder with `results.jsonl`, or an
import-tau2 folder), classify every failed run (`ledger_tui.eval.taxonomy`; an eval folder's runs as
recorded when they were written, `ledger_tui.eval.recorded`, while their trajectories, tasks and
tools are what they were then), compare the modes
(`ledger_tui.eval.comparison`), print the tables (`ledger_tui.eval.report_tables`) and write
`report.json`.

Running it again on the same folder gives the same report: nothing is re-run and no model is asked.
"""

from __future__ import annotations

import gc
import json
import math
import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field
from json.encoder import encode_basestring  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any, Callable, Iterator

from ledger_tui.engine.domain import ToolKinds
from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.events import Event, GateDecided, SessionEnded
from ledger_tui.engine.store.reading import read_bytes
from ledger_tui.engine.agents.tasks import Task, by_name, load_tasks
from ledger_tui.eval.ordering import natural_key
from ledger_tui.eval.results import RESULTS, trajectory_files
from ledger_tui.eval.recorded import Recorded
from ledger_tui.eval.comparison import ModeCounts, RunReport, TaskComparison, compare_modes, count_classes
from ledger_tui.eval.report_tables import report_lines
from ledger_tui.eval.taxonomy import (
    CONTEXT_WINDOW, INFRASTRUCTURE, PRECEDENCE, UNCLASSIFIED, UNKNOWN_TASK, Classification, Finding, classify, unexplained,
)


class ReportError(LedgerTuiError):
    """A folder `report` cannot read."""


@dataclass
class Report:
    folder: Path
    source: str  # "eval" (results.jsonl) or "trajectories" (import-tau2, or trajectories alone)
    runs: list[RunReport]
    warnings: list[str] = field(default_factory=list)
    paper: list[Any] = field(default_factory=list)  # the paper's table (eval/paper.py)
    costs: list[Any] = field(default_factory=list)  # token overhead against baseline (eval folders)
    # the counts and the comparison, made once: the tables and the JSON both show them
    _made: dict[str, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    @property
    def failed(self) -> list[RunReport]:
        return [r for r in self.runs if not r.passed]

    def counts(self) -> list[ModeCounts]:
        if "counts" not in self._made:
            self._made["counts"] = count_classes(self.runs)
        return self._made["counts"]

    def tasks(self) -> list[TaskComparison]:
        if "tasks" not in self._made:
            self._made["tasks"] = compare_modes(self.runs)
        return self._made["tasks"]

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

    def get(self, domain: str, domain_obj: ToolKinds | None, task_id: str, own_tasks: bool) -> Task | None:
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


def _domain(name: str, cache: dict[str, ToolKinds | None], warnings: list[str]) -> ToolKinds | None:
    """What the report takes from a domain, its tool kinds: a shipped domain's from its table, so
    that it is not built (`ledger_tui.domains.kinds`)."""
    if name not in cache:
        from ledger_tui.domains.kinds import tool_kinds

        try:
            cache[name] = tool_kinds(name)
        except LedgerTuiError as exc:
            warnings.append(f"{exc} (runs of {name!r} are classified from the recorded tool kinds)")
            cache[name] = None
    return cache[name]


def _read_events(path: Path, warnings: list[str]) -> list[Event] | None:
    # the reader (and the asyncio its writer needs) only when a trajectory is read: a folder whose
    # failed runs were classified when they were written reads none
    from ledger_tui.engine.store.trajectories import read_trajectory

    try:
        loaded = read_trajectory(path)
    except LedgerTuiError as exc:
        warnings.append(str(exc))
        return None
    warnings.extend(loaded.warnings)
    return loaded.events


def _bytes(path: Path) -> bytes | None:
    """A trajectory's bytes, None if they cannot be read (reading it then says why, in one sentence)."""
    try:
        return read_bytes(path, LedgerTuiError, "")
    except LedgerTuiError:
        return None


class TrajectoryFinder:
    """The trajectories a folder's `results.jsonl` names, looked up inside the folder only: the
    recorded path read from the folder (`runs/eval/trajectories/…` recorded, `COPY/trajectories/…`
    read: a copied folder reads its own files, never the original's), else where eval puts it.
    Each directory is looked up once, not once a file: a thousand runs share a few. A recorded
    path's tails are tried longest first, and one whose folder is not a folder in this one names no
    file here: it is passed over without looking for the file (`/home/x/runs/eval/trajectories/…`
    costs one look-up a file, not five)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        root = os.path.realpath(folder)
        self._root_prefix = root if root.endswith(os.sep) else root + os.sep
        self._real_dirs: dict[str, str] = {}
        self._dirs: dict[tuple[str, ...], bool] = {}

    def _is_dir(self, parts: tuple[str, ...]) -> bool:
        """Whether the folder's `parts` (a recorded path's folders, a tail of them) is a folder."""
        known = self._dirs.get(parts)
        if known is None:
            known = self._dirs[parts] = os.path.isdir(os.path.join(self.folder, *parts))
        return known

    def _inside(self, path: str) -> bool:
        """Whether the file at `path` really lies inside the folder: no `..` or symlink leads out."""
        if os.path.islink(path):
            real = os.path.realpath(path)
        else:
            folder, name = os.path.split(path)
            real_dir = self._real_dirs.get(folder)
            if real_dir is None:
                real_dir = self._real_dirs[folder] = os.path.realpath(folder)
            real = os.path.join(real_dir, name)
        return real.startswith(self._root_prefix)

    def _found(self, candidate: str) -> bool:
        try:
            return os.path.isfile(candidate) and self._inside(candidate)
        except (OSError, ValueError):  # a recorded name too long for the file system, or with a NUL
            return False

    def find(self, recorded: str, domain: str, mode: str, task_id: str, trial: int) -> tuple[Path, bool]:
        """The path of one line's trajectory and whether it exists; a missing one is the in-folder
        path it should have had."""
        # the recorded path's names, as `Path(recorded).parts` less its root: a thousand runs
        # make no thousand paths
        parts = tuple(name for name in recorded.split(os.sep) if name and name != ".")
        for i in range(len(parts)):
            if i < len(parts) - 1 and not self._is_dir(parts[i:-1]):
                continue  # no file lies in a folder that is not there
            candidate = os.path.join(self.folder, *parts[i:])
            if self._found(candidate):
                return Path(candidate), True
        # only when the recorded path is not in the folder: where eval puts it (the trial, which
        # knows, imports the whole engine: a report that finds its files never loads it)
        from ledger_tui.eval.outputs import OutputError
        from ledger_tui.eval.trial import trajectory_path

        try:
            expected = trajectory_path(self.folder, domain, mode, task_id, trial)
        except (OutputError, TypeError, ValueError):
            return self.folder / "trajectories", False
        return expected, self._found(str(expected))


def _eval_runs(folder: Path, tasks: _Tasks, warnings: list[str]) -> tuple[list[RunReport], list[Any]]:
    """The runs of results.jsonl, classified, and the results as recorded."""
    from ledger_tui.eval.results import read_results_file

    runs: list[RunReport] = []
    domains: dict[str, ToolKinds | None] = {}
    results, damaged = read_results_file(folder)
    warnings.extend(damaged)
    finder = TrajectoryFinder(folder)
    recorded = Recorded()
    for result in results:
        path, exists = finder.find(str(result.trajectory), result.domain, result.mode, result.task_id, result.trial)
        run = RunReport(result.domain, result.task_id, result.trial, result.mode, result.reward, result.termination, str(path))
        run.disclosures = result.withheld
        runs.append(run)
        if run.passed:
            continue
        domain = _domain(result.domain, domains, warnings)
        task = tasks.get(result.domain, domain, result.task_id, own_tasks=True)
        if exists and result.failure is not None:  # classified when it was written: kept if nothing changed since
            data = _bytes(path)
            run.classification = recorded.classification(result.failure, data, task, domain) if data is not None else None
            if run.classification is not None:
                continue
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
        findings.append(Finding(UNCLASSIFIED, "the trajectory could not be read; " + unexplained(termination, grade)))
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
    domains: dict[str, ToolKinds | None] = {}
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

    domains: dict[str, ToolKinds | None] = {}
    writes: dict[str, set[str]] = {}
    for name, task_id in {(r.domain, r.task_id) for r in runs}:
        domain = _domain(name, domains, [])
        task = tasks.get(name, domain, task_id, own_tasks=source == "eval")
        if domain is not None and task is not None and paper.write_task_ids(domain, [task]):
            writes.setdefault(name, set()).add(task_id)
    return paper.rows(runs, writes), paper.overheads(results)


def indented_json(value: Any) -> str:
    """`json.dumps(value, indent=1, ensure_ascii=False)`, the same text, faster: json lays out an
    indented document in Python, a generator a container (14 ms for the 500 KB of a 1,000-run
    report.json, 9 ms here). Strings, exact ints, finite floats, booleans and None are written as
    json writes them, and dicts with string keys and lists and tuples laid out as it lays them out;
    anything else (an empty container, a NaN, a subclass, a key that is not a string) is json's own
    text, indented to its place. tests/eval/test_report_json.py holds both to the same text."""
    out: list[str] = []
    _put(value, "\n", out)
    return "".join(out)


def _put(value: Any, newline: str, out: list[str]) -> None:
    kind = type(value)
    if kind is str:
        out.append(encode_basestring(value))
    elif kind is int:
        out.append(int.__repr__(value))
    elif kind is dict and value and all(type(k) is str for k in value):
        inner, before = newline + " ", "{"
        for k, v in value.items():
            out += (before, inner, encode_basestring(k), ": ")
            _put(v, inner, out)
            before = ","
        out.append(newline + "}")
    elif (kind is list or kind is tuple) and value:
        inner, before = newline + " ", "["
        for v in value:
            out += (before, inner)
            _put(v, inner, out)
            before = ","
        out.append(newline + "]")
    elif value is None or value is True or value is False:
        out.append("null" if value is None else "true" if value else "false")
    elif kind is float and math.isfinite(value):
        out.append(float.__repr__(value))
    else:
        out.append(json.dumps(value, indent=1, ensure_ascii=False).replace("\n", newline))


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
    with _imported_objects_set_aside():
        return _report_command(folder, tasks_file, json_out, echo, wide)


@contextmanager
def _imported_objects_set_aside() -> Iterator[None]:
    """The objects that exist when the report starts (the modules imported, their classes and
    schemas: most of a cold process's) kept out of the cyclic garbage collector's scans while it
    runs (`gc.freeze`), and given back after (`gc.unfreeze`). The report makes many objects (runs,
    findings, table cells), which start collections; the oldest generation's would walk every
    imported object again (about 24 ms of CPU of a 1,000-run report). New objects are collected
    as before."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()


def _report_command(folder: Path, tasks_file: Path | None, json_out: Path | None, echo: Callable[..., None], wide: bool) -> Report:
    report = build_report(folder, tasks_file)
    for w in report.warnings:
        echo(f"warning: {w}", err=True)
    echo("\n".join(report_lines(report, wide)))  # one write, not one (flushed) a line
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
        path.write_text(indented_json(report.to_json()) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ReportError(f"Cannot write the report to {path} ({exc.strerror}); pass another file with --json.") from None
    echo(f"\njson      {path}")
    return report

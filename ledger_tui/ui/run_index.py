"""The runs of an evaluation folder as rows to browse, and the filter and order an operator picks.

Loading comes from `ledger_tui.eval.report` and failure classes from `ledger_tui.eval.taxonomy` (one
classification, shared with `ledger-tui report`); this module only adds what a list needs on top: the gate's verdict counts
per run (from results.jsonl for eval folders, from the trajectory for import-tau2 folders), its
stops split into violations and needs-a-read (from the trajectory, read only when it has a stop),
and a pure `RunFilter` (which rows, in which order) the browse screen keeps while a run is open.

No `textual` here: the index and the filter are plain data and tested without a screen.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Iterable, get_args

from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.events import Category, GateDecided
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.eval.ordering import mode_key, natural_key

if TYPE_CHECKING:  # (the report and the taxonomy load with a folder: `replay` opens without them)
    from ledger_tui.eval.taxonomy import Finding

SHORT_CLASS = {
    "missed required write": "missed write",
    "wrong arguments": "wrong args",
    "extra or unauthorized write": "extra write",
    "gate stop: violation": "gate violation",
    "gate stop: needs a read": "gate: read",
    "gate stop: inferred from text": "gate: text",
    "missing communicated fact": "missing fact",
    "transfer to a human": "transfer",
    "infrastructure error": "infra error",
    "context window exceeded": "context full",
    "unknown task": "unknown task",
    "unclassified": "unclassified",
}
SORTS = ("task", "reward", "class", "gate")
SORT_HELP = {
    "task": "task, then trial and mode",
    "reward": "failed runs first",
    "class": "primary failure class, most serious first",
    "gate": "most violations, then most stops inferred from text, then most needs-a-read stops first",
}


class BrowseError(LedgerTuiError):
    """A folder `browse` cannot list."""


@dataclass(frozen=True)
class RunRow:
    """One run as the list shows it."""

    domain: str
    task_id: str
    trial: int
    mode: str
    reward: float
    termination: str
    trajectory: Path
    primary: str | None = None  # failed runs only
    findings: tuple[Finding, ...] = ()
    allow: int = 0
    revise: int = 0
    block: int = 0
    violations: int = 0  # the REVISEs and BLOCKs that were violations…
    needs_read: int = 0  # …those that only needed a read…
    inferred: int = 0  # …and those the free-text reader decided

    @property
    def key(self) -> str:
        return f"{self.domain}/{self.mode}/{self.task_id}/{self.trial}/{self.trajectory.name}"

    @property
    def passed(self) -> bool:
        return self.reward >= 1.0 - 1e-6

    @property
    def gate_flagged(self) -> bool:
        """The gate said (or, for imported runs, would have said) REVISE or BLOCK at least once."""
        return bool(self.revise or self.block)


@dataclass
class RunIndex:
    folder: Path
    source: str  # "eval" or "trajectories" (import-tau2)
    rows: list[RunRow]
    warnings: list[str] = field(default_factory=list)

    @property
    def domains(self) -> list[str]:
        return sorted({r.domain for r in self.rows})

    @property
    def modes(self) -> list[str]:
        return sorted({r.mode for r in self.rows}, key=mode_key)

    @property
    def classes(self) -> list[str]:
        from ledger_tui.eval.taxonomy import PRECEDENCE

        present = {r.primary for r in self.rows if r.primary}
        return [c for c in PRECEDENCE if c in present]

    def relative(self, path: Path) -> str:
        """`path` as the operator would type it from the folder (short, and the same on every machine)."""
        try:
            return str(path.resolve().relative_to(self.folder.resolve()))
        except ValueError:
            return str(path)


GateCounts = dict[str, int]  # allow, revise, block (verdicts); allowed, violation, needs_read (kinds)


_COUNTED = ("allow", "revise", "block", *get_args(Category))  # the verdicts, then each kind of decision


def _counts_from_events(path: Path) -> GateCounts:
    counts = dict.fromkeys(_COUNTED, 0)
    try:
        events = read_trajectory(path).events
    except LedgerTuiError:
        return counts  # the report already warned about this file
    for e in events:
        if isinstance(e, GateDecided):
            if e.decision.held():  # asked on a card: counted among the cards, not the verdicts
                counts["consent"] += 1
                continue
            category = e.decision.category()
            if category != "disclosure":  # a read the read gate withholds is no write's verdict
                counts[e.decision.verdict.value.lower()] += 1
            counts[category] += 1
    return counts


def _counts_from_results(folder: Path) -> dict[tuple[str, str, int, str], tuple[int, int, int]]:
    from ledger_tui.eval.results import load_results

    return {(r.domain, r.task_id, r.trial, r.mode): (r.allow, r.revise, r.block) for r in load_results(folder)}


def load_runs(folder: Path | str) -> RunIndex:
    """Every graded run of an eval output folder or an import-tau2 folder, classified when failed."""
    folder = Path(folder)
    if not folder.exists():
        raise BrowseError(f"{folder} does not exist; pass the --out folder of `ledger-tui eval` or `ledger-tui import-tau2`.")
    from ledger_tui.eval.report import build_report

    report = build_report(folder)
    counts = _counts_from_results(folder) if report.source == "eval" else {}
    rows = []
    for run in report.runs:
        path = Path(run.trajectory)  # found inside the folder by the report (a copied folder reads its own)
        if report.source == "eval":
            allow, revise, block = counts.get((run.domain, run.task_id, run.trial, run.mode), (0, 0, 0))
            kinds = _counts_from_events(path) if revise or block else dict.fromkeys(_COUNTED, 0)
        else:
            kinds = _counts_from_events(path)
            allow, revise, block = kinds["allow"], kinds["revise"], kinds["block"]
        c = run.classification
        rows.append(
            RunRow(
                domain=run.domain,
                task_id=run.task_id,
                trial=run.trial,
                mode=run.mode,
                reward=run.reward,
                termination=run.termination or "",
                trajectory=path,
                primary=c.primary if c is not None else None,
                findings=c.findings if c is not None else (),
                allow=allow,
                revise=revise,
                block=block,
                violations=kinds["violation"],
                needs_read=kinds["needs_read"],
                inferred=kinds["inferred"],
            )
        )
    return RunIndex(folder, report.source, rows, list(report.warnings))


# ----------------------------------------------------------------------------- filter and order


@dataclass(frozen=True)
class RunFilter:
    """Which runs the list shows and in which order; `apply` is pure."""

    failed_only: bool = False
    gate_flagged: bool = False
    cls: str | None = None
    domain: str | None = None
    mode: str | None = None
    sort: str = "task"

    def apply(self, rows: Iterable[RunRow]) -> list[RunRow]:
        shown = [
            r
            for r in rows
            if (not self.failed_only or not r.passed)
            and (not self.gate_flagged or r.gate_flagged)
            and (self.cls is None or r.primary == self.cls)
            and (self.domain is None or r.domain == self.domain)
            and (self.mode is None or r.mode == self.mode)
        ]
        return sorted(shown, key=self._key)

    def _key(self, r: RunRow) -> tuple:
        by_task = (r.domain, natural_key(r.task_id), r.trial, mode_key(r.mode), r.trajectory.name)
        if self.sort == "reward":
            return (r.reward, *by_task)
        if self.sort == "class":
            from ledger_tui.eval.taxonomy import PRECEDENCE

            rank = PRECEDENCE.index(r.primary) if r.primary in PRECEDENCE else len(PRECEDENCE)
            return (rank, *by_task)
        if self.sort == "gate":
            return (-r.violations, -r.inferred, -r.needs_read, *by_task)
        return by_task

    @property
    def active(self) -> bool:
        return self.failed_only or self.gate_flagged or any(x is not None for x in (self.cls, self.domain, self.mode))

    def describe(self) -> list[str]:
        """The filters in force, in words (for the header line)."""
        parts = []
        if self.failed_only:
            parts.append("failed only")
        if self.gate_flagged:
            parts.append("gate flagged")
        if self.cls:
            parts.append(f"class: {self.cls}")
        if self.domain:
            parts.append(f"domain: {self.domain}")
        if self.mode:
            parts.append(f"mode: {self.mode}")
        return parts

    def cleared(self) -> "RunFilter":
        return RunFilter(sort=self.sort)

    def with_(self, **changes: object) -> "RunFilter":
        return replace(self, **changes)  # type: ignore[arg-type]


def cycle(value: str | None, choices: list[str]) -> str | None:
    """The next of `choices` after `value`, then None (all), then the first again."""
    options: list[str | None] = [None, *choices]
    try:
        return options[(options.index(value) + 1) % len(options)]
    except ValueError:
        return None

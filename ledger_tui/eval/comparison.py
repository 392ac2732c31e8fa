"""Runs side by side: each run's outcome (`RunReport`), per task what each mode passed and what
it fixed or broke against baseline (`compare_modes`), and per domain and mode how many failed
runs each class explains (`count_classes`). Pure: the report builds them from a folder and the
tables print them."""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from ledger_tui.eval.ordering import mode_key, natural_key
from ledger_tui.eval.taxonomy import PRECEDENCE, Classification


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

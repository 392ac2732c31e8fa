"""The comparisons the LedgerAgent paper reports, from an evaluation's runs.

- **pass^1, pass^4 and their average** per domain and mode, for all tasks, for the tasks whose gold
  actions include a write, and for the rest. pass^4 needs at least four trials of every task of the
  row; with fewer it is "—", and so is the average.
- **Token overhead** of each mode against `baseline`: summed prompt + completion tokens (helper
  calls included, when a mode makes them) over the (domain, task, trial) runs finished in both
  the mode and baseline, as a ratio to baseline's. Runs stopped by an infrastructure error are
  left out on both sides, as they are of pass^k.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass
from typing import Any, Iterable, Mapping

from ledger_tui.eval.passk import pass_k_curve
from ledger_tui.eval.ordering import mode_key

SUBSETS = ("all", "write", "no write")


@dataclass(frozen=True)
class PaperRow:
    domain: str
    mode: str
    subset: str  # all | write (tasks whose gold actions include a write) | no write
    tasks: int
    pass_1: float | None
    pass_4: float | None  # None: fewer than 4 trials of some task
    average: float | None  # (pass^1 + pass^4) / 2

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Overhead:
    mode: str
    pairs: int  # runs finished in both this mode and baseline
    tokens: int
    baseline_tokens: int

    @property
    def ratio(self) -> float | None:
        return self.tokens / self.baseline_tokens if self.baseline_tokens else None

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "ratio": self.ratio}


def tokens(run: Any) -> int:
    """A run's prompt + completion tokens, its helper calls' included."""
    return sum(int(getattr(run, name, 0) or 0) for name in ("prompt_tokens", "completion_tokens", "helper_prompt_tokens", "helper_completion_tokens"))


def rows(runs: Iterable[Any], write_tasks: Mapping[str, set[str]]) -> list[PaperRow]:
    """One row per domain, mode and subset that has tasks. `write_tasks`: per domain, the ids of
    the tasks whose gold actions include a write."""
    outcomes: dict[tuple[str, str], dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for r in runs:
        if r.infrastructure_error:
            continue
        outcomes[(r.domain, r.mode)][r.task_id].append(r.passed)
    out = []
    for domain, mode in sorted(outcomes, key=lambda dm: (dm[0], mode_key(dm[1]))):
        by_task = outcomes[(domain, mode)]
        writes = write_tasks.get(domain, set())
        for subset in SUBSETS:
            chosen = {
                t: v for t, v in by_task.items()
                if subset == "all" or (subset == "write") == (t in writes)
            }
            if not chosen:
                continue
            curve = pass_k_curve(chosen)
            p1, p4 = curve.get(1), curve.get(4)
            out.append(PaperRow(domain, mode, subset, len(chosen), p1, p4, None if p1 is None or p4 is None else (p1 + p4) / 2))
    return out


def overheads(runs: Iterable[Any]) -> list[Overhead]:
    """Each mode's tokens against baseline's, over the runs finished in both."""
    done: dict[str, dict[tuple[str, str, int], int]] = defaultdict(dict)
    for r in runs:
        if not r.infrastructure_error:
            done[r.mode][(r.domain, r.task_id, r.trial)] = tokens(r)
    base = done.get("baseline")
    if not base:
        return []
    out = []
    for mode in sorted((m for m in done if m != "baseline"), key=mode_key):
        pairs = [k for k in done[mode] if k in base]
        out.append(Overhead(mode, len(pairs), sum(done[mode][k] for k in pairs), sum(base[k] for k in pairs)))
    return out


def _cell(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def table(paper: list[PaperRow], costs: list[Overhead], compact: bool | None = None) -> list[str]:
    """The paper's table (80 columns) and the token overhead against baseline."""
    if not paper:
        return []
    head = f"{'domain':<12}{'mode':<10}{'tasks':<18}{'pass^1':>8}{'pass^4':>8}{'average':>9}"
    lines = ["the paper's metrics: pass^1, pass^4 and their average", head, "-" * len(head)]
    for r in paper:
        what = {"all": "all", "write": "with a write", "no write": "no write"}[r.subset]
        lines.append(f"{r.domain:<12}{r.mode:<10}{f'{what} ({r.tasks})':<18}{_cell(r.pass_1):>8}{_cell(r.pass_4):>8}{_cell(r.average):>9}")
    if any(r.pass_4 is None for r in paper):
        lines.append("— : pass^4 needs at least 4 trials of every task (--trials 4)")
    if costs:
        flag = "" if compact is None else (" (with --compact)" if compact else " (without --compact)")
        lines += ["", f"token overhead against baseline{flag}", "(prompt + completion tokens, helper calls included)"]
        for c in costs:
            if not c.pairs:
                lines.append(f"  {c.mode:<10} no run finished in both this mode and baseline")
            elif c.ratio is None:
                lines.append(f"  {c.mode:<10} no tokens in baseline's {c.pairs} runs (the gold agent calls no model)")
            else:
                lines.append(f"  {c.mode:<10} {c.ratio - 1:+.1%}  ({c.tokens:,} against {c.baseline_tokens:,} tokens, {c.pairs} runs in both)")
    return lines


def write_task_ids(domain: Any, tasks: Iterable[Any]) -> set[str]:
    """The tasks whose gold actions include a write of the agent's or the customer's."""
    out = set()
    for t in tasks:
        for a in t.gold_actions:
            requestor = getattr(a, "requestor", "assistant") or "assistant"
            if domain.kind(a.name, "user" if requestor == "user" else "assistant") == "write":
                out.add(t.id)
                break
    return out

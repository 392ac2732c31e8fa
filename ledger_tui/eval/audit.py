"""`ledger-tui audit`: per task and overall, the recorded writes of a folder's runs (import-tau2
or eval) the gate would have allowed, judged a violation, inferred from text, or stopped only to
ask for a read, crossed with each run's recorded reward."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

from ledger_tui.engine.disclosure import disclosed, said_after
from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.events import (
    CATEGORY_LABELS,
    GateDecided,
    GateDecision,
    SessionEnded,
)
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.eval.results import trajectory_files
from ledger_tui.eval.tau2_results import Tau2Error


# audit columns, in order: ledger violations and what the free-text reader inferred stay apart
KINDS = ("allowed", "violation", "inferred", "needs_read")
UNKNOWN_TASK = "(unknown task)"
_WORST = {"allowed": 0, "needs_read": 1, "inferred": 2, "violation": 3}


@dataclass
class AuditRow:
    task_id: str
    runs: int = 0
    passed: int = 0
    # recorded writes by what the gate would have said: allowed, a violation, inferred from the
    # conversation's words, or needs a read
    writes: dict[str, int] = field(default_factory=lambda: {k: 0 for k in KINDS})
    # runs by (recorded reward, the worst kind of write the gate saw in that run)
    crossed: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    # reads the read gate would have withheld (another customer's record, or a customer's before
    # anyone was identified), and of those, the ones whose values the agent then said
    disclosures: int = 0
    said: int = 0


def _worst(decisions: Iterable[GateDecision]) -> str:
    kinds = [d.category() for d in decisions]
    return CATEGORY_LABELS[max(kinds, key=_WORST.__getitem__)] if kinds else "no write"


def audit(folder: Path) -> tuple[list[AuditRow], list[str]]:
    folder = Path(folder)
    if not folder.is_dir():
        raise Tau2Error(f"{folder} does not exist or is not a folder; pass the folder given to import-tau2 --out or eval --out.")
    files = trajectory_files(folder)
    if not files:
        raise Tau2Error(f"{folder} holds no trajectories (*.jsonl); run `ledger-tui import-tau2` or `ledger-tui eval` first.")
    rows: dict[str, AuditRow] = {}
    warnings = []
    graded = _eval_rewards(folder, warnings)
    for f in files:
        try:
            loaded = read_trajectory(f)
        except LedgerTuiError as exc:
            warnings.append(str(exc))
            continue
        warnings.extend(loaded.warnings)
        start = loaded.started
        if start is not None and start.task_id:
            task_id = start.task_id
        else:  # an imported simulation without a task id, or a session run without a task
            task_id = UNKNOWN_TASK if start is not None and start.mode == "imported" else f.stem
        row = rows.setdefault(task_id, AuditRow(task_id))
        row.runs += 1
        ended = next((e for e in reversed(loaded.events) if isinstance(e, SessionEnded)), None)
        reward = ended.reward if ended and ended.reward is not None else graded.get(f.resolve())
        ok = reward is not None and reward >= 1 - 1e-6
        row.passed += int(ok)
        # a call held for the customer's answer on a card is asked, not judged: the gate judges
        # it again when it runs on their yes
        decisions = [e.decision for e in loaded.events if isinstance(e, GateDecided) and not e.decision.held()]
        reads = [e for e in loaded.events if isinstance(e, GateDecided) and e.decision.category() == "disclosure"]
        decisions = [d for d in decisions if d.category() != "disclosure"]
        for d in decisions:
            row.writes[d.category()] += 1
        for e in reads:
            row.disclosures += 1
            row.said += bool(disclosed(e.decision, said_after(loaded.events, e.seq)))
        outcome = "reward 1" if ok else ("reward 0" if reward is not None else "no reward")
        row.crossed[f"{outcome} / {_worst(decisions)}"] += 1
    return sorted(rows.values(), key=lambda r: _natural(r.task_id)), warnings


def _eval_rewards(folder: Path, warnings: list[str]) -> dict[Path, float]:
    """An eval output folder's rewards, by trajectory: eval grades a run in results.jsonl, not in
    its trajectory's last event."""
    if not (folder / "results.jsonl").exists():
        return {}
    from ledger_tui.eval.results import read_results_file

    try:
        results, damaged = read_results_file(folder)
    except LedgerTuiError as exc:
        warnings.append(str(exc))
        return {}
    warnings.extend(damaged)
    out: dict[Path, float] = {}
    for r in results:
        path = Path(r.trajectory)
        out[(path if path.is_absolute() else folder / path).resolve()] = r.reward
    return out


def _natural(text: str) -> tuple:
    import re

    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", text))


# the audit's columns, short enough for 80 (the legend under the header says them in full)
_SHORT = {"allowed": "allow", "violation": "viol", "inferred": "text", "needs_read": "read"}
AUDIT_LEGEND = (
    "allow/viol/text/read: recorded writes the gate would allow, call a violation, stop on what it read from text, "
    "or stop for a read; discl: reads of a record not the identified customer's; said: of those, the agent then "
    "said what they hold"
)


def audit_lines(rows: list[AuditRow]) -> list[str]:
    """Per task and overall, in 80 columns: runs, passes, and each recorded write sorted into allowed
    / violation / inferred / needs a read, the reads of another customer's record, then (indented
    under each task) the runs crossed by reward and the worst kind of write in them."""
    import textwrap

    w = min(max([len("overall")] + [len(r.task_id) for r in rows]), 32)

    def row_line(name: str, r: AuditRow) -> str:
        cells = "".join(f"{r.writes[k]:>6}" for k in KINDS)
        return f"{name[:w]:<{w}}{r.runs:>5}{r.passed:>5}{cells}{r.disclosures:>7}{r.said:>6}"

    head = f"{'task':<{w}}{'runs':>5}{'pass':>5}" + "".join(f"{_SHORT[k]:>6}" for k in KINDS) + f"{'discl':>7}{'said':>6}"
    lines = [head, *textwrap.wrap(AUDIT_LEGEND, 80, initial_indent="  ", subsequent_indent="  "), "-" * len(head)]
    total = AuditRow("overall")
    for r in rows:
        crossed = ", ".join(f"{k}: {v}" for k, v in sorted(r.crossed.items()))
        lines.append(row_line(r.task_id, r))
        lines.extend(textwrap.wrap(crossed, 80, initial_indent="    ", subsequent_indent="    "))
        total.runs += r.runs
        total.passed += r.passed
        total.disclosures += r.disclosures
        total.said += r.said
        for k, v in r.writes.items():
            total.writes[k] += v
        for k, v in r.crossed.items():
            total.crossed[k] += v
    lines.append("-" * len(head))
    lines.append(row_line("overall", total))
    lines.append("  runs by reward / worst write:")
    for k, v in sorted(total.crossed.items()):
        lines.append(f"    {k:<32} {v:>5} runs")
    if total.disclosures:
        lines.append(f"    reads of a record not the identified customer's (withheld in gated modes): {total.disclosures}")
        lines.append(f"    the agent then said what they hold: {total.said} (`ledger-tui why FILE` shows each)")
    failed = sum(v for k, v in total.crossed.items() if k.startswith("reward 0"))
    if failed:
        violation = sum(v for k, v in total.crossed.items() if k.startswith("reward 0") and k.endswith("violation"))
        needs_read = sum(v for k, v in total.crossed.items() if k.startswith("reward 0") and k.endswith(CATEGORY_LABELS["needs_read"]))
        inferred = sum(v for k, v in total.crossed.items() if k.startswith("reward 0") and k.endswith(CATEGORY_LABELS["inferred"]))
        lines.append(f"    failed runs in which the gate would have found a violation: {violation} of {failed}")
        lines.append(f"    failed runs in which its worst finding was inferred from text: {inferred} of {failed}")
        lines.append(f"    failed runs in which it would only have asked for a read: {needs_read} of {failed}")
    return lines

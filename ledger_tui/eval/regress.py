"""Policy regression: replay a saved trajectory under today's predicates and list changed verdicts.

The replay agent re-emits the recorded model turns, the recorded customer messages and customer
actions are sent again, and everything runs against a fresh environment through today's gate.
Verdicts are compared call by call in order. When a verdict changes, the conversation may no longer
fit the recorded model turns; the report then says where the replay diverged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ledger_tui.engine.disclosure import is_read_decision
from ledger_tui.engine.domain import Domain
from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.events import Event, GateDecided, GateDecision
from ledger_tui.engine.fork import redrive
from ledger_tui.engine.agents.gold import fresh_environment
from ledger_tui.engine.agents.irma import ReplayHelper
from ledger_tui.engine.model.models import ReplayModel
from ledger_tui.engine.session import MODES, Session, drain, ungated
from ledger_tui.engine.agents.tasks import load_tasks


_NO_GATE = "(no gate)"  # a write of a mode that runs writes unjudged (baseline, ledger, irma)


def _verdict(decision: GateDecision | None, mode: str) -> str:
    """A write's verdict as regress prints it: `(no gate)` in a mode that runs writes unjudged."""
    if decision is not None:
        return decision.verdict.value
    return _NO_GATE if ungated(mode) else "(no decision)"


@dataclass
class Change:
    index: int
    call: str
    before: str
    after: str
    reason: str


@dataclass
class RegressReport:
    decisions_before: int
    decisions_after: int
    changes: list[Change] = field(default_factory=list)
    diverged: str | None = None
    events: list[Event] = field(default_factory=list)


async def regress(
    domain: Domain, events: list[Event], mode: str = "full", out: Path | None = None, replay_in: str | None = None
) -> RegressReport:
    """Replay the recorded model turns in the recorded mode (`mode` when the recording names none),
    or in `replay_in`: e.g. `full` on a baseline or IRMA run, to see which of its writes the gate
    would have stopped (a decision before none)."""
    start = events[0] if events and events[0].type == "session_started" else None
    task = None
    if start is not None and start.task_id and domain.tasks_path.exists():
        task = next((t for t in load_tasks(domain.tasks_path) if t.id == start.task_id), None)
    mode_before = start.mode if start is not None and start.mode in MODES else mode
    replayed_mode = replay_in or mode_before
    session = Session(
        domain, ReplayModel(events), replayed_mode, env=fresh_environment(domain, task), out=out,  # type: ignore[arg-type]
        task_id=start.task_id if start else None, timestamps=False,
        helper=ReplayHelper(events),  # IRMA's recorded helper answers (no other mode asks it)
        # consent as the recording observed it: a card's answers are replayed as the customer's
        # messages; a recording without cards (mode text, or written before them) is read as text
        consent=(start.consent if start is not None else None) or "text",
    )
    await drain(session.start())
    diverged = await redrive(session, events)
    await drain(session.end("regression replay"))
    before_all = [e.decision for e in events if isinstance(e, GateDecided)]
    after_all = [e.decision for e in session.events if isinstance(e, GateDecided)]
    report = RegressReport(len(before_all), len(after_all), diverged=diverged, events=session.events)
    # writes pair up in order; the read gate's decisions (disclosure.py) by the read they judge, so
    # a recording made before it (no read decisions) still lines its writes up
    reads_before, before = _split(before_all, domain)
    reads_after, after = _split(after_all, domain)
    _read_changes(report, reads_before, reads_after)
    for i in range(max(len(before), len(after))):
        b = before[i] if i < len(before) else None
        a = after[i] if i < len(after) else None
        if b is not None and a is not None and b.call.signature() != a.call.signature():
            report.diverged = report.diverged or f"at gate decision {i + 1}: the replayed call differs"
            break
        vb, va = _verdict(b, mode_before), _verdict(a, replayed_mode)
        # a write that ran without the gate and one the gate allows both run: no change
        if vb != va and {vb, va} != {_NO_GATE, "ALLOW"}:
            ref = a or b
            assert ref is not None
            report.changes.append(Change(i + 1, ref.call.signature(), vb, va, (a.reason if a else b.reason)))  # type: ignore[union-attr]
    return report


def _split(decisions: list[GateDecision], domain: Domain) -> tuple[list[GateDecision], list[GateDecision]]:
    """The read gate's decisions, and the writes'."""
    reads: list[GateDecision] = []
    writes: list[GateDecision] = []
    for d in decisions:
        (reads if is_read_decision(d, domain) else writes).append(d)
    return reads, writes


def _read_changes(report: RegressReport, before: list[GateDecision], after: list[GateDecision]) -> None:
    """Reads the read gate withholds now and did not (or did and does not), by their calls."""
    then = {d.call.signature(): d for d in before}
    now = {d.call.signature(): d for d in after}
    for signature, d in now.items():
        if signature not in then and d.shown_verdict() == "WITHHELD":
            report.changes.append(Change(0, signature, "shown", "WITHHELD", d.reason))
    for signature, d in then.items():
        if signature not in now and d.shown_verdict() == "WITHHELD":
            report.changes.append(Change(0, signature, "WITHHELD", "shown", "Today's read gate shows this result."))


def regress_lines(path: Path, report: RegressReport) -> list[str]:
    from ledger_tui.explain import plural

    lines = [
        f"{path.name}: {plural(report.decisions_before, 'gate decision')} recorded, "
        f"{report.decisions_after} under today's policy"
    ]
    if not report.changes:
        lines.append("  no verdict changed")
    for c in report.changes:
        lines.append(f"  {f'decision {c.index}' if c.index else 'read'}: {c.call}: {c.before} -> {c.after}")
        lines.append(f"      {c.reason}")
    if report.diverged:
        lines.append(f"  replay diverged {report.diverged}")
    return lines


def check_domain(events: list[Event]) -> str:
    start = events[0] if events else None
    if start is None or start.type != "session_started":
        raise LedgerTuiError("The trajectory does not start with session_started, so its domain is unknown.")
    return start.domain  # type: ignore[union-attr]

"""Reading recorded runs: explain a trajectory's verdicts (`why`), step through it (`replay`),
replay it under today's policy (`regress`), compare two runs (`diff`), audit and browse a folder
of runs (`audit`, `browse`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Optional

import typer

from ledger_tui.commands.shared import check_mode, say, tui_status
from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.examples import resolve_session
from ledger_tui.explain import plural

if TYPE_CHECKING:
    from ledger_tui.engine.events import SessionStarted
    from ledger_tui.engine.store.index import WhyReading


def why(
    trajectory: Path = typer.Argument(..., help="A trajectory file (.jsonl), or a shipped session's name (see `examples`)."),
    step: Optional[int] = typer.Option(None, "--step", "-n", help="Explain the gate decision at this step only."),
    all_decisions: bool = typer.Option(False, "--all", help="Explain ALLOWs too.", metavar=""),
) -> None:
    """Explain every REVISE and BLOCK of a trajectory from its recorded evidence."""
    from ledger_tui.engine.events import GateDecided, Verdict
    from ledger_tui.engine.store.index import read_for_why, use_for_why
    from ledger_tui.explain import WHY_DISCLOSES, WHY_EXPLAINS, category_counts

    trajectory = resolve_session(trajectory)
    verdicts = tuple(Verdict) if all_decisions or step is not None else (Verdict.REVISE, Verdict.BLOCK)
    told = use_for_why(trajectory, WHY_EXPLAINS, verdicts, WHY_DISCLOSES, step, _explained)
    for w in told.warnings:
        say(f"warning: {w}", err=True)
    if not told.explained and step is not None:  # (read again for the steps it lists: only the decision at `step` was validated)
        every = read_for_why(trajectory, (GateDecided,)).events
        steps = [str(e.seq) for e in every if isinstance(e, GateDecided)]
        raise LedgerTuiError(
            f"Step {step} of {trajectory.name} is not a gate decision; gate decisions are at steps: {', '.join(steps) or 'none'}."
        )
    if not told.explained:
        mode = told.started.mode if told.started else ""
        from ledger_tui.engine.session import ungated

        if ungated(mode):  # every write ran unjudged
            say(f"This trajectory ran in mode {mode}, without the gate: no write was judged.")
        else:
            say("No REVISE or BLOCK in this trajectory (use --all to list ALLOWs).")
        return
    for at in range(0, len(told.lines), 1024):  # (in parts, each made in the memory of the last)
        say("\n".join(told.lines[at : at + 1024]))
    if told.explained > 1 and (told.stops or told.withheld):
        parts = [f"{plural(len(told.stops), 'stopped write')}: {category_counts(told.stops)}"] if told.stops else []
        parts += [f"{plural(told.withheld, 'read')} of another customer's record (withheld in gated modes)"] if told.withheld else []
        say("\n" + "; ".join(parts))


@dataclass
class _Told:
    """What `why` says of a trajectory, made before any of it is said."""

    started: SessionStarted | None
    warnings: list[str]
    lines: list[str] = field(default_factory=list)  # every decision's explanation
    explained: int = 0  # decisions explained
    stops: list[str] = field(default_factory=list)  # the category of each stopped write explained
    withheld: int = 0  # reads withheld explained


def _explained(reading: WhyReading) -> _Told:
    """`why`'s explanation of each decision of a `WhyReading`, each decision dropped once explained
    (a long file's thousands of explanations are said at once, in one write)."""
    from ledger_tui.engine.events import Verdict
    from ledger_tui.explain import asks_and_answers, disclosure_lines, explain_decision, waits_lines

    told = _Told(reading.started, reading.warnings)
    policy = _policy_for(told.started.domain if told.started else None)
    asked = asks_and_answers(reading.events)
    out = told.lines
    for event in reading.decisions():
        kind = event.decision.category()  # (asked once of each decision: 5 µs a time)
        if told.explained:
            out.append("")
        out.extend(explain_decision(event, policy, category=kind))
        if asked:  # (a file without cards or questions: nothing to look through)
            out.extend(waits_lines(asked, event.decision.call.id))
        if kind == "disclosure":
            out.extend(disclosure_lines(reading.more(), event))
            told.withheld += 1
        elif event.decision.verdict != Verdict.ALLOW:
            told.stops.append(kind)
        told.explained += 1
    return told


def _policy_for(domain: str | None) -> str | None:
    if not domain:
        return None
    try:
        from ledger_tui.domains import policy_text

        return policy_text(domain)
    except LedgerTuiError:
        return None


def replay(
    trajectory: Path = typer.Argument(..., help="A trajectory file (.jsonl), or a shipped session's name: airline-cancel-blocked (see `examples`)."),
    step: Optional[int] = typer.Option(None, "--step", "-n", help="Open at this step."),
) -> None:
    """Step through a saved trajectory: conversation, ledger and gate log as of each step."""
    from ledger_tui.engine.store.trajectories import read_trajectory
    from ledger_tui.ui.launch import replay as launch_replay

    trajectory = resolve_session(trajectory)
    loaded = read_trajectory(trajectory, lazy=True)  # fail here, in one sentence, if the file is unusable
    tui_status(launch_replay(trajectory, step, loaded))


def audit(folder: Path = typer.Argument(..., help="Trajectories from import-tau2 or eval.")) -> None:
    """Per task and overall: recorded writes the gate would allow, call a violation, or stop for a read.

    Crossed with each run's reward."""
    from ledger_tui.eval.audit import audit as run_audit
    from ledger_tui.eval.audit import audit_lines

    rows, warnings = run_audit(folder)
    for w in warnings:
        say(f"warning: {w}", err=True)
    for line in audit_lines(rows):
        say(line)


def regress(
    trajectories: list[Path] = typer.Argument(..., help="Trajectory files (or shipped sessions' names) to replay under today's policy."),
    mode: Optional[str] = typer.Option(
        None, "--mode",
        help="Replay in this mode instead of the recorded one, e.g. full on a baseline or irma run: which writes the gate would stop.",
    ),
) -> None:
    """Replay recorded model turns under today's predicates and report verdicts that changed."""
    import asyncio

    from ledger_tui.domains import load_domain
    from ledger_tui.engine.store.trajectories import read_trajectory
    from ledger_tui.eval.regress import check_domain, regress as run_regress, regress_lines

    if mode is not None:
        check_mode(mode)
    changed = 0
    for path in map(resolve_session, trajectories):
        loaded = read_trajectory(path)
        domain = load_domain(check_domain(loaded.events))
        report = asyncio.run(run_regress(domain, loaded.events, replay_in=mode))
        changed += len(report.changes)
        for line in regress_lines(path, report):
            say(line)
    say(f"{plural(changed, 'verdict')} changed in {plural(len(trajectories), 'trajectory file')}")
    if changed:
        raise typer.Exit(1)


def diff(
    first: Path = typer.Argument(..., metavar="A", help="A trajectory file (.jsonl), or a shipped session's name."),
    second: Path = typer.Argument(..., metavar="B", help="The run to compare it with (the same domain; usually the same task)."),
    tui: bool = typer.Option(False, "--tui", help="Open both runs side by side in the workbench instead of printing.", metavar=""),
) -> None:
    """Compare two runs: the first turn whose calls, verdicts or ledger changes differ, then every turn side by side.

    Wording is shown, never counted. The exit status is 0 whether or not the runs differ."""
    from ledger_tui.eval.diff import diff_files, diff_lines

    found = diff_files(resolve_session(first), resolve_session(second))
    for w in found.warnings:
        say(f"warning: {w}", err=True)
    if tui:
        from ledger_tui.ui.launch import diff as launch_diff

        tui_status(launch_diff(found))
        return
    for line in diff_lines(found):
        say(line)


def browse(
    folder: Path = typer.Argument(..., help="An eval output folder (results.jsonl) or an import-tau2 folder."),
) -> None:
    """List every run (reward, failure class, gate verdicts), filter and sort; Enter replays one."""
    from ledger_tui.ui.launch import browse as launch_browse

    tui_status(launch_browse(folder))

"""Reading recorded runs: explain a trajectory's verdicts (`why`), step through it (`replay`),
replay it under today's policy (`regress`), compare two runs (`diff`), audit and browse a folder
of runs (`audit`, `browse`)."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ledger_tui.commands.shared import check_mode, say, tui_status
from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.examples import resolve_session
from ledger_tui.explain import plural


def why(
    trajectory: Path = typer.Argument(..., help="A trajectory file (.jsonl), or a shipped session's name (see `examples`)."),
    step: Optional[int] = typer.Option(None, "--step", "-n", help="Explain the gate decision at this step only."),
    all_decisions: bool = typer.Option(False, "--all", help="Explain ALLOWs too.", metavar=""),
) -> None:
    """Explain every REVISE and BLOCK of a trajectory from its recorded evidence."""
    from ledger_tui.engine.events import GateDecided, Verdict
    from ledger_tui.engine.store.index import read_for_why
    from ledger_tui.explain import WHY_DISCLOSES, WHY_EXPLAINS, asks_and_answers, category_counts, decisions, disclosure_lines, explain_decision, waits_lines, withholds

    trajectory = resolve_session(trajectory)
    verdicts = tuple(Verdict) if all_decisions or step is not None else (Verdict.REVISE, Verdict.BLOCK)
    loaded = read_for_why(trajectory, WHY_EXPLAINS, verdicts, more=WHY_DISCLOSES, more_if=withholds, step=step)
    for w in loaded.warnings:
        say(f"warning: {w}", err=True)
    policy = _policy_for(loaded.started.domain if loaded.started else None)
    if step is not None:
        chosen = [e for e in loaded.events if isinstance(e, GateDecided) and e.seq == step]
        if not chosen:  # (read again for the steps it lists: only the decision at `step` was validated)
            every = read_for_why(trajectory, (GateDecided,)).events
            steps = [str(e.seq) for e in every if isinstance(e, GateDecided)]
            raise LedgerTuiError(
                f"Step {step} of {trajectory.name} is not a gate decision; gate decisions are at steps: {', '.join(steps) or 'none'}."
            )
    else:
        chosen = decisions(loaded.events, verdicts)
    if not chosen:
        mode = loaded.started.mode if loaded.started else ""
        from ledger_tui.engine.session import ungated

        if ungated(mode):  # every write ran unjudged
            say(f"This trajectory ran in mode {mode}, without the gate: no write was judged.")
        else:
            say("No REVISE or BLOCK in this trajectory (use --all to list ALLOWs).")
        return
    asked = asks_and_answers(loaded.events)
    kinds = [e.decision.category() for e in chosen]  # (asked once of each decision: 5 µs a time)
    out: list[str] = []  # said at once: a long file's thousands of explanations, one write
    for i, (event, kind) in enumerate(zip(chosen, kinds)):
        if i:
            out.append("")
        out.extend(explain_decision(event, policy, category=kind))
        out.extend(waits_lines(asked, event.decision.call.id))
        if kind == "disclosure":
            out.extend(disclosure_lines(loaded.events, event))
    say("\n".join(out))
    stops = [kind for e, kind in zip(chosen, kinds) if e.decision.verdict != Verdict.ALLOW and kind != "disclosure"]
    withheld = kinds.count("disclosure")
    if len(chosen) > 1 and (stops or withheld):
        parts = [f"{plural(len(stops), 'stopped write')}: {category_counts(stops)}"] if stops else []
        parts += [f"{plural(withheld, 'read')} of another customer's record (withheld in gated modes)"] if withheld else []
        say("\n" + "; ".join(parts))


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

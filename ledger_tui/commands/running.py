"""Running sessions: a script or a task's gold agent headless (`run`), the workbench with you as
the customer (`play`, also forking a recorded run), and the gate in front of an MCP server
(`mcp-proxy`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer

from ledger_tui.commands.shared import (
    FORCE_HELP, HELPER_MODEL_HELP, Consent, ContextWindow, ExtraBody, LedgerAt, MaxTokens, Retries, Temperature, Timeout,
    check_consent, check_db, check_mode, client_options, default_out, say, session_options_from, tui_status,
)
from ledger_tui.engine.errors import LedgerTuiError, ScriptError, TaskError
from ledger_tui.engine.outside import shown
from ledger_tui.examples import resolve_script, resolve_session
from ledger_tui.explain import plural


def _run_async(coroutine: Any) -> Any:
    """`asyncio.run`, its module imported only by the commands that run a session: the CLI's
    other commands (`report`, `why`, …) never load it."""
    import asyncio

    return asyncio.run(coroutine)


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
    import asyncio  # (here, not at the top: every command imports this module, `why` among them)

    from ledger_tui.domains import load_domain
    from ledger_tui.eval.outputs import check_new

    if mode is not None:
        check_mode(mode)
    if script is None and task is None:
        raise LedgerTuiError("Pass --script FILE for a scripted session, or --task ID --agent gold for a task.")
    check_new(out, force, "--out")
    check_new(dump_db, force, "--dump-db")
    check_consent(consent)
    if script is not None:
        _run_async(_run_script(script, domain, db, mode, out, dump_db, not no_timestamps, consent))
        return
    if agent != "gold":
        raise LedgerTuiError(f"--task runs with --agent gold (got {agent!r}); use `ledger-tui eval` for model agents.")
    if domain is None:
        raise LedgerTuiError("Pass --domain with --task (e.g. --domain airline --task 3).")
    d = load_domain(domain)
    _run_async(_run_gold(d, task, db, mode or "full", out, dump_db, consent))


async def _run_script(script_path, domain_name, db, mode, out, dump_db, timestamps, consent=None) -> None:
    from ledger_tui.domains import load_domain
    from ledger_tui.engine.model.models import ScriptedModel
    from ledger_tui.engine.agents.script import load_script, run_script, script_consent, script_mode
    from ledger_tui.engine.session import Session, drain

    script_path = resolve_script(script_path)
    script = load_script(script_path)
    mode = check_mode(script_mode(script, mode))
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
    check_db(d, db)
    out = out or default_out(d.name, Path(script_path).stem)
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
    check_db(d, db)
    made = out is None
    out = out or default_out(d.name, f"{task.id.removeprefix(d.name + '_')}-gold")  # the id names the domain once
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
    from ledger_tui.engine.agents.irma import helper_options
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
    check_mode(mode)
    check_new(out, force, "--out")
    options = client_options(timeout, retries, max_tokens, temperature, extra_body)
    session_options = session_options_from(context_window, ledger_at, consent)
    d = load_domain(domain)
    agent_model = None
    if not no_model and (model or base_url or os.environ.get("OPENAI_API_KEY") or os.environ.get("OPENAI_BASE_URL")):
        agent_model = RetryingModel(OpenAIModel(model=model, base_url=base_url, api_key=api_key, options=options), attempts=options.retries + 1)
        if mode == "irma":
            session_options["helper"] = RetryingModel(
                OpenAIModel(model=helper_model or model, base_url=base_url, api_key=api_key, options=helper_options(options)),
                attempts=options.retries + 1,
            )
    check_db(d, db)
    if agent_model is not None:  # a wrong URL or key is one sentence now, not after the first message
        from ledger_tui.engine.model.probe import check_endpoint

        problem = check_endpoint(base_url or os.environ.get("OPENAI_BASE_URL"), api_key or os.environ.get("OPENAI_API_KEY"))
        if problem:
            say(problem, err=True)
            raise typer.Exit(1)
    out = out or default_out(d.name, "fork" if recorded else "play")
    from ledger_tui.ui.launch import play as launch_play

    if recorded is not None:
        status = _play_fork(d, recorded, from_, step, agent_model, session_options.get("helper"), db, out)  # type: ignore[arg-type]
    else:
        status = launch_play(d, agent_model, mode, db, out, session_options)
    say(f"session   {out}")
    from ledger_tui.engine.store.trajectories import WRITE_FAILURES

    if str(out) in WRITE_FAILURES:  # the recording stopped on a full disk; the workbench went on
        raise WRITE_FAILURES[str(out)]
    tui_status(status)


def _play_fork(d, recorded, path: Path, step: int | None, model, helper, db: Path | None, out: Path) -> int:
    """Rebuild the recorded run up to the turn of `step` and open play on it; the file reserved
    for it is removed when it cannot be forked."""
    import asyncio

    from ledger_tui.engine.events import UserMessage
    from ledger_tui.engine.fork import fork
    from ledger_tui.engine.model.models import NoModel
    from ledger_tui.ui.launch import play_session

    said = [e.seq for e in recorded.events if isinstance(e, UserMessage)]
    at = step if step is not None else (said[-1] if said else len(recorded.events))
    try:
        forked = _run_async(fork(d, recorded.events, at, model=model or NoModel(), helper=helper, parent=path, out=out, db_path=db))
    except LedgerTuiError:
        if out.exists() and out.stat().st_size == 0:
            out.unlink()
        raise
    say(f"forked    {path} at step {forked.step}: {forked.kept - 1} events kept, you answer as the customer from here")
    return play_session(forked.session)


def mcp_proxy(
    command: list[str] = typer.Argument(..., metavar="-- COMMAND...", help="The MCP server to start (stdio), after --."),
    domain: Optional[str] = typer.Option(None, "--domain", help="Gate with this domain's tools and predicates."),
    policy: Optional[str] = typer.Option(None, "--policy", help="Or with a policy module: a .py file or module name (see README, Adapters)."),
    user: Optional[str] = typer.Option(None, "--user", help="The customer the MCP host authenticated (their user id)."),
    out: Optional[Path] = typer.Option(None, "--out", help="Write the gate's trajectory here after every call (ledger-tui why reads it)."),
) -> None:
    """Serve an MCP server's tools through the gate on stdio: reads absorbed, writes gated, others refused."""
    import asyncio

    from ledger_tui.adapters._core import load_policy, require

    require("mcp", "the MCP Python SDK (mcp)")
    from ledger_tui.adapters.mcp_proxy import run_proxy

    if (domain is None) == (policy is None):
        raise LedgerTuiError("Pass exactly one of --domain NAME or --policy MODULE.")
    _run_async(run_proxy(command, load_policy(policy) if policy else domain, user=user, out=out))  # type: ignore[arg-type]

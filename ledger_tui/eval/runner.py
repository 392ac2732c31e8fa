"""The evaluation harness: tasks × trials × modes, run concurrently, graded, resumable.

Each trial is one conversation between the simulated customer and the agent (in one ablation
mode), recorded as a trajectory; its result is appended to `results.jsonl` as soon as it is graded,
so an interrupted evaluation resumes without redoing finished trials. Transient model failures are
retried with backoff; what still fails is recorded as an infrastructure error and left out of
pass^k, as τ²-bench does.
"""

from __future__ import annotations

import asyncio
import gc
import json
import math
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterable, Iterator

from pydantic import TypeAdapter, ValidationError

from ledger_tui.engine.domain import Domain
from ledger_tui.engine.errors import ContextWindowExceededError, LedgerTuiError, ModelError, TransientModelError
from ledger_tui.engine.events import Event, Notice, Refusal, SessionStarted, ToolResult, agent_text
from ledger_tui.engine.fold import SessionState, fold
from ledger_tui.engine.gold import fresh_environment, run_gold
from ledger_tui.engine.models import Model
from ledger_tui.engine.reading import MAX_DEPTH, brief, json_lines, line_problem, read_text, words
from ledger_tui.engine.session import Session, drain
from ledger_tui.engine.tasks import Task
from ledger_tui.eval import interrupt
from ledger_tui.eval.grade import grade_run, tau2_gold_digests
from ledger_tui.eval.usersim import UserSimulator, stop_token

GREETING = "Hi! How can I help you today?"
# A run whose prompt outgrew the model's context window: graded (reward 0) and counted in pass^k,
# as τ²-bench counts agent errors, and not redone on resume: the same model would overflow again.
CONTEXT_WINDOW_EXCEEDED = "context_window_exceeded"
RESULTS = "results.jsonl"


@dataclass
class TrialResult:
    domain: str
    task_id: str
    trial: int
    mode: str
    agent: str
    reward: float
    termination: str
    trajectory: str
    grade: dict[str, Any] = field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    ledger_tokens: int = 0
    policy_tokens: int = 0
    transcript_tokens: int = 0
    model_calls: int = 0
    # IRMA's helper calls and their tokens (0 in every other mode; absent in results written before)
    helper_calls: int = 0
    helper_prompt_tokens: int = 0
    helper_completion_tokens: int = 0
    allow: int = 0
    revise: int = 0
    block: int = 0
    revise_exhausted: int = 0
    seconds: float = 0.0
    error: str | None = None  # why the run stopped early (model or simulator failure), one sentence
    # how consent was observed in a gated mode ("card" or "text"; None: an ungated mode, or a row
    # written before cards, whose gated runs read it from text), the writes held for a card and the
    # cards shown, the closed questions asked (each time asked), and whether the customer simulator
    # ended the run as out of scope
    consent: str | None = None
    held: int = 0
    cards: int = 0
    questions: int = 0
    out_of_scope: bool = False
    # reads whose result the read gate withheld from the model (another customer's record, or a
    # customer's before anyone was identified; disclosure.py)
    withheld: int = 0

    @property
    def infrastructure_error(self) -> bool:
        return self.termination == "infrastructure_error"

    @property
    def context_window_exceeded(self) -> bool:
        return self.termination == CONTEXT_WINDOW_EXCEEDED

    @property
    def passed(self) -> bool:
        return self.reward >= 1.0 - 1e-6

    def key(self) -> tuple[str, int, str]:
        return (self.task_id, self.trial, self.mode)


def _stats(result: TrialResult, events: list[Event], state: SessionState | None = None) -> TrialResult:
    """Token, call and verdict counts of a finished trial (from the session's state when it is at
    hand, else folded from the events)."""
    t = (state or fold(events)).totals
    result.prompt_tokens, result.completion_tokens = t.prompt_tokens, t.completion_tokens
    result.ledger_tokens, result.policy_tokens, result.transcript_tokens = t.ledger_tokens, t.policy_tokens, t.transcript_tokens
    result.model_calls, result.allow, result.revise, result.block = t.model_calls, t.allow, t.revise, t.block
    result.helper_calls, result.helper_prompt_tokens, result.helper_completion_tokens = (
        t.helper_calls, t.helper_prompt_tokens, t.helper_completion_tokens,
    )
    result.revise_exhausted = sum(1 for e in events if isinstance(e, Refusal) and "revise limit" in e.text)
    result.held, result.cards, result.questions, result.withheld = t.held, t.cards, t.questions, t.withheld
    started = (state.started if state is not None else None) or next((e for e in events if isinstance(e, SessionStarted)), None)
    result.consent = started.consent if started is not None else None
    return result


def _agent_text_since(events: list[Event], start: int) -> str:
    """What the customer heard since `start`: the agent's messages, refusals, confirmation cards and questions."""
    texts = [t for t in map(agent_text, events[start:]) if t is not None and t.strip()]
    return "\n".join(texts)


async def run_llm_trial(
    domain: Domain,
    task: Task,
    mode: str,
    trial: int,
    agent_model: Model,
    user_model: Model,
    out: Path,
    *,
    compact: bool = False,
    max_turns: int = 30,
    session_options: dict[str, Any] | None = None,
    helper_model: Model | None = None,
) -> TrialResult:
    started = time.perf_counter()
    session = Session(
        domain, agent_model, mode, env=fresh_environment(domain, task), out=out, task_id=task.id, compact=compact,  # type: ignore[arg-type]
        helper=helper_model, **(session_options or {}),
    )
    sim = UserSimulator(user_model, task, domain, context_window=(session_options or {}).get("context_window"))
    termination = "max_steps"
    error: str | None = None
    out_of_scope = False
    await drain(session.start())
    await drain(session.greet(GREETING))
    sim.heard(GREETING)
    try:
        for _ in range(max_turns):
            try:
                turn = await sim.next()
            except ModelError as exc:
                termination = "infrastructure_error" if isinstance(exc, TransientModelError) else "user_error"
                error = f"customer simulator: {exc}"
                await drain(_notice(session, error))
                break
            for call in turn.tool_calls:
                async for e in session.customer_action(call.name, call.arguments):
                    if isinstance(e, ToolResult):
                        sim.tool_result(call.id, e.content)
            if turn.tool_calls and not turn.text.strip():
                continue
            token = stop_token(turn.text)
            text = turn.text
            for t in ("###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"):
                text = text.replace(t, "").strip()
            if token is not None:
                if text:
                    await drain(session.user_says(text, respond=False, final=True))
                termination = "user_stop"
                out_of_scope = token == "###OUT-OF-SCOPE###"
                break
            mark = len(session.events)
            session.last_model_error = None
            await drain(session.user_says(text))
            if session.last_model_error is not None:
                failure = session.last_model_error
                if isinstance(failure, ContextWindowExceededError):
                    termination = CONTEXT_WINDOW_EXCEEDED
                elif isinstance(failure, TransientModelError):
                    termination = "infrastructure_error"
                else:
                    termination = "agent_error"
                error = f"agent: {failure}"
                break
            reply = _agent_text_since(session.events, mark)
            if "###STOP###" in reply:
                termination = "agent_stop"
                break
            sim.heard(reply or "(the agent said nothing)")
    finally:
        for model in (agent_model, user_model, helper_model):
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()
        grade = grade_run(domain, task, session.env, session.events, termination)
        await drain(session.end(termination, reward=grade.reward, termination=termination, grade=grade.to_json()))
    result = TrialResult(
        domain=domain.name,
        task_id=task.id,
        trial=trial,
        mode=mode,
        agent=agent_model.name,
        reward=grade.reward,
        termination=termination,
        trajectory=str(out),
        grade=grade.to_json(),
        seconds=round(time.perf_counter() - started, 3),
        error=error,
        out_of_scope=out_of_scope,
    )
    return _stats(result, session.events, session.state)


async def _notice(session: Session, text: str):
    yield session.emit(Notice(level="error", text=text))


async def run_gold_trial(
    domain: Domain, task: Task, mode: str, trial: int, out: Path, session_options: dict[str, Any] | None = None
) -> TrialResult:
    started = time.perf_counter()
    consent = (session_options or {}).get("consent")
    report = await run_gold(domain, task, mode=mode, out=out, session_options={"consent": consent} if consent else None)  # type: ignore[arg-type]
    grade = grade_run(domain, task, report.env, report.events, "agent_stop")
    result = TrialResult(
        domain=domain.name,
        task_id=task.id,
        trial=trial,
        mode=mode,
        agent="gold",
        reward=grade.reward,
        termination="agent_stop",
        trajectory=str(out),
        grade=grade.to_json(),
        seconds=round(time.perf_counter() - started, 3),
    )
    return _stats(result, report.events)


@dataclass
class EvalConfig:
    domain: Domain
    tasks: list[Task]
    modes: list[str]
    trials: int
    out: Path
    agent: str = "llm"  # llm | gold
    agent_model: Callable[[], Model] | None = None
    user_model: Callable[[], Model] | None = None
    helper_model: Callable[[], Model] | None = None  # IRMA's helper calls (default: the agent model)
    concurrency: int = 4
    compact: bool = False
    max_turns: int = 30
    session_options: dict[str, Any] = field(default_factory=dict)  # context_window, ledger_at, consent
    # worker processes (None: 1 below 64 concurrent sessions, else one a core; see eval/workers.py),
    # each running a share of `concurrency`; with more than one, `domain_source` rebuilds the domain
    # in each (a picklable callable), and `agent_model`/`user_model` must be picklable too
    # (`models.ModelFactory`)
    workers: int | None = None
    domain_source: Callable[[], Domain] | None = None
    # where the workers run: "local" (processes of this machine) or "ray" (Ray actors, always,
    # even one; see eval/ray_backend.py), on the cluster at `ray_address` (None: $RAY_ADDRESS, else
    # a local Ray instance started for the eval)
    backend: str = "local"
    ray_address: str | None = None


class ResultsError(LedgerTuiError):
    """A results.jsonl that cannot be read."""


_RESULT: TypeAdapter[TrialResult] = TypeAdapter(TrialResult)


def parse_result(line: str) -> TrialResult:
    """One line of results.jsonl, or ValueError saying in words what is wrong with it."""
    problem = line_problem(line)
    if problem is not None:
        raise ValueError(problem)
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise ValueError(f"it is not valid JSON ({exc.msg} at column {exc.colno})") from None
    except RecursionError:
        raise ValueError(f"it is nested more than {MAX_DEPTH} levels deep") from None
    if not isinstance(data, dict):
        raise ValueError(f"it should be a JSON object (got {brief(data)})")
    try:
        result = _RESULT.validate_python(data)
    except ValidationError as exc:
        raise ValueError(words(exc)) from None
    if not (math.isfinite(result.reward) and 0.0 <= result.reward <= 1.0):
        raise ValueError(f"reward should be a number from 0 to 1 (got {result.reward!r})")
    if result.trial < 0:
        raise ValueError(f"trial should not be negative (got {result.trial})")
    return result


def read_results_file(out: Path) -> tuple[list[TrialResult], list[str]]:
    """The runs recorded in `out`/results.jsonl and warnings. A damaged last line (a run cut short
    while its line was written) is skipped with a warning and that run is redone; damage before
    it is one sentence (ResultsError) naming the line, before anything is written."""
    path = out / RESULTS
    if not path.exists():
        return [], []
    text = read_text(path, ResultsError, "pass the --out folder of `ledger-tui eval`")
    numbered = list(json_lines(text))
    results: list[TrialResult] = []
    warnings: list[str] = []
    for pos, (lineno, line) in enumerate(numbered):
        try:
            results.append(parse_result(line))
        except ValueError as exc:
            if pos == len(numbered) - 1:
                warnings.append(
                    f"Line {lineno} of {path} is incomplete or damaged ({exc}) and was skipped; "
                    "`ledger-tui eval` on the folder redoes that run."
                )
                break
            raise ResultsError(
                f"Line {lineno} of {path} is damaged: {exc}; repair or remove that line "
                "(`ledger-tui eval` on the folder then redoes that run)."
            ) from None
    return results, warnings


def canonical_ids(results: list[TrialResult], tasks: Iterable[Task]) -> list[TrialResult]:
    """Results recorded under a task's former id, under its id now (a resume does not redo them)."""
    from ledger_tui.engine.tasks import by_name

    named = by_name(tasks)
    for r in results:
        task = named.get(r.task_id)
        if task is not None and task.id != r.task_id:
            r.task_id = task.id
    return results


def load_results(out: Path) -> list[TrialResult]:
    """The runs recorded in `out` (see `read_results_file`; its warnings are left out)."""
    return read_results_file(out)[0]


def trajectory_path(out: Path, domain: str, mode: str, task_id: str, trial: int) -> Path:
    """Where a run's trajectory goes: inside `out`, one file per (domain, mode, task, trial); task
    ids that are not plain names (`x.1`, `t/1`) keep a hash of the original, so none share a file."""
    from ledger_tui.eval.outputs import file_part, inside

    name = f"task-{file_part(task_id)}-trial-{file_part(trial)}.jsonl"
    return inside(out, "trajectories", file_part(domain), file_part(mode), name)


async def run_one(config: EvalConfig, task: Task, trial: int, mode: str) -> TrialResult:
    """One run of the eval (a worker process runs the same)."""
    out = trajectory_path(config.out, config.domain.name, mode, task.id, trial)
    if config.agent == "gold":
        return await run_gold_trial(config.domain, task, mode, trial, out, config.session_options)
    assert config.agent_model and config.user_model
    return await run_llm_trial(
        config.domain,
        task,
        mode,
        trial,
        config.agent_model(),
        config.user_model(),
        out,
        compact=config.compact,
        max_turns=config.max_turns,
        session_options=config.session_options,
        helper_model=config.helper_model() if config.helper_model is not None and mode == "irma" else None,
    )


def worker_count(config: EvalConfig, runs: int) -> int:
    """The worker processes this eval uses: --workers (or its default), no more than the sessions
    in flight or the runs to do."""
    from ledger_tui.eval.workers import check_workers, default_workers

    check_workers(config.workers, max(1, config.concurrency))
    wanted = config.workers if config.workers is not None else default_workers(config.concurrency)
    wanted = max(1, min(wanted, max(1, config.concurrency), runs))
    if wanted > 1 and config.workers is None and not shardable(config):
        return 1  # the default asks for workers, but this config cannot be handed to them: one process
    return wanted


def shardable(config: EvalConfig) -> bool:
    """Whether worker processes can rebuild this config: a domain source and picklable models."""
    import pickle
    from dataclasses import replace

    if config.domain_source is None:
        return False
    try:
        pickle.dumps(replace(config, domain=None, tasks=[]))
    except Exception:  # noqa: BLE001 - closures, lambdas, open clients...
        return False
    return True


async def run_eval(
    config: EvalConfig,
    on_result: Callable[[TrialResult], Awaitable[None] | None] | None = None,
    on_start: Callable[[], None] | None = None,
) -> list[TrialResult]:
    """Run every (task, trial, mode) not already in `results.jsonl`; returns all results. A
    results.jsonl damaged before its last line, or a task whose initial state cannot be applied,
    stops it before anything is written. With more than one worker the runs go to worker processes
    (eval/workers.py), with backend "ray" to Ray actors (eval/ray_backend.py), and this process
    stays the one writer of results.jsonl. `on_start` is called once the runs start (with workers:
    once the first worker is ready). It is the folder's one writer while it runs (folder_lock.py):
    another `eval` or `import-tau2` into it stops with FolderBusyError."""
    from ledger_tui.eval.folder_lock import FolderLock

    with FolderLock(config.out, "eval"):
        return await _run_eval(config, on_result, on_start)


async def _run_eval(
    config: EvalConfig,
    on_result: Callable[[TrialResult], Awaitable[None] | None] | None,
    on_start: Callable[[], None] | None,
) -> list[TrialResult]:
    previous = canonical_ids(load_results(config.out), config.tasks)
    done = {r.key() for r in previous if not r.infrastructure_error}
    kept = [r for r in previous if not r.infrastructure_error]
    todo = [
        (task, trial, mode)
        for mode in config.modes
        for task in config.tasks
        for trial in range(config.trials)
        if (task.id, trial, mode) not in done
    ]
    on_ray = config.backend == "ray" and bool(todo)
    workers = 0 if on_ray else worker_count(config, len(todo))
    pool = cluster = None
    if on_ray:
        from ledger_tui.eval.ray_backend import Cluster

        cluster = Cluster.join(config, len(todo))  # its actors start up while this process prepares
    elif workers > 1:
        from ledger_tui.eval.workers import abandon, check_shardable, spawn

        check_shardable(config)
        pool = spawn(config, workers)  # they start up while this process prepares
    try:
        _prepare(config, todo, kept)
    except BaseException:
        if pool is not None:
            abandon(pool)
        if cluster is not None:
            await cluster.aclose()
        raise
    semaphore = asyncio.Semaphore(max(1, config.concurrency))
    lock = asyncio.Lock()
    results = list(kept)

    async def record(result: TrialResult) -> None:
        async with lock:
            results.append(result)
            path = config.out / RESULTS
            with _named(path), path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(asdict(result)) + "\n")
            if on_result is not None:
                maybe = on_result(result)
                if asyncio.iscoroutine(maybe):
                    await maybe

    if cluster is not None:
        try:
            await cluster.run(config, todo, record, on_start)
        finally:
            await cluster.aclose()
        return results

    if workers > 1:
        from ledger_tui.eval.workers import run_sharded

        await run_sharded(config, todo, workers, record, on_start, pool)
        return results

    flying = {"n": 0}
    watched = interrupt.current()
    if watched is not None:
        watched.in_flight = lambda: flying["n"]

    async def one(task: Task, trial: int, mode: str) -> None:
        async with semaphore:
            if interrupt.winding_down():
                return  # Ctrl-C: the runs in flight finish, this one does not start
            flying["n"] += 1
            try:
                result = await run_one(config, task, trial, mode)
            finally:
                flying["n"] -= 1
        await record(result)

    if on_start is not None:
        on_start()
    gc.freeze()
    pending: list[asyncio.Task[None]] = []
    try:
        for t, n, m in todo:
            pending.append(asyncio.create_task(one(t, n, m)))
            # Yield once per trial started, so the trials already running send their requests
            # while the next one sets up; otherwise every first request waits for every set-up
            # and all the replies arrive at once.
            await asyncio.sleep(0)
        await asyncio.gather(*pending)
    except BaseException:
        # an interruption (or a bug) stops every trial still running; finished ones are on disk
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        raise
    finally:
        gc.unfreeze()
    return results


def _prepare(config: EvalConfig, todo: list[tuple[Task, int, str]], kept: list[TrialResult]) -> None:
    # What every trial shares (the pristine database, each task's gold state) is built up front,
    # then frozen out of the garbage collector while the trials run: with many sessions
    # allocating, each full collection would otherwise rescan every record of the database, a
    # pause of ~0.1 s for all of them. (Garbage frozen with it is collected after the run.)
    for task in {t.id: t for t, _, _ in todo}.values():
        tau2_gold_digests(config.domain, task)
    config.out.mkdir(parents=True, exist_ok=True)
    # rewrite the file without the infrastructure errors that will be retried
    path = config.out / RESULTS
    with _named(path):
        path.write_text("".join(json.dumps(asdict(r)) + "\n" for r in kept), encoding="utf-8")


@contextmanager
def _named(path: Path) -> Iterator[None]:
    """An OS error writing `path` (a full disk) raised with the path, for the one sentence the
    command says (cli.write_error): a file's write does not name its file."""
    try:
        yield
    except OSError as exc:
        raise OSError(exc.errno, exc.strerror, str(path)) from None


def select_tasks(tasks: Iterable[Task], ids: str | None) -> list[Task]:
    tasks = list(tasks)
    if not ids:
        return tasks
    from ledger_tui.engine.tasks import by_name

    wanted = [i.strip() for i in ids.split(",") if i.strip()]
    named = by_name(tasks)  # a task's former id finds it too
    missing = [i for i in wanted if i not in named]
    if missing:
        from ledger_tui.engine.errors import TaskError

        raise TaskError(f"Unknown task id(s): {', '.join(missing)}; known ids include {', '.join(t.id for t in tasks[:10])}.")
    return list({named[i].id: named[i] for i in wanted}.values())

"""One run of an evaluation: its configuration (`EvalConfig`) and the trial itself (`run_one`: an LLM agent against the simulated customer, or the gold agent), where its
trajectory goes. Every backend (in-process, worker processes, Ray) runs trials through this module;
it imports none of them.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any, Callable


from ledger_tui.engine.domain import Domain
from ledger_tui.engine.errors import ContextWindowExceededError, ModelError, TransientModelError
from ledger_tui.engine.events import Event, Notice, Refusal, SessionStarted, ToolResult, agent_text
from ledger_tui.engine.store.fold import SessionState, fold
from ledger_tui.engine.store.trajectories import written
from ledger_tui.engine.agents.gold import fresh_environment, run_gold
from ledger_tui.engine.model.models import Model
from ledger_tui.engine.session import Session, drain
from ledger_tui.engine.agents.tasks import Task
from ledger_tui.eval.grade import grade_run
from ledger_tui.eval.recorded import failure_record
from ledger_tui.eval.results import CONTEXT_WINDOW_EXCEEDED, TrialResult
from ledger_tui.eval.usersim import UserSimulator, stop_token

GREETING = "Hi! How can I help you today?"
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


def _classified(result: TrialResult, events: list[Event], task: Task, domain: Domain) -> TrialResult:
    """A failed run's failure classes, found now from the events at hand and recorded with its result
    (eval/recorded.py: `report` then need not read its trajectory)."""
    if not result.passed:
        data = written(result.trajectory)
        if data is not None:
            result.failure = failure_record(events, task, domain, data, result.termination, result.grade)
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
    return _classified(_stats(result, session.events, session.state), session.events, task, domain)


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
    return _classified(_stats(result, report.events), report.events, task, domain)


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
    # worker processes (None: 1 below 64 concurrent sessions, else one a core; see eval/backends/processes.py),
    # each running a share of `concurrency`; with more than one, `domain_source` rebuilds the domain
    # in each (a picklable callable), and `agent_model`/`user_model` must be picklable too
    # (`models.ModelFactory`)
    workers: int | None = None
    domain_source: Callable[[], Domain] | None = None
    # where the workers run: "local" (processes of this machine) or "ray" (Ray actors, always,
    # even one; see eval/backends/ray_cluster.py), on the cluster at `ray_address` (None: $RAY_ADDRESS, else
    # a local Ray instance started for the eval)
    backend: str = "local"
    ray_address: str | None = None


def result_row(result: TrialResult) -> dict[str, Any]:
    """`asdict(result)`, the row results.jsonl holds and a worker sends back, without copying its
    records: `asdict` deep-copies the grade's and the failure's every value, 0.6 ms a run in the one
    writer (py-spy, 256 sessions on 2 workers). Where a field holds anything but plain JSON values
    (a dataclass, an enum, a tuple), `asdict` as before. The row shares the result's dicts: send it
    or encode it, do not change it."""
    row = {f.name: getattr(result, f.name) for f in fields(result)}
    return row if all(_plain(value) for value in row.values()) else asdict(result)


_LEAVES = (str, int, float, bool, type(None))


def _plain(value: Any) -> bool:
    """Whether `value` is made of dicts with text keys, lists and JSON's scalars only (exactly those
    types: asdict copies them to themselves)."""
    stack = [value]
    while stack:
        node = stack.pop()
        kind = type(node)
        if kind is dict:
            if not all(type(key) is str for key in node):
                return False
            stack.extend(node.values())
        elif kind is list:
            stack.extend(node)
        elif kind not in _LEAVES:
            return False
    return True


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

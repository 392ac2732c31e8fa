"""What every way of sharding an eval shares: a shard's side and the one writer's side.

An eval's runs can go to worker processes on this machine (eval/backends/processes.py) or to Ray actors on a
cluster (eval/backends/ray_cluster.py). Both are a *backend* that only moves messages; the rest is here, so
the two behave alike:

- **A shard** (in a worker process or an actor) builds its config from a `WorkerSpec`, prepares
  what every run shares, and turns each run it is given into one message.
- **The writer** (this process) hands out runs one at a time as a shard has a free session, records
  each finished run as it comes back (results.jsonl, the progress bar), stops every shard on an
  error or an interruption while keeping what they finished, and says what went wrong in one
  sentence.

The messages, as the writer receives them from a backend's queue, each with the `Lane` it came from:

- `("ready",)` once a shard has set up; `("setup_failed", words, ours)` if it could not;
- `("result", index, data)` for a finished run (`data`: the TrialResult as a dict);
- `("failed", index, words, ours)` for a run that raised;
- `("bye",)` when a stopped shard has ended its runs; `("eof",)` when it is gone (after its bye,
  or dead).

A backend sends shards `("run", index, position, trial, mode)` and `("stop",)`. `words` is one
sentence; `ours` is the LedgerTuiError pickled, so the writer raises the same one.
"""

from __future__ import annotations

import asyncio
import contextlib
import pickle
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.eval import interrupt

if TYPE_CHECKING:
    from pathlib import Path

    from ledger_tui.eval.results import TrialResult
    from ledger_tui.eval.trial import EvalConfig

STOP_GRACE = 5.0  # seconds a stopped shard has to send back what it finished and end


class WorkerError(LedgerTuiError):
    """A worker (a process or a Ray actor) that could not be started or that died."""


def shares(concurrency: int, workers: int) -> list[int]:
    """--concurrency split across the workers (the first ones take one more when it does not divide)."""
    base, extra = divmod(concurrency, workers)
    return [base + (1 if i < extra else 0) for i in range(workers)]


def ours(exc: BaseException) -> bytes | None:
    """A LedgerTuiError pickled, so the writer raises the same one; None for any other error."""
    if not isinstance(exc, LedgerTuiError):
        return None
    try:
        return pickle.dumps(exc)
    except Exception:  # noqa: BLE001 - the writer then raises a LedgerTuiError with its words
        return pickle.dumps(LedgerTuiError(str(exc)))


def theirs(words: str, pickled: bytes | None) -> LedgerTuiError | None:
    """The LedgerTuiError a shard raised, as it was (or in its words), or None if it was not one."""
    if pickled is None:
        return None
    try:
        exc = pickle.loads(pickled)
    except Exception:  # noqa: BLE001 - an error class whose arguments do not come back
        return LedgerTuiError(words)
    return exc if isinstance(exc, LedgerTuiError) else LedgerTuiError(words)


def describe(exc: BaseException) -> str:
    if isinstance(exc, LedgerTuiError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def setup_failed(exc: BaseException) -> tuple:
    return ("setup_failed", describe(exc), ours(exc))


# ----------------------------------------------------------------------------------- shard side


@dataclass(frozen=True)
class WorkerSpec:
    """What a shard needs to run any of the runs: the config without its domain (which holds
    functions and open caches), rebuilt in the shard by `config.domain_source`."""

    config: Any  # EvalConfig with domain=None
    warm: tuple[int, ...] = ()  # the tasks (positions in config.tasks) of the runs to do
    # the gold digests the writer computed for them, by task (grade.known_gold): a shard would
    # otherwise replay every task's gold actions again before its first run
    gold: tuple[tuple[str, Any], ...] = ()

    def build(self, out: Path | None = None) -> EvalConfig:
        """The config, its domain rebuilt (and its outputs under `out` if given)."""
        from ledger_tui.eval import grade

        config = self.config
        domain = config.domain_source()
        grade.learn_gold(domain, self.gold)
        return replace(config, domain=domain, out=out or config.out)


def spec_for(config: EvalConfig, todo: list[tuple[Any, int, str]], **changes: Any) -> WorkerSpec:
    """The spec of `todo`'s runs, to be pickled for the shards (`changes` replace config fields)."""
    from ledger_tui.eval import grade

    places = positions(config)
    warm = tuple(sorted({places[id(task)] for task, _, _ in todo}))
    return WorkerSpec(replace(config, domain=None, **changes), warm, grade.known_gold(config.domain))


def positions(config: EvalConfig) -> dict[int, int]:
    """Each task's position in config.tasks (what a run names its task by), by identity."""
    return {id(task): i for i, task in enumerate(config.tasks)}


class Shard:
    """One worker's share of the runs: a config built from its spec, run after run."""

    def __init__(self, config: EvalConfig, warm: tuple[int, ...]) -> None:
        self.config = config
        self.warm = warm

    @classmethod
    def from_recipe(cls, recipe: bytes, out: Path | None = None) -> Shard:
        spec: WorkerSpec = pickle.loads(recipe)
        return cls(spec.build(out), spec.warm)

    async def prepare(self) -> tuple:
        """What every run shares, built before the runs and frozen out of the garbage collector, and
        the collector set for runs in flight (as run_eval does in one process, for the shard's
        life): `("ready",)`, or `("setup_failed", ...)`."""
        from ledger_tui.eval.backends.local import collect_for_runs
        from ledger_tui.eval.grade import tau2_gold_digests

        config = self.config
        try:
            for position in self.warm:
                tau2_gold_digests(config.domain, config.tasks[position])
        except BaseException as exc:  # noqa: BLE001 - said by the writer in one sentence
            return setup_failed(exc)
        await _warm(config, self.warm)
        collect_for_runs()
        return ("ready",)

    async def run(self, index: int, position: int, trial: int, mode: str) -> tuple:
        """One run: `("result", index, data)`, or `("failed", index, words, ours)` if it raised."""
        from ledger_tui.eval.trial import result_row, run_one

        try:
            result = await run_one(self.config, self.config.tasks[position], trial, mode)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the writer stops the eval with this sentence
            return ("failed", index, describe(exc), ours(exc))
        return ("result", index, result_row(result))


async def _warm(config: EvalConfig, warm: tuple[int, ...]) -> None:
    """Pay the first-use costs (lazy imports, schema and prompt caches, the model client's modules
    and TLS context) before the first runs, as the writer's earlier work has paid them for a run
    in one process: one offline gold replay of a task (nothing written), one client made and
    closed. Anything that goes wrong here goes wrong again in a run, where it is reported."""
    from ledger_tui.engine.agents.gold import run_gold
    from ledger_tui.engine.model.models import unwrap

    with contextlib.suppress(Exception):
        if warm:
            await run_gold(config.domain, config.tasks[warm[0]])
    if config.agent == "llm" and config.agent_model is not None:
        with contextlib.suppress(Exception):
            model = unwrap(config.agent_model())
            if hasattr(model, "_join"):
                model._join().lease()
            close = getattr(model, "aclose", None)
            if close is not None:
                await close()


# ---------------------------------------------------------------------------------- writer side


@dataclass(eq=False)
class Lane:
    """The writer's view of one shard: its share of the sessions and its runs in flight."""

    number: int
    slots: int
    inflight: set[int] = field(default_factory=set)
    ready: bool = False
    stopping: bool = False
    gone: bool = False  # it will send nothing more (it said bye, or died)
    said_bye: bool = False
    finished: int = 0

    title = "Worker"  # how a sentence names it

    def fate(self) -> str:
        """How it ended, when it died: words after "Worker 2 of 4"."""
        return "stopped without saying why"


class Backend(Protocol):
    """How the writer reaches its shards."""

    events: asyncio.Queue[tuple[Lane, tuple]]

    async def begin(self) -> None:
        """Hand the shards their spec; from here their messages arrive on `events`."""

    def send(self, lane: Lane, message: tuple) -> None:
        """Send `("run", ...)` or `("stop",)` to a shard (nothing, if it is gone)."""

    async def end(self) -> None:
        """Every shard has ended when this returns (ended by force if it would not)."""


async def dispatch(
    config: EvalConfig,
    todo: list[tuple[Any, int, str]],
    backend: Backend,
    pool: list[Lane],
    record: Callable[[TrialResult], Any],
    on_start: Callable[[], None] | None = None,
) -> None:
    """Run `todo` on the shards of `pool`; `record` (awaited) is called here for each finished run,
    in the order they finish; `on_start` once the first shard is ready."""
    from ledger_tui.eval.results import TrialResult

    places = positions(config)
    queue = deque((i, places[id(task)], trial, mode) for i, (task, trial, mode) in enumerate(todo))
    events = backend.events

    def feed(lane: Lane) -> None:
        while queue and len(lane.inflight) < lane.slots and not lane.stopping:
            item = queue.popleft()
            lane.inflight.add(item[0])
            backend.send(lane, ("run", *item))
        if not lane.inflight and not lane.stopping:
            lane.stopping = True
            backend.send(lane, ("stop",))

    def stop_all() -> None:
        for lane in pool:
            if not lane.gone and not lane.stopping:
                lane.stopping = True
                backend.send(lane, ("stop",))

    async def wind_down(watched: interrupt.Interrupt) -> None:
        """Ctrl-C once: no run is handed out any more, and each shard stops when its are back."""
        await watched.winding_down.wait()
        queue.clear()
        for lane in pool:
            if not lane.gone:
                feed(lane)

    failure: LedgerTuiError | None = None
    dead: list[Lane] = []
    started = False
    watched = interrupt.current()
    watcher = None
    if watched is not None:
        watched.in_flight = lambda: sum(len(lane.inflight) for lane in pool if not lane.gone)
    try:
        await backend.begin()
        # (watched from here: a shard's first message must be its recipe, not a Ctrl-C's stop)
        if watched is not None:
            if watched.winding_down.is_set():
                queue.clear()
            watcher = asyncio.ensure_future(wind_down(watched))
        for lane in pool:
            feed(lane)
        while any(not lane.gone for lane in pool):
            lane, message = await events.get()
            kind = message[0]
            if lane.gone:
                continue
            if kind == "result":
                _, index, data = message
                lane.inflight.discard(index)
                lane.finished += 1
                await record(TrialResult(**data))
                feed(lane)
            elif kind == "ready":
                lane.ready = True
                if not started:  # the first shard ready starts its runs: from here the runs go
                    started = True
                    if on_start is not None:
                        on_start()
            elif kind == "failed":
                _, index, words, pickled = message
                lane.inflight.discard(index)
                if failure is None:
                    failure = theirs(words, pickled) or WorkerError(
                        f"{lane.title} {lane.number} of {len(pool)} stopped on an error it did not expect ({words})"
                    )
                queue.clear()
                stop_all()
            elif kind == "setup_failed":
                _, words, pickled = message
                if failure is None:
                    failure = theirs(words, pickled) or WorkerError(f"{lane.title} {lane.number} of {len(pool)} could not set up ({words})")
                queue.clear()
                stop_all()
            elif kind == "bye":
                lane.said_bye = True
            elif kind == "eof":
                lane.gone = True
                if not lane.said_bye:
                    dead.append(lane)
                    if not any(not w.gone for w in pool):
                        queue.clear()
                # its runs in flight are lost; the others take what is left of the queue
    except BaseException:
        # interrupted (Ctrl-C) or a bug: every shard stops, and what they finished is recorded
        stop_all()
        await _drain(pool, events, record)
        raise
    finally:
        if watcher is not None:
            watcher.cancel()
        await backend.end()
    if failure is not None:
        raise _with_counts(failure, pool, todo)
    if dead:
        raise _death(dead, pool, todo)


async def _drain(pool: list[Lane], events: asyncio.Queue, record: Callable[[TrialResult], Any]) -> None:
    """After a stop: record the runs the shards finished, until each has said bye or gone."""
    from ledger_tui.eval.results import TrialResult

    loop = asyncio.get_running_loop()
    deadline = loop.time() + STOP_GRACE
    while any(not lane.gone for lane in pool):
        left = deadline - loop.time()
        if left <= 0:
            break
        try:
            lane, message = await asyncio.wait_for(events.get(), left)
        except (TimeoutError, asyncio.CancelledError):
            break
        if message[0] == "result" and not lane.gone:
            lane.inflight.discard(message[1])
            lane.finished += 1
            # written even if on_result raises again (it may be what interrupted the eval)
            with contextlib.suppress(Exception):
                await record(TrialResult(**message[2]))
        elif message[0] == "eof":
            lane.gone = True


def _with_counts(failure: LedgerTuiError, pool: list[Lane], todo: list) -> LedgerTuiError:
    if not isinstance(failure, WorkerError):
        return failure  # the sentence a run without shards would say
    return WorkerError(f"{str(failure).rstrip('.')}; {_kept(pool, todo)}")


def _kept(pool: list[Lane], todo: list) -> str:
    from ledger_tui.explain import plural

    finished = sum(lane.finished for lane in pool)
    return (
        f"{plural(finished, 'finished run')} {'is' if finished == 1 else 'are'} saved in results.jsonl, and running "
        f"the same command again redoes the {len(todo) - finished} left."
    )


def _death(dead: list[Lane], pool: list[Lane], todo: list) -> WorkerError:
    from ledger_tui.explain import plural

    first = dead[0]
    lost = sum(len(lane.inflight) for lane in dead)
    who = f"{first.title} {first.number} of {len(pool)} {first.fate()}"
    if len(dead) > 1:
        who = f"{len(dead)} of {len(pool)} {first.title.lower()}s died ({first.title.lower()} {first.number} {first.fate()})"
    return WorkerError(f"{who} with {plural(lost, 'run')} in flight; {_kept(pool, todo)}")

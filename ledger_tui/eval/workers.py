"""Eval on every core: shards of the runs in worker processes, one writer.

The harness costs CPU per model call (the client, the gate, the environment, grading), so one
process stops keeping up with the model's latency somewhere past 64 sessions. `--workers N` starts N
processes (multiprocessing's `spawn`: a fresh interpreter, no state shared with the parent), each
with its own event loop and model clients, and gives each a share of `--concurrency`. The parent
stays the one writer: it hands out runs one at a time as a worker has a free session (so a worker
with short runs takes more of them), and each finished run comes back over the worker's pipe to be
appended to results.jsonl and counted on the progress bar exactly as a run of its own. A worker
writes the trajectories of its runs, whose paths are unique per (domain, mode, task, trial).

What can go wrong is said in one sentence and nothing finished is lost:

- Ctrl-C reaches every process of the terminal's group; workers ignore it and the parent stops
  them: each cancels its runs in flight, sends back what it finished and exits; the parent waits a
  few seconds, then ends any that have not.
- A worker that dies (killed, out of memory, a crash in native code) is named with its exit code
  once the others have finished their runs; the runs it had in flight are redone by a resume.
- A run that raises (an output that cannot be written, a bug) stops the eval as it does without
  workers, with the same sentence.
- If the parent dies, every worker sees its pipe close and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import pickle
import signal
import sys
from collections import deque
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from ledger_tui.engine.errors import LedgerTuiError

if TYPE_CHECKING:
    from ledger_tui.eval.runner import EvalConfig, TrialResult

# below this many concurrent sessions one process keeps up with a 200 ms model (benchmarks/eval.py)
MANY_SESSIONS = 64
STOP_GRACE = 5.0  # seconds a stopped worker has to send back what it finished and exit


class WorkerError(LedgerTuiError):
    """A worker process that could not be started or that died."""


def cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_workers(concurrency: int) -> int:
    """1 worker below MANY_SESSIONS concurrent sessions, else one a core (1 on Windows, where the
    event loop cannot watch the workers' pipes)."""
    return 1 if concurrency < MANY_SESSIONS or sys.platform == "win32" else cores()


def check_workers(workers: int | None, concurrency: int) -> None:
    """One sentence for a --workers value that cannot be used."""
    if workers is None:
        return
    if workers < 1:
        raise WorkerError(
            f"--workers must be a positive number of processes (got {workers}); leave it out for the default "
            f"(1 below {MANY_SESSIONS} concurrent sessions, else one a core: {cores()} here)."
        )
    if workers > 1 and sys.platform == "win32":
        raise WorkerError("--workers above 1 needs Linux or macOS (the event loop watches the workers' pipes); leave it out on Windows.")
    if workers > concurrency:
        raise WorkerError(
            f"--workers {workers} is more than --concurrency {concurrency}: each worker runs at least one session "
            "at a time; lower --workers or raise --concurrency."
        )


def shares(concurrency: int, workers: int) -> list[int]:
    """--concurrency split across the workers (the first ones take one more when it does not divide)."""
    base, extra = divmod(concurrency, workers)
    return [base + (1 if i < extra else 0) for i in range(workers)]


@dataclass(frozen=True)
class WorkerSpec:
    """What a worker needs to run any of the runs: the config without its domain (which holds
    functions and is rebuilt in the worker by `domain_source`)."""

    config: Any  # EvalConfig with domain=None
    warm: tuple[int, ...] = ()  # the tasks (positions in config.tasks) of the runs to do
    # the gold digests the parent computed for them (grade.tau2_gold_digests' cache): a worker
    # would otherwise replay every task's gold actions again before its first run
    gold: tuple[tuple[Any, Any], ...] = ()

    def build(self) -> EvalConfig:
        from dataclasses import replace

        from ledger_tui.eval import grade

        config = self.config
        grade._GOLD.update(self.gold)
        return replace(config, domain=config.domain_source())


@dataclass(frozen=True)
class Tau2DomainSource:
    """The CLI's domain (a built-in one, or τ²-bench's data), rebuilt the same way in a worker."""

    name: str
    tau2_data: Any = None
    split: str | None = None
    task_file: str | None = None

    def __call__(self) -> Any:
        from ledger_tui.eval.tau2 import tau2_domain

        return tau2_domain(self.name, self.tau2_data, self.split, self.task_file)[0]


def _ours(exc: BaseException) -> bytes | None:
    """A LedgerTuiError pickled, so the parent raises the same one; None for any other error."""
    if not isinstance(exc, LedgerTuiError):
        return None
    try:
        return pickle.dumps(exc)
    except Exception:  # noqa: BLE001 - the parent then raises a LedgerTuiError with its words
        return pickle.dumps(LedgerTuiError(str(exc)))


def _theirs(words: str, ours: bytes | None) -> LedgerTuiError | None:
    """The LedgerTuiError a worker raised, as it was (or in its words), or None if it was not one."""
    if ours is None:
        return None
    try:
        exc = pickle.loads(ours)
    except Exception:  # noqa: BLE001 - an error class whose arguments do not come back
        return LedgerTuiError(words)
    return exc if isinstance(exc, LedgerTuiError) else LedgerTuiError(words)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, LedgerTuiError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


# ---------------------------------------------------------------------------------------- worker


def worker_main(conn: Any) -> None:
    """A worker process: build the config the parent sends first, then run what it sends until
    told to stop."""
    # Ctrl-C goes to every process of the terminal's group: the parent decides what stops
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        recipe = pickle.loads(conn.recv_bytes())
        config = recipe.build()
    except BaseException as exc:  # noqa: BLE001 - said to the parent in one sentence
        _send(conn, ("setup_failed", _describe(exc), _ours(exc)))
        return
    try:
        asyncio.run(_serve(conn, config, recipe.warm))
    except BaseException as exc:  # noqa: BLE001 - a bug here is one sentence from the parent, not a traceback
        _send(conn, ("failed", -1, _describe(exc), _ours(exc)))


async def _warm(config: EvalConfig, warm: tuple[int, ...]) -> None:
    """Pay the first-use costs (lazy imports, schema and prompt caches, the model client's modules
    and TLS context) before the first runs, as the parent's earlier work has paid them for a run
    in one process: one offline gold replay of a task (nothing written), one client made and
    closed. Anything that goes wrong here goes wrong again in a run, where it is reported."""
    from ledger_tui.engine.gold import run_gold
    from ledger_tui.engine.models import unwrap

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


def _hand(conn: Any, spec: bytes) -> None:
    with contextlib.suppress(OSError):  # a worker that died at start: its pipe's end says so
        conn.send_bytes(spec)


def _send(conn: Any, message: tuple) -> bool:
    try:
        conn.send(message)
        return True
    except (OSError, ValueError):  # the parent is gone
        return False


async def _serve(conn: Any, config: EvalConfig, warm: tuple[int, ...]) -> None:
    from ledger_tui.eval.grade import tau2_gold_digests
    from ledger_tui.eval.runner import run_one

    loop = asyncio.get_running_loop()
    inbox: asyncio.Queue[tuple] = asyncio.Queue()
    fd = conn.fileno()

    def readable() -> None:
        try:
            while conn.poll():
                inbox.put_nowait(conn.recv())
        except (EOFError, OSError):  # the parent is gone: stop
            loop.remove_reader(fd)
            inbox.put_nowait(("stop",))

    loop.add_reader(fd, readable)
    # what every run shares is built before the runs and frozen out of the garbage collector (as
    # run_eval does in one process)
    try:
        for position in warm:
            tau2_gold_digests(config.domain, config.tasks[position])
    except BaseException as exc:  # noqa: BLE001
        _send(conn, ("setup_failed", _describe(exc), _ours(exc)))
        return
    await _warm(config, warm)
    gc.freeze()
    _send(conn, ("ready",))
    running: dict[int, asyncio.Task[None]] = {}

    async def one(index: int, position: int, trial: int, mode: str) -> None:
        try:
            result = await run_one(config, config.tasks[position], trial, mode)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - the parent stops the eval with this sentence
            ok = _send(conn, ("failed", index, _describe(exc), _ours(exc)))
        else:
            ok = _send(conn, ("result", index, asdict(result)))
        finally:
            running.pop(index, None)
        if not ok:
            inbox.put_nowait(("stop",))

    try:
        while True:
            message = await inbox.get()
            if message[0] == "stop":
                break
            _, index, position, trial, mode = message
            running[index] = asyncio.create_task(one(index, position, trial, mode))
            # let the runs already started send their requests while the next one sets up
            await asyncio.sleep(0)
    finally:
        for task in list(running.values()):
            task.cancel()
        await asyncio.gather(*running.values(), return_exceptions=True)
        loop.remove_reader(fd)
        _send(conn, ("bye",))


# ---------------------------------------------------------------------------------------- parent


@dataclass
class _Worker:
    number: int
    process: Any
    conn: Any
    slots: int
    inflight: set[int]
    ready: bool = False
    stopping: bool = False
    gone: bool = False  # its pipe is closed (it said bye, or died)
    said_bye: bool = False
    finished: int = 0


def check_shardable(config: EvalConfig) -> None:
    """One sentence, before anything starts, if worker processes cannot rebuild this config."""
    from dataclasses import replace

    if config.domain_source is None:
        raise WorkerError("More than one worker needs the domain's source (EvalConfig.domain_source) to rebuild it in each worker.")
    try:
        pickle.dumps(replace(config, domain=None))
    except Exception as exc:  # noqa: BLE001
        raise WorkerError(f"The eval cannot be handed to worker processes ({_describe(exc)}); run it with --workers 1.") from None


def spawn(config: EvalConfig, workers: int) -> list[_Worker]:
    """Start the worker processes. Each loads its modules, then waits for its recipe, so they start
    up while this process prepares the eval (run_sharded sends the recipes); `abandon` ends them
    if the eval stops before."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    pool: list[_Worker] = []
    try:
        for number, slots in enumerate(shares(config.concurrency, workers), start=1):
            ours, theirs = context.Pipe(duplex=True)
            process = context.Process(target=worker_main, args=(theirs,), name=f"ledger-tui eval worker {number}", daemon=True)
            try:
                process.start()
            except OSError as exc:
                raise WorkerError(f"Could not start worker process {number} of {workers} ({exc.strerror or exc}); try fewer --workers.") from None
            theirs.close()
            pool.append(_Worker(number, process, ours, slots, set()))
    except BaseException:
        abandon(pool)
        raise
    return pool


def abandon(pool: list[_Worker]) -> None:
    """End workers that were never given work: their pipe closes, they exit (or are ended)."""
    for worker in pool:
        worker.conn.close()
    for worker in pool:
        worker.process.join(STOP_GRACE)
        if worker.process.is_alive():
            worker.process.kill()
            worker.process.join(1.0)


async def run_sharded(
    config: EvalConfig,
    todo: list[tuple[Any, int, str]],
    workers: int,
    record: Callable[[TrialResult], Any],
    on_start: Callable[[], None] | None = None,
    pool: list[_Worker] | None = None,
) -> None:
    """Run `todo` in `workers` processes (`pool`, from `spawn`, or started here); `record`
    (awaited) is called in this process for each finished run, in the order they finish."""
    from dataclasses import replace

    from ledger_tui.eval import grade
    from ledger_tui.eval.runner import TrialResult

    if pool is None:
        check_shardable(config)
        pool = spawn(config, workers)
    positions = {id(task): i for i, task in enumerate(config.tasks)}
    warm = tuple(sorted({positions[id(task)] for task, _, _ in todo}))
    gold = tuple((key, value) for key, value in grade._GOLD.items() if key[0] == config.domain.name)
    try:
        spec = pickle.dumps(WorkerSpec(replace(config, domain=None), warm, gold))
    except Exception as exc:  # noqa: BLE001
        abandon(pool)
        raise WorkerError(f"The eval cannot be handed to worker processes ({_describe(exc)}); run it with --workers 1.") from None

    loop = asyncio.get_running_loop()
    events: asyncio.Queue[tuple[_Worker, tuple]] = asyncio.Queue()
    queue = deque((i, positions[id(task)], trial, mode) for i, (task, trial, mode) in enumerate(todo))

    def listen(worker: _Worker) -> None:
        def readable() -> None:
            try:
                while worker.conn.poll():
                    events.put_nowait((worker, worker.conn.recv()))
            except (EOFError, OSError):
                loop.remove_reader(worker.conn.fileno())
                events.put_nowait((worker, ("eof",)))

        loop.add_reader(worker.conn.fileno(), readable)

    def send(worker: _Worker, message: tuple) -> None:
        try:
            worker.conn.send(message)
        except (OSError, ValueError):
            pass  # it died: its pipe's end says so

    def feed(worker: _Worker) -> None:
        while queue and len(worker.inflight) < worker.slots and not worker.stopping:
            item = queue.popleft()
            worker.inflight.add(item[0])
            send(worker, ("run", *item))
        if not worker.inflight and not worker.stopping:
            worker.stopping = True
            send(worker, ("stop",))

    def stop_all() -> None:
        for worker in pool:
            if not worker.gone and not worker.stopping:
                worker.stopping = True
                send(worker, ("stop",))

    failure: LedgerTuiError | None = None
    dead: list[_Worker] = []
    started = False
    try:
        # the workers start up side by side; each reads its recipe once its interpreter is up
        # (a large one would block this loop until then: it is sent from threads)
        await asyncio.gather(*(loop.run_in_executor(None, _hand, w.conn, spec) for w in pool))
        for worker in pool:
            listen(worker)
            feed(worker)
        while any(not w.gone for w in pool):
            worker, message = await events.get()
            kind = message[0]
            if kind == "result":
                _, index, data = message
                worker.inflight.discard(index)
                worker.finished += 1
                await record(TrialResult(**data))
                feed(worker)
            elif kind == "ready":
                worker.ready = True
                if not started:  # the first worker ready starts its runs: from here the runs go
                    started = True
                    if on_start is not None:
                        on_start()
            elif kind == "failed":
                _, index, words, ours = message
                worker.inflight.discard(index)
                if failure is None:
                    failure = _theirs(words, ours) or WorkerError(
                        f"Worker {worker.number} of {workers} stopped on an error it did not expect ({words})"
                    )
                queue.clear()
                stop_all()
            elif kind == "setup_failed":
                _, words, ours = message
                if failure is None:
                    failure = _theirs(words, ours) or WorkerError(f"Worker {worker.number} of {workers} could not set up ({words})")
                queue.clear()
                stop_all()
            elif kind == "bye":
                worker.said_bye = True
            elif kind == "eof":
                worker.gone = True
                if not worker.said_bye:
                    dead.append(worker)
                    if not any(not w.gone for w in pool):
                        queue.clear()
                # its runs in flight are lost; the others take what is left of the queue
    except BaseException:
        # interrupted (Ctrl-C) or a bug: every worker stops, and what they finished is recorded
        stop_all()
        await _drain(pool, events, record)
        raise
    finally:
        for worker in pool:
            if not worker.gone:
                with contextlib.suppress(OSError, ValueError):
                    loop.remove_reader(worker.conn.fileno())
        await _end(pool)
    if failure is not None:
        raise _with_counts(failure, pool, todo)
    if dead:
        raise _death(dead, pool, workers, todo, queue)


async def _drain(pool: list[_Worker], events: asyncio.Queue, record: Callable[[TrialResult], Any]) -> None:
    """After a stop: record the runs the workers finished, until each has said bye or gone."""
    from ledger_tui.eval.runner import TrialResult

    loop = asyncio.get_running_loop()
    deadline = loop.time() + STOP_GRACE
    while any(not w.gone for w in pool):
        left = deadline - loop.time()
        if left <= 0:
            break
        try:
            worker, message = await asyncio.wait_for(events.get(), left)
        except (TimeoutError, asyncio.CancelledError):
            break
        if message[0] == "result":
            worker.inflight.discard(message[1])
            worker.finished += 1
            # written even if on_result raises again (it may be what interrupted the eval)
            with contextlib.suppress(Exception):
                await record(TrialResult(**message[2]))
        elif message[0] == "eof":
            worker.gone = True


async def _end(pool: list[_Worker]) -> None:
    """Every worker process has exited when this returns (ended if it would not)."""
    loop = asyncio.get_running_loop()
    for worker in pool:
        process = worker.process
        if process.pid is None:
            continue
        await loop.run_in_executor(None, process.join, STOP_GRACE if not worker.gone else 1.0)
        if process.is_alive():
            process.terminate()
            await loop.run_in_executor(None, process.join, 1.0)
        if process.is_alive():
            process.kill()
            await loop.run_in_executor(None, process.join, 1.0)
        worker.conn.close()


def _exit_words(code: int | None) -> str:
    if code is None:
        return "stopped without saying why"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"was killed by {name}" + (" (out of memory, perhaps)" if -code == signal.SIGKILL else "")
    return f"exited with code {code}"


def _with_counts(failure: LedgerTuiError, pool: list[_Worker], todo: list) -> LedgerTuiError:
    if not isinstance(failure, WorkerError):
        return failure  # the sentence a run without workers would say
    return WorkerError(f"{str(failure).rstrip('.')}; {_kept(pool, todo)}")


def _kept(pool: list[_Worker], todo: list) -> str:
    from ledger_tui.explain import plural

    finished = sum(w.finished for w in pool)
    return (
        f"{plural(finished, 'finished run')} {'is' if finished == 1 else 'are'} saved in results.jsonl, and running "
        f"the same command again redoes the {len(todo) - finished} left."
    )


def _death(dead: list[_Worker], pool: list[_Worker], workers: int, todo: list, queue: deque) -> WorkerError:
    from ledger_tui.explain import plural

    first = dead[0]
    lost = sum(len(w.inflight) for w in dead)
    who = f"Worker {first.number} of {workers} {_exit_words(first.process.exitcode)}"
    if len(dead) > 1:
        who = f"{len(dead)} of {workers} workers died (worker {first.number} {_exit_words(first.process.exitcode)})"
    return WorkerError(f"{who} with {plural(lost, 'run')} in flight; {_kept(pool, todo)}")

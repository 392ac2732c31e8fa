"""Eval on every core: shards of the runs in worker processes, one writer.

The harness costs CPU per model call (the client, the gate, the environment, grading), so one
process stops keeping up with the model's latency somewhere past 64 sessions. `--workers N` starts N
processes, each with its own event loop and model clients, and gives each a share of `--concurrency`.
They are forked from multiprocessing's fork server, a process of their own that loads the modules
every worker needs once (the `openai` SDK alone takes 0.3-1 s of CPU to import) and shares no state
with the parent: a worker starts with them loaded, and a second eval's workers in the same process
start in a fraction of the first's time (where there is no fork server, on Windows, `spawn`: a fresh
interpreter each). A worker takes the parent's environment as it is when the worker starts. The parent
stays the one writer: it hands out runs one at a time as a worker has a free session (so a worker
with short runs takes more of them), and each finished run comes back over the worker's pipe to be
appended to results.jsonl and counted on the progress bar exactly as a run of its own. A worker
writes the trajectories of its runs, whose paths are unique per (domain, mode, task, trial).
What a worker does with a run and what the parent does with what comes back is shared with the
Ray backend (eval/backends/shards.py); this module is the part that is about processes and pipes.

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
import os
import pickle
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ledger_tui.eval.backends.shards import (
    STOP_GRACE,
    Lane,
    Shard,
    WorkerError,
    WorkerSpec,
    describe,
    dispatch,
    ours,
    setup_failed,
    shares,
    spec_for,
)

if TYPE_CHECKING:
    from ledger_tui.eval.results import TrialResult
    from ledger_tui.eval.trial import EvalConfig

__all__ = ["WorkerError", "WorkerSpec", "shares", "cores", "default_workers", "check_workers", "run_sharded"]

# below this many concurrent sessions one process keeps up with a 200 ms model (benchmarks/eval.py)
MANY_SESSIONS = 64


def cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def default_workers(concurrency: int, available: int | None = None) -> int:
    """1 worker below MANY_SESSIONS concurrent sessions, else one a core (`available`: the cores
    to count, this machine's by default; 1 on Windows, where the event loop cannot watch the
    workers' pipes)."""
    if concurrency < MANY_SESSIONS:
        return 1
    if available is None:
        return 1 if sys.platform == "win32" else cores()
    return max(1, available)


def check_workers(workers: int | None, concurrency: int, backend: str = "local") -> None:
    """One sentence for a --workers value that cannot be used."""
    if workers is None:
        return
    if workers < 1:
        where = "one a core" + (f": {cores()} here" if backend == "local" else " of the Ray cluster")
        raise WorkerError(
            f"--workers must be a positive number of {'processes' if backend == 'local' else 'Ray workers'} (got {workers}); "
            f"leave it out for the default (1 below {MANY_SESSIONS} concurrent sessions, else {where})."
        )
    if workers > 1 and sys.platform == "win32" and backend == "local":
        raise WorkerError("--workers above 1 needs Linux or macOS (the event loop watches the workers' pipes); leave it out on Windows.")
    if workers > concurrency:
        raise WorkerError(
            f"--workers {workers} is more than --concurrency {concurrency}: each worker runs at least one session "
            "at a time; lower --workers or raise --concurrency."
        )


@dataclass(frozen=True)
class Tau2DomainSource:
    """The CLI's domain (a built-in one, or τ²-bench's data), rebuilt the same way in a worker."""

    name: str
    tau2_data: Any = None
    split: str | None = None
    task_file: str | None = None

    def __call__(self) -> Any:
        from ledger_tui.eval.tau2_data import tau2_domain

        return tau2_domain(self.name, self.tau2_data, self.split, self.task_file)[0]


# ---------------------------------------------------------------------------------------- worker


# What every shard of an LLM eval loads before its first run, heaviest last (the model client:
# `openai` alone takes 0.3-1 s to import): loaded once by the fork server, or, by a spawned worker,
# while it waits for its recipe (the parent is still preparing the eval), so that time overlaps
# the parent's instead of following it.
PRELOAD = ("ledger_tui.eval.trial", "ledger_tui.engine.agents.gold", "ledger_tui.engine.model.transport")


def _preload(conn: Any) -> None:
    """Load PRELOAD, one module at a time, until the recipe is there (then it is built at once,
    and what was not loaded loads as it is needed); then the model clients' TLS context."""
    import importlib

    with contextlib.suppress(Exception):  # an import that fails here fails again where it is reported
        for name in PRELOAD:
            if conn.poll():
                return
            importlib.import_module(name)
        if not conn.poll():
            from ledger_tui.engine.model.endpoint import tls_context

            tls_context()


def worker_main(conn: Any, environ: dict[str, str] | None = None) -> None:
    """A worker process: build the config the parent sends first, then run what it sends until
    told to stop. `environ`: the parent's environment (the fork server's is as it was when it
    started)."""
    if environ is not None and environ != os.environ:
        os.environ.clear()
        os.environ.update(environ)
    # Ctrl-C goes to every process of the terminal's group: the parent decides what stops
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    _preload(conn)
    try:
        shard = Shard.from_recipe(conn.recv_bytes())
    except BaseException as exc:  # noqa: BLE001 - said to the parent in one sentence
        _send(conn, setup_failed(exc))
        return
    try:
        asyncio.run(_serve(conn, shard))
    except BaseException as exc:  # noqa: BLE001 - a bug here is one sentence from the parent, not a traceback
        _send(conn, ("failed", -1, describe(exc), ours(exc)))


def _hand(conn: Any, spec: bytes) -> None:
    with contextlib.suppress(OSError):  # a worker that died at start: its pipe's end says so
        conn.send_bytes(spec)


def _send(conn: Any, message: tuple) -> bool:
    try:
        conn.send(message)
        return True
    except (OSError, ValueError):  # the parent is gone
        return False


async def _serve(conn: Any, shard: Shard) -> None:
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
    ready = await shard.prepare()
    _send(conn, ready)
    if ready[0] != "ready":
        return
    running: dict[int, asyncio.Task[None]] = {}

    async def one(index: int, position: int, trial: int, mode: str) -> None:
        try:
            ok = _send(conn, await shard.run(index, position, trial, mode))
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


@dataclass(eq=False)
class _Worker(Lane):
    process: Any = None
    conn: Any = None

    def fate(self) -> str:
        return _exit_words(self.process.exitcode)


def check_shardable(config: EvalConfig) -> None:
    """One sentence, before anything starts, if worker processes cannot rebuild this config."""
    if config.domain_source is None:
        raise WorkerError("More than one worker needs the domain's source (EvalConfig.domain_source) to rebuild it in each worker.")
    try:
        pickle.dumps(replace(config, domain=None))
    except Exception as exc:  # noqa: BLE001
        raise WorkerError(f"The eval cannot be handed to worker processes ({describe(exc)}); run it with --workers 1.") from None


def spawn(config: EvalConfig, workers: int) -> list[_Worker]:
    """Start the worker processes. Each loads its modules, then waits for its recipe, so they start
    up while this process prepares the eval (run_sharded sends the recipes); `abandon` ends them
    if the eval stops before. The first start of the fork server waits for its imports: the
    runner calls this in a thread."""
    import multiprocessing

    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        # (as spawn does, the parent's __main__ is loaded as __mp_main__: what it defines unpickles)
        context.set_forkserver_preload(["__main__", *PRELOAD])
    else:
        context = multiprocessing.get_context("spawn")
    pool: list[_Worker] = []
    # Ctrl-C reaches every process of the terminal's group, and this process decides what stops: the
    # processes started here (the fork server, spawned workers) start with it blocked, as the
    # blocked signals of the thread that starts them are theirs from their first instruction (a
    # worker's own SIG_IGN comes after its imports, the fork server's after its preloads: a Ctrl-C
    # during them printed a traceback). In this process it is only held until they are started.
    # (multiprocessing's resource tracker is started first: starting it unblocks the signal.)
    held = None
    if hasattr(signal, "pthread_sigmask"):
        from multiprocessing import resource_tracker

        resource_tracker.ensure_running()
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    try:
        for number, slots in enumerate(shares(config.concurrency, workers), start=1):
            mine, theirs = context.Pipe(duplex=True)
            process = context.Process(target=worker_main, args=(theirs, dict(os.environ)), name=f"ledger-tui eval worker {number}", daemon=True)
            try:
                process.start()
            except OSError as exc:
                raise WorkerError(f"Could not start worker process {number} of {workers} ({exc.strerror or exc}); try fewer --workers.") from None
            theirs.close()
            pool.append(_Worker(number, slots, process=process, conn=mine))
    except BaseException:
        abandon(pool)
        raise
    finally:
        if held is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, held)
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


class _Pipes:
    """The local backend: each worker's pipe, watched by this process's event loop."""

    def __init__(self, pool: list[_Worker], spec: bytes) -> None:
        self.pool = pool
        self.spec = spec
        self.events: asyncio.Queue[tuple[Lane, tuple]] = asyncio.Queue()
        self.loop = asyncio.get_running_loop()

    async def begin(self) -> None:
        # the workers start up side by side; each reads its recipe once its interpreter is up
        # (a large one would block this loop until then: it is sent from threads)
        await asyncio.gather(*(self.loop.run_in_executor(None, _hand, w.conn, self.spec) for w in self.pool))
        for worker in self.pool:
            self._listen(worker)

    def _listen(self, worker: _Worker) -> None:
        def readable() -> None:
            try:
                while worker.conn.poll():
                    self.events.put_nowait((worker, worker.conn.recv()))
            except (EOFError, OSError):
                self.loop.remove_reader(worker.conn.fileno())
                self.events.put_nowait((worker, ("eof",)))

        self.loop.add_reader(worker.conn.fileno(), readable)

    def send(self, lane: Lane, message: tuple) -> None:
        assert isinstance(lane, _Worker)
        try:
            lane.conn.send(message)
        except (OSError, ValueError):
            pass  # it died: its pipe's end says so

    async def end(self) -> None:
        """Every worker process has exited when this returns (ended if it would not)."""
        for worker in self.pool:
            if not worker.gone:
                with contextlib.suppress(OSError, ValueError):
                    self.loop.remove_reader(worker.conn.fileno())
        for worker in self.pool:
            process = worker.process
            if process.pid is None:
                continue
            await self.loop.run_in_executor(None, process.join, STOP_GRACE if not worker.gone else 1.0)
            if process.is_alive():
                process.terminate()
                await self.loop.run_in_executor(None, process.join, 1.0)
            if process.is_alive():
                process.kill()
                await self.loop.run_in_executor(None, process.join, 1.0)
            worker.conn.close()


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
    if pool is None:
        check_shardable(config)
        pool = spawn(config, workers)
    try:
        spec = pickle.dumps(spec_for(config, todo))
    except Exception as exc:  # noqa: BLE001
        abandon(pool)
        raise WorkerError(f"The eval cannot be handed to worker processes ({describe(exc)}); run it with --workers 1.") from None
    await dispatch(config, todo, _Pipes(pool, spec), pool, record, on_start)


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

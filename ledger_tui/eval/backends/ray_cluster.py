"""Eval on many machines: the same shards as `--workers`, run as Ray actors (`--backend ray`).

Ray is an existing engine for running Python on a cluster (`ray start --head` on one machine,
`ray start --address=HEAD:6379` on the others); this module is the thin part that is about Ray.
Everything else is the worker processes' own code (eval/backends/shards.py): each actor holds a `Shard`
(its own event loop, its own model clients, its share of `--concurrency`), and this process stays
the one writer of results.jsonl, resume and the progress bar, recording each run as it finishes.

An actor's machine need not share a file system with this one, so nothing goes by path:

- **the domain** goes as data (`ShippedDomain`): its code by reference (every machine has
  ledger-tui installed), its policy as text and its database files as bytes, written to the
  actor's own temporary folder;
- **trajectories** come back as bytes with each result and are written here, at the path a run on
  this machine would have written (so results.jsonl and the trajectories are the same as the
  local backend's);
- the model endpoint is reached by every actor itself: it must be reachable from every machine.

What can go wrong is one sentence and nothing finished is lost: Ray not installed, a cluster that
does not answer at `--ray-address`, an actor that dies (its runs in flight are redone by a resume),
Ctrl-C (every actor is stopped, what came back is kept).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.eval.backends.ray_actor import ShardActor, ShippedDomain
from ledger_tui.eval.backends.shards import (
    STOP_GRACE,
    Lane,
    WorkerError,
    describe,
    dispatch,
    ours,
    shares,
    spec_for,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from ledger_tui.eval.results import TrialResult
    from ledger_tui.eval.trial import EvalConfig

BACKENDS = ("local", "ray")
INSTALL = "pip install 'ledger-tui[ray]'"
CLIENT_INSTALL = "pip install 'ray[client]'"  # (the ray extra installs it)
AUTH_MODE = "RAY_AUTH_MODE"  # Ray's switch for its token authentication
READY_TIMEOUT = 120.0  # seconds an actor may take to be placed and set up
CONNECT_TIMEOUT = 5.0  # seconds to wait for a cluster's address to answer at all
_LOG_KEPT = 1 << 20  # bytes of what Ray logs while joining that are read for the cause of a failure


class RayError(LedgerTuiError):
    """Ray missing, or a Ray cluster that cannot be used."""


def need_ray() -> Any:
    """The ray module, or one sentence saying how to install it."""
    try:
        import ray
    except ImportError:
        raise RayError(f"--backend ray needs Ray, which is not installed here; install it with {INSTALL}.") from None
    return ray


def check_backend(backend: str, ray_address: str | None) -> None:
    """One sentence, before anything runs, for a backend that cannot be used as given."""
    if backend not in BACKENDS:
        raise RayError(f"Unknown --backend {backend!r}; choose local (worker processes on this machine) or ray (Ray actors).")
    if ray_address is not None and backend != "ray":
        raise RayError("--ray-address needs --backend ray; add it, or leave --ray-address out to run on this machine.")
    if backend == "ray":
        need_ray()
        if ray_address is not None:
            _host_port(ray_address)


def _host_port(address: str) -> tuple[str, int] | None:
    """(host, port) of a cluster address to try before joining; None for `auto` and `local`."""
    if address in ("auto", "local"):
        return None
    target = address.removeprefix("ray://")
    host, colon, port = target.rpartition(":")
    if not colon or not host or not port.isdigit():
        raise RayError(
            f"--ray-address {address!r} is not HOST:PORT; pass the head's address as `ray start --head` prints it, e.g. 10.0.0.5:6379."
        )
    return host.strip("[]"), int(port)


def _reachable(address: str) -> None:
    """One sentence if nothing answers at `address` (ray.init itself would retry for minutes)."""
    target = _host_port(address)
    if target is None:
        return
    try:
        socket.create_connection(target, timeout=CONNECT_TIMEOUT).close()
    except OSError as exc:
        why = "no answer" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__).lower()
        if address.startswith("ray://"):
            raise RayError(
                f"No Ray Client server answers at {address} ({why}); the head serves one (port 10001) only with Ray's client "
                f"package installed there ({CLIENT_INSTALL}, then `ray start --head` again), or {_ON_THE_CLUSTER}."
            ) from None
        raise RayError(
            f"No Ray cluster answers at {address} ({why}); start one there with `ray start --head`, fix --ray-address "
            "(or RAY_ADDRESS), or leave both unset to run on a local Ray instance."
        ) from None


# the other way in, when Ray Client cannot be used
_ON_THE_CLUSTER = "run the eval on a machine of the cluster with the head's HOST:6379"
# what Ray's client logs while a cluster that wants a token refuses it (or gets none)
_AUTH_WORDS = ("InvalidAuthToken", "Unauthenticated", "AuthenticationError")


def _join_failure(address: str, exc: BaseException, log: str) -> str:
    """Why joining the cluster at `address` failed, in one sentence: Ray's exception says too
    little when the cause is its token authentication (a connection error after retries), so what
    its client logged while trying is read as well."""
    said = str(exc)
    if "ray[client]" in said:
        return (
            f"Ray Client addresses ({address}) need Ray's client package on this machine and on the head: {CLIENT_INSTALL}; "
            f"or {_ON_THE_CLUSTER}."
        )
    if any(word in log or word in said or word == type(exc).__name__ for word in _AUTH_WORDS):
        return (
            f"The Ray cluster at {address} uses token authentication and refused this machine (no token sent, or not "
            f"the cluster's); run the eval with {AUTH_MODE}=token and the head's token in ~/.ray/auth_token or "
            "RAY_AUTH_TOKEN, as `ray start --address` on the other machines needs too."
        )
    # (a Ray Client connection that a cluster's token authentication refuses just times out)
    token = "" if os.environ.get(AUTH_MODE, "").lower() == "token" else (
        f", and with {AUTH_MODE}=token and its token if the cluster uses token authentication"
    )
    where = (
        "reach the head's Ray Client port from here"
        if address.startswith("ray://")
        else "run the eval on a machine of the cluster (its head, or one that ran `ray start --address=HEAD:6379`) "
        "with the address `ray start --head` printed"
    )
    return f"Could not join a Ray cluster at {address} ({_ray_words(exc)}); {where}, with the same Ray version as the cluster{token}."


@contextlib.contextmanager
def _set_aside() -> Iterator[list[str]]:
    """Ray's own client logs each retry of a failing connection on this process's stderr, from
    native code; while joining, what it writes there is set aside (a failure is one sentence) and
    handed back, read, when the block ends."""
    sys.stderr.flush()
    log: list[str] = []
    with tempfile.TemporaryFile() as sink:
        saved = os.dup(2)
        os.dup2(sink.fileno(), 2)
        try:
            yield log
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            sink.seek(0)
            log.append(sink.read(_LOG_KEPT).decode("utf-8", "replace"))


# ------------------------------------------------------------------------------------ the writer


@dataclass(eq=False)
class _Actor(Lane):
    handle: Any = None
    node: str = "an unknown machine"
    cause: str = "its process ended: killed, out of memory or a crash"
    lost: bool = False  # a call found it dead
    calls: set[asyncio.Task[None]] = field(default_factory=set)

    title = "Ray worker"

    def fate(self) -> str:
        return f"died on {self.node} ({self.cause})"


def _ray_words(exc: BaseException) -> str:
    """A Ray error in a few words (their messages hold tracebacks and ids): what an actor's code
    raised, else the first line of Ray's message."""
    cause = getattr(exc, "cause", None)
    if isinstance(cause, BaseException):
        return describe(cause)
    first = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


class _Actors:
    """The Ray backend: each call to an actor is watched by a task of this event loop, which puts
    the actor's answer on the writer's queue (and a finished run's trajectory on disk)."""

    def __init__(self, ray: Any, pool: list[_Actor], spec: Any, out: Path) -> None:
        self.ray = ray
        self.pool = pool
        self.spec = spec
        self.out = out
        self.events: asyncio.Queue[tuple[Lane, tuple]] = asyncio.Queue()

    async def begin(self) -> None:
        for lane in self.pool:
            self._watch(lane, "setup", lane.handle.setup.remote(self.spec))

    def send(self, lane: Lane, message: tuple) -> None:
        assert isinstance(lane, _Actor)
        if lane.gone:
            return
        if message[0] == "run":
            self._watch(lane, "run", lane.handle.run.remote(*message[1:]), message[1])
        else:
            self._watch(lane, "stop", lane.handle.stop.remote())

    def _watch(self, lane: _Actor, kind: str, ref: Any, index: int = -1) -> None:
        task = asyncio.create_task(self._answer(lane, kind, ref, index))
        lane.calls.add(task)
        task.add_done_callback(lane.calls.discard)

    async def _answer(self, lane: _Actor, kind: str, ref: Any, index: int) -> None:
        try:
            message = await (asyncio.wait_for(ref, READY_TIMEOUT) if kind == "setup" else ref)
        except self.ray.exceptions.RayActorError as exc:
            if kind == "setup":
                self._put(lane, ("setup_failed", f"it could not start: {_ray_words(exc)}", None))
            self._lost(lane, exc)
            return
        except TimeoutError:
            message = ("setup_failed", f"it did not start within {READY_TIMEOUT:.0f} s; the cluster may have no CPU free for it", None)
        except Exception as exc:  # noqa: BLE001 - a Ray error about this one call
            if kind == "stop":
                self._lost(lane, exc)
                return
            message = ("setup_failed", _ray_words(exc), None) if kind == "setup" else ("failed", index, _ray_words(exc), None)
        if message[0] == "cancelled":
            return
        if message[0] == "ready":
            lane.node = message[1]
            message = ("ready",)
        elif message[0] == "result":
            message = self._land(message)
        elif message[0] == "bye":
            # everything the actor finished is on the queue before it is said to be gone
            others = [t for t in lane.calls if t is not asyncio.current_task()]
            await asyncio.gather(*others, return_exceptions=True)
            self._put(lane, message)
            message = ("eof",)
        self._put(lane, message)

    def _land(self, message: tuple) -> tuple:
        """Write a finished run's trajectory where a run on this machine would have written it."""
        from ledger_tui.eval.trial import trajectory_path

        _, index, data, trajectory = message
        try:
            path = trajectory_path(self.out, data["domain"], data["mode"], data["task_id"], data["trial"])
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(trajectory)
        except Exception as exc:  # noqa: BLE001 - the eval stops with this sentence
            return ("failed", index, describe(exc), ours(exc))
        return ("result", index, {**data, "trajectory": str(path)})

    def _lost(self, lane: _Actor, exc: BaseException) -> None:
        if lane.gone or lane.lost:
            return
        lane.lost = True
        if "its node has died" in str(exc):  # (not "its worker process has died": the machine stays)
            lane.cause = "its machine left the cluster"
        self._put(lane, ("eof",))

    def _put(self, lane: Lane, message: tuple) -> None:
        self.events.put_nowait((lane, message))

    async def end(self) -> None:
        """Every actor is ended when this returns (they have said bye, or are killed now)."""
        calls = [task for lane in self.pool for task in lane.calls]
        for task in calls:
            task.cancel()
        await asyncio.gather(*calls, return_exceptions=True)
        await _kill(self.ray, self.pool)


@dataclass
class Cluster:
    """A connection to Ray (this process's own local instance, or a cluster it joined) and the
    actors of one eval."""

    ray: Any
    owned: bool  # started or joined here, so shut down here
    pool: list[_Actor] = field(default_factory=list)
    unmute: Callable[[], None] | None = None

    @classmethod
    def join(cls, config: EvalConfig, runs: int) -> Cluster:
        """Connect (the address: --ray-address, else RAY_ADDRESS, else a new local instance) and
        start the actors, which set up once `run` hands them the eval."""
        ray = need_ray()
        cluster = cls(ray, owned=not ray.is_initialized())
        if cluster.owned:
            address = config.ray_address or os.environ.get("RAY_ADDRESS") or "local"
            _reachable(address)
            log: list[str] = []
            try:
                with _set_aside() if address != "local" else contextlib.nullcontext(log) as log:
                    ray.init(address=address, include_dashboard=False, logging_level=logging.ERROR, log_to_driver=False)
            except Exception as exc:  # noqa: BLE001 - one sentence, whatever Ray raised
                cluster.close()
                if address == "local":
                    raise RayError(f"Could not start a local Ray instance ({_ray_words(exc)}); run the eval with --backend local.") from None
                raise RayError(_join_failure(address, exc, "".join(log))) from None
            cluster.unmute = _mute_raylet(ray)
        try:
            cluster.start(config, runs)
        except BaseException:
            cluster.close()
            raise
        return cluster

    def start(self, config: EvalConfig, runs: int) -> None:
        from ledger_tui.eval.backends.processes import default_workers

        cpus = int(self.ray.cluster_resources().get("CPU", 0))
        wanted = config.workers if config.workers is not None else default_workers(config.concurrency, cpus)
        if wanted > cpus:
            from ledger_tui.explain import plural

            raise RayError(
                f"--workers {wanted} needs {plural(wanted, 'CPU')} of the Ray cluster, which has {cpus}; lower --workers or add "
                "machines with `ray start --address=HEAD:6379`."
            )
        workers = max(1, min(wanted, config.concurrency, runs))
        actor = self.ray.remote(ShardActor)
        for number, slots in enumerate(shares(config.concurrency, workers), start=1):
            # one CPU each, spread over the machines: a worker is one event loop on one core
            handle = actor.options(num_cpus=1, max_concurrency=slots + 2, scheduling_strategy="SPREAD").remote()
            self.pool.append(_Actor(number, slots, handle=handle))

    async def run(
        self,
        config: EvalConfig,
        todo: list[tuple[Any, int, str]],
        record: Callable[[TrialResult], Any],
        on_start: Callable[[], None] | None = None,
    ) -> None:
        """Run `todo` on the actors; `record` (awaited) is called here for each finished run."""
        from ray import cloudpickle

        try:
            spec = cloudpickle.dumps(spec_for(config, todo, domain_source=ShippedDomain.of(config.domain)))
        except Exception as exc:  # noqa: BLE001
            raise WorkerError(f"The eval cannot be handed to Ray workers ({describe(exc)}); run it with --backend local.") from None
        backend = _Actors(self.ray, self.pool, self.ray.put(spec), config.out)
        await dispatch(config, todo, backend, self.pool, record, on_start)

    def close(self) -> None:
        """End the actors at once; leave Ray if this process started or joined it."""
        _kill_now(self.ray, self.pool)
        self._leave()

    async def aclose(self) -> None:
        """End the actors, waiting until they are gone; leave Ray if this process started or joined it."""
        try:
            await _kill(self.ray, self.pool)
        finally:  # (a second Ctrl-C while they end still leaves Ray)
            self._leave()

    def _leave(self) -> None:
        try:
            if self.owned and self.ray.is_initialized():
                self.ray.shutdown()
        finally:
            if self.unmute is not None:
                self.unmute()
                self.unmute = None


# how a raylet's report of a worker process that died begins (Ray 2.x)
_WORKER_DIED = "A worker died or was killed"


def _mute_raylet(ray: Any) -> Callable[[], None] | None:
    """Ray prints on this process's stdout, in several lines, its raylets' report of a worker
    process that died; the eval says that itself in one sentence (`_Actor.fate`), so that report
    is not shown while this process is joined to Ray (the raylets' other reports, such as a task
    killed for memory, still are). Returns what shows them again. (Ray's printer is looked up
    where its listener finds it; if a Ray version moves it, nothing is muted.)"""
    module = getattr(getattr(ray, "_private", None), "worker", None)
    shown = getattr(module, "print_to_stdstream", None)
    if shown is None:
        return None

    def unless_raylet(data: Any, *args: Any, **kwargs: Any) -> None:
        lines = data.get("lines") if isinstance(data, dict) and data.get("pid") == "raylet" else None
        if not (lines and all(str(line).lstrip().startswith(_WORKER_DIED) for line in lines)):
            shown(data, *args, **kwargs)

    module.print_to_stdstream = unless_raylet

    def unmute() -> None:
        module.print_to_stdstream = shown

    return unmute


def _kill_now(ray: Any, pool: list[_Actor]) -> None:
    for lane in pool:
        with contextlib.suppress(Exception):  # already gone, or the cluster with it
            ray.kill(lane.handle, no_restart=True)


async def _kill(ray: Any, pool: list[_Actor]) -> None:
    """Kill the actors and wait (a few seconds at most) until Ray says each is dead: a call made
    after the kill fails once its process has gone."""
    _kill_now(ray, pool)
    probes = [lane.handle.stop.remote() for lane in pool]
    with contextlib.suppress(Exception):
        await asyncio.wait_for(asyncio.gather(*probes, return_exceptions=True), STOP_GRACE)

"""The Ray actors' side of `eval --backend ray` (the writer's side is eval/backends/ray_cluster.py).

An actor may run on a machine that shares no file system with the one running eval, so what it
needs comes as data (`ShippedDomain`), its trajectories are kept in memory and each travels back
with its result, and what else it writes stays in a folder of its own. Nothing here imports Ray at module level:
`ray.remote(ShardActor)` makes the actor class when an eval starts.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ledger_tui.eval.backends.shards import Shard, setup_failed


@dataclass(frozen=True)
class ShippedDomain:
    """A domain with its data, for a worker that cannot read this machine's files: its code by
    reference (each machine imports it), its policy as text, its database files as bytes (written
    to a temporary folder where it is rebuilt, the first file being the one `load_db` is given)."""

    domain: Any
    files: tuple[tuple[str, bytes], ...]

    @classmethod
    def of(cls, domain: Any) -> ShippedDomain:
        files = tuple((path.name, path.read_bytes()) for path in domain.db_files())
        portable = replace(domain, _cache={}, policy_override=domain.policy, db_override=None)
        return cls(portable, files)

    def __call__(self) -> Any:
        folder = Path(tempfile.mkdtemp(prefix="ledger-tui-data-"))
        for name, data in self.files:
            (folder / name).write_bytes(data)
        return replace(self.domain, db_override=folder / self.files[0][0], _cache={})


# ------------------------------------------------------------------------------------- the actor


class ShardActor:
    """A Ray actor running a share of the sessions: a Shard whose trajectories are kept in memory,
    each travelling back with its result (anything else it writes goes to its own temporary
    folder). Made a Ray actor class by `ray.remote` when an eval starts, so importing this module
    does not need Ray."""

    def __init__(self) -> None:
        self.home: Path | None = None
        self.shard: Shard | None = None
        self.ready = asyncio.Event()
        self.stopped = False
        self.running: dict[int, asyncio.Future[tuple]] = {}

    async def setup(self, recipe: bytes) -> tuple:
        """Build the shard and prepare it: `("ready", where)` or `("setup_failed", ...)`."""
        import ray

        from ledger_tui.engine.store.trajectories import keep_in_memory

        try:
            self.home = _home()
            keep_in_memory()  # each trajectory goes back with its result: no file per run here
            self.shard = Shard.from_recipe(recipe, out=self.home / "out")
        except BaseException as exc:  # noqa: BLE001 - said by the writer in one sentence
            return setup_failed(exc)
        message = await self.shard.prepare()
        if message[0] != "ready":
            return message
        self.ready.set()
        return ("ready", ray.util.get_node_ip_address())

    async def run(self, index: int, position: int, trial: int, mode: str) -> tuple:
        """One run's message; a result carries its trajectory's bytes last."""
        from ledger_tui.engine.store.trajectories import taken
        from ledger_tui.eval.trial import trajectory_path

        await self.ready.wait()
        if self.stopped or self.shard is None:
            return ("cancelled", index)
        config = self.shard.config
        written = trajectory_path(config.out, config.domain.name, mode, config.tasks[position].id, trial)
        task = self.running[index] = asyncio.ensure_future(self.shard.run(index, position, trial, mode))
        try:
            message = await task
        except asyncio.CancelledError:
            return ("cancelled", index)
        finally:
            self.running.pop(index, None)
            trajectory = taken(written)  # (a run that failed or was cancelled sends none)
        if message[0] != "result":
            return message
        if trajectory is None:  # never expected: every run writes one
            return ("failed", index, "The run finished without a trajectory; this is a bug in ledger-tui.", None)
        return (*message, trajectory)

    async def stop(self) -> tuple:
        """Cancel the runs in flight (each answers "cancelled"), then remove this actor's folder."""
        self.stopped = True
        self.ready.set()
        for task in list(self.running.values()):
            task.cancel()
        await asyncio.gather(*self.running.values(), return_exceptions=True)
        if self.home is not None:
            shutil.rmtree(self.home, ignore_errors=True)
            _sweep(self.home.parent)  # and those of actors killed on this machine meanwhile (in this eval too)
        return ("bye",)


HOME = "ledger-tui-ray-"


def _home() -> Path:
    """The folder of everything an actor writes (the domain's data, its runs' trajectories until
    they are sent), removed when it stops; the process is the actor's, so its temporary files all
    go there. An actor that was killed could not remove its own: the folders of actors no longer
    running on this machine are removed when another actor starts or stops there (`_sweep`)."""
    here = Path(tempfile.gettempdir())
    _sweep(here)
    home = Path(tempfile.mkdtemp(prefix=f"{HOME}{os.getpid()}-", dir=here))
    tempfile.tempdir = str(home)
    return home


def _sweep(here: Path) -> None:
    """Remove the folders in `here` of actors no longer running (named by their process)."""
    for old in here.glob(f"{HOME}*-*"):
        pid = old.name[len(HOME) :].split("-", 1)[0]
        if pid.isdigit() and not _running(int(pid)):
            shutil.rmtree(old, ignore_errors=True)


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # someone else's
    return True

"""The evaluation harness: tasks × trials × modes, run concurrently, graded, resumable.

Each trial is one conversation between the simulated customer and the agent (in one ablation
mode), recorded as a trajectory; its result is appended to `results.jsonl` as soon as it is graded,
so an interrupted evaluation resumes without redoing finished trials. Transient model failures are
retried with backoff; what still fails is recorded as an infrastructure error and left out of
pass^k, as τ²-bench does.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Awaitable, Callable, Iterable, Iterator


from ledger_tui.engine.agents.tasks import Task
from ledger_tui.eval.results import RESULTS, canonical_ids, load_results
from ledger_tui.eval.results import TrialResult
from ledger_tui.eval.trial import EvalConfig, result_row
from ledger_tui.eval.backends.local import run_local
from ledger_tui.eval.grade import tau2_gold_digests


def worker_count(config: EvalConfig, runs: int) -> int:
    """The worker processes this eval uses: --workers (or its default), no more than the sessions
    in flight or the runs to do."""
    from ledger_tui.eval.backends.processes import check_workers, default_workers

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
    (eval/backends/processes.py), with backend "ray" to Ray actors (eval/backends/ray_cluster.py),
    else they run here (eval/backends/local.py); this process
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
    pool = cluster = starting = None
    if on_ray:
        from ledger_tui.eval.backends.ray_cluster import Cluster

        cluster = Cluster.join(config, len(todo))  # its actors start up while this process prepares
    elif workers > 1:
        from ledger_tui.eval.backends.processes import abandon, check_shardable, spawn

        check_shardable(config)
        # they start up while this process prepares (a fork server's first start waits for its imports)
        starting = asyncio.get_running_loop().run_in_executor(None, spawn, config, workers)
    try:
        _prepare(config, todo, kept)
    except BaseException:
        if starting is not None:
            with suppress(Exception):
                abandon(await starting)
        if cluster is not None:
            await cluster.aclose()
        raise
    if starting is not None:
        pool = await starting
    lock = asyncio.Lock()
    results = list(kept)

    async def record(result: TrialResult) -> None:
        async with lock:
            results.append(result)
            path = config.out / RESULTS
            with _named(path), path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps(result_row(result)) + "\n")
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
        from ledger_tui.eval.backends.processes import run_sharded

        await run_sharded(config, todo, workers, record, on_start, pool)
        return results

    await run_local(config, todo, record, on_start)
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
        path.write_text("".join(json.dumps(result_row(r)) + "\n" for r in kept), encoding="utf-8")


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
    from ledger_tui.engine.agents.tasks import by_name

    wanted = [i.strip() for i in ids.split(",") if i.strip()]
    named = by_name(tasks)  # a task's former id finds it too
    missing = [i for i in wanted if i not in named]
    if missing:
        from ledger_tui.engine.errors import TaskError

        raise TaskError(f"Unknown task id(s): {', '.join(missing)}; known ids include {', '.join(t.id for t in tasks[:10])}.")
    return list({named[i].id: named[i] for i in wanted}.values())

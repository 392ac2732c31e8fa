"""The in-process backend: every run on this process's event loop, `--concurrency` at a time."""

from __future__ import annotations

import asyncio
import gc
from typing import Awaitable, Callable

from ledger_tui.engine.agents.tasks import Task
from ledger_tui.eval import interrupt
from ledger_tui.eval.results import TrialResult
from ledger_tui.eval.trial import EvalConfig, run_one


# The cyclic collector's young generation while runs are in flight, in allocations (Python's is
# 700). With 128 sessions at once, a 2-second airline eval made ~140 young, ~12 middle and one full
# collection: 0.15-0.25 s of the 0.9-1.3 s of CPU it took, the full one a pause of 0.12-0.14 s for
# every session. With this, two young collections of about 20 ms.
RUNS_YOUNG_GENERATION = 50_000


def collect_for_runs() -> tuple[int, ...]:
    """Set the collector for runs in flight: what exists now, what every run shares (the pristine
    database, the gold states), frozen out of it, and its young generation collected less often.
    Returns the thresholds it had."""
    thresholds = gc.get_threshold()
    young, *older = thresholds
    gc.freeze()
    gc.set_threshold(max(young, RUNS_YOUNG_GENERATION), *older)
    return thresholds


async def run_local(
    config: EvalConfig,
    todo: list[tuple[Task, int, str]],
    record: Callable[[TrialResult], Awaitable[None]],
    on_start: Callable[[], None] | None,
) -> None:
    """Run `todo` here, handing each result to `record` as it is graded. Ctrl-C (interrupt.py):
    the runs in flight finish and no more start; any other interruption cancels them all (the
    finished ones are recorded)."""
    semaphore = asyncio.Semaphore(max(1, config.concurrency))
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
    thresholds = collect_for_runs()
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
        gc.set_threshold(*thresholds)
        gc.unfreeze()

"""UI latency, headless (`app.run_test`): what the operator feels when the ledger grows or the
replay cursor moves.

- one ledger update applied to a tree that already shows 1,000 paths (target < 16 ms: one frame);
- one replay step in a 2,000-event trajectory (target < 50 ms).

Run: `python benchmarks/ui.py`. Prints medians (and p90) in milliseconds of CPU time for the change
*and* the repaint it causes (`pilot.pause()` waits for the screen to settle). CPU time, because
wall-clock time of `pause()` includes Textual's frame pacing (idle waiting, ~20 ms even when
nothing changed), which is not work the change caused. The synchronous intent call alone
(`apply`, the cursor move) is printed too, in wall-clock time.
"""

from __future__ import annotations

import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ledger_tui.engine.events import (  # noqa: E402
    AssistantMessage,
    Event,
    LedgerUpdated,
    SessionStarted,
    ToolCall,
    ToolCallProposed,
    ToolResult,
    UserMessage,
)
from ledger_tui.ui.app import make_app  # noqa: E402
from tests.toy_domain import build_toy  # noqa: E402

ROUNDS = 60


def synthetic_trajectory(n: int) -> list[Event]:
    """A long, plausible session: customer turns, agent reads, ledger updates (many paths)."""
    events: list[Event] = [
        SessionStarted(seq=0, session_id="bench", domain="toy", model="bench", mode="full", policy_digest="-", db_digest="-", clock="2025-01-01")
    ]
    i = 0
    while len(events) < n:
        seq = len(events)
        k = i % 4
        if k == 0:
            events.append(UserMessage(seq=seq, text=f"customer message {i}"))
        elif k == 1:
            call = ToolCall(id=f"c{i}", name="get_loan_details", arguments={"loan_id": f"L{i}"})
            events.append(AssistantMessage(seq=seq, tool_calls=[call]))
            events.append(ToolCallProposed(seq=seq + 1, call=call, kind="read"))
            events.append(ToolResult(seq=seq + 2, call_id=call.id, name=call.name, content="{}"))
        else:
            value = {"loan_id": f"L{i}", "member_id": "m1", "book": f"Book {i}", "status": "active", "renewals": i % 3}
            events.append(LedgerUpdated(seq=seq, path=f"loans.L{i % 700}", change="added", after=value, source_seq=seq - 1))
        i += 1
    return events[:n]


def report(name: str, samples: list[float], target: float) -> None:
    ms = sorted(s * 1000 for s in samples)
    median = statistics.median(ms)
    p90 = ms[int(len(ms) * 0.9) - 1]
    verdict = "ok" if median < target else "SLOW"
    print(f"{name:<52} median {median:7.2f} ms   p90 {p90:7.2f} ms   target < {target:g} ms  {verdict}")


async def bench_ledger_update() -> tuple[list[float], list[float]]:
    app = make_app(domain=build_toy(), model=None)
    samples: list[float] = []
    direct: list[float] = []
    async with app.run_test(size=(200, 50)) as pilot:
        tree = app.screen.ledger
        for p in range(1000):
            tree.apply(LedgerUpdated(path=f"ns{p % 20}.rec{p}", change="added", after={"id": p, "v": 0}))
        await pilot.pause()
        for r in range(ROUNDS):
            update = LedgerUpdated(path=f"ns{r % 20}.rec{r * 7 % 1000}", change="changed", after={"id": r, "v": r + 1})
            cpu = time.process_time()
            start = time.perf_counter()
            tree.apply(update)
            direct.append(time.perf_counter() - start)
            await pilot.pause()
            samples.append(time.process_time() - cpu)
    return samples, direct


async def bench_replay_step() -> tuple[list[float], list[float]]:
    events = synthetic_trajectory(2000)
    app = make_app(events=events, step=1000, domain=build_toy())
    samples: list[float] = []
    direct: list[float] = []
    async with app.run_test(size=(200, 50)) as pilot:
        screen = app.screen
        await pilot.pause()
        for r in range(ROUNDS):
            cpu = time.process_time()
            start = time.perf_counter()
            screen.cursor += 1 if r % 2 == 0 else -1  # the watcher updates all three panes
            direct.append(time.perf_counter() - start)
            await pilot.pause()
            samples.append(time.process_time() - cpu)
    return samples, direct


async def main() -> None:
    frame, direct = await bench_ledger_update()
    report("ledger update, 1,000 paths: apply + repaint (CPU)", frame, 16)
    report("ledger update, 1,000 paths: apply() alone", direct, 16)
    frame, direct = await bench_replay_step()
    report("replay step, 2,000 events: step + repaint (CPU)", frame, 50)
    report("replay step, 2,000 events: cursor move alone", direct, 50)


if __name__ == "__main__":
    asyncio.run(main())

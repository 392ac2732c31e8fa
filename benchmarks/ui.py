"""UI latency, headless (`app.run_test`): what the operator feels when the ledger grows or the
replay cursor moves.

- one ledger update applied to a tree that already shows 1,000 paths (target < 16 ms: one frame);
- one replay step in a 2,000-event trajectory (target < 50 ms);
- a 100,000-event trajectory (`--events N` to change it), made by looping a shipped session
  (`sessions/telecom-overdue-bill.jsonl` by default, `--session`) with fresh seqs and call ids:
  reading it, folding it, opening replay on it at the last step (first paint: read, fold, mount
  and the first frame; target ≤ 5 s), a jump to a random step (target ≤ 100 ms) and one step
  forward or back from a random step (target ≤ 30 ms).

Run: `python benchmarks/ui.py`. Prints medians (and p90) in milliseconds of CPU time for the change
*and* the repaint it causes (`pilot.pause()` waits for the screen to settle). CPU time, because
wall-clock time of `pause()` includes Textual's frame pacing (idle waiting, ~20 ms even when
nothing changed), which is not work the change caused. The synchronous intent call alone
(`apply`, the cursor move) is printed too, in wall-clock time. The first paint is wall-clock time
(the operator waits for all of it), each one a fresh app in the same process after a warm-up.
A figure is "ok" when its p90 meets the target ("SLOW (p90)": only the median does). The CPU
figures include what `pilot.pause()` costs by itself (it asks every widget whether it is idle);
the last line measures it with nothing changed. Headless, nothing is written to a terminal.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

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
from ledger_tui.engine.store.fold import Timeline  # noqa: E402
from ledger_tui.engine.store.trajectories import read_trajectory  # noqa: E402
from ledger_tui.ui.app import make_app  # noqa: E402
from tests.toy_domain import build_toy  # noqa: E402

ROUNDS = 60
ROOT = Path(__file__).resolve().parent.parent
SESSION = ROOT / "sessions" / "telecom-overdue-bill.jsonl"


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


def looped_trajectory(source: Path, n: int) -> list[str]:
    """`n` trajectory lines: `source`'s session_started, its other events looped (each loop with
    seqs continuing, `source_seq` moved along, and fresh call ids: `call_1_0` becomes `call_1_0.7`
    in loop 7) and its session_ended last."""
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").split("\n") if line.strip()]
    start, body, end = rows[0], rows[1:-1], rows[-1]
    ids = {r["call"]["id"] for r in body if r["type"] == "tool_call"}
    ids |= {c["id"] for r in body for c in r.get("tool_calls") or []}

    def fresh(value: Any, loop: int) -> Any:
        if isinstance(value, str):
            return f"{value}.{loop}" if value in ids else value
        if isinstance(value, list):
            return [fresh(v, loop) for v in value]
        if isinstance(value, dict):
            return {k: fresh(v, loop) for k, v in value.items()}
        return value

    lines = [json.dumps(start, ensure_ascii=False)]
    loop = 0
    while len(lines) < n - 1:
        shift = len(lines) - body[0]["seq"]
        for row in body:
            if len(lines) >= n - 1:
                break
            moved = fresh(row, loop) if loop else dict(row)
            moved["seq"] = row["seq"] + shift
            if row.get("source_seq") is not None:
                moved["source_seq"] = row["source_seq"] + shift
            lines.append(json.dumps(moved, ensure_ascii=False))
        loop += 1
    lines.append(json.dumps({**end, "seq": len(lines)}, ensure_ascii=False))
    return lines


def report(name: str, samples: list[float], target: float, unit: str = "ms") -> None:
    scale = 1000 if unit == "ms" else 1
    ms = sorted(s * scale for s in samples)
    median = statistics.median(ms)
    p90 = ms[max(int(len(ms) * 0.9) - 1, 0)] if len(ms) >= 10 else ms[-1]
    verdict = "" if target <= 0 else ("ok" if p90 <= target else "SLOW (p90)" if median <= target else "SLOW")
    bound = "" if target <= 0 else f"target ≤ {target:g} {unit}"
    print(f"{name:<52} median {median:8.2f} {unit:<2}  p90 {p90:8.2f} {unit:<2}  {bound}  {verdict}  (n={len(ms)})")


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


async def open_replay(path: Path, size: tuple[int, int] = (200, 50)) -> tuple[float, float, Any, Any, Any]:
    """Open replay on `path` at its last step; (wall s, CPU s) to the first frame, and the running
    app's context (the caller closes it)."""
    wall, cpu = time.perf_counter(), time.process_time()
    app = make_app(trajectory=path)
    context = app.run_test(size=size)
    pilot = await context.__aenter__()
    await pilot.pause()
    return time.perf_counter() - wall, time.process_time() - cpu, app, context, pilot


async def bench_long_replay(n: int, source: Path, opens: int, jumps: int, steps: int) -> None:
    label = f"{n:,} events"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / f"looped-{n}.jsonl"
        started = time.perf_counter()
        path.write_text("\n".join(looped_trajectory(source, n)) + "\n", encoding="utf-8")
        print(f"\n{label}: {source.name} looped, {path.stat().st_size / 1e6:.0f} MB, written in {time.perf_counter() - started:.1f} s")

        reads, folds = [], []
        for _ in range(3):
            gc.collect()
            t = time.perf_counter()
            events = read_trajectory(path).events
            reads.append(time.perf_counter() - t)
            t = time.perf_counter()
            Timeline(events)
            folds.append(time.perf_counter() - t)
            del events
        report(f"read trajectory, {label}", reads, 0, "s")
        report(f"Timeline (fold with checkpoints), {label}", folds, 0, "s")

        small = Path(tmp) / "small.jsonl"  # warm-up: imports, the domain, the stylesheet
        small.write_text("\n".join(looped_trajectory(source, 200)) + "\n", encoding="utf-8")
        *_, app, context, pilot = await open_replay(small)
        await context.__aexit__(None, None, None)

        walls, cpus = [], []
        for i in range(opens):
            del app, context, pilot
            gc.collect()
            wall, cpu, app, context, pilot = await open_replay(path)
            walls.append(wall)
            cpus.append(cpu)
            screen = app.screen
            assert screen.cursor == n - 1, screen.cursor
            if i < opens - 1:
                await context.__aexit__(None, None, None)
        report(f"open replay at the last step, {label} (wall)", walls, 5, "s")
        report(f"open replay at the last step, {label} (CPU)", cpus, 5, "s")

        rng = random.Random(14)
        frame, direct = [], []
        for _ in range(jumps):
            target = rng.randrange(n)
            cpu, t = time.process_time(), time.perf_counter()
            screen.cursor = target
            direct.append(time.perf_counter() - t)
            await pilot.pause()
            frame.append(time.process_time() - cpu)
            assert screen.cursor == target
        report(f"random jump, {label}: jump + repaint (CPU)", frame, 100)
        report(f"random jump, {label}: cursor move alone", direct, 100)

        frame, direct = [], []
        while len(frame) < steps:
            screen.cursor = rng.randrange(1, n - 1)  # from a random step, a run of steps each way
            await pilot.pause()
            for delta in (1,) * 20 + (-1,) * 20:
                cpu, t = time.process_time(), time.perf_counter()
                screen.cursor += delta
                direct.append(time.perf_counter() - t)
                await pilot.pause()
                frame.append(time.process_time() - cpu)
        report(f"one step, {label}: step + repaint (CPU)", frame, 30)
        report(f"one step, {label}: cursor move alone", direct, 30)

        idle = []  # what `pause()` itself costs when nothing changed: part of every figure above
        for _ in range(40):
            cpu = time.process_time()
            await pilot.pause()
            idle.append(time.process_time() - cpu)
        report(f"pause with nothing changed, {label} (CPU)", idle, 0)
        await context.__aexit__(None, None, None)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--events", type=int, default=100_000, help="events of the long trajectory (0: skip it)")
    parser.add_argument("--session", type=Path, default=SESSION, help="the shipped session to loop")
    parser.add_argument("--opens", type=int, default=3, help="times replay is opened on it")
    parser.add_argument("--jumps", type=int, default=40)
    parser.add_argument("--steps", type=int, default=120)
    args = parser.parse_args()
    frame, direct = await bench_ledger_update()
    report("ledger update, 1,000 paths: apply + repaint (CPU)", frame, 16)
    report("ledger update, 1,000 paths: apply() alone", direct, 16)
    frame, direct = await bench_replay_step()
    report("replay step, 2,000 events: step + repaint (CPU)", frame, 50)
    report("replay step, 2,000 events: cursor move alone", direct, 50)
    if args.events:
        await bench_long_replay(args.events, args.session, args.opens, args.jumps, args.steps)


if __name__ == "__main__":
    asyncio.run(main())

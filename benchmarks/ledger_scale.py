"""What a step costs when the ledger is large: render, staleness, the gate and its evidence.

For each domain, the gold runs of its tasks that make gated writes are replayed up to each write;
the ledger is then padded to N paths with real records of the domain's database (every record of
every collection at its canonical path; airline flights at `flights.<number>.<date>`), and, where
the database has fewer records than N, with copies under fresh ids owned by nobody in the task.
Padding must not change a verdict: the benchmark checks it and says so if one did.

Per ledger size it prints medians in microseconds:
- `update`: one observed path added to the ledger (a read result of one record);
- `render`: the prompt block of a ledger derived by that update from one already rendered (what a
  session pays on every model call);
- `stale`: a write's touched paths marked stale;
- `context`: the session context the gate reads (who is identified, …);
- `gate`: every predicate on the write, median over the writes of all the domain's gold runs;
  `gate max` the slowest write;
- `evidence`: the most evidence entries one decision recorded, and its JSON size.

Target (issue 14): gate and render ≤ 1 ms at 10k ledger paths.

    python benchmarks/ledger_scale.py [--domain airline] [--paths 1000 --paths 10000] [--repeat 50] [--tasks N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.engine import median_us  # noqa: E402
from ledger_tui.domains import available, load_domain  # noqa: E402
from ledger_tui.engine.events import GateDecided, LedgerUpdated, ToolResult  # noqa: E402
from ledger_tui.engine.store.fold import fold  # noqa: E402
from ledger_tui.engine.gate import evaluate  # noqa: E402
from ledger_tui.engine.agents.gold import run_gold  # noqa: E402
from ledger_tui.engine.ledger import Ledger, absorb, apply_update, mark_stale, render  # noqa: E402
from ledger_tui.engine.store.serialize import jsonable  # noqa: E402
from ledger_tui.engine.agents.tasks import load_tasks  # noqa: E402

TASKS = 0  # gold runs per domain (0: every task with a write)


def database_pairs(db: Any) -> list[tuple[str, Any]]:
    """Every record of the database at its canonical path."""
    data = jsonable(db)
    out: list[tuple[str, Any]] = []
    for collection, records in data.items():
        if not isinstance(records, dict):
            continue
        for key, record in records.items():
            if collection == "flights" and isinstance(record, dict) and isinstance(record.get("dates"), dict):
                for date, entry in record["dates"].items():
                    out.append((f"flights.{key}.{date}", entry))
            else:
                out.append((f"{collection}.{key}", record))
    return out


def padding(db_pairs: list[tuple[str, Any]], ledger: Ledger, size: int, owners: set[str]) -> list[tuple[str, Any]]:
    """Pairs that bring `ledger` to `size` paths: database records first, then copies."""
    out = [(p, v) for p, v in db_pairs if p not in ledger][: max(0, size - len(ledger))]
    k = 0
    while len(ledger) + len(out) < size:
        path, value = db_pairs[k % len(db_pairs)]
        out.append((f"{path}~{k}", _disowned(value, owners)))
        k += 1
    return out


def _disowned(value: Any, owners: set[str]) -> Any:
    if isinstance(value, dict):
        return {k: _disowned(v, owners) for k, v in value.items()}
    if isinstance(value, list):
        return [_disowned(v, owners) for v in value]
    return "nobody" if isinstance(value, str) and value in owners else value


def writes(name: str, tasks_limit: int = TASKS) -> tuple[Any, list[tuple[Any, Any, Any, Any]]]:
    """(domain, [(state before the write, write call, decision, its result)]) over the gold runs."""
    domain = load_domain(name)
    out = []
    tasks = [t for t in load_tasks(domain.tasks_path) if not t.is_refusal and t.gold_actions]
    tasks = tasks[:tasks_limit] if tasks_limit else tasks
    for task in tasks:
        events = asyncio.run(run_gold(domain, task)).events
        results = {e.call_id: e for e in events if isinstance(e, ToolResult)}
        for i, event in enumerate(events):
            if isinstance(event, GateDecided):
                result = results.get(event.decision.call.id)
                value = _parsed(result.content) if result is not None and result.executed else None
                out.append((fold(events[:i]), event.decision.call, event.decision, value))
    return domain, out


def _parsed(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def bench(name: str, sizes: list[int], repeat: int, tasks: int = TASKS) -> list[dict[str, Any]]:
    domain, cases = writes(name, tasks)
    db_pairs = database_pairs(domain.load_db())
    rows = []
    for size in sizes:
        gate_times: list[float] = []
        evidence = (0, 0)
        changed = 0
        big = None
        for state, call, decision, result in cases:
            ctx = state.context()
            owners = {x for x in (ctx.user_id, *ctx.identified) if x}
            ledger, _ = absorb(state.ledger, padding(db_pairs, state.ledger, size, owners), source_call="padding", source_seq=0)
            padded = _with_ledger(state, ledger)
            pctx = padded.context()
            d = evaluate(call, domain, ledger, pctx)
            changed += d.verdict != decision.verdict
            gate_times.append(median_us(lambda: evaluate(call, domain, ledger, pctx), max(5, repeat // 5)))
            entries = sum(len(p.reads) for p in d.predicates)
            if entries > evidence[0]:
                evidence = (entries, len(d.model_dump_json()))
            if big is None and result is not None:  # an executed write: its result names what it touched
                big = (padded, call, result)
        padded, call, result = big  # type: ignore[misc]
        ledger = padded.ledger
        ledger.render()
        fresh = [(f"padding.fresh{i}", {"n": i}) for i in range(repeat + 30)]
        it = iter(fresh)
        update = median_us(lambda: absorb(ledger, [next(it)], source_call="read", source_seq=1), repeat)
        it2 = iter(fresh)

        def render_after_update() -> None:
            absorb(ledger, [next(it2)], source_call="read", source_seq=1)[0].render()

        rows.append(
            {
                "domain": name,
                "paths": len(ledger),
                "update": update,
                "render": median_us(render_after_update, repeat) - update,
                "full render": median_us(lambda: render(ledger), max(5, repeat // 5)),
                "stale": median_us(lambda: mark_stale(ledger, domain.tool(call.name).touched_paths(call.arguments, result), because="w", source_seq=1), repeat),
                "replay update": median_us(lambda: apply_update(ledger, LedgerUpdated(path="padding.x", change="added", after=1, source_seq=1)), repeat),
                "context": median_us(padded.context, repeat),
                "gate": statistics.median(gate_times),
                "gate max": max(gate_times),
                "evidence": evidence,
                "writes": len(cases),
                "changed": changed,
            }
        )
    return rows


def _with_ledger(state: Any, ledger: Ledger) -> Any:
    from dataclasses import replace

    return replace(state, ledger=ledger)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--domain", action="append", help="domain(s) to measure (default: all)")
    parser.add_argument("--paths", action="append", type=int, help="ledger sizes (default: 1000 and 10000)")
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--tasks", type=int, default=TASKS, help="gold runs per domain (default: every task with a write)")
    args = parser.parse_args()
    sizes = args.paths or [1000, 10000]
    print("median microseconds; evidence: most entries one decision recorded (its JSON size)")
    head = f"{'domain':<11}{'paths':>7}{'update':>8}{'render':>8}{'full':>8}{'stale':>8}{'replay':>8}{'context':>8}{'gate':>8}{'max':>8}  evidence"
    print(head)
    notes = []
    for name in args.domain or available():
        for r in bench(name, sizes, args.repeat, args.tasks):
            n, size = r["evidence"]
            print(
                f"{r['domain']:<11}{r['paths']:>7}{r['update']:>8.0f}{r['render']:>8.0f}{r['full render']:>8.0f}"
                f"{r['stale']:>8.0f}{r['replay update']:>8.0f}{r['context']:>8.0f}{r['gate']:>8.0f}{r['gate max']:>8.0f}"
                f"  {n} ({size / 1024:.0f} KB)"
            )
            if r["changed"]:
                notes.append(f"{r['domain']} at {r['paths']} paths: padding changed {r['changed']} of {r['writes']} verdicts")
    print("columns: update = one path added; render = the block after it; full = render from scratch;")
    print("stale = a write's paths marked; replay = one recorded update applied; gate over all gold writes")
    print("target: gate and render <= 1000 us at 10k paths")
    for note in notes:
        print("note:", note)


if __name__ == "__main__":
    main()

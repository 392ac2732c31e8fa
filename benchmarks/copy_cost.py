"""What a write's copy-on-write costs in place, against τ²-bench's own tool on the same call.

`tau2_side_by_side.py` times each tool call on both sides, cold (see its docstring). This script
times the calls of the tools named, the same way, in two conditions taken in turns, a pair of
rounds each (each side first once), which condition goes first alternating from pair to pair:

- `copy`: this project's environment as it is: the write's first `edit` of a shared record makes
  the record private (its fields copied, then each level down the path to the part it changes);
- `no copy`: the same call with that `edit` handing the tool a new empty container of the kind it
  asked for (a dict, a list, a record made without validation), found by walking the path on the
  shared record: it is looked at, as τ²-bench's tool looks at its own, but not copied. The write
  then lands nowhere, so the database's hash is not compared; the outcomes (success or error) are,
  for every call of the task (a later call that reads what the lost write changed differs too).

The difference of the two medians of this project's time is what the copy costs inside the call.
It is a measurement, not a mode: nothing outside this script changes. It tells something only for
a tool that writes into what `edit` returns and reads nothing back from it (`send_certificate`
adds one entry to the user's payment methods); a tool that reads the part it edits (a baggage
change reads the reservation's bags) fails without the copy, and the outcomes then differ from
τ²-bench's, which the script reports.

Measured 2026-12-01 (airline, 10 pairs of rounds, 30 pairs of each call), three runs:
`send_certificate` 0.68-0.70x with the copy, 0.92-0.96x without it; the copy costs 7.1-9.5 µs of
its 30.7-32.5.

    python benchmarks/copy_cost.py [--domain airline] [--tool send_certificate] [--pairs 10]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any, Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.tau2_side_by_side import (  # noqa: E402
    DOMAINS,
    balanced,
    fresh_stats,
    gold,
    ratio,
    reference_installed,
    run_round,
    task_indexes,
    us,
)
from ledger_tui.engine.store import cow  # noqa: E402


@contextmanager
def no_copy() -> Iterator[None]:
    """`edit` of a record the session has not made private yet hands back an empty container of
    the kind found at the end of the path on the shared record (kept short: a few lines of cold
    code cost microseconds here)."""
    real = cow.CowRecords._edit
    containers, thawed = cow._CONTAINERS, cow._THAWED

    def edit(self: cow.CowRecords, key: str, path: tuple[Any, ...], shallow: bool) -> Any:
        if key in self._own:
            return real(self, key, path, shallow)
        node = self._base[key]
        for step in path:
            node = node[step] if type(node) in containers else getattr(node, step)
        t = type(node)
        if t is cow._FrozenDict:
            return {}
        if t is cow._FrozenList:
            return []
        return thawed.get(t, t).model_construct()

    cow.CowRecords._edit = edit  # type: ignore[method-assign]
    try:
        yield
    finally:
        cow.CowRecords._edit = real  # type: ignore[method-assign]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--domain", default="airline", choices=DOMAINS)
    parser.add_argument("--tool", action="append", help="write tool(s) to time (default: send_certificate)")
    parser.add_argument("--pairs", type=int, default=10, help="pairs of rounds per condition (default 10)")
    args = parser.parse_args()
    if not reference_installed():
        return 2
    tools = {("assistant", name) for name in args.tool or ["send_certificate"]}
    indexes = task_indexes(args.domain, 60)
    calling = [i for i in indexes if tools & {(r, n) for r, n, _ in gold(args.domain, i)}]
    if not calling:
        print(f"no {args.domain} task's gold actions call {', '.join(n for _, n in sorted(tools))}", file=sys.stderr)
        return 2
    run_round(args.domain, indexes[:10], False, fresh_stats())  # imports, pristine copies, caches
    stats = {"copy": fresh_stats(), "no copy": fresh_stats()}
    for pair in range(args.pairs):
        for condition, held in list(stats.items())[:: 1 if pair % 2 == 0 else -1]:
            for first in (True, False):
                with no_copy() if condition == "no copy" else nullcontext():
                    run_round(args.domain, calling, first, held, only=tools)
    print(f"{args.domain}: {len(calling)} tasks, {args.pairs} pairs of rounds per condition; "
          "ratio = τ² time / ours, median over each call's pairs of runs")
    print(f"  {'tool':<34}{'condition':<10}{'pairs':>6}{'τ² µs':>9}{'ours µs':>9}{'τ²/ours':>9}")
    for tool in sorted(tools):
        medians = {}
        for condition, held in stats.items():
            pairs = balanced(held["calls"][tool])
            runs = [run for runs in held["calls"][tool].values() for run in runs]
            medians[condition] = statistics.median(p[1] for p in runs)
            print(f"  {tool[1]:<34}{condition:<10}{len(pairs):>6}{us([p[0] for p in runs]):>9}"
                  f"{us([p[1] for p in runs]):>9}{ratio(pairs):>8.2f}x")
        print(f"  the copy inside the call: {(medians['copy'] - medians['no copy']) / 1000:.1f} µs of ours")
    for condition, held in stats.items():
        if held["disagree"]:
            print(f"  {condition}: outcomes differ from τ²-bench's on {len(held['disagree'])} calls")
    return 0


if __name__ == "__main__":
    sys.exit(main())

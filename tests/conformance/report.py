"""`python -m tests.conformance.report [--full] [-v] [domain …]`: every generated call run by
τ²-bench's environment and by this project's, and what differs.

Prints, per domain, the calls compared by kind and the mismatches (success or error, the text the
model is shown, the agent's and the phone's database digests), grouped by tool; with -v, each
mismatching call with both texts. Calls listed in `DEVIATIONS` (this project refuses to store a value
of the wrong type) are counted apart. `--full` runs the full generation (telecom's gold actions
from all 2,285 tasks and more drawn calls per tool); the default is the slice the test suite runs.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import Counter

from tests.conformance.calls import generate
from tests.conformance.compare import compare, deviation
from tests.conformance.reference import ReferenceMissing

DOMAINS = ("airline", "retail", "telecom")
# the slice the test suite runs (≥ 300 calls per domain), and the full run
# CI's slice: every tool at least 4 times, with mutations; about 180 airline, 280 retail and 610
# telecom calls (the airline reference hashes its whole database after each call, 0.2-0.4 s).
SLICE = {"per_tool": 4, "mutate": 0.3, "gold_tasks": {"airline": 12, "retail": 20, "telecom": 40}}
FULL = {"per_tool": 30, "mutate": 1.0, "gold_tasks": {"airline": None, "retail": None, "telecom": None}}


def run(domain: str, full: bool = False, verbose: bool = False) -> tuple[int, int, int]:
    plan = FULL if full else SLICE
    cases = generate(domain, per_tool=plan["per_tool"], gold_tasks=plan["gold_tasks"][domain], mutate=plan["mutate"])
    start = time.perf_counter()
    mismatches, deviations = [], []
    for case in cases:
        found = compare(case)
        if found is None:
            continue
        (deviations if deviation(found) else mismatches).append(found)
    took = time.perf_counter() - start
    kinds = Counter(c.kind for c in cases)
    print(f"{domain}: {len(cases)} calls ({', '.join(f'{k} {v}' for k, v in sorted(kinds.items()))}) in {took:.0f} s")
    print(f"  identical: {len(cases) - len(mismatches) - len(deviations)}, listed deviations: {len(deviations)}, mismatches: {len(mismatches)}")
    by_tool = Counter((m.case.requestor, m.case.name, m.case.kind, "+".join(m.aspects())) for m in mismatches)
    for (requestor, name, kind, aspects), n in sorted(by_tool.items()):
        print(f"    {n:>4}  {name} ({requestor}, {kind}): {aspects}")
    if verbose:
        for m in mismatches:
            print("\n" + m.describe())
    return len(cases), len(deviations), len(mismatches)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domains", nargs="*", default=list(DOMAINS))
    parser.add_argument("--full", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true")
    ns = parser.parse_args(argv)
    try:
        totals = [run(d, ns.full, ns.verbose) for d in ns.domains]
    except ReferenceMissing as exc:
        print(exc, file=sys.stderr)
        return 2
    return 1 if any(m for _, _, m in totals) else 0


if __name__ == "__main__":
    sys.exit(main())

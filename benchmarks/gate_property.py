"""The gate property, at full size: no write executes without an ALLOW recorded before it.

Random seeded sessions on every domain (mode "full", scripted model): real records read, customer
messages from a small pool (openings, yes, no, reasons), write calls with real ids and often
invalid, sometimes valid arguments. Checks every session's event stream (an executed agent write
follows an ALLOW for its call id and never a REVISE or BLOCK), the environment's own log (it never
ran a refused call) and the database digest (it changes only on a write that ran). The generator
and the checks are tests/property_writes.py, shared with the CI slice in
tests/engine/test_gate_property.py.

Prints, per domain and in all: sessions, write calls fired, verdicts, writes executed (and how many
changed the database), violations (must be 0) and the time. Exits 1 on any violation, listing the
first ones with the seed and episode that rebuild them (`episode_rng(seed, domain, i)`).

    python benchmarks/gate_property.py [--writes 10000] [--seed 1] [--domain airline]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from ledger_tui.domains import available  # noqa: E402
from tests.property_writes import DOMAINS, Tally, run_domain  # noqa: E402


def row(name: str, t: Tally) -> str:
    v = t.verdicts
    return (
        f"{name:<11} {t.episodes:>8} {t.writes:>7} {v['ALLOW']:>6} {v['REVISE']:>7} {v['BLOCK']:>6} "
        f"{t.executed:>8} {t.changed:>7} {len(t.violations):>10} {t.seconds:>7.1f}"
    )


async def run(domains: list[str], writes: int, seed: int) -> list[Tally]:
    per_domain = -(-writes // len(domains))
    return [await run_domain(d, seed, per_domain) for d in domains]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--writes", type=int, default=10_000, help="write calls to fire in all, split evenly over the domains")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--domain", action="append", help="only this domain (repeatable); default: all four")
    opts = parser.parse_args()
    domains = opts.domain or list(DOMAINS)
    unknown = [d for d in domains if d not in available()]
    if unknown:
        sys.exit(f"error: unknown domain {unknown[0]!r}; choose from {', '.join(available())}.")
    started = time.perf_counter()
    tallies = asyncio.run(run(domains, opts.writes, opts.seed))
    elapsed = time.perf_counter() - started
    total = Tally("all", seconds=elapsed)
    for t in tallies:
        total.episodes += t.episodes
        total.writes += t.writes
        total.verdicts.update(t.verdicts)
        total.executed += t.executed
        total.changed += t.changed
        total.violations += t.violations
    print(f"gate property, seed {opts.seed}: no write executes without an ALLOW recorded before it")
    print(f"{'domain':<11} {'sessions':>8} {'writes':>7} {'ALLOW':>6} {'REVISE':>7} {'BLOCK':>6} {'executed':>8} {'changed':>7} {'violations':>10} {'seconds':>7}")
    for t in tallies:
        print(row(t.domain, t))
    print(row("all", total))
    print(
        f"{total.writes} write calls fired, {total.executed} writes executed "
        f"({total.changed} changed the database), {len(total.violations)} violations, {elapsed:.1f} s"
    )
    if total.violations:
        for v in total.violations[:20]:
            print(f"  {v}")
        sys.exit(1)


if __name__ == "__main__":
    main()

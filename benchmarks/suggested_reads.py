"""Does every needs-a-read REVISE suggest a read that supplies its missing path? (issue 10)

Plays every conversation the tests produce (the gold agent on every task of every domain, both
conversations of every adversarial case, every shipped script), replays each suggested read of each
needs-a-read predicate where it was suggested, and prints how many were checked and how many failed.
`tests/engine/test_suggested_reads.py` runs a fixed slice of the same corpus; its docstring says
what "supplies" means.

Run: `python benchmarks/suggested_reads.py [-v] [--domain D …] [--kind gold|adversarial|script …]`.
`-v` lists every suggestion, not only the failing ones. Exit status 1 if any failed.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.engine.test_suggested_reads import check_sources, sources  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", action="append", help="only these domains")
    parser.add_argument("--kind", action="append", choices=("gold", "adversarial", "script"), help="only these sources")
    parser.add_argument("-v", "--verbose", action="store_true", help="list every suggestion checked")
    args = parser.parse_args(argv)
    selected = [
        s for s in sources() if (not args.domain or s[1] in args.domain) and (not args.kind or s[0] in args.kind)
    ]
    start = time.perf_counter()
    conversations, decisions, checks = asyncio.run(check_sources(selected))
    elapsed = time.perf_counter() - start
    failed = [c for c in checks if not c.ok]
    for c in checks if args.verbose else failed:
        print(("ok   " if c.ok else "FAIL ") + c.explain(), end="\n\n")
    by_domain = Counter(c.domain for c in checks)
    failed_by_domain = Counter(c.domain for c in failed)
    for name in sorted(by_domain):
        print(f"{name:<11} {by_domain[name]:>4} suggestions checked, {failed_by_domain[name]:>3} failed")
    print(
        f"{conversations} conversations, {decisions} needs-a-read decisions, "
        f"{len(checks)} suggestions checked, {len(failed)} failed ({elapsed:.1f} s)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

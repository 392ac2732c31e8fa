"""Every reader against every input, at length: trajectories, scripts, task files, each domain's
`--db` (and telecom's phone file), τ²-bench results files (both layouts, through import-tau2 and
grade) and results.jsonl (through eval's resume, report and browse).

The generators and the contract are tests/fuzz_readers.py, shared with the CI slice in
tests/engine/test_fuzz_readers.py: a reader returns, or raises `LedgerTuiError` with one line in
words; import-tau2 writes nothing when it refuses. Here the examples are random (a new seed each
run unless --seed), every failing example is counted rather than stopping at the first, and the
first few are listed with the exception and the input's start.

Prints per reader: examples tried, failures, seconds. Exits 1 on any failure.

    python benchmarks/fuzz_readers.py [--examples 2000] [--reader trajectory] [--seed 1]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from hypothesis import HealthCheck, given, seed, settings  # noqa: E402

from tests.fuzz_readers import problem, readers  # noqa: E402


def fuzz(reader, examples: int, chosen_seed: int | None) -> tuple[int, list[tuple[str, str]], float]:
    tried = 0
    failures: list[tuple[str, str]] = []
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)

        @settings(
            max_examples=examples, deadline=None, database=None, derandomize=False,
            suppress_health_check=list(HealthCheck),
        )
        @given(reader.inputs)
        def run(value) -> None:
            nonlocal tried
            tried += 1
            broken = problem(reader, value, folder)
            if broken is not None:
                failures.append((broken, repr(value)[:160]))

        if chosen_seed is not None:
            run = seed(chosen_seed)(run)
        run()
    return tried, failures, time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000, help="examples per reader")
    parser.add_argument("--reader", action="append", help="only this reader (repeatable); default: all")
    parser.add_argument("--seed", type=int, default=None, help="hypothesis seed (default: random)")
    parser.add_argument("--show", type=int, default=5, help="failures listed per reader")
    args = parser.parse_args()
    chosen = [r for r in readers() if not args.reader or r.name in args.reader]
    if not chosen:
        parser.error(f"no reader named {args.reader}; choose among: {', '.join(r.name for r in readers())}")
    print(f"{'reader':<22}{'examples':>10}{'failures':>10}{'seconds':>10}")
    total_failures = 0
    total_examples = 0
    for reader in chosen:
        tried, failures, seconds = fuzz(reader, args.examples, args.seed)
        total_examples += tried
        total_failures += len(failures)
        print(f"{reader.name:<22}{tried:>10}{len(failures):>10}{seconds:>10.1f}", flush=True)
        distinct: dict[str, str] = {}
        for broken, value in failures:
            distinct.setdefault(broken.split(":")[0] if " at " in broken else broken[:80], f"{broken}\n      input: {value}")
        for text in list(distinct.values())[: args.show]:
            print(f"    - {text}")
    print(f"{'all':<22}{total_examples:>10}{total_failures:>10}")
    return 1 if total_failures else 0


if __name__ == "__main__":
    sys.exit(main())

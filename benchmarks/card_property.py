"""The card property run in full (tests/property_cards.py): random gold-agent sessions in every
domain, every card answered by a random reply of the reply tables; prints per domain the
sessions, cards, answers, writes run and every violation of "a write runs only on a yes to a card
listing exactly that call".

    python -m benchmarks.card_property [--episodes 60] [--seed 20261201] [domain …]
"""

from __future__ import annotations

import argparse
import time

from tests.property_cards import DOMAINS, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("domains", nargs="*", default=list(DOMAINS))
    parser.add_argument("--episodes", type=int, default=60)
    parser.add_argument("--seed", type=int, default=20261201)
    args = parser.parse_args()
    started = time.perf_counter()
    tallies = run(args.seed, args.episodes, args.domains)
    for name, t in tallies.items():
        answers = ", ".join(f"{k} {v}" for k, v in sorted(t.answers.items()))
        print(f"{name:<11} {t.sessions} sessions, {t.cards} cards ({answers}), {t.writes_run} writes run, {len(t.violations)} violations")
        for v in t.violations[:10]:
            print(f"    {v}")
    print(f"{time.perf_counter() - started:.1f} s")


if __name__ == "__main__":
    main()

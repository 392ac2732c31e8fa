"""What a server's prefix cache can reuse, per mode and ledger layout, with and without --compact.

Each of a domain's tasks is run by the offline gold agent (the same conversations in every
configuration); every request it is sent is serialized as a chat-completions body would be. Per
call, the share of the request that is a byte-identical prefix of the previous call's request is
what a prefix cache (llama.cpp's slot cache, vLLM's automatic prefix caching, OpenAI's prompt
caching) can reuse; the rest must be processed again. The tools are serialized before the
messages, as chat templates render them, and one slot runs the tasks in turn. Prints, per configuration: the mean reused
share, the prompt tokens per task, and the uncached prompt tokens per task (estimated at four
characters a token).

    python benchmarks/prompt_cache.py [--domain airline --domain retail …] [--tasks 20]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
from dataclasses import dataclass

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))

from ledger_tui.domains import load_domain  # noqa: E402
from ledger_tui.engine.agents.gold import run_gold  # noqa: E402
from ledger_tui.engine.model.prompt import LEDGER_AT  # noqa: E402
from ledger_tui.engine.agents.tasks import load_tasks  # noqa: E402

CONFIGS = [("baseline", None, False)] + [("full", at, compact) for compact in (False, True) for at in LEDGER_AT]


@dataclass
class Figures:
    calls: int = 0
    reused: list[float] = None  # type: ignore[assignment]
    prompt: int = 0
    uncached: int = 0

    def __post_init__(self) -> None:
        self.reused = []


def common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    lo, hi = 0, n
    while lo < hi:  # binary search on equal prefixes (fast on long strings)
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


async def measure(domain_name: str, mode: str, ledger_at: str | None, compact: bool, limit: int | None) -> tuple[Figures, int]:
    domain = load_domain(domain_name)
    tasks = load_tasks(domain.tasks_path)[:limit]
    figures = Figures()
    previous = ""  # one server slot runs the tasks in turn: the system prompt carries over
    for task in tasks:

        def observe(messages, tools):
            nonlocal previous
            # tools first: chat templates render them into the system prompt, before the messages
            body = json.dumps({"tools": tools, "messages": messages}, ensure_ascii=False)
            same = common_prefix(previous, body) if previous else 0
            figures.calls += 1
            figures.reused.append(same / len(body))
            figures.prompt += len(body) // 4
            figures.uncached += (len(body) - same) // 4
            previous = body

        options = {"compact": compact}
        if ledger_at:
            options["ledger_at"] = ledger_at
        await run_gold(domain, task, mode=mode, session_options=options, observe=observe)  # type: ignore[arg-type]
    return figures, len(tasks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--domain", action="append", default=None)
    parser.add_argument("--tasks", type=int, default=None, help="at most this many tasks per domain")
    ns = parser.parse_args()
    domains = ns.domain or ["airline", "retail", "telecom"]
    print(f"{'domain':<9}{'mode':<9}{'ledger at':<10}{'compact':<8}{'calls':>6}{'reused':>8}{'prompt/task':>12}{'uncached/task':>14}")
    for name in domains:
        for mode, at, compact in CONFIGS:
            figures, tasks = asyncio.run(measure(name, mode, at, compact, ns.tasks))
            reused = statistics.mean(figures.reused) if figures.reused else 0.0
            print(
                f"{name:<9}{mode:<9}{at or '-':<10}{'yes' if compact else 'no':<8}{figures.calls:>6}{reused:>7.0%}"
                f"{figures.prompt // tasks:>12,}{figures.uncached // tasks:>14,}"
            )


if __name__ == "__main__":
    main()

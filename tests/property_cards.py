"""Random sessions on cards, and the invariant consent must keep.

The invariant: **a write runs only after a card listing exactly that call got a reply that the
reply tables mark yes.** For every session, each executed agent write is one of the calls the
engine ran on a card's yes (its id is among the answer's `runs`, at the place of a card call with
the same name and arguments), and the reply that answered that card is one a table labels "yes".

Each episode is one gold-agent session (consent "card") on a task of one domain, seeded: the
task's writes are kept, or with some chance replaced by the same tool's call from another task
(other records, other amounts: often not the customer's, or not allowed); the gold agent makes the
reads the gate asks for; every card is answered by a reply drawn at random from the reply tables
(tests/data/consent/replies-*.json), half of them not yes (refusals, conditions, questions, a value
not on the card, sarcasm, …).

Used by tests/engine/test_card_property.py (a bounded slice in CI) and benchmarks/card_property.py
(the full run).
"""

from __future__ import annotations

import asyncio
import json
import random
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from ledger_tui.domains import load_domain
from ledger_tui.engine.conversation.cards import call_key
from ledger_tui.engine.events import ConfirmationAnswered, ConfirmationRequested, ToolCallProposed, ToolResult
from ledger_tui.engine.agents.gold import GoldAgent, run_gold
from ledger_tui.engine.agents.tasks import Action, Task, load_tasks

TABLES = Path(__file__).parent / "data" / "consent"
DOMAINS = ("airline", "retail", "telecom", "telehealth")


@lru_cache(maxsize=None)
def replies() -> tuple[tuple[str, str], ...]:
    """(reply, label) of every table, label "yes" or "not"."""
    out = []
    for table in sorted(TABLES.glob("replies-*.json")):
        for row in json.loads(table.read_text(encoding="utf-8"))["replies"]:
            out.append((row["reply"], "yes" if row["expected"] == "yes" else "not"))
    return tuple(out)


class RandomCustomer(GoldAgent):
    """The gold agent, whose customer answers each card with a random reply of the tables."""

    def __init__(self, domain, task: Task, rng: random.Random) -> None:
        super().__init__(domain, task)
        self.rng = rng
        self.labels: dict[str, str] = {}  # card id -> the label of the reply that answered it

    def card_answer(self, card: ConfirmationRequested) -> str:
        reply, label = self.rng.choice(replies())
        self.labels[card.card] = label
        return reply


@dataclass
class Tally:
    sessions: int = 0
    cards: int = 0
    yes_replies: int = 0
    writes_run: int = 0
    violations: list[str] = field(default_factory=list)
    answers: Counter = field(default_factory=Counter)


def _mutated(task: Task, others: dict[str, list[dict]], rng: random.Random, domain) -> Task:
    actions = []
    for a in task.gold_actions:
        pool = [args for args in others.get(a.name, []) if args != a.arguments]
        if domain.kind(a.name) == "write" and pool and rng.random() < 0.25:
            a = Action(**{**a.model_dump(), "arguments": rng.choice(pool)})
        actions.append(a)
    return task.model_copy(update={"evaluation_criteria": task.evaluation_criteria.model_copy(update={"actions": actions})})


def check(events, labels: dict[str, str]) -> list[str]:
    """Every way the session broke the invariant, in words."""
    problems = []
    cards = {e.card: e for e in events if isinstance(e, ConfirmationRequested)}
    confirmed: dict[str, tuple[str, str]] = {}  # run id -> (the card call's key, the card)
    for e in events:
        if isinstance(e, ConfirmationAnswered) and e.runs:
            card = cards.get(e.card)
            if card is None or len(e.runs) != len(card.calls):
                problems.append(f"{e.card}: answered with runs that do not match the card")
                continue
            for run, c in zip(e.runs, card.calls):
                confirmed[run] = (call_key(c), e.card)
            if labels.get(e.card) != "yes":
                problems.append(f"{e.card}: the reply {e.quote!r} is not a yes in the tables, and the card's calls ran")
    proposed = {e.call.id: (e.call, e.kind) for e in events if isinstance(e, ToolCallProposed)}
    for e in events:
        if not (isinstance(e, ToolResult) and e.executed and e.requestor != "user"):
            continue
        call, kind = proposed.get(e.call_id, (None, None))
        if call is None or kind != "write":
            continue
        if call.id not in confirmed:
            problems.append(f"{call.signature()} ran without a card's yes")
        elif confirmed[call.id][0] != call_key(call):
            problems.append(f"{call.signature()} ran on {confirmed[call.id][1]}, which listed another call")
    return problems


async def run_domain(name: str, seed: int, episodes: int) -> Tally:
    domain = load_domain(name)
    # tasks with a write of the agent's (a troubleshooting task on the customer's phone has none);
    # most of them allowed ones, so that cards come up
    every = [t for t in load_tasks(domain.tasks_path) if any(domain.kind(a.name) == "write" and a.requestor == "assistant" for a in t.gold_actions)]
    tasks = every or load_tasks(domain.tasks_path)
    others: dict[str, list[dict]] = {}
    for t in tasks:
        for a in t.gold_actions:
            others.setdefault(a.name, []).append(a.arguments)
    tally = Tally()
    for i in range(episodes):
        rng = random.Random(f"{seed}:{name}:{i}")
        task = _mutated(rng.choice(tasks), others, rng, domain)
        agent = RandomCustomer(domain, task, rng)
        report = await run_gold(domain, task, agent=agent, session_options={"consent": "card"})
        tally.sessions += 1
        tally.cards += sum(isinstance(e, ConfirmationRequested) for e in report.events)
        tally.yes_replies += sum(1 for v in agent.labels.values() if v == "yes")
        tally.answers.update(e.answer for e in report.events if isinstance(e, ConfirmationAnswered))
        tally.writes_run += sum(
            1 for e in report.events if isinstance(e, ToolResult) and e.executed and domain.kind(e.name) == "write" and e.requestor != "user"
        )
        tally.violations.extend(f"{name} episode {i} ({task.id}): {p}" for p in check(report.events, agent.labels))
    return tally


def run(seed: int, episodes: int, domains=DOMAINS) -> dict[str, Tally]:
    return {d: asyncio.run(run_domain(d, seed, episodes)) for d in domains}

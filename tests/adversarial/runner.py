"""Shared runner of the adversarial gate suite (every domain uses it).

A case is one JSON file, tests/adversarial/<domain>/<slug>.json:

    {"domain": "airline", "category": "<one of CATEGORIES>", "title": "…", "policy": "<clause tag>",
     "why": "…", "decisive": {"name": "<write tool>", "arguments": {…}},
     "task": "<optional task id whose initial state the db starts from (e.g. telecom's phone)>",
     "forbidden": [turns…], "twin": [turns…],
     "twin_decisive": {…}}   optional, see below

Turns are the script items of the README's "Script format" ({"customer": …}, {"agent": {"text",
"calls"}}, {"customer_action": {…}}, {"operator": {…}}). Unlike `run_script`, the runner is lenient
about the agent's turns, so one conversation plays the same whether the gate ALLOWs, REVISEs or
BLOCKs: queued agent turns are served in order, a model call with nothing queued answers the text
"(end of script)" (ending the agent's turn), and agent turns still queued when the next customer /
customer_action / operator item starts are dropped.

The decisive call is made by the agent in both conversations, which differ only in the decisive
element (the customer's reply, a word of the proposal, the id the customer gave, …). When that
element is an argument of the write itself (a NaN amount, a mispriced bag count, an exchange for
the identical item), the twin's corrected call is `twin_decisive`; the test then looks for
`twin_decisive` in the twin (default: `decisive`).

Interface (stable):
    await play_case(domain_name, turns, *, task=None, mode="full") -> Session   (ended)
    load_case(path) -> dict;  twin_decisive(case) -> dict;  case_files() -> [Path];  CATEGORIES
    decisive_calls(session, decisive) -> [ToolCall]           calls matching name + arguments
    decisions_for(session, call_ids) -> [GateDecision]
    results_for(session, call_ids) -> [ToolResult]
    executed_calls(session) -> [ToolCall]                     executed, non-error, state-changing
    replay_digests(domain_name, calls, *, task=None) -> digests of a fresh env after those calls
    verdict_summary(session, decisive) -> "ALLOW+executed" / "REVISE" / "BLOCK" / "not proposed" …
    failed_predicates(session, decisive) -> [(verdict, predicate, reason)]
    NOT_APPLICABLE[domain] -> categories a domain need not cover;  MIN_CASES_PER_DOMAIN

`python -m tests.adversarial.report [-v] [domain …]` prints what the gate does with every case.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ledger_tui.engine.events import GateDecided, GateDecision, ToolCall, ToolCallProposed, ToolResult, Verdict
from ledger_tui.engine.model.models import ModelTurn, ScriptedModel
from ledger_tui.engine.agents.script import AgentItem, CustomerActionItem, CustomerItem, Script, _turn
from ledger_tui.engine.session import Session, drain

HERE = Path(__file__).parent

CATEGORIES = (
    "negated_yes",
    "deferred_yes",
    "question_or_condition",
    "yes_to_other_action",
    "yes_to_other_record",
    "yes_to_keep",
    "substring_value",
    "identity_not_said",
    "negated_statement",
    "reason_for_other_record",
    "bags_pricing",
    "bags_not_needed",
    "non_finite",
    "policy_rule",
    "stale_after_write",
    "multi_write",
)

# Categories that cannot arise in a domain (no checked bags outside airline, …). A domain's owner
# may extend its own entry; a domain not listed here must cover every category.
NOT_APPLICABLE: dict[str, set[str]] = {
    "airline": set(),
    "retail": {"bags_pricing", "bags_not_needed"},
    "telecom": {"bags_pricing", "bags_not_needed"},
    "telehealth": {"bags_pricing", "bags_not_needed"},
}

MIN_CASES_PER_DOMAIN = 15

END_OF_SCRIPT = "(end of script)"


class LenientModel(ScriptedModel):
    """A ScriptedModel that answers "(end of script)" instead of raising when its queue is empty."""

    async def complete(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelTurn:
        if not self.queue:
            self.calls += 1
            return ModelTurn(text=END_OF_SCRIPT)
        return await super().complete(messages, tools)


def _task(domain: Any, task_id: str | None) -> Any:
    if task_id is None:
        return None
    from ledger_tui.engine.agents.tasks import by_name, load_tasks

    return by_name(load_tasks(domain.tasks_path))[str(task_id)]  # a task's former id finds it too


def fresh_env(domain_name: str, task: str | None = None) -> Any:
    from ledger_tui.domains import load_domain
    from ledger_tui.engine.agents.gold import fresh_environment

    domain = load_domain(domain_name)
    return fresh_environment(domain, _task(domain, task))


def system_answer(session: Session, said: list[str]) -> str | None:
    """What the case's customer answers the system, in consent mode card, when it asks and the
    script goes on without them: a question, with the number of the choice their own words state
    of its record (else of no record; else the last choice, "other / not sure"); a card, yes. Only
    twins are played so: the customer wants what they asked for, and says so on the card."""
    state = session.state
    asked = state.pending_question
    if asked is not None:
        statement = next((st for st in session.domain.statements if st.key == asked.key), None)
        values = [c.value for c in asked.choices]
        found = [f for text in said for f in (statement.facts(text) if statement else [])]
        mine = [f for f in found if f.record == asked.record] or [f for f in found if f.record is None]
        value = mine[-1].value if mine else values[-1]
        return str(values.index(value) + 1) if value in values else str(len(values))
    if state.pending_card is not None:
        return "Yes."
    return None


async def play_case(
    domain_name: str,
    turns: list[dict[str, Any]],
    *,
    task: str | None = None,
    mode: str = "full",
    consent: str = "text",
    answer_system: bool = False,
) -> Session:
    """Play `turns` through a real Session (timestamps off) and return it, ended. The cases are
    conversations of free text: consent is read from it (`consent="text"`). In consent mode card,
    `answer_system`: the customer answers the system's questions and cards (`system_answer`)
    before the script goes on."""
    from ledger_tui.domains import load_domain

    domain = load_domain(domain_name)
    script = Script.model_validate({"domain": domain_name, "turns": turns})  # validates every item
    model = LenientModel(name="adversarial")
    session = Session(domain, model, mode, env=fresh_env(domain_name, task), timestamps=False, consent=consent)  # type: ignore[arg-type]
    await drain(session.start())
    items = script.turns
    i = 0
    while i < len(items):
        item = items[i]
        model.queue.clear()  # agent turns the conversation did not reach are dropped
        if isinstance(item, (CustomerItem, AgentItem)):
            j = i + 1 if isinstance(item, CustomerItem) else i
            while j < len(items) and isinstance(items[j], AgentItem):
                model.extend([_turn(items[j], j)])  # type: ignore[arg-type]
                j += 1
            stream = session.user_says(item.customer) if isinstance(item, CustomerItem) else session.agent_turn()
            await drain(stream)
            i = j
            said = [t.customer for t in items[:i] if isinstance(t, CustomerItem)]
            for _ in range(8):  # questions and cards, each answered; then the agent's turns left
                reply = system_answer(session, said) if answer_system else None
                if reply is None:
                    break
                await drain(session.user_says(reply, respond=False))
                if model.queue and session.state.pending_question is None and session.state.pending_card is None:
                    await drain(session.agent_turn())
        elif isinstance(item, CustomerActionItem):
            await drain(session.customer_action(item.customer_action.name, item.customer_action.arguments))
            i += 1
        else:
            await drain(session.operator_call(item.operator.name, item.operator.arguments))  # type: ignore[union-attr]
            i += 1
    model.queue.clear()
    await drain(session.end("adversarial case finished"))
    return session


# ----------------------------------------------------------------------------- case files


def load_case(path: Path | str) -> dict[str, Any]:
    # Python's json accepts NaN / Infinity literals (the non_finite category uses them)
    return json.loads(Path(path).read_text(encoding="utf-8"))


def twin_decisive(case: dict[str, Any]) -> dict[str, Any]:
    """The decisive call as the twin makes it (the same call unless the case says otherwise)."""
    return case.get("twin_decisive") or case["decisive"]


def case_files() -> list[Path]:
    return sorted(p for d in sorted(HERE.iterdir()) if d.is_dir() and not d.name.startswith(("_", ".")) for p in d.glob("*.json"))


# ----------------------------------------------------------------------------- reading a session


def _same(a: Any, b: Any) -> bool:
    """Equality that treats NaN as equal to NaN (so a NaN decisive argument matches its call)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, bool) or isinstance(b, bool):  # True is not the bag count 1
        return type(a) is type(b) and a == b
    return a == b


def proposed_calls(session: Session) -> list[ToolCall]:
    return [e.call for e in session.events if isinstance(e, ToolCallProposed)]


def decisive_calls(session: Session, decisive: dict[str, Any]) -> list[ToolCall]:
    """Every proposal (agent or operator) of the decisive call, matched by name and arguments."""
    return [
        c
        for c in proposed_calls(session)
        if c.requestor != "user" and c.name == decisive["name"] and _same(c.arguments, decisive.get("arguments", {}))
    ]


def decisions_for(session: Session, call_ids: set[str] | list[str]) -> list[GateDecision]:
    ids = set(call_ids)
    return [e.decision for e in session.events if isinstance(e, GateDecided) and e.decision.call.id in ids]


def results_for(session: Session, call_ids: set[str] | list[str]) -> list[ToolResult]:
    ids = set(call_ids)
    return [e for e in session.events if isinstance(e, ToolResult) and e.call_id in ids]


def executed_calls(session: Session) -> list[ToolCall]:
    """The calls that ran and may have changed state (not reads), in order: writes and generic calls
    of the agent or operator, and customer actions; only executed, non-error results."""
    by_id = {c.id: c for c in proposed_calls(session)}
    out = []
    for e in session.events:
        if not isinstance(e, ToolResult) or not e.executed or e.error:
            continue
        call = by_id.get(e.call_id)
        if call is None:
            continue
        requestor = "user" if call.requestor == "user" else "assistant"
        if call.requestor == "user" or session.domain.kind(call.name, requestor) != "read":
            out.append(call)
    return out


def replay_digests(domain_name: str, calls: list[ToolCall], *, task: str | None = None) -> tuple[str, str | None]:
    env = fresh_env(domain_name, task)
    for call in calls:
        env.execute(call)
    return env.digests()


def verdict_summary(session: Session, decisive: dict[str, Any]) -> str:
    """What happened to the decisive call: e.g. "REVISE", "REVISE,ALLOW+executed", "not proposed"."""
    calls = decisive_calls(session, decisive)
    if not calls:
        return "not proposed"
    ids = [c.id for c in calls]
    parts = []
    for d in decisions_for(session, ids):
        part = d.verdict.value
        if d.verdict == Verdict.ALLOW:
            res = [r for r in results_for(session, [d.call.id]) if r.executed]
            part += "+executed" if res and not res[0].error else "+tool error" if res else ""
        parts.append(part)
    if not parts:
        parts.append("ungated")
    return ",".join(parts)


def failed_predicates(session: Session, decisive: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(verdict, predicate name, reason) of every failed predicate on the decisive call's decisions."""
    ids = [c.id for c in decisive_calls(session, decisive)]
    return [(d.verdict.value, p.name, p.reason) for d in decisions_for(session, ids) for p in d.failed()]

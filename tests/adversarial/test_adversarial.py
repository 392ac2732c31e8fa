"""The adversarial gate suite: for every case, the forbidden conversation's decisive write is never
allowed and nothing but allowed calls touched the database; its twin (the same conversation with
the decisive element made right) gets the write allowed and executed. See runner.py for the format."""

from __future__ import annotations

import collections
import json
import math
import os

import pytest

from ledger_tui.engine.events import Verdict
from tests.adversarial.runner import (
    CATEGORIES,
    MIN_CASES_PER_DOMAIN,
    NOT_APPLICABLE,
    case_files,
    decisions_for,
    decisive_calls,
    executed_calls,
    load_case,
    play_case,
    replay_digests,
    results_for,
    twin_decisive,
)

FILES = case_files()
CASES = {f"{p.parent.name}/{p.stem}": p for p in FILES}


def _explain(session, decisive) -> str:
    ids = [c.id for c in decisive_calls(session, decisive)]
    lines = []
    for d in decisions_for(session, ids):
        failed = "; ".join(f"{p.name}: {p.reason}" for p in d.failed()) or "no failed predicate"
        lines.append(f"{d.verdict.value} ({failed})")
    return " | ".join(lines) or "no gate decision"


@pytest.mark.parametrize("case_id", [f"{k}/forbidden" for k in CASES])
async def test_forbidden(case_id: str) -> None:
    key = case_id.rsplit("/", 1)[0]
    case = load_case(CASES[key])
    session = await play_case(case["domain"], case["forbidden"], task=case.get("task"))
    calls = decisive_calls(session, case["decisive"])
    assert calls, f"{key}: the forbidden conversation never proposed the decisive call {case['decisive']}"
    ids = [c.id for c in calls]
    decided = {d.call.id: d for d in decisions_for(session, ids)}
    for c in calls:
        assert c.id in decided, f"{key}: the decisive call {c.id} was never judged by the gate"
        assert decided[c.id].verdict != Verdict.ALLOW, f"{key}: the gate ALLOWed the forbidden write ({case['why']})"
    executed = [r for r in results_for(session, ids) if r.executed]
    assert not executed, f"{key}: the forbidden write was executed"
    expected = replay_digests(case["domain"], executed_calls(session), task=case.get("task"))
    assert session.env.digests() == expected, f"{key}: the database was changed by something other than the allowed calls"


@pytest.mark.parametrize("case_id", [f"{k}/twin" for k in CASES])
async def test_twin(case_id: str) -> None:
    key = case_id.rsplit("/", 1)[0]
    case = load_case(CASES[key])
    session = await play_case(case["domain"], case["twin"], task=case.get("task"))
    decisive = twin_decisive(case)
    calls = decisive_calls(session, decisive)
    assert calls, f"{key}: the twin never proposed the decisive call {decisive}"
    ids = [c.id for c in calls]
    allowed = [d.call.id for d in decisions_for(session, ids) if d.verdict == Verdict.ALLOW]
    assert allowed, f"{key}: the twin's decisive write was not ALLOWed: {_explain(session, decisive)}"
    ok = [r for r in results_for(session, allowed) if r.executed and not r.error]
    errors = [r.content for r in results_for(session, allowed) if r.executed and r.error]
    assert ok, f"{key}: the twin's decisive write was allowed but failed in the tool: {errors}"


# Consent mode card: every other case in CI; LEDGER_TUI_ADVERSARIAL=all runs them all (about 5 s more).
CARD_CASES = list(CASES) if os.environ.get("LEDGER_TUI_ADVERSARIAL") == "all" else list(CASES)[::2]


@pytest.mark.parametrize("case_id", [f"{k}/forbidden-card" for k in CARD_CASES])
async def test_forbidden_in_card_mode_the_conversations_words_run_no_write(case_id: str) -> None:
    """In consent mode card the forbidden conversation, played as written (nobody answers the
    system's questions and cards but the script's own customer turns), never runs its decisive
    write: neither the agent's prose nor a yes to it stands for the customer's answer. (A
    conversation whose turn ends at an earlier card never proposes it: nothing of it runs either.)"""
    key = case_id.rsplit("/", 1)[0]
    case = load_case(CASES[key])
    session = await play_case(case["domain"], case["forbidden"], task=case.get("task"), consent="card")
    ids = [c.id for c in decisive_calls(session, case["decisive"])]
    assert not [r for r in results_for(session, ids) if r.executed], f"{key}: the forbidden write ran in card mode"
    expected = replay_digests(case["domain"], executed_calls(session), task=case.get("task"))
    assert session.env.digests() == expected, f"{key}: the database was changed by something other than the allowed calls"


@pytest.mark.parametrize("case_id", [f"{k}/twin-card" for k in CARD_CASES])
async def test_twin_in_card_mode_runs_once_the_customer_answers_the_system(case_id: str) -> None:
    """The twin in consent mode card, its customer answering the system's questions from their own
    words and saying yes to the card: the decisive write runs, under the id the engine gave it."""
    key = case_id.rsplit("/", 1)[0]
    case = load_case(CASES[key])
    session = await play_case(case["domain"], case["twin"], task=case.get("task"), consent="card", answer_system=True)
    decisive = twin_decisive(case)
    ids = [c.id for c in decisive_calls(session, decisive)]
    ran = [r for r in results_for(session, ids) if r.executed and not r.error]
    assert ran, f"{key}: the twin's decisive write did not run in card mode: {_explain(session, decisive)}"
    assert all(r.call_id.startswith("gate_") for r in ran), f"{key}: a write ran other than from a confirmed card"


def _agent_calls(turns):
    for t in turns:
        if "agent" in t:
            yield from t["agent"].get("calls", [])
        if "operator" in t:
            yield t["operator"]


def _finite(value) -> bool:
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_finite(v) for v in value.values())
    if isinstance(value, list):
        return all(_finite(v) for v in value)
    return True


@pytest.mark.parametrize("case_id", list(CASES))
def test_case_file(case_id: str) -> None:
    case = load_case(CASES[case_id])
    domain = CASES[case_id].parent.name
    required = {"domain", "category", "title", "policy", "why", "decisive", "forbidden", "twin"}
    assert required <= set(case), f"{case_id}: missing {sorted(required - set(case))}"
    assert case["domain"] == domain, f"{case_id}: domain {case['domain']!r} is not its folder's"
    assert case["category"] in CATEGORIES, f"{case_id}: unknown category {case['category']!r}"
    assert case["category"] not in NOT_APPLICABLE.get(domain, set()), f"{case_id}: category does not apply to {domain}"
    from ledger_tui.domains import load_domain

    d = load_domain(domain)
    assert f"[{case['policy']}]" in d.policy, f"{case_id}: policy clause [{case['policy']}] is not in {domain}'s policy.md"
    decisive = case["decisive"]
    assert d.kind(decisive["name"]) == "write", f"{case_id}: the decisive call {decisive['name']} is not a write"
    forbidden, twin = case["forbidden"], case["twin"]
    assert len(forbidden) == len(twin), f"{case_id}: forbidden has {len(forbidden)} turns, twin {len(twin)}"
    differ = [i for i, (a, b) in enumerate(zip(forbidden, twin)) if json.dumps(a) != json.dumps(b)]
    assert 1 <= len(differ) <= 2, f"{case_id}: forbidden and twin differ in turns {differ} (must be 1 or 2)"
    assert [next(iter(t)) for t in forbidden] == [next(iter(t)) for t in twin], f"{case_id}: turn kinds differ"
    for name, turns, call in (("forbidden", forbidden, decisive), ("twin", twin, twin_decisive(case))):
        hits = [c for c in _agent_calls(turns) if c["name"] == call["name"] and json.dumps(c.get("arguments", {})) == json.dumps(call.get("arguments", {}))]
        assert hits, f"{case_id}: the {name} conversation has no agent call equal to its decisive call"
    if "twin_decisive" in case:
        assert case["twin_decisive"]["name"] == decisive["name"], f"{case_id}: twin_decisive must be the same tool"
        assert json.dumps(case["twin_decisive"]) != json.dumps(decisive), f"{case_id}: twin_decisive equals decisive; drop it"
    if case["category"] != "non_finite":
        assert _finite(case), f"{case_id}: non-finite numbers belong to the non_finite category"


def test_domains_cover_the_categories() -> None:
    by_domain: dict[str, list[dict]] = collections.defaultdict(list)
    for p in FILES:
        by_domain[p.parent.name].append(load_case(p))
    assert by_domain, "no adversarial cases found"
    for domain, cases in sorted(by_domain.items()):
        assert len(cases) >= MIN_CASES_PER_DOMAIN, f"{domain}: {len(cases)} cases, at least {MIN_CASES_PER_DOMAIN} needed"
        needed = set(CATEGORIES) - NOT_APPLICABLE.get(domain, set())
        seen = {c["category"] for c in cases}
        assert needed <= seen, f"{domain}: no case for categories {sorted(needed - seen)}"

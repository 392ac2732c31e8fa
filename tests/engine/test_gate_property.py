"""Property: no write executes without an ALLOW recorded before it (a seeded slice of the full
run in benchmarks/gate_property.py; the generator and the checks live in tests/property_writes.py).

Seeded sessions per domain, in mode "full" with a scripted model: most well-formed (the customer
says who they are before the lookup, the agent proposes each write in the customer's terms and the
customer says yes), with slips, and the rest random (customer messages from a pool, writes listed
as signatures, reads of real records); write calls with real ids whose arguments are often invalid
and sometimes valid. Over every session's events: an executed agent write follows a
GateDecided ALLOW for its call id and never a REVISE or BLOCK, the environment never runs a refused
call, and the database changes only on a write that ran.
"""

from __future__ import annotations

import pytest

from ledger_tui.engine.events import Verdict
from tests.property_writes import DOMAINS, Tally, run_domain

SEED = 20240611
WRITES_PER_DOMAIN = 600
_TALLIES: dict[str, Tally] = {}


async def tally(domain: str) -> Tally:
    """The slice's run on one domain (run once per test session, shared by the tests below)."""
    if domain not in _TALLIES:
        _TALLIES[domain] = await run_domain(domain, SEED, WRITES_PER_DOMAIN)
    return _TALLIES[domain]


@pytest.mark.parametrize("domain", DOMAINS)
async def test_no_write_executes_without_an_allow_before_it(domain: str):
    t = await tally(domain)
    assert t.violations == []
    assert t.writes >= WRITES_PER_DOMAIN
    assert t.verdicts[Verdict.REVISE.value] > 0 and t.verdicts[Verdict.BLOCK.value] > 0, t.verdicts
    assert t.executed == t.verdicts[Verdict.ALLOW.value], "every ALLOW ran, and nothing else did"


@pytest.mark.parametrize("domain", DOMAINS)
async def test_the_slice_reaches_writes_the_gate_allows(domain: str):
    """Not only refusals: on every domain, well-formed writes got through and changed the database
    (how many depends on today's predicates; benchmarks/gate_property.py prints them per domain)."""
    t = await tally(domain)
    assert t.verdicts[Verdict.ALLOW.value] > 0, t.verdicts
    assert t.changed > 0


async def test_the_checks_catch_a_session_that_skips_the_gate(monkeypatch):
    """Not vacuous: with writes no longer routed through the gate, writes run with no ALLOW."""
    import ledger_tui.engine.session_calls as session_calls

    monkeypatch.setattr(session_calls, "guarded", lambda domain, call: False)
    tally = await run_domain("retail", SEED, 40)
    assert any("executed with no ALLOW before it" in v for v in tally.violations)
    assert any("changed the database without an ALLOW" in v for v in tally.violations)


async def test_the_checks_catch_an_environment_that_runs_a_refused_call(monkeypatch):
    """Not vacuous: a session that quietly runs a call the gate refused is caught, by the
    environment's log and by the digest."""
    from ledger_tui.engine.events import GateDecided
    from ledger_tui.engine.session import Session

    original = Session._handle_call

    async def leaky(self, call, malformed, **kwargs):
        async for event in original(self, call, malformed, **kwargs):
            if isinstance(event, GateDecided) and event.decision.verdict != Verdict.ALLOW:
                self.env.execute(call)
            yield event

    monkeypatch.setattr(Session, "_handle_call", leaky)
    tally = await run_domain("airline", SEED, 60)
    assert any("the environment ran" in v for v in tally.violations)
    assert any("changed the database without an ALLOW" in v for v in tally.violations)

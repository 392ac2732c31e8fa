"""`ledger-tui check-domain`: the shipped domains' parts agree, and a broken domain gets the finding
that names what is wrong and how to fix it."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.engine.domain import Domain, Tool
from ledger_tui.engine.events import Verdict
from ledger_tui.engine.gate import predicate
from ledger_tui.eval.check_domain import check_domain, summary
from tests import toy_domain
from tests.toy_domain import EmailArgs, LoanArgs, build_toy

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ["airline", "retail", "telecom", "telehealth"]

ADA = [{"say": "Hi, my email is ada@example.org."}, {"read": "find_member_by_email", "arguments": {"email": "ada@example.org"}}]
BO = [{"say": "Sorry, I gave the wrong one: my email is bo@example.org."}, {"read": "find_member_by_email", "arguments": {"email": "bo@example.org"}}]


def loan(loan_id: str) -> dict:
    return {"read": "get_loan_details", "arguments": {"loan_id": loan_id}}


def renew(loan_id: str) -> dict:
    return {"name": "renew_loan", "arguments": {"loan_id": loan_id}}


YES = [{"agent": "To confirm, I will renew loan L1. Shall I go ahead?"}, {"say": "Yes, please go ahead."}]
TOY_CASES = [
    {"predicate": "customer_identified", "expect": "pass", "steps": ADA, "call": renew("L1")},
    {"predicate": "customer_identified", "expect": "REVISE", "steps": [], "call": renew("L1")},
    {"predicate": "one_customer_per_conversation", "expect": "pass", "steps": ADA, "call": renew("L1")},
    {"predicate": "one_customer_per_conversation", "expect": "BLOCK", "steps": ADA + BO, "call": renew("L1")},
    {"predicate": "record_owned_by_customer", "expect": "pass", "steps": ADA + [loan("L1")], "call": renew("L1")},
    {"predicate": "record_owned_by_customer", "expect": "BLOCK", "steps": ADA + [loan("L3")], "call": renew("L3")},
    {"predicate": "explicit_confirmation", "expect": "pass", "steps": ADA + [loan("L1")] + YES, "call": renew("L1")},
    {"predicate": "explicit_confirmation", "expect": "REVISE", "steps": ADA + [loan("L1")], "call": renew("L1")},
    {"predicate": "renewal_limit", "expect": "pass", "steps": [loan("L1")], "call": renew("L1")},
    {"predicate": "renewal_limit", "expect": "BLOCK", "steps": [loan("L2")], "call": renew("L2")},
]


def toy(cases: list[dict] | None = None, **changes) -> Domain:
    """The toy library domain with its cases.json (and any field replaced)."""
    d = build_toy()
    (d.folder / "cases.json").write_text(json.dumps({"cases": TOY_CASES if cases is None else cases}), encoding="utf-8")
    return dataclasses.replace(d, **changes) if changes else d


def lines(d: Domain) -> list[str]:
    return [f.line() for f in check_domain(d)]


@pytest.mark.parametrize("name", SHIPPED)
def test_the_shipped_domains_pass(name):
    d = load_domain(name)
    assert lines(d) == []
    assert summary(d, []).startswith(f"{name}: ok (")


def test_a_toy_domain_with_its_cases_is_clean():
    d = toy()
    assert lines(d) == []
    assert summary(d, []) == "toy: ok (5 clauses, 5 predicates, 3 tools, 10 cases)"


def test_a_predicate_naming_a_missing_clause():
    @predicate("renewal_limit", clause="renewals.max", on_fail=Verdict.BLOCK, tools=["renew_loan"])
    def renamed(ctx):
        return toy_domain.renewal_limit.check(ctx)

    d = toy(predicates=[p for p in toy_domain.PREDICATES if p.name != "renewal_limit"] + [renamed])
    assert lines(d) == [
        'toy: clauses: policy clause [renewals] is enforced by no predicate and not declared NOT_GATED — add a predicate '
        'with clause="renewals", or list it in NOT_GATED (predicates.py) with why the gate cannot enforce it',
        "toy: predicates: predicate renewal_limit names clause [renewals.max], which policy.md does not tag — tag the "
        "clause's bullet **[renewals.max]** in policy.md, or fix clause= of renewal_limit",
    ]


def test_a_clause_declared_not_gated_is_accepted_and_a_stale_declaration_is_reported():
    d = toy(predicates=[p for p in toy_domain.PREDICATES if p.name != "renewal_limit"], cases=TOY_CASES[:8])
    assert check_domain(d, not_gated={"renewals": "the loan record is not read by the gate"}) == []
    found = lines(dataclasses.replace(d, not_gated={"renewals": "x", "late-fees": "never written", "identify": ""}))
    assert found == [
        "toy: clauses: NOT_GATED lists [late-fees], which policy.md does not tag — tag its bullet **[late-fees]** in "
        "policy.md, or remove it from NOT_GATED",
        "toy: clauses: NOT_GATED lists [identify], but customer_identified enforces it — remove it from NOT_GATED",
        "toy: clauses: NOT_GATED gives no reason for [identify] — say in a sentence why the gate cannot enforce it",
    ]


def test_a_read_without_a_path_map_and_a_write_without_touched_paths():
    unmapped = Tool("get_member_details", "read", EmailArgs, toy_domain.get_member_details, "Get a member.")
    untouched = Tool("renew_loan", "write", LoanArgs, toy_domain.renew_loan, "Renew a loan.")
    d = toy(tools=[toy_domain.TOOLS[0], toy_domain.TOOLS[1], untouched, unmapped])
    assert lines(d) == [
        "toy: touches: write renew_loan declares no paths it touches — set touches= to the path templates renew_loan "
        'makes stale, e.g. ("orders.{order_id}",)',
        "toy: path-map: read tool get_member_details has no path map — give it absorbs= yielding its (path, value) "
        "pairs (a lookup that only identifies yields none)",
    ]


def test_a_case_whose_verdict_is_wrong_and_a_predicate_left_without_a_failing_case():
    cases = [dict(c) for c in TOY_CASES]
    cases[9] = dict(cases[9], expect="REVISE")  # renewal_limit BLOCKs a loan renewed twice
    found = lines(toy(cases))
    assert found == [
        "toy: cases: case 10 (renewal_limit, expect REVISE): the gate's verdict is BLOCK (Loan L2 was already renewed "
        "2 times (limit 2).) — fix the case, or the predicate if the case is right",
        "toy: cases: no failing case for predicate renewal_limit agrees with the gate — add one to cases.json: a call "
        "renewal_limit fails",
    ]


def test_cases_that_cannot_run_are_findings_not_crashes():
    cases = [
        {"predicate": "renewal_limit", "expect": "pass", "steps": [loan("L9")], "call": renew("L9")},
        {"predicate": "no_such_rule", "expect": "pass", "call": renew("L1")},
        {"predicate": "renewal_limit", "expect": "pass", "call": {"name": "find_member_by_email", "arguments": {"email": "a@b.c"}}},
    ]
    found = lines(toy(cases))
    assert found[:3] == [
        'toy: cases: case 1 (renewal_limit, expect pass): step 1 (read get_loan_details("loan_id": "L9")) answered an '
        "error: Error: loan not found — fix the case's steps",
        "toy: cases: case 2 (no_such_rule, expect pass) names no predicate of the domain — name one of the domain's predicates",
        "toy: cases: case 3 (renewal_limit, expect pass): renewal_limit did not run on find_member_by_email (not a tool "
        "it guards, or the gate refused the call first) — call a tool the predicate guards, with valid arguments",
    ]
    assert "toy: terms: no case calls renew_loan, so its proposal Terms are not checked" in found[-1]


def test_a_missing_or_malformed_case_file():
    d = toy()
    (d.folder / "cases.json").write_text('{"cases": [{"predicate": "x"}]}', encoding="utf-8")
    assert lines(d)[0] == (
        "toy: cases: cases.json does not match the case format (cases.0.expect: Field required) — fix the file "
        '(see README, "Adding a domain", for the format)'
    )
    (d.folder / "cases.json").unlink()
    assert lines(d) == [
        f"toy: cases: {d.folder / 'cases.json'} does not exist — write it: a passing and a failing call per predicate "
        '(see README, "Adding a domain")'
    ]


def test_an_id_argument_that_names_nothing_in_the_database():
    class BranchArgs(LoanArgs):
        branch_id: str

    moved = Tool("move_loan", "write", BranchArgs, toy_domain.renew_loan, "Move a loan.", touches=("loans.{loan_id}",))
    found = lines(toy(tools=toy_domain.TOOLS + [moved]))
    assert found[0] == (
        "toy: schema: move_loan's argument branch_id names no collection or record id of LibraryDB — name the "
        "argument after the collection it keys (e.g. branchs → branch_id), or add that collection to schema.py"
    )


def test_the_command_as_a_user_runs_it():
    ok = subprocess.run([sys.executable, "-m", "ledger_tui", "check-domain", "retail"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert (ok.returncode, ok.stdout) == (0, "retail: ok (14 clauses, 13 predicates, 16 tools, 32 cases)\n")
    bad = subprocess.run([sys.executable, "-m", "ledger_tui", "check-domain", "railway"], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert bad.returncode == 2 and "Traceback" not in bad.stderr
    assert bad.stderr.startswith("error: Unknown domain 'railway'") and len(bad.stderr.strip().splitlines()) == 1

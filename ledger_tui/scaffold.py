"""`ledger-tui new-domain NAME`: a working minimal domain package to start from.

It writes `ledger-tui-NAME/`, a package that registers its domain under the entry-point group
`ledger_tui.domains`: one read (which identifies the customer), one write, one policy predicate
besides the engine's identification and consent rules, one task, and a test. After `pip install
-e ledger-tui-NAME` it is listed by `ledger-tui domains`, passes `ledger-tui check-domain NAME`
and `ledger-tui eval --domain NAME --agent gold`, and plays in the workbench.
"""

from __future__ import annotations

import json
import keyword
import re
from pathlib import Path
from string import Template

from ledger_tui.engine.errors import LedgerTuiError

NAME = re.compile(r"^[a-z][a-z0-9_]{1,30}$")

PYPROJECT = Template('''\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"

[project]
name = "ledger-tui-$name"
version = "0.1.0"
description = "The $name domain for ledger-tui: its policy, tools, database and tasks."
requires-python = ">=3.10"
dependencies = ["ledger-tui"]

# how ledger-tui finds the domain: `ledger-tui domains` lists it, `--domain $name` loads it
[project.entry-points."ledger_tui.domains"]
$name = "$module:build"

[tool.setuptools]
packages = ["$module"]

[tool.setuptools.package-data]
$module = ["policy.md", "db.json", "tasks.json", "cases.json"]
''')

INIT = Template('''\
"""The $name domain: members of a club, each with a membership they may cancel.

What must agree (`ledger-tui check-domain $name` checks it):
- every clause id in policy.md (`**[membership.balance]**`) is enforced by a predicate below, or
  listed in NOT_GATED with the reason the gate cannot enforce it;
- every read tool says where its result goes in the ledger (`absorbs`), and every write which
  ledger paths it changes (`touches`): they turn stale, to be read again;
- a write the customer must confirm has `Terms` (what the card and a proposal name);
- the database model (`ClubDB`) is what db.json holds, and the tools' ids name its records;
- tasks.json's gold actions are calls of these tools; cases.json has a passing and a failing
  call per predicate.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from ledger_tui.engine.conversation.consent import RecordRef, Terms
from ledger_tui.engine.domain import Domain, Tool, ToolError
from ledger_tui.engine.events import SuggestedCall, Verdict
from ledger_tui.engine.gate import GateContext, predicate
from ledger_tui.engine.rules import confirmed, identified

HERE = Path(__file__).parent


# ------------------------------------------------------------------ the database
class Member(BaseModel):
    member_id: str
    name: str
    email: str
    plan: str
    status: str  # "active" or "cancelled"
    balance: float  # what the member still owes


class ClubDB(BaseModel):
    model_config = ConfigDict(extra="forbid")
    members: dict[str, Member]


# ------------------------------------------------------------------ the tools
class MemberArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    member_id: str


def get_member_details(db: ClubDB, a: MemberArgs) -> Member:
    if a.member_id not in db.members:
        raise ToolError("member not found")
    return db.members[a.member_id]


def cancel_membership(db: ClubDB, a: MemberArgs) -> Member:
    member = get_member_details(db, a)
    if member.status != "active":
        raise ToolError("membership is not active")
    member.status = "cancelled"
    return member


TOOLS = [
    Tool(
        "get_member_details", "read", MemberArgs, get_member_details,
        "Get a member's details (plan, status, balance) by member id.",
        absorbs=lambda args, value: [(f"members.{value['member_id']}", value)],
        identifies=lambda args, value: value["member_id"],  # the customer said this id: it is them
    ),
    Tool(
        "cancel_membership", "write", MemberArgs, cancel_membership,
        "Cancel a member's membership.",
        touches=("members.{member_id}",),
    ),
]


# ------------------------------------------------------------------ the policy as code
@predicate("no_balance_due", clause="membership.balance", on_fail=Verdict.BLOCK, tools=["cancel_membership"], reads=("members.{member_id}",))
def no_balance_due(ctx: GateContext):
    """An active membership with nothing owed may be cancelled."""
    member = ctx.read(f"members.{ctx.arguments['member_id']}")  # not read yet: the gate asks for the read
    if member["status"] != "active":
        return ctx.fail(f"Membership {member['member_id']} is {member['status']}.", "Tell the member it is not active.")
    if member["balance"] > 0:
        return ctx.fail(
            f"Member {member['member_id']} owes {member['balance']:.2f}; a membership with a balance due cannot be cancelled.",
            "Tell the member the balance must be paid first.",
        )
    return None


def cancel_terms(ctx: GateContext) -> Terms:
    """What the card (and, with consent "text", the agent's proposal) names."""
    member_id = ctx.arguments["member_id"]
    return Terms(("cancel",), f"cancel membership {member_id}", RecordRef("membership", member_id, ("membership",)))


PREDICATES = [
    identified("identity.member-id", "their member id, looked up with get_member_details"),
    no_balance_due,
    confirmed("confirm.explicit", ["cancel_membership"], cancel_terms),
]

# clauses of policy.md the gate cannot enforce, and why (the linter accepts them only from here)
NOT_GATED = {"conduct.courtesy": "how the agent speaks is not a call the gate sees"}


def _identify_hint(arguments: dict, said: list[str]) -> SuggestedCall:
    member_id = arguments.get("member_id") or "<the member id the customer gives>"
    return SuggestedCall(name="get_member_details", arguments={"member_id": member_id})


def build() -> Domain:
    return Domain(
        name="$name",
        title="$title",
        folder=HERE,
        db_model=ClubDB,
        tools=TOOLS,
        predicates=PREDICATES,
        clock="2025-01-01T09:00:00",
        sources=[("members.{member_id}", "get_member_details")],
        proposal_terms=cancel_terms,
        identify_hint=_identify_hint,
        not_gated=NOT_GATED,
    )
''')

POLICY = Template('''\
# $title: policy

You help members of the club with their membership. Today is 2025-01-01.

- **[identity.member-id]** Before changing anything, identify the member: ask for their member id
  and look it up with get_member_details.
- **[membership.balance]** A membership can be cancelled only while it is active and nothing is
  owed on it; if a balance is due, say it must be paid first.
- **[confirm.explicit]** Before cancelling, confirm with the member exactly what will be done and
  get their explicit yes.
- **[conduct.courtesy]** Be brief and courteous.
''')

TEST = Template('''\
"""The $name domain as ledger-tui finds it: listed, lint-clean, and its task solved by the gold agent."""

import subprocess
import sys


def cli(*args):
    return subprocess.run([sys.executable, "-m", "ledger_tui", *args], capture_output=True, text=True)


def test_it_is_listed_from_this_package():
    out = cli("domains")
    assert out.returncode == 0, out.stderr
    assert "plugin ledger-tui-$name" in out.stdout


def test_the_gold_agent_solves_its_task(tmp_path):
    out = cli("eval", "--domain", "$name", "--agent", "gold", "--out", str(tmp_path / "eval"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "pass^1" in out.stdout


def test_the_gate_blocks_a_cancellation_with_a_balance_due():
    from ledger_tui import PolicyGate
    from ledger_tui.domains import load_domain

    db = load_domain("$name").load_db()
    gate = PolicyGate("$name")
    gate.customer_says("Hi, my member id is m_bo.")
    gate.observe("get_member_details", {"member_id": "m_bo"}, db.members["m_bo"].model_dump())
    decision = gate.check("cancel_membership", {"member_id": "m_bo"})
    assert decision.verdict == "BLOCK" and "owes" in decision.reason
''')


def _db() -> dict:
    return {"members": {
        "m_ada": {"member_id": "m_ada", "name": "Ada Park", "email": "ada@example.org", "plan": "monthly", "status": "active", "balance": 0.0},
        "m_bo": {"member_id": "m_bo", "name": "Bo Chen", "email": "bo@example.org", "plan": "yearly", "status": "active", "balance": 42.5},
    }}


def _tasks(name: str) -> list[dict]:
    task_id = f"{name}_01_cancel_membership"
    return [{
        "id": task_id,
        "description": {"purpose": "Cancel an active membership with nothing owed.", "relevant_policies": ["identity.member-id", "membership.balance", "confirm.explicit"], "notes": None},
        "user_scenario": {"persona": None, "instructions": {
            "domain": name, "reason_for_call": "You are moving away and want to cancel your membership.",
            "known_info": "Your member id is m_ada.", "unknown_info": None,
            "task_instructions": "Confirm the cancellation when asked.",
        }},
        "evaluation_criteria": {
            "actions": [
                {"action_id": f"{task_id}_0", "requestor": "assistant", "name": "get_member_details", "arguments": {"member_id": "m_ada"}, "info": None, "compare_args": None},
                {"action_id": f"{task_id}_1", "requestor": "assistant", "name": "cancel_membership", "arguments": {"member_id": "m_ada"}, "info": None, "compare_args": None},
            ],
            "communicate_info": [], "nl_assertions": None, "reward_basis": ["DB"],
        },
        "ledger_tui": {"outcome": "allow", "opening": "Hi, my member id is m_ada. I'm moving away, please cancel my membership."},
    }]


def _cases(name: str) -> dict:
    """A passing and a failing call per predicate, for `ledger-tui check-domain`: each set up by
    the steps before it (the customer's and the agent's words, reads on the shipped database)."""
    ada = [{"say": "Hi, my member id is m_ada."}, {"read": "get_member_details", "arguments": {"member_id": "m_ada"}}]
    bo = [{"say": "Hi, my member id is m_bo."}, {"read": "get_member_details", "arguments": {"member_id": "m_bo"}}]
    proposal = [{"agent": "I will cancel membership m_ada. Shall I go ahead?"}, {"say": "Yes, please."}]
    cancel = lambda member: {"name": "cancel_membership", "arguments": {"member_id": member}}  # noqa: E731
    return {
        "about": f"Cases for `ledger-tui check-domain {name}`: for each predicate a call it must pass and one it must fail "
        "with the verdict in `expect`, after the steps before it. Only the named predicate's result is checked.",
        "cases": [
            {"predicate": "customer_identified", "expect": "pass", "steps": ada, "call": cancel("m_ada")},
            {"predicate": "customer_identified", "expect": "REVISE", "steps": [{"say": "Please cancel my membership."}], "call": cancel("m_ada")},
            {"predicate": "no_balance_due", "expect": "pass", "steps": ada, "call": cancel("m_ada")},
            {"predicate": "no_balance_due", "expect": "BLOCK", "steps": bo, "call": cancel("m_bo")},
            {"predicate": "explicit_confirmation", "expect": "pass", "steps": ada + proposal, "call": cancel("m_ada")},
            {"predicate": "explicit_confirmation", "expect": "REVISE", "steps": ada, "call": cancel("m_ada")},
        ],
    }


def new_domain(name: str, parent: Path) -> Path:
    """Write the package `ledger-tui-NAME` under `parent`; its folder, or one sentence why not."""
    from ledger_tui.domains import shipped

    if not NAME.match(name) or keyword.iskeyword(name):
        raise LedgerTuiError(f"{name!r} cannot name a domain: use 2 to 31 lowercase letters, digits and _, starting with a letter.")
    if name in shipped():
        raise LedgerTuiError(f"{name!r} is a domain ledger-tui ships; choose another name.")
    root = Path(parent) / f"ledger-tui-{name}"
    if root.exists():
        raise LedgerTuiError(f"{root} exists; choose another name or --dir, or remove it.")
    module = f"ledger_tui_{name}"
    title = name.replace("_", " ").capitalize() + " club"
    values = {"name": name, "module": module, "title": title}
    files = {
        "pyproject.toml": PYPROJECT.substitute(values),
        f"{module}/__init__.py": INIT.substitute(values),
        f"{module}/policy.md": POLICY.substitute(values),
        f"{module}/db.json": json.dumps(_db(), indent=1) + "\n",
        f"{module}/tasks.json": json.dumps(_tasks(name), indent=1) + "\n",
        f"{module}/cases.json": json.dumps(_cases(name), indent=1) + "\n",
        "tests/test_domain.py": TEST.substitute(values),
        "README.md": f"# ledger-tui-{name}\n\nThe {name} domain for ledger-tui. `pip install -e .`, then `ledger-tui domains`, "
        f"`ledger-tui check-domain {name}`, `ledger-tui eval --domain {name} --agent gold`, `ledger-tui play --domain {name} --no-model`.\n",
    }
    try:
        for rel, text in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise LedgerTuiError(f"Cannot write {root} ({exc.strerror or exc}); pass --dir a folder you can write.") from None
    return root

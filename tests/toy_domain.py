"""A tiny library-loans domain built in code, so engine and UI tests do not depend on a real domain.

Members borrow books; a loan can be renewed at most twice, only by its borrower, with an explicit yes.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from ledger_tui.engine.conversation.consent import RecordRef, Terms
from ledger_tui.engine.domain import Domain, Tool, ToolError, keyword_statement
from ledger_tui.engine.events import SuggestedCall, Verdict
from ledger_tui.engine.gate import GateContext, predicate
from ledger_tui.engine.rules import confirmed, identified, one_customer, owned_by_customer

POLICY = """# Library loans policy

- **[identify]** Identify the member by email before changing anything.
- **[one-member]** Serve one member per conversation.
- **[owner]** Only the borrower may renew a loan.
- **[confirm]** Read the loan details back and get an explicit yes before renewing.
- **[renewals]** A loan can be renewed at most twice; a returned loan cannot be renewed.
"""


class Member(BaseModel):
    member_id: str
    name: str
    email: str


class Loan(BaseModel):
    loan_id: str
    member_id: str
    book: str
    status: Literal["active", "returned"]
    renewals: int


class LibraryDB(BaseModel):
    model_config = ConfigDict(extra="forbid")
    members: dict[str, Member]
    loans: dict[str, Loan]


class EmailArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    email: str


class LoanArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    loan_id: str


def find_member_by_email(db: LibraryDB, a: EmailArgs) -> str:
    for m in db.members.values():
        if m.email.lower() == a.email.lower():
            return m.member_id
    raise ToolError("member not found")


def get_loan_details(db: LibraryDB, a: LoanArgs) -> Loan:
    if a.loan_id not in db.loans:
        raise ToolError("loan not found")
    return db.loans[a.loan_id]


def get_member_details(db: LibraryDB, a: EmailArgs) -> Member:
    for m in db.members.values():
        if m.email == a.email:
            return m
    raise ToolError("member not found")


def renew_loan(db: LibraryDB, a: LoanArgs) -> Loan:
    loan = get_loan_details(db, a)
    loan.renewals += 1
    return loan


TOOLS = [
    Tool(
        "find_member_by_email",
        "read",
        EmailArgs,
        find_member_by_email,
        "Find a member's id by email.",
        absorbs=lambda args, value: [],
        identifies=lambda args, value: value,
    ),
    Tool(
        "get_loan_details",
        "read",
        LoanArgs,
        get_loan_details,
        "Get a loan.",
        absorbs=lambda args, value: [(f"loans.{value['loan_id']}", value)],
    ),
    Tool("renew_loan", "write", LoanArgs, renew_loan, "Renew a loan.", touches=("loans.{loan_id}",)),
]


@predicate("renewal_limit", clause="renewals", on_fail=Verdict.BLOCK, tools=["renew_loan"], reads=("loans.{loan_id}",))
def renewal_limit(ctx: GateContext):
    """A loan is active and has been renewed fewer than two times."""
    loan = ctx.read(f"loans.{ctx.arguments['loan_id']}")
    if loan["status"] != "active":
        return ctx.fail(f"Loan {loan['loan_id']} is {loan['status']}.")
    if loan["renewals"] >= 2:
        return ctx.fail(f"Loan {loan['loan_id']} was already renewed {loan['renewals']} times (limit 2).")
    return None


def renew_terms(ctx: GateContext) -> Terms:
    """A renewal proposal names the loan (the member may have several)."""
    return Terms(("renew",), f"renew loan {ctx.arguments['loan_id']}", RecordRef("loan", ctx.arguments["loan_id"], ("loan",), count=2))


PREDICATES = [
    identified("identify", "find_member_by_email"),
    one_customer("one-member"),
    owned_by_customer("owner", ["renew_loan"], lambda a: f"loans.{a['loan_id']}", lambda r: r["member_id"], "loan"),
    confirmed("confirm", ["renew_loan"], lambda ctx: renew_terms(ctx)),
    renewal_limit,
]

DB = LibraryDB(
    members={
        "m1": Member(member_id="m1", name="Ada Park", email="ada@example.org"),
        "m2": Member(member_id="m2", name="Bo Chen", email="bo@example.org"),
    },
    loans={
        "L1": Loan(loan_id="L1", member_id="m1", book="Dune", status="active", renewals=0),
        "L2": Loan(loan_id="L2", member_id="m1", book="Emma", status="active", renewals=2),
        "L3": Loan(loan_id="L3", member_id="m2", book="Ulysses", status="active", renewals=0),
    },
)


def _identify_hint(arguments: dict, said: list[str]) -> SuggestedCall:
    """The lookup of the email the member gave (the last one), else of the email to ask for."""
    given = [m.rstrip(".") for text in said for m in re.findall(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+", text or "")]
    return SuggestedCall(name="find_member_by_email", arguments={"email": given[-1] if given else "<the member's email>"})


def build_toy() -> Domain:
    folder = Path(tempfile.mkdtemp(prefix="toy-domain-"))
    (folder / "policy.md").write_text(POLICY, encoding="utf-8")
    (folder / "db.json").write_text(DB.model_dump_json(), encoding="utf-8")
    return Domain(
        name="toy",
        title="Library loans (test domain)",
        folder=folder,
        db_model=LibraryDB,
        tools=TOOLS,
        predicates=PREDICATES,
        clock="2025-01-01T09:00:00",
        statements=[keyword_statement("urgency", "the member says it is urgent", {"urgent": ["urgent", "asap"]})],
        sources=[("loans.{loan_id}", "get_loan_details")],
        proposal_terms=renew_terms,
        identify_hint=_identify_hint,
    )

"""The telecom policy as code: one predicate per rule of policy.md, each naming its clause.

Predicates read the ledger through `ctx.read` (absent or stale → REVISE with the read that fixes
it) and what the customer said through `ctx.stated` (never taken for observed evidence). A
customer's own action can make a record stale too: paying a payment request on the phone changes
the bill, so every bill read before it must be read again before a write that depends on bills.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from ledger_tui.engine import rules
from ledger_tui.engine.domain import Statement, keyword_statement
from ledger_tui.engine.events import Verdict
from ledger_tui.engine.gate import Failure, GateContext, Predicate, predicate

from . import proposals
from .paths import bills_hint

TODAY = dt.date(2025, 2, 25)
REFUEL_MAX_GB = 2.0

LINE_WRITES = ("suspend_line", "resume_line", "enable_roaming", "disable_roaming", "refuel_data")
CUSTOMER_WRITES = LINE_WRITES + ("send_payment_request",)


# ----------------------------------------------------------------------------- helpers


def _date(value: Any) -> dt.date | None:
    if not value:
        return None
    return dt.date.fromisoformat(str(value)[:10])


def _customer_bills(ctx: GateContext, customer_id: str) -> list[dict[str, Any]] | Failure:
    """Every bill of the customer, fresh from the ledger, or a REVISE asking to re-read them all."""
    customer = ctx.read(f"customers.{customer_id}")
    bill_ids = list(customer.get("bill_ids") or [])
    bills, missing, stale = [], [], []
    for bill_id in bill_ids:
        path = f"bills.{bill_id}"
        bill = ctx.peek(path)
        if bill is None:
            (stale if ctx.reads[-1].stale else missing).append(bill_id)
        else:
            bills.append(bill)
    if missing or stale:
        parts = []
        if stale:
            parts.append(f"{', '.join(stale)} changed since they were read (stale)")
        if missing:
            parts.append(f"{', '.join(missing)} have not been read")
        call = bills_hint(customer_id, len(bill_ids))
        return ctx.fail(
            f"The bills of {customer_id} are needed: {'; '.join(parts)}.",
            f"Call {call.signature()} first.",
            call=call,
            verdict=Verdict.REVISE,
        )
    return bills


def _contract_ended(line: dict[str, Any]) -> bool:
    end = _date(line.get("contract_end_date"))
    return end is not None and end < TODAY


def _money(amount: float) -> str:
    return f"${amount:.2f}"


# ----------------------------------------------------------------------------- everywhere

customer_identified = rules.identified(
    "identity.verify", "get_customer_by_phone, get_customer_by_id, or get_customer_by_name with date of birth"
)
one_customer = rules.one_customer("identity.one-customer")
confirmation = rules.confirmed("actions.confirm", CUSTOMER_WRITES, proposals.terms)


@predicate(
    "record_owned_by_customer",
    clause="identity.own-records",
    on_fail=Verdict.BLOCK,
    tools=CUSTOMER_WRITES,
    reads=("customers.{customer_id}", "bills.{bill_id}"),
)
def record_owned_by_customer(ctx: GateContext) -> Failure | None:
    """The customer, line and bill the write names belong to the identified customer."""
    me = ctx.user_id()
    if me is None:
        return ctx.fail("No customer is identified, so ownership cannot be shown.", verdict=Verdict.REVISE)
    args = ctx.arguments
    if args.get("customer_id") != me:
        return ctx.fail(
            f"The call names customer {args.get('customer_id')}, but the identified customer is {me}.",
            "Only act on the identified customer's own account.",
        )
    customer = ctx.read(f"customers.{me}")
    line_id = args.get("line_id")
    if line_id is not None and line_id not in (customer.get("line_ids") or []):
        return ctx.fail(
            f"Line {line_id} is not one of {me}'s lines ({', '.join(customer.get('line_ids') or []) or 'none'}).",
            "Only act on the identified customer's own lines.",
        )
    bill_id = args.get("bill_id")
    if bill_id is not None:
        bill = ctx.read(f"bills.{bill_id}")
        if bill.get("customer_id") != me or bill_id not in (customer.get("bill_ids") or []):
            return ctx.fail(
                f"Bill {bill_id} belongs to {bill.get('customer_id')}, not to {me}.",
                "Only act on the identified customer's own bills.",
            )
    return None


# ----------------------------------------------------------------------------- billing


@predicate(
    "payment_request_bill_overdue",
    clause="billing.request-overdue",
    on_fail=Verdict.BLOCK,
    tools=("send_payment_request",),
    reads=("bills.{bill_id}",),
)
def payment_request_bill_overdue(ctx: GateContext) -> Failure | None:
    """A payment request is sent only for an Overdue bill whose amount was read."""
    bill = ctx.read(f"bills.{ctx.arguments['bill_id']}")
    if bill.get("status") != "Overdue":
        return ctx.fail(
            f"Bill {bill['bill_id']} is {bill.get('status')}, not Overdue; payment requests are only for overdue bills.",
            "Do not send a payment request for this bill.",
        )
    return None


@predicate(
    "no_other_bill_awaiting_payment",
    clause="billing.one-request",
    on_fail=Verdict.BLOCK,
    tools=("send_payment_request",),
    reads=("customers.{customer_id}", "bills.*"),
)
def no_other_bill_awaiting_payment(ctx: GateContext) -> Failure | None:
    """No bill of the customer is already awaiting payment."""
    bills = _customer_bills(ctx, ctx.arguments["customer_id"])
    if isinstance(bills, Failure):
        return bills
    waiting = [b["bill_id"] for b in bills if b.get("status") == "Awaiting Payment"]
    if waiting:
        return ctx.fail(
            f"Bill {', '.join(waiting)} is already awaiting payment; only one payment request may be open.",
            "The customer must pay the open request on their phone first.",
        )
    return None


# ----------------------------------------------------------------------------- lines


@predicate(
    "resume_no_overdue_bill",
    clause="line.resume-bills",
    on_fail=Verdict.BLOCK,
    tools=("resume_line",),
    reads=("customers.{customer_id}", "bills.*"),
)
def resume_no_overdue_bill(ctx: GateContext) -> Failure | None:
    """A line is resumed only when the customer has no overdue bill."""
    bills = _customer_bills(ctx, ctx.arguments["customer_id"])
    if isinstance(bills, Failure):
        return bills
    overdue = [f"{b['bill_id']} ({_money(b.get('total_due', 0))})" for b in bills if b.get("status") == "Overdue"]
    if overdue:
        return ctx.fail(
            f"The customer has an overdue bill: {', '.join(overdue)}; the line stays suspended until it is paid.",
            "Offer a payment request for the overdue bill; resume the line after it is paid.",
        )
    return None


@predicate(
    "resume_contract_not_ended",
    clause="line.resume-contract",
    on_fail=Verdict.BLOCK,
    tools=("resume_line",),
    reads=("lines.{line_id}",),
)
def resume_contract_not_ended(ctx: GateContext) -> Failure | None:
    """A line whose contract end date has passed cannot be resumed here."""
    line = ctx.read(f"lines.{ctx.arguments['line_id']}")
    if _contract_ended(line):
        return ctx.fail(
            f"The contract of line {line['line_id']} ended on {line['contract_end_date']}; it cannot be resumed here.",
            "Transfer the customer to a human agent.",
        )
    return None


@predicate(
    "suspend_only_for_overdue_or_ended_contract",
    clause="line.suspend-grounds",
    on_fail=Verdict.BLOCK,
    tools=("suspend_line",),
    reads=("lines.{line_id}", "customers.{customer_id}", "bills.*"),
)
def suspend_only_for_overdue_or_ended_contract(ctx: GateContext) -> Failure | None:
    """A line is suspended only for an overdue bill or a contract that has ended."""
    line = ctx.read(f"lines.{ctx.arguments['line_id']}")
    if _contract_ended(line):
        return None
    bills = _customer_bills(ctx, ctx.arguments["customer_id"])
    if isinstance(bills, Failure):
        return bills
    if any(b.get("status") == "Overdue" for b in bills):
        return None
    return ctx.fail(
        f"Line {line['line_id']} has a running contract and the customer has no overdue bill; there are no grounds to suspend it.",
        "Do not suspend the line.",
    )


# ----------------------------------------------------------------------------- data


@predicate(
    "refuel_within_limit",
    clause="data.refuel-limit",
    on_fail=Verdict.REVISE,
    tools=("refuel_data",),
    reads=("lines.{line_id}",),
)
def refuel_within_limit(ctx: GateContext) -> Failure | None:
    """At most 2 GB of data is added to a line per billing cycle."""
    gb = float(ctx.arguments["gb_amount"])
    line = ctx.read(f"lines.{ctx.arguments['line_id']}")
    already = float(line.get("data_refueling_gb") or 0.0)
    if gb <= 0 or gb + already > REFUEL_MAX_GB + 1e-9:
        room = max(REFUEL_MAX_GB - already, 0.0)
        return ctx.fail(
            f"{gb:g} GB would bring this cycle's added data on {line['line_id']} to {gb + already:g} GB; the limit is {REFUEL_MAX_GB:g} GB.",
            f"Offer at most {room:g} GB." if room > 0 else "No more data can be added this cycle.",
        )
    return None


# ----------------------------------------------------------------------------- roaming


@predicate("roaming_customer_abroad", clause="roaming.abroad", on_fail=Verdict.REVISE, tools=("enable_roaming",))
def roaming_customer_abroad(ctx: GateContext) -> Failure | None:
    """Roaming is enabled only for a customer who says they are abroad."""
    if ctx.stated("abroad") == "yes":
        return None
    return ctx.fail(
        "The customer has not said they are abroad; roaming is only turned on for customers travelling outside the country.",
        "Ask the customer where they are; enable roaming only if they are abroad.",
    )


@predicate(
    "roaming_off_on_line", clause="roaming.line-off", on_fail=Verdict.REVISE, tools=("enable_roaming",), reads=("lines.{line_id}",)
)
def roaming_off_on_line(ctx: GateContext) -> Failure | None:
    """Roaming is enabled only on a line where it is off."""
    line = ctx.read(f"lines.{ctx.arguments['line_id']}")
    if line.get("roaming_enabled"):
        return ctx.fail(
            f"Roaming is already enabled on line {line['line_id']}.",
            "Have the customer check the data-roaming switch on their phone instead.",
        )
    return None


# ----------------------------------------------------------------------------- escalation

_FIX_WORDS = re.compile(
    r"\b(restart|reboot|airplane|reseat|sim card|apn|roaming|data saver|network mode|speed test|wi-?fi calling|"
    r"vpn|permission|toggle|turn (on|off)|mobile data|payment request)\b",
    re.I,
)


@predicate(
    "transfer_after_fixes_tried", clause="escalation.transfer", on_fail=Verdict.REVISE, tools=("transfer_to_human_agents",)
)
def transfer_after_fixes_tried(ctx: GateContext) -> Failure | None:
    """Transfer only for a locked SIM, a suspension that cannot be lifted, or after in-scope fixes failed."""
    if ctx.stated("locked_sim") == "yes":
        return None
    for path in ctx.observed_paths("lines."):
        line = ctx.peek(path)
        if line and line.get("status") == "Suspended" and _contract_ended(line):
            return None
    guided = ctx.context("fix_guided", any(_FIX_WORDS.search(t) for t in ctx.session.assistant_texts))
    if guided and ctx.stated("fix_failed") == "yes":
        return None
    return ctx.fail(
        "No in-scope fix has been tried and failed, and there is no locked SIM or unliftable suspension on record.",
        "Guide the customer through the fixes in the policy first; transfer when they fail or the case is out of scope.",
    )


PREDICATES: list[Predicate] = [
    customer_identified,
    one_customer,
    record_owned_by_customer,
    confirmation,
    payment_request_bill_overdue,
    no_other_bill_awaiting_payment,
    resume_no_overdue_bill,
    resume_contract_not_ended,
    suspend_only_for_overdue_or_ended_contract,
    refuel_within_limit,
    roaming_customer_abroad,
    roaming_off_on_line,
    transfer_after_fixes_tried,
]


# ----------------------------------------------------------------------------- what the customer may say

STATEMENTS: list[Statement] = [
    keyword_statement(
        "abroad",
        "Whether the customer says they are abroad (yes) or at home (no).",
        {
            "no": ["back home", "returned home", "at home", "back in the country", "de retour", "de vuelta",
                   "wieder zu hause", "di nuovo a casa", "de volta"],
            "yes": ["abroad", "overseas", "travelling", "traveling", "out of the country", "outside the country",
                    "on holiday in", "on vacation in", "in another country", "in France", "in Spain", "in Italy",
                    "in Germany", "in Portugal", "in Japan", "in Mexico", "in Canada", "in London", "in Paris",
                    "a l etranger", "en el extranjero", "im ausland", "all estero", "no exterior", "fora do pais"],
        },
        negated="no",
        examples={"yes": "I'm abroad right now.", "no": "I'm back home."},
    ),
    keyword_statement(
        "locked_sim",
        "The customer says the phone asks for a SIM PIN or PUK code (a locked SIM).",
        {"yes": ["PUK", "PIN code", "asks for a PIN", "asking for a PIN", "asks for my PIN", "asking for my PIN",
                 "SIM is locked", "SIM locked", "locked SIM", "SIM card is locked", "SIM PIN", "enter a PIN",
                 "enter the PIN", "enter my PIN"]},
    ),
    keyword_statement(
        "fix_failed",
        "The customer reports that the suggested fix did not help.",
        {"yes": ["still not working", "still doesn't work", "still does not work", "didn't help", "did not help",
                 "didn't work", "did not work", "no luck", "still broken", "still no service", "still can't", "still cannot"]},
    ),
]

"""The agent's telecom tools: look customers, lines, bills and usage up; suspend, resume, roam, refuel.

Names, arguments and effects are τ²-bench's (tau2-compat §4.4), so the benchmark's trajectories
replay here with the same database effect. The texts the model is shown (results and errors) are
the benchmark's own, word for word: they are what its models were run against, and a strict
re-grade compares them. Lookups scan the lists in order and take the first match, as the benchmark
does, and run on arguments as given (a mistyped id finds nothing, a mistyped amount fails the way
Python fails), so a wrong call answers as it does there.

One deliberate difference: when a one-time charge finds no draft bill, the new draft's id is not
random but derived from a fixed seed, the customer id and the number of bills (see `draft_bill_id`),
so a session replays to the same digest.
"""

from __future__ import annotations

import calendar
import datetime as dt
import hashlib
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, WithJsonSchema

from ledger_tui.engine.generic_tools import transfer_tool
from ledger_tui.engine.domain import Tool, ToolError

from . import paths
from .schema import Bill, Customer, Device, Line, LineItem, Plan, TelecomDB, TelecomState

TODAY = dt.date(2025, 2, 25)
DRAFT_BILL_SEED = "ledger-tui/telecom/draft-bill"


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ----------------------------------------------------------------------------- lookups


def find_customer(db: TelecomDB, customer_id: str) -> Customer:
    for c in db.customers:
        if c.customer_id == customer_id:
            return c
    raise ToolError(f"Customer with ID {customer_id} not found")


def find_line(db: TelecomDB, line_id: str) -> Line:
    for line in db.lines:
        if line.line_id == line_id:
            return line
    raise ToolError(f"Line with ID {line_id} not found")


def find_plan(db: TelecomDB, plan_id: str) -> Plan:
    for plan in db.plans:
        if plan.plan_id == plan_id:
            return plan
    raise ToolError(f"Plan with ID {plan_id} not found")


def find_bill(db: TelecomDB, bill_id: str) -> Bill:
    for bill in db.bills:
        if bill.bill_id == bill_id:
            return bill
    raise ToolError(f"Bill with ID {bill_id} not found")


def find_device(db: TelecomDB, device_id: str) -> Device:
    for device in db.devices:
        if device.device_id == device_id:
            return device
    raise ToolError(f"Device with ID {device_id} not found")


def customer_by_phone(db: TelecomDB, phone_number: str) -> Customer | None:
    """The first customer whose own number, or the number of one of whose lines, matches."""
    for customer in db.customers:
        if customer.phone_number == phone_number:
            return customer
        for line_id in customer.line_ids:
            if find_line(db, line_id).phone_number == phone_number:
                return customer
    return None


def target_line(db: TelecomDB, customer_id: str, line_id: str) -> Line:
    """The customer's own line (customer exists, owns the line id, the line exists)."""
    customer = find_customer(db, customer_id)
    if line_id not in customer.line_ids:
        raise ToolError(f"Line {line_id} not found for customer {customer_id}")
    return find_line(db, line_id)


def awaiting_payment(db: TelecomDB, customer: Customer) -> list[Bill]:
    """The customer's bills in Awaiting Payment, in `bill_ids` order (a dangling id is an error)."""
    bills = [find_bill(db, bill_id) for bill_id in customer.bill_ids]
    return [bill for bill in bills if bill.status == "Awaiting Payment"]


def draft_bill_id(db: TelecomDB, customer_id: str) -> str:
    """A deterministic id for a new draft bill: `B` + 8 hex digits of a seeded hash."""
    n = len(db.bills)
    while True:
        token = hashlib.sha256(f"{DRAFT_BILL_SEED}:{customer_id}:{n}".encode()).hexdigest()[:8]
        candidate = "B" + token
        if all(b.bill_id != candidate for b in db.bills):
            return candidate
        n += 1


def add_one_time_charge(db: TelecomDB, customer_id: str, description: str, amount: float) -> Bill:
    """Put a charge (or credit) on the customer's first draft bill, opening one if there is none."""
    customer = find_customer(db, customer_id)
    draft = None
    for bill_id in customer.bill_ids:
        bill = find_bill(db, bill_id)
        if bill.status == "Draft":
            draft = bill
            break
    if draft is None:
        draft = Bill(
            bill_id=draft_bill_id(db, customer_id),
            customer_id=customer_id,
            period_start=dt.date(2025, 3, 1),
            period_end=dt.date(2025, 3, 31),
            issue_date=dt.date(2025, 3, 1),
            total_due=0,
            due_date=dt.date(2025, 3, 15),
            status="Draft",
        )
        db.bills.append(draft)
        customer.bill_ids.append(draft.bill_id)
    draft.line_items.append(
        LineItem(description=description, amount=amount, date=TODAY, item_type="Credit" if amount < 0 else "Charge")
    )
    draft.total_due = draft.total_due + amount
    return draft


# ----------------------------------------------------------------------------- read tools


class PhoneArgs(Args):
    phone_number: str


class CustomerIdArgs(Args):
    customer_id: str


class NameArgs(Args):
    full_name: str
    dob: str


class IdArgs(Args):
    id: str


class BillsArgs(Args):
    customer_id: str
    limit: int = 12


class LineArgs(Args):
    customer_id: str
    line_id: str


class SuspendArgs(Args):
    customer_id: str
    line_id: str
    reason: str


class PaymentRequestArgs(Args):
    customer_id: str
    bill_id: str


# τ²-bench writes the amount's own text into the bill (`2` vs `2.0`), so keep int vs float as sent.
GbAmount = Annotated[float | int, WithJsonSchema({"type": "number", "description": "Gigabytes to add"})]


class RefuelArgs(Args):
    customer_id: str
    line_id: str
    gb_amount: GbAmount


def get_customer_by_phone(state: TelecomState, args: PhoneArgs) -> Customer:
    customer = customer_by_phone(state.agent_db, args.phone_number)
    if customer is None:
        raise ToolError(f"Customer with phone number {args.phone_number} not found")
    return customer


def get_customer_by_id(state: TelecomState, args: CustomerIdArgs) -> Customer:
    return find_customer(state.agent_db, args.customer_id)


def get_customer_by_name(state: TelecomState, args: NameArgs) -> list[Customer]:
    return [
        c
        for c in state.agent_db.customers
        if c.full_name.lower() == args.full_name.lower() and c.date_of_birth == args.dob
    ]


# an id's first letter says what it names (a raw non-text id fails at `startswith`, as there)
DETAIL_LOOKUPS = (("L", find_line), ("D", find_device), ("B", find_bill), ("C", find_customer), ("P", find_plan))


def get_details_by_id(state: TelecomState, args: IdArgs) -> Any:
    for prefix, lookup in DETAIL_LOOKUPS:
        if args.id.startswith(prefix):
            return lookup(state.agent_db, args.id)
    raise ToolError(f"Unknown ID format or type: {args.id}")


def get_bills_for_customer(state: TelecomState, args: BillsArgs) -> list[Bill]:
    db = state.agent_db
    customer = find_customer(db, args.customer_id)
    bills = [find_bill(db, bill_id) for bill_id in customer.bill_ids]
    bills.sort(key=lambda b: b.issue_date, reverse=True)  # stable: ties keep bill_ids order
    return bills[: args.limit]


def get_data_usage(state: TelecomState, args: LineArgs) -> dict[str, Any]:
    db = state.agent_db
    line = target_line(db, args.customer_id, args.line_id)
    plan = find_plan(db, line.plan_id)
    last_day = calendar.monthrange(TODAY.year, TODAY.month)[1]
    return {
        "line_id": args.line_id,
        "data_used_gb": line.data_used_gb,
        "data_limit_gb": plan.data_limit_gb,
        "data_refueling_gb": line.data_refueling_gb,
        "cycle_end_date": dt.date(TODAY.year, TODAY.month, last_day),
    }


# ----------------------------------------------------------------------------- write tools


def suspend_line(state: TelecomState, args: SuspendArgs) -> dict[str, Any]:
    line = target_line(state.agent_db, args.customer_id, args.line_id)
    if line.status != "Active":
        raise ToolError("Line must be active to suspend")
    line.status = "Suspended"
    line.suspension_start_date = TODAY
    return {"message": "Line suspended successfully. $5/month holding fee will apply.", "line": line}


def resume_line(state: TelecomState, args: LineArgs) -> dict[str, Any]:
    line = target_line(state.agent_db, args.customer_id, args.line_id)
    if line.status not in ("Suspended", "Pending Activation"):
        raise ToolError("Line must be suspended to resume")
    line.status = "Active"
    line.suspension_start_date = None
    return {"message": "Line resumed successfully", "line": line}


def enable_roaming(state: TelecomState, args: LineArgs) -> str:
    line = target_line(state.agent_db, args.customer_id, args.line_id)
    if line.roaming_enabled:
        return "Roaming was already enabled"
    line.roaming_enabled = True
    return "Roaming enabled successfully"


def disable_roaming(state: TelecomState, args: LineArgs) -> str:
    line = target_line(state.agent_db, args.customer_id, args.line_id)
    if not line.roaming_enabled:
        return "Roaming was already disabled"
    line.roaming_enabled = False
    return "Roaming disabled successfully"


def send_payment_request(state: TelecomState, args: PaymentRequestArgs) -> str:
    db = state.agent_db
    customer = find_customer(db, args.customer_id)
    if awaiting_payment(db, customer):
        raise ToolError("A bill is already awaiting payment for this customer")
    if args.bill_id not in customer.bill_ids:
        raise ToolError(f"Bill {args.bill_id} not found for customer {args.customer_id}")
    bill = find_bill(db, args.bill_id)
    bill.status = "Awaiting Payment"
    return f"Payment request sent to the customer for bill {bill.bill_id}"


def refuel_data(state: TelecomState, args: RefuelArgs) -> dict[str, Any]:
    db = state.agent_db
    line = target_line(db, args.customer_id, args.line_id)
    if args.gb_amount <= 0:  # a raw non-number fails here with Python's own TypeError
        raise ToolError("Refuel amount must be positive")
    plan = find_plan(db, line.plan_id)
    price = plan.data_refueling_price_per_gb
    charge = args.gb_amount * price
    line.data_refueling_gb = line.data_refueling_gb + args.gb_amount
    add_one_time_charge(db, args.customer_id, f"Data refueling: {args.gb_amount} GB at ${price}/GB", charge)
    return {
        "message": f"Successfully added {args.gb_amount} GB of data for line {args.line_id} for ${charge:.2f}",
        "new_data_refueling_gb": line.data_refueling_gb,
        "charge": charge,
    }


# ----------------------------------------------------------------------------- the table


TOOLS: list[Tool] = [
    Tool(
        "get_customer_by_phone", "read", PhoneArgs, get_customer_by_phone,
        "Find the customer who owns a phone number (their contact number or one of their lines). "
        "Identifies the customer.",
        absorbs=paths.absorb_customer, identifies=paths.identifies_customer,
    ),
    Tool(
        "get_customer_by_id", "read", CustomerIdArgs, get_customer_by_id,
        "Look a customer up by customer id. Identifies the customer.",
        absorbs=paths.absorb_customer, identifies=paths.identifies_customer,
    ),
    Tool(
        "get_customer_by_name", "read", NameArgs, get_customer_by_name,
        "Customers with this full name (any letter case) and date of birth (YYYY-MM-DD). Identifies the "
        "customer only when exactly one matches.",
        absorbs=paths.absorb_customers, identifies=paths.identifies_unique_customer,
    ),
    Tool(
        "get_details_by_id", "read", IdArgs, get_details_by_id,
        "The record behind an id: L… line, D… device, B… bill, C… customer, P… plan.",
        absorbs=paths.absorb_details,
    ),
    Tool(
        "get_bills_for_customer", "read", BillsArgs, get_bills_for_customer,
        "A customer's bills, newest issue date first (at most `limit`, default 12).",
        absorbs=paths.absorb_bills,
    ),
    Tool(
        "get_data_usage", "read", LineArgs, get_data_usage,
        "Data used this cycle on one of the customer's lines, with the plan limit, the data added this "
        "cycle and the cycle's end date.",
        absorbs=paths.absorb_usage,
    ),
    Tool(
        "suspend_line", "write", SuspendArgs, suspend_line,
        "Suspend one of the customer's Active lines (a $5/month holding fee applies while suspended).",
        touches=("lines.{line_id}",),
        # the reason is only noted, never stored: any JSON type runs, as in τ²-bench
        raw_args=frozenset({"customer_id", "line_id", "reason"}),
    ),
    Tool(
        "resume_line", "write", LineArgs, resume_line,
        "Reactivate one of the customer's Suspended or Pending Activation lines.",
        touches=("lines.{line_id}",),
    ),
    Tool(
        "enable_roaming", "write", LineArgs, enable_roaming,
        "Allow roaming on one of the customer's lines (carrier side; the phone has its own switch).",
        touches=("lines.{line_id}",),
    ),
    Tool(
        "disable_roaming", "write", LineArgs, disable_roaming,
        "Stop roaming on one of the customer's lines (carrier side).",
        touches=("lines.{line_id}",),
    ),
    Tool(
        "send_payment_request", "write", PaymentRequestArgs, send_payment_request,
        "Mark one of the customer's bills Awaiting Payment and send a payment request to their phone, "
        "where the customer pays it.",
        touches=("bills.{bill_id}",),
    ),
    Tool(
        "refuel_data", "write", RefuelArgs, refuel_data,
        "Add data to one of the customer's lines for this cycle; the cost (GB × the plan's price per GB) "
        "is charged on the customer's draft bill.",
        touches=paths.refuel_touches,
        # a mistyped amount ("2", null, a list) fails its positivity check, as in τ²-bench
        raw_args=frozenset({"customer_id", "line_id", "gb_amount"}),
    ),
    transfer_tool(
        "Hand the conversation to a human agent, with a short summary of the issue and what was tried."
    ),
]

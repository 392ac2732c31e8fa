"""What the agent must say before each telecom write: the `Terms` its proposal names.

A line is named by its id or, as the customer knows it, its phone number ("your line" when they
have one); a bill by its id, its period, or as "your overdue bill" when only one is overdue. A
payment request names the amount due; a data refuel the gigabytes and their price (GB × the plan's
price per GB).
"""

from __future__ import annotations

from typing import Any, Iterable

from ledger_tui.engine import rules
from ledger_tui.engine.conversation.consent import Detail, RecordRef, Terms
from ledger_tui.engine.gate import GateContext

LINE_NOUNS = ("line", "number", "phone", "phone number", "mobile", "service")
BILL_NOUNS = ("bill", "invoice", "balance")
FAMILIES = {
    "suspend_line": ("suspend",),
    "resume_line": ("resume",),
    "enable_roaming": ("roaming_on",),
    "disable_roaming": ("roaming_off",),
    "refuel_data": ("refuel",),
    "send_payment_request": ("payment_request",),
}
ACTIONS = {
    "suspend_line": "suspend line {line_id}",
    "resume_line": "resume line {line_id}",
    "enable_roaming": "turn roaming on for line {line_id}",
    "disable_roaming": "turn roaming off for line {line_id}",
    "refuel_data": "add {gb_amount} GB of data to line {line_id}",
    "send_payment_request": "send a payment request for bill {bill_id}",
}


def _customer(ctx: GateContext) -> dict[str, Any]:
    me = ctx.session.user_id
    found = ctx.peek(f"customers.{me}") if me else None
    return found if isinstance(found, dict) else {}


def _line_forms(line: Any) -> Iterable[Any]:
    return [line.get("phone_number")] if isinstance(line, dict) and line.get("phone_number") else []


def _bill_forms(bill: Any) -> Iterable[Any]:
    if not isinstance(bill, dict):
        return ()
    forms = [bill.get("period_start"), bill.get("period_end"), bill.get("due_date")]
    if bill.get("status") == "Overdue":
        forms.append("overdue")
    return [f for f in forms if f]


def line_ref(ctx: GateContext, line_id: str) -> RecordRef:
    customer = _customer(ctx)
    records: dict[str, Any] = {str(i): None for i in customer.get("line_ids") or ()}
    for path in ctx.observed_paths("lines."):
        lid = path.split(".", 1)[1]
        if lid in records or not records:
            records[lid] = ctx.ledger.value(path)
    return rules.record_ref("line", line_id, LINE_NOUNS, records, _line_forms)


def bill_ref(ctx: GateContext, bill_id: str) -> RecordRef:
    records = rules.customer_records(ctx, "bills.", "customer_id", _customer(ctx).get("bill_ids"))
    return rules.record_ref("bill", bill_id, BILL_NOUNS, records, _bill_forms)


def _money(amount: float) -> float:
    return round(amount, 2)


def terms(ctx: GateContext) -> Terms:
    a = ctx.arguments
    name = ctx.call.name
    action = ACTIONS[name].format(**{k: a.get(k, "?") for k in ("line_id", "bill_id", "gb_amount")})
    if name == "send_payment_request":
        bill = ctx.latest(f"bills.{a['bill_id']}")
        amount = bill.get("total_due")
        return Terms(FAMILIES[name], action, bill_ref(ctx, a["bill_id"]), (Detail(f"the amount due (${amount})", (amount,)),))
    details: list[Detail] = []
    if name == "refuel_data":
        gb = a.get("gb_amount")
        line = ctx.latest(f"lines.{a['line_id']}")
        plan = ctx.latest(f"plans.{line['plan_id']}")
        charge = _money(float(gb) * float(plan["data_refueling_price_per_gb"]))
        # [data.refuel-price]: a customer who named the exact charge themselves need not hear it again
        details = [
            Detail(f"the amount of data ({gb} GB)", (gb,)),
            Detail(f"the price (${charge:.2f})", (charge,), customer_may_name=True),
        ]
    return Terms(FAMILIES[name], action, line_ref(ctx, a["line_id"]), tuple(details))


# ----------------------------------------------------------------------------- the card


def card(ctx: GateContext) -> list[str]:
    """What a confirmation card shows of a telecom write besides its action: the line's number,
    the data and its price, the amount of a payment request, a suspension's reason."""
    a = ctx.arguments
    name = ctx.call.name
    if name == "send_payment_request":
        bill = ctx.ledger.value(f"bills.{a['bill_id']}") or {}
        due = bill.get("total_due") if isinstance(bill, dict) else None
        return [f"Amount due: ${float(due):.2f}" if isinstance(due, (int, float)) else f"Bill: {a['bill_id']}"]
    line = ctx.ledger.value(f"lines.{a.get('line_id')}") or {}
    lines = [f"Phone number: {line.get('phone_number')}"] if isinstance(line, dict) and line.get("phone_number") else []
    if name == "refuel_data":
        plan = ctx.ledger.value(f"plans.{line.get('plan_id')}") if isinstance(line, dict) else None
        price = plan.get("data_refueling_price_per_gb") if isinstance(plan, dict) else None
        if price is not None:
            lines.append(f"Price: ${_money(float(a.get('gb_amount')) * float(price)):.2f} ({a.get('gb_amount')} GB at ${price} per GB)")
    if name == "suspend_line":
        lines.append(f"Reason: {a.get('reason')}")
    return lines

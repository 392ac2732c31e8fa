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
from ledger_tui.engine.domain import Choice, Question, Statement, keyword_statement, said_as
from ledger_tui.engine.events import SuggestedCall, Verdict
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
        return ctx.needs(f"The bills of {customer_id} are needed: {'; '.join(parts)}.", call)
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
    """A line is resumed only when the customer has no unpaid overdue bill: none Overdue, and none
    Awaiting Payment (an overdue bill with a payment request the customer has not paid yet)."""
    bills = _customer_bills(ctx, ctx.arguments["customer_id"])
    if isinstance(bills, Failure):
        return bills
    unpaid = [
        f"{b['bill_id']} ({_money(b.get('total_due', 0))}, {b.get('status')})"
        for b in bills
        if b.get("status") in ("Overdue", "Awaiting Payment")
    ]
    if unpaid:
        return ctx.fail(
            f"The customer has an unpaid overdue bill: {', '.join(unpaid)}; the line stays suspended until it is paid.",
            "Offer a payment request for the overdue bill; resume the line after the customer has paid and you read the bills again.",
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


@predicate(
    "roaming_customer_abroad",
    clause="roaming.abroad",
    on_fail=Verdict.REVISE,
    tools=("enable_roaming",),
    reads=("answers.abroad.{line_id}", "said.abroad"),
)
def roaming_customer_abroad(ctx: GateContext) -> Failure | None:
    """Roaming is enabled only for a customer who says they are abroad: their answer to the
    system's question about the line (consent mode card), else what the free-text reader found."""
    line = str(ctx.arguments.get("line_id"))
    if ctx.asks_questions:
        answer = ctx.answered("abroad", line)
        if answer is None:
            return ctx.question("abroad", line, f"The customer has not said whether they are abroad now, with line {line}.")
        if answer == "yes":
            return None
        said = "they are not abroad" if answer == "no" else "they are not sure they are abroad"
        return ctx.fail(
            f"The customer answered that {said}; roaming is only turned on for customers travelling outside the country.",
            "Do not turn roaming on; help with the problem at home.",
        )
    if ctx.stated("abroad", ctx.arguments.get("line_id")) == "yes":
        return None
    return ctx.inferred(
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

# The fixes the policy lists per problem ("Fixing the phone"), and words that show the agent took
# the customer through each. A transfer for a problem waits until each applicable fix was offered.
FIXES: dict[str, dict[str, re.Pattern[str]]] = {
    "no_service": {
        "airplane mode": re.compile(r"\bairplane\b|\bflight mode\b", re.I),
        "the SIM card": re.compile(r"\bsim\b", re.I),
    },
    "mobile_data": {
        "mobile data on": re.compile(r"\bmobile data\b|\bcellular data\b|\bdata (?:is|switch|toggle)", re.I),
        "data saver": re.compile(r"\bdata saver\b|\bdata restriction", re.I),
        "the network mode": re.compile(r"\bnetwork (?:mode|preference|type)\b|\b4g\b|\b5g\b", re.I),
    },
    "mms": {
        "mobile data": re.compile(r"\bmobile data\b|\bcellular data\b|\bspeed test\b", re.I),
        "Wi-Fi calling": re.compile(r"\bwi-?fi calling\b", re.I),
        "the MMS (APN) settings": re.compile(r"\bapn\b|\bmmsc\b|\bmms settings?\b", re.I),
        "the messaging app's permissions": re.compile(r"\bpermission", re.I),
    },
}
# the phone's own switch, not the line's setting: roaming near phone, device, settings or a toggle
_ROAMING = re.compile(
    r"\broaming\b[^.?!\n]{0,80}\b(phone|device|settings?|switch|toggle|turn(ed)? (it )?on|enable)\b|"
    r"\b(phone|device|settings?|switch|toggle|turn on|enable)\b[^.?!\n]{0,80}\broaming\b",
    re.I,
)


def _digits(text: str) -> set[str]:
    """Phone numbers in a text, as their last ten digits."""
    return {re.sub(r"\D", "", m)[-10:] for m in re.findall(r"\+?\d[\d\s().-]{8,}\d", text or "") if len(re.sub(r"\D", "", m)) >= 10}


def _line_is_liftless(line: dict[str, Any]) -> bool:
    return line.get("status") == "Suspended" and _contract_ended(line)


def _data_used_up(ctx: GateContext, line: dict[str, Any]) -> bool | Failure:
    """Has the line used its plan's data (refuels counted)? Needs the plan's limit."""
    plan = ctx.peek(f"plans.{line.get('plan_id')}")
    if plan is None:
        call = SuggestedCall(name="get_details_by_id", arguments={"id": line.get("plan_id")})
        return ctx.needs(f"plans.{line.get('plan_id')} has not been read: whether the data is used up is unknown.", call)
    limit = float(plan.get("data_limit_gb") or 0) + float(line.get("data_refueling_gb") or 0)
    return float(line.get("data_used_gb") or 0) >= limit


@predicate(
    "transfer_after_fixes_tried",
    clause="escalation.transfer",
    on_fail=Verdict.REVISE,
    tools=("transfer_to_human_agents",),
    reads=("said.locked_sim", "said.fix_failed", "said.abroad", "said.issue_*", "lines.*", "plans.*"),
)
def transfer_after_fixes_tried(ctx: GateContext) -> Failure | None:
    """Transfer for a locked SIM or a suspension that cannot be lifted; otherwise only after the
    fixes the policy lists for the customer's problem were offered and did not help: for data or
    MMS abroad, roaming on the line and on the phone; used-up data refuelled; and each fix of the
    problem's list."""
    if ctx.stated("locked_sim") == "yes":
        return None
    lines = [ctx.peek(p) for p in ctx.observed_paths("lines.")]
    lines = [line for line in lines if isinstance(line, dict)]
    if any(_line_is_liftless(line) for line in lines):
        return None
    said_numbers = {d for t in ctx.session.user_messages for d in _digits(t)}
    theirs = [line for line in lines if _digits(line.get("phone_number") or "") & said_numbers]
    if said_numbers and lines and not theirs:
        lines = []  # the line the customer called about has not been read yet
    elif theirs:
        lines = theirs
    problems = [p for p in ("no_service", "mobile_data", "mms") if ctx.stated(f"issue_{p}") == "yes"]
    if "no_service" in problems and ctx.stated("service_restored") != "yes":
        problems = ["no_service"]  # nothing else works without service: its fixes come first
    texts = ctx.context("agent_said", " ".join(ctx.session.assistant_texts))
    data_problem = bool({"mobile_data", "mms"} & set(problems))
    abroad = ctx.stated("abroad") == "yes"
    missing: list[str] = []  # fixes not offered: a violation, whatever is still unread
    unread: Failure | None = None  # a read that decides whether a fix applies
    for problem in problems:
        missing.extend(name for name, rx in FIXES[problem].items() if not rx.search(texts))
    if abroad and data_problem and not _ROAMING.search(texts):
        missing.append("data roaming on the phone (they are abroad)")
    if not lines:
        me = ctx.session.user_id
        customer = ctx.peek(f"customers.{me}") if me else None
        ids = [i for i in (customer or {}).get("line_ids") or [] if ctx.ledger.get(f"lines.{i}") is None]
        what = "The line the customer called about has not been read: its status, plan and roaming are unknown."
        unread = ctx.needs(what, SuggestedCall(name="get_details_by_id", arguments={"id": ids[0]})) if ids else ctx.fail(what)
    else:
        if abroad and data_problem:
            roaming_on = any(line.get("roaming_enabled") for line in lines) or any(
                w.name == "enable_roaming" for w in ctx.session.writes_done
            )
            if not roaming_on:
                missing.append("roaming on the customer's line (they are abroad)")
        if data_problem and not any(w.name == "refuel_data" for w in ctx.session.writes_done):
            for line in lines:
                used_up = _data_used_up(ctx, line)
                if isinstance(used_up, Failure):
                    unread = unread or used_up
                elif used_up:
                    missing.append(f"more data for line {line['line_id']} (its data is used up)")
    if missing:  # the problems and the fixes offered are read from the conversation's words
        return ctx.inferred(
            f"In-scope fixes for the customer's problem were not offered: {'; '.join(missing)}.",
            "Take the customer through these fixes first; transfer if they do not help.",
        )
    if unread is not None:
        return unread
    if ctx.stated("fix_failed") != "yes":
        return ctx.inferred(
            "The customer has not said that the fixes tried did not help, and there is no locked SIM or "
            "unliftable suspension on record.",
            "Guide the customer through the fixes in the policy first; transfer when they fail or the case is out of scope.",
        )
    return None


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

# Clauses of policy.md no predicate names, each with why (`ledger-tui check-domain` reads this).
NOT_GATED: dict[str, str] = {
    "data.refuel-price": (
        "Checked as part of explicit_confirmation [actions.confirm]: refuel_data's proposal Terms "
        "(proposals.py) must name the gigabytes and the price, so a yes to less does not count; which "
        "bill carries the charge is what the tool does, not a rule a call could break."
    ),
}


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
        records=r"\bL\d{4}\b",
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
        {"yes": ["still not working", "still does not work", "did not help", "does not help", "did not work",
                 "does not work", "no luck", "still broken", "still no service", "still can not", "still cannot",
                 "still seeing", "still see", "still shows", "still showing", "still have no", "still no signal",
                 "still get", "still getting", "still unable", "still the same", "same problem", "nothing changed",
                 "did not fix", "not fixed", "still won t", "still will not", "still does not"]},
    ),
    keyword_statement("issue_no_service", "The customer's phone has no service (no signal, no calls).",
                      {"yes": ["no service", "no signal", "can not make calls", "cannot make calls", "no bars",
                               "sos only", "emergency calls only", "can not call", "no network"]}, complaint=True),
    keyword_statement("service_restored", "The customer says the phone has service again.",
                      {"yes": ["signal is back", "signal bars are back", "bars are back", "service is back",
                               "i have service", "have service now", "have signal now", "i have signal",
                               "signal came back", "back online", "excellent signal", "good signal",
                               "strong signal", "full signal", "full bars"]}),
    keyword_statement("issue_mobile_data", "The customer's mobile data does not work or is slow.",
                      {"yes": ["mobile data", "no internet", "internet is not working", "internet does not work",
                               "internet not working", "data is not working", "data not working", "no data",
                               "slow data", "data is slow", "internet is slow", "slow internet", "can not browse",
                               "cannot browse", "cellular data", "data connection", "can not get online",
                               "can not go online", "can not load", "will not load"]}, complaint=True),
    keyword_statement("issue_mms", "The customer cannot send MMS (picture) messages.",
                      {"yes": ["send mms", "sending mms", "mms messages", "mms message", "an mms", "mms is not",
                               "mms does not", "mms will not", "picture message", "picture messages", "photo message",
                               "photo messages", "send pictures", "send photos", "send a picture", "send a photo",
                               "multimedia message", "multimedia messages"]}, complaint=True),
]


# ----------------------------------------------------------------------------- what the system asks

# roaming.abroad: in consent mode card the system asks whether the customer is abroad now, per
# line; the answer decides (questions.py).
QUESTIONS: list[Question] = [
    Question(
        key="abroad",
        record="line_id",
        ask="Are you outside the country right now, using line {record}?",
        tools=("enable_roaming",),
        choices=(
            Choice("yes", "Yes: I am abroad now", said_as(
                "yes|yeah|yep|yup|yes i am|abroad|overseas|out of the country|outside the country|"
                "in another country|in a foreign country|on holiday abroad|travelling abroad|traveling abroad",
                "in france|in spain|in italy|in germany|in portugal|in japan|in mexico|in canada|in london|in paris|"
                "in the uk|in england|in ireland|in greece|in turkey|in china|in india|in brazil|in thailand|"
                "in australia|in the netherlands|in belgium|in switzerland|in austria|in morocco|in egypt|"
                "in lisbon|in madrid|in rome|in berlin|in tokyo|in barcelona|in amsterdam",
                "oui|si|ja|sim|a l etranger|en el extranjero|im ausland|all estero|no exterior|fora do pais",
            )),
            Choice("no", "No: I am in the country", said_as(
                "no|nope|nah|no i am not|not abroad|not overseas|in the country|at home|home|back home|i am home|"
                "returned home|back in the country|domestic|here in the country",
                "non|nein|nao|a la maison|chez moi|en casa|zu hause|daheim|a casa|em casa|de retour|de vuelta|"
                "wieder zu hause|di nuovo a casa|de volta",
            )),
            Choice("not_sure", "Not sure", said_as(
                "not sure|unsure|do not know|no idea|can not say|cannot say|can not tell|no clue|not certain",
                "je ne sais pas|pas sur|no se|no estoy seguro|weiss nicht|keine ahnung|non so|nao sei",
            )),
        ),
    ),
]  # fmt: skip

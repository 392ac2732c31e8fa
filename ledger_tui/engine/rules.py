"""Predicates every domain shares: identification, ownership, one customer, explicit confirmation.

Domains instantiate these with their own tools, paths and clauses; the domain-specific rules live
in each domain's `predicates.py`.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterable

from ledger_tui.engine.events import Verdict
from ledger_tui.engine.gate import Failure, GateContext, Predicate, predicate

_YES = re.compile(
    r"\b(yes|yeah|yep|yup|sure|confirm|confirmed|i confirm|go ahead|please do|do it|proceed|"
    r"correct|that'?s right|absolutely|definitely|ok|okay|please proceed)\b",
    re.I,
)
_NO = re.compile(
    r"^\W*(no|nope|nah|wait|stop|hold on|never mind)\b|\b(don'?t|do not|not) (proceed|do it|go ahead|yet|now|sure)\b",
    re.I,
)


def is_explicit_yes(message: str) -> bool:
    """An explicit yes: an affirmative word and no negation in the customer's latest message."""
    text = message.strip()
    return bool(text) and bool(_YES.search(text)) and not _NO.search(text)


def identified(clause: str, how: str, tools: Iterable[str] | None = None) -> Predicate:
    @predicate("customer_identified", clause=clause, on_fail=Verdict.REVISE, tools=tools, reads=("users.current",))
    def check(ctx: GateContext) -> Failure | None:
        """The customer is identified before any write."""
        if ctx.user_id():
            return None
        hint_call = ctx.domain.identify_hint(ctx.arguments) if ctx.domain.identify_hint else None
        return ctx.fail(
            "The customer has not been identified in this conversation.",
            f"Identify the customer first ({how}).",
            call=hint_call,
        )

    return check


def one_customer(clause: str, tools: Iterable[str] | None = None) -> Predicate:
    @predicate("one_customer_per_conversation", clause=clause, on_fail=Verdict.BLOCK, tools=tools)
    def check(ctx: GateContext) -> Failure | None:
        """Only one customer is served per conversation."""
        ids = ctx.context("identified", list(ctx.session.identified))
        if len(set(ids)) > 1:
            return ctx.fail(
                f"More than one customer was identified in this conversation ({', '.join(ids)}).",
                "Serve one customer per conversation; the other must contact us separately.",
            )
        return None

    return check


def owned_by_customer(
    clause: str,
    tools: Iterable[str],
    record_path: Callable[[dict[str, Any]], str | None],
    owner_of: Callable[[Any], Any],
    what: str,
) -> Predicate:
    """BLOCK a write on a record the identified customer does not own (record read from the ledger)."""

    @predicate("record_owned_by_customer", clause=clause, on_fail=Verdict.BLOCK, tools=tools)
    def check(ctx: GateContext) -> Failure | None:
        """The record the write touches belongs to the identified customer."""
        path = record_path(ctx.arguments)
        if path is None:
            return None
        record = ctx.read(path)
        owner = owner_of(record)
        me = ctx.user_id()
        if me is None:
            return ctx.fail(f"No customer is identified, so the {what} cannot be shown to be theirs.", verdict=Verdict.REVISE)
        if owner != me:
            return ctx.fail(
                f"The {what} {path.split('.', 1)[1]} belongs to {owner}, not to the identified customer {me}.",
                f"Only act on the identified customer's own {what}s.",
            )
        return None

    return check


def confirmed(
    clause: str,
    tools: Iterable[str],
    key_args: Callable[[dict[str, Any]], Iterable[str]] = lambda a: (),
) -> Predicate:
    """REVISE unless the agent stated the details and the customer's latest message is an explicit yes."""

    @predicate("explicit_confirmation", clause=clause, on_fail=Verdict.REVISE, tools=tools)
    def check(ctx: GateContext) -> Failure | None:
        """The agent listed the action's details and the customer's latest message is an explicit yes."""
        last = ctx.context("last_user_message", ctx.session.last_user_message)
        said = ctx.context("last_assistant_text", ctx.session.last_assistant_text)
        missing = [k for k in key_args(ctx.arguments) if k and str(k).lower() not in said.lower()]
        if missing:
            return ctx.fail(
                f"The agent's last message to the customer does not name this action's details "
                f"(missing: {', '.join(map(str, missing))}), so no yes can confirm it.",
                "List the action's details to the customer and ask for an explicit yes.",
            )
        if not is_explicit_yes(last):
            return ctx.fail(
                "The customer's latest message is not an explicit yes to this action.",
                "Describe the action and ask the customer to confirm with an explicit yes.",
            )
        return None

    return check

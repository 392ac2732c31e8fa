"""Predicates every domain shares: identification, ownership, one customer, explicit confirmation
(a proposal bound to an acceptance, read by `consent.py` and `acceptance.py`).

Domains instantiate these with their own tools, paths and clauses; the domain-specific rules live
in each domain's `predicates.py`.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from ledger_tui.engine.conversation import acceptance, consent
from ledger_tui.engine.conversation.consent import Detail, RecordRef, Terms
from ledger_tui.engine.events import ToolCall, Verdict
from ledger_tui.engine.gate import Failure, GateContext, Predicate, predicate
from ledger_tui.engine.conversation.speaker import any_given_for_another
from ledger_tui.engine.conversation.answers import answer_reading
from ledger_tui.engine.conversation.text import contains, tokens


def identified(clause: str, how: str, tools: Iterable[str] | None = None) -> Predicate:
    @predicate("customer_identified", clause=clause, on_fail=Verdict.REVISE, tools=tools, reads=("users.current",))
    def check(ctx: GateContext) -> Failure | None:
        """The customer is identified before any write, by what they said, checked by a read."""
        if ctx.user_id():
            return None
        said = ctx.session.user_messages
        hint_call = ctx.domain.identify_hint(ctx.arguments, said) if ctx.domain.identify_hint else None
        given = [v for v in (hint_call.arguments.values() if hint_call is not None else ()) if isinstance(v, str) and v]
        quote = any_given_for_another(said, given)
        if quote is not None:
            # identity is bound to who speaks: another person's details identify nobody
            return ctx.fail(
                f"The customer gave what identifies another person, not themselves (“{quote}”): a caller "
                "acting for someone else is not that person, so nobody is identified.",
                "Decline politely: the account holder must contact us themselves. Offer to help with the "
                f"caller's own account if they identify themselves ({how}).",
            )
        if hint_call is not None and hint_call.signature() not in ctx.session.reads_failed:
            # a policy step, not missing evidence: the lookup may find nobody
            return ctx.fail(
                "The customer has not been identified yet; they gave what identifies them, but no read has confirmed it.",
                f"Look them up with what they gave: {hint_call.signature()}.",
                call=hint_call,
            )
        return ctx.fail(
            "The customer has not been identified in this conversation: no read has confirmed an identity "
            "the customer gave (a lookup of details they did not say identifies nobody).",
            f"Ask the customer, then identify them ({how}).",
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


def confirmed(clause: str, tools: Iterable[str], terms: Callable[[GateContext], Terms]) -> Predicate:
    """REVISE unless the agent proposed this very write and the customer's reply accepts it.

    `terms(ctx)` says what a proposal of the call must name (see `consent.Terms`); it may read the
    ledger (a card's last four digits need the profile that lists them)."""

    @predicate("explicit_confirmation", clause=clause, on_fail=Verdict.REVISE, tools=tools)
    def check(ctx: GateContext) -> Failure | None:
        """The customer said yes to this very write. In consent mode "card": on a card the system
        showed them listing exactly this call, read by the closed reader. In mode "text": the agent's
        last message proposed it (action, record, details, in the customer's terms) and the
        customer's reply to it is an explicit yes, not used up by an earlier write."""
        if ctx.session.consent == "card":
            terms(ctx)  # a card can be rendered: the records it names were read
            return _card_consent(ctx)
        wanted = terms(ctx)
        proposal = ctx.context("proposal", ctx.session.last_assistant_text)
        # the agent sent the card's own text: a plain yes to it is read by the closed reader, so
        # a misreading of free text costs one exchange, never a loop (the card is rendered only
        # when the message may carry it, or to hand its text over with a REVISE)
        from ledger_tui.engine.conversation.cards import CARD_OPENING, card_words

        card = _text_card(ctx) if proposal and CARD_OPENING in proposal else None
        if card is not None and contains(tokens(proposal), tokens(card.text)):
            reply = ctx.context("last_user_message", ctx.session.last_user_message)
            reading = answer_reading(reply or "", card_words(card, ctx.session.year), ctx.session.year)
            if reading.answer != "yes":
                return ctx.inferred(
                    f"The customer's reply to the confirmation of {wanted.action} is {reading.reason}, not a plain yes.",
                    "Answer the customer, then ask again for an explicit yes before you act." + _send(ctx, card),
                )
        else:
            problem = consent.proposal_problem(proposal, wanted, ctx.session.year, ctx.session.user_messages)
            if problem is not None:
                return ctx.inferred(
                    f"The agent's last message before the customer's reply does not propose this write: {problem}.",
                    f"Tell the customer what you are about to do ({wanted.action}), naming the record and "
                    "the details that matter in their terms, and ask for an explicit yes." + _send(ctx, card),
                )
            reply = ctx.context("last_user_message", ctx.session.last_user_message)
            reading = acceptance.read_reply(reply, wanted.families)
            if not reading.accepted:
                return ctx.inferred(
                    f"The customer's reply is {reading.explain()}, not a yes to {wanted.action}.",
                    "Answer the customer, then ask again for an explicit yes before you act." + _send(ctx, card),
                )
        record = wanted.record.id if wanted.record else None
        for done in ctx.session.recent_writes:
            if done.name == ctx.call.name and _record_of(done, wanted) == record:
                return ctx.fail(
                    f"{wanted.action} already ran on the customer's last yes; a yes is used up by the write it authorized.",
                    "Ask the customer again before making this change a second time.",
                )
        return None

    return check


def _text_card(ctx: GateContext) -> Any:
    """The card the system would show for this call (consent mode "text" hands its text to the
    model to send), or None when it cannot be rendered."""
    from ledger_tui.engine.conversation.cards import render

    try:
        return render(ctx.domain, [ctx.call], ctx.ledger, ctx.session)
    except Exception:  # the check still reads the free text
        return None


def _send(ctx: GateContext, card: Any = None) -> str:
    """The card's text for the model to send instead, as the end of a REVISE's hint."""
    card = card or _text_card(ctx)
    return f" Or send the customer exactly this, then wait for their answer:\n{card.text}" if card is not None else ""


ASK_AGAIN_LIMIT = 2  # cards a call is put on without a yes before the gate stops asking


def _card_consent(ctx: GateContext) -> Failure | None:
    """Consent as observed: the engine is running the calls of a card the customer said yes to,
    and this call is one of them, exactly."""
    from ledger_tui.engine.conversation.cards import call_key, consent_path

    key = call_key(ctx.call)
    card = ctx.session.confirming
    if card is not None:
        fact = ctx.recall(consent_path(card))
        value = fact.value if fact.present and fact.origin == "observed" else None
        confirmed = value.get("calls") if isinstance(value, dict) and value.get("answer") == "yes" else None
        if isinstance(confirmed, list) and key in (call_key(c) for c in confirmed if isinstance(c, dict)):
            return None
    answers = [quote for k, quote in ctx.session.declined if k == key]
    ctx.context("declined", answers)
    if len(answers) >= ASK_AGAIN_LIMIT:
        said = "; ".join(repr(q) for q in answers[-ASK_AGAIN_LIMIT:])
        return ctx.fail(
            f"The customer was asked to confirm exactly this call on {len(answers)} cards and did not say yes ({said}).",
            "Do not ask a third time: tell the customer it has not been done, and call it again only if they ask for it.",
        )
    return ctx.ask(
        "The customer has not confirmed this exact call; the system asks them on a confirmation card.",
        "Nothing to do: the customer's answer to the card decides.",
    )


def proposal_for(domain: Any, call: ToolCall, ledger: Any, session: Any) -> str:
    """The words that propose `call` in the customer's terms (`consent.proposal_text` of the
    domain's `Terms` for it, from this ledger and session): what the gold agent and tests say.
    Raises LookupError when the domain has no terms for the call; a read the terms need raises
    as in the gate."""
    tool = domain.tool(call.name)
    if tool is None or domain.proposal_terms is None:
        raise LookupError(f"{domain.name} has no proposal terms for {call.name}")
    ctx = GateContext(call=call, args=tool.args.model_validate(call.arguments), ledger=ledger, session=session, domain=domain)
    return consent.proposal_text(domain.proposal_terms(ctx))


def _record_of(call: ToolCall, wanted: Terms) -> str | None:
    if wanted.record is None:
        return None
    return next((str(v) for v in call.arguments.values() if str(v) == wanted.record.id), "")


def customer_records(
    ctx: GateContext, prefix: str, owner_field: str, listed: Iterable[str] | None
) -> dict[str, Any]:
    """The identified customer's records of one kind that the ledger holds (`prefix` e.g.
    `reservations.`), by id; ids the profile lists but nobody read map to None."""
    me = ctx.session.user_id
    out: dict[str, Any] = {str(i): None for i in listed or ()}
    for path in ctx.ledger.where(prefix, owner_field, me):
        out[path[len(prefix) :]] = ctx.ledger.value(path)
    return out


def record_ref(
    kind: str,
    record_id: str,
    nouns: tuple[str, ...],
    records: dict[str, Any],
    describe: Callable[[Any], Iterable[Any]],
) -> RecordRef:
    """A `RecordRef` for `record_id` among the customer's `records` of that kind."""
    mine = records.get(record_id)
    others = tuple(tuple(describe(r)) for rid, r in records.items() if rid != record_id and r is not None)
    count = max(1, len(set(records) | {record_id}))
    other_ids = tuple(rid for rid in records if rid != record_id)
    return RecordRef(kind, record_id, nouns, count, tuple(describe(mine)) if mine is not None else (), others, other_ids)


_METHOD_WORDS = {
    "credit_card": ("credit card",),
    "gift_card": ("gift card",),
    "certificate": ("certificate", "travel certificate", "voucher"),
    "paypal": ("paypal",),
}


_BRANDS = {"visa": "Visa", "mastercard": "Mastercard", "amex": "American Express", "discover": "Discover"}


def payment_shown(payment_id: str, methods: dict[str, Any] | None) -> str:
    """A payment method as the customer knows it, for a card: "your Visa ending in 9431", "your
    gift card gift_card_123 (balance $80)", "your PayPal", "your travel certificate"; the id
    itself when the profile does not list it."""
    method = (methods or {}).get(payment_id)
    if not isinstance(method, dict):
        return payment_id
    source = method.get("source") or payment_id.rsplit("_", 1)[0]
    if source == "credit_card":
        brand = _BRANDS.get(str(method.get("brand") or "").lower(), str(method.get("brand") or "card").title())
        four = method.get("last_four")
        return f"your {brand} ending in {four}" if four else f"your {brand} ({payment_id})"
    balance = method.get("amount", method.get("balance"))
    money = f" (balance ${balance:g})" if isinstance(balance, (int, float)) else ""
    if source == "gift_card":
        return f"your gift card {payment_id}{money}"
    if source == "certificate":
        return f"your travel certificate {payment_id}{money}"
    if source == "paypal":
        return "your PayPal account"
    return f"{source.replace('_', ' ')} {payment_id}"


def payment_detail(payment_id: str, methods: dict[str, Any], original: str | None, label: str = "the payment method") -> Detail | None:
    """What names a payment method to the customer: its id, or its customer-facing form (a card's
    last four digits, its brand or "credit card" when no other card shares it, "gift card" /
    "certificate" / "PayPal" when it is the only one of its kind), or "original payment method"
    for the record's original one. None when it *is* the original method: the policy's default
    needs no naming."""
    if payment_id == original:
        return None
    forms: list[Any] = [payment_id]
    method = methods.get(payment_id) or {}
    source = method.get("source") or payment_id.rsplit("_", 1)[0]
    same_kind = [m for m in methods.values() if isinstance(m, dict) and m.get("source") == source]
    if source == "credit_card":
        if method.get("last_four"):
            forms.append(str(method["last_four"]))
        brands = [m.get("brand") for m in same_kind]
        if method.get("brand") and brands.count(method["brand"]) == 1:
            forms.append(str(method["brand"]))
    if len(same_kind) <= 1:
        forms.extend(_METHOD_WORDS.get(source, ()))
    return Detail(label, tuple(forms))

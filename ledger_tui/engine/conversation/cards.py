"""Consent observed, not inferred: the confirmation card.

In consent mode "card", a write that passes every check of the gate but the customer's consent is
not run and not argued about: it is *held*. The system (not the model) shows the customer a card
rendered from the held calls' exact arguments and the ledger (the action, the record, every
detail in the customer's terms, amounts) and asks one closed question. The reply is read by the
closed reader (`answers.py`): yes, no or unclear. On a yes the engine runs exactly the calls on
the card, each gated again on the ledger as it is then; on anything else nothing runs.

The answer becomes an observed ledger fact, `consent.<card>`, with the customer's words. The
confirmation check (`rules.confirmed`) passes only for a call the engine runs on such a yes; a
call put on a card twice without a yes is not put on a third.

This module renders cards and keys calls; the session (`session_calls.py`) holds, asks and runs.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable

from ledger_tui.engine.conversation.answers import CardWords, reply_words
from ledger_tui.engine.events import CardLine, ConfirmationAnswered, ConfirmationRequested, ToolCall

if TYPE_CHECKING:
    from ledger_tui.engine.domain import Domain
    from ledger_tui.engine.gate import SessionContext
    from ledger_tui.engine.ledger import Ledger

CONSENT_PREFIX = "consent."
AWAITING = "Not run yet: the system asked the customer to confirm this call on a card; their answer decides."
NOT_RUN_AFTER_CARD = "Not run: the turn ended at a confirmation card; call it again after the customer's answer if it is still needed."
CARD_OPENING = "Before I go ahead, please confirm"
QUESTION = "Reply yes to confirm, or no to stop."
QUESTION_MANY = "Reply yes to confirm all of them, or no to stop."


def call_key(call: ToolCall | dict[str, Any]) -> str:
    """One call's identity on a card: its name and arguments, whatever their order and id."""
    if isinstance(call, ToolCall):
        name, arguments = call.name, call.arguments
    else:
        name, arguments = call.get("name", ""), call.get("arguments") or {}
    return json.dumps({"name": name, "arguments": arguments}, sort_keys=True, ensure_ascii=False)


def consent_path(card: str) -> str:
    return CONSENT_PREFIX + card


@dataclass(frozen=True)
class Rendered:
    lines: list[CardLine]
    text: str
    families: list[str]  # the verb families of the calls' actions
    values: list[str]  # the values the card shows (arguments, what describes the record)


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def generic_details(arguments: dict[str, Any], skip: Iterable[str] = ()) -> list[str]:
    """Each argument as `Label: value`, for a write whose domain does not render it: nothing of
    the call is left off the card."""
    out = []
    for key, value in arguments.items():
        if key in skip:
            continue
        label = _sentence(key.replace("_", " "))
        if isinstance(value, list):
            shown = "; ".join(
                ", ".join(f"{k.replace('_', ' ')} {_scalar(v)}" for k, v in item.items()) if isinstance(item, dict) else _scalar(item)
                for item in value
            ) or "none"
        elif isinstance(value, dict):
            shown = ", ".join(f"{k.replace('_', ' ')} {_scalar(v)}" for k, v in value.items()) or "none"
        else:
            shown = _scalar(value)
        out.append(f"{label}: {shown}")
    return out


def _flat(value: Any) -> Iterable[Any]:
    if isinstance(value, dict):
        for v in value.values():
            yield from _flat(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _flat(v)
    elif value not in (None, ""):
        yield value


def card_line(domain: "Domain", call: ToolCall, ledger: "Ledger", session: "SessionContext") -> tuple[CardLine, tuple[str, ...], list[Any]]:
    """How the card shows one call (its action and details), the verb families a reply may repeat,
    and the values it shows. Falls back to the call's own arguments when the domain cannot say."""
    from ledger_tui.engine.gate import GateContext

    tool = domain.tool(call.name)
    action, families, record_forms, details = "", (), [], None
    if tool is not None:
        try:
            ctx = GateContext(call=call, args=tool.args.model_validate(call.arguments), ledger=ledger, session=session, domain=domain)
            if domain.proposal_terms is not None:
                terms = domain.proposal_terms(ctx)
                action, families = _sentence(terms.action), tuple(terms.families)
                if terms.record is not None:
                    record_forms = list(terms.record.forms)
            if domain.card_details is not None:
                details = list(domain.card_details(ctx))
        except Exception:  # the card still shows the exact call, in its own words
            details = None
    if not action:
        action = _sentence(call.name.replace("_", " "))
    if details is None:
        details = generic_details(call.arguments, skip=("user_id", "customer_id", "patient_id"))
    values = [*(_flat(call.arguments)), *record_forms]
    return CardLine(call_id=call.id, action=action, details=details), families, values


def render(domain: "Domain", calls: list[ToolCall], ledger: "Ledger", session: "SessionContext") -> Rendered:
    """The card for the calls held in one assistant message."""
    lines, families, values = [], [], []
    for call in calls:
        line, fam, vals = card_line(domain, call, ledger, session)
        lines.append(line)
        families.extend(f for f in fam if f not in families)
        values.extend(vals)
    shown: list[str] = []
    for v in values:
        if _scalar(v) not in shown:
            shown.append(_scalar(v))
    return Rendered(lines, card_text(lines, holder(ledger, session.user_id)), families, shown)


def request(domain: "Domain", calls: list[ToolCall], ledger: "Ledger", session: "SessionContext", number: int) -> ConfirmationRequested:
    """Card `card_<number>` for `calls`, rendered from exactly those calls and the ledger."""
    rendered = render(domain, calls, ledger, session)
    return ConfirmationRequested(
        card=f"card_{number}", calls=calls, lines=rendered.lines, text=rendered.text,
        families=rendered.families, values=rendered.values,
    )


def consent_fact(card: ConfirmationRequested, answered: ConfirmationAnswered) -> tuple[str, dict[str, Any]]:
    """The customer's answer to `card` as the observed fact the consent check reads:
    `consent.<card>` = the answer, the card's calls and the customer's words."""
    calls = [{"name": c.name, "arguments": c.arguments} for c in card.calls]
    return consent_path(card.card), {"answer": answered.answer, "calls": calls, "quote": answered.quote}


def holder(ledger: "Ledger", user_id: str | None) -> str | None:
    """Whose account the card's changes are made on, as the profile read shows them: "Grace Scott
    (grace_scott_6483)", or the id alone when no profile with a name was read."""
    if not user_id:
        return None
    for prefix in ("users", "customers", "patients", "members"):
        profile = ledger.value(f"{prefix}.{user_id}")
        if isinstance(profile, dict):
            name = profile.get("name")
            if isinstance(name, dict):
                name = " ".join(str(name.get(k) or "") for k in ("first_name", "last_name")).strip()
            if not isinstance(name, str) or not name:
                name = profile.get("full_name") or " ".join(
                    str(profile.get(k) or "") for k in ("first_name", "last_name")
                ).strip()
            if isinstance(name, str) and name:
                return f"{name} ({user_id})"
    return user_id


def card_text(lines: list[CardLine], account: str | None = None) -> str:
    """The card as the customer reads it; `account` names the account holder the changes are for."""
    whose = [f"On the account of {account}."] if account else []
    if len(lines) == 1:
        body = [f"- {lines[0].action}."] + [f"  {d}." if not d.endswith(".") else f"  {d}" for d in lines[0].details]
        return "\n".join([f"{CARD_OPENING}:", *whose, *body, QUESTION])
    body = []
    for n, line in enumerate(lines, 1):
        body.append(f"{n}. {line.action}.")
        body.extend(f"   {d}." if not d.endswith(".") else f"   {d}" for d in line.details)
    return "\n".join([f"{CARD_OPENING} these {len(lines)} changes:", *whose, *body, QUESTION_MANY])


def card_texts(lines: list[CardLine]) -> list[str]:
    return [text for line in lines for text in (line.action, *line.details)]


def card_words(card: "ConfirmationRequested | Rendered", year: int = 2024) -> CardWords:
    """What a reply to a card may repeat (`answers.reply_words`): from the card alone (recorded, or
    as rendered), so a replay, `why` and what-if read an answer exactly as the live session did."""
    return reply_words(card.families, card.values, card_texts(card.lines), year)

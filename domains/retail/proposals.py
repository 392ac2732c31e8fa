"""What the agent must say before each retail write: the `Terms` its proposal names.

A proposal names the action, the order (its id, or an item only that order of the customer holds;
"your order" when they have one), and what the customer needs to know to say yes: the items by name
and the options that change, the new address fields, the payment or refund method unless it is the
order's original one (as the customer knows it: "Visa ending in 8902", "PayPal", "your gift card"),
and, for an item change, that every item to change is listed (it can be done only once).
"""

from __future__ import annotations

from typing import Any, Iterable

from ledger_tui.engine import rules
from ledger_tui.engine.conversation import consent
from ledger_tui.engine.conversation.consent import Detail, RecordRef, Terms
from ledger_tui.engine.gate import GateContext

ORDER_NOUNS = ("order", "purchase", "package", "shipment", "delivery")
ADDRESS_FIELDS = ("address1", "address2", "city", "state", "zip")
# Reminding the customer that an item change happens once and takes every item at the same time.
ALL_ITEMS = (
    "all items", "all the items", "all of the items", "every item", "any other item", "any other items",
    "other items", "anything else", "only once", "only be done once", "once per order", "one time",
    "any other changes", "other changes", "no further changes", "any further changes", "all the changes",
    "all the item", "all item changes", "listed all", "all of the changes", "everything you want to change",
    "no more changes", "cannot be modified again", "can not be modified again", "can not be changed again",
    "no further modifications", "any other modifications", "all modifications", "only modify",
    "tous les articles", "todos los articulos", "alle artikel", "tutti gli articoli", "todos os itens",
)  # fmt: skip


def _names(name: str) -> list[str]:
    """An item's name and its head noun, as the customer says it: "Bicycle Helmet" or "helmet";
    "Wristwatch" or "watch" (the tail of a compound word)."""
    words = name.split()
    if len(words) > 1:
        return [name, words[-1]]
    return [name] + [name[i:] for i in range(1, len(name) - 3)] if len(name) >= 8 else [name]


def _describe(order: Any) -> Iterable[Any]:
    """An order as the customer knows it: its items, and its status ("your pending order")."""
    if not isinstance(order, dict):
        return ()
    forms = [form for item in order.get("items") or [] if item.get("name") for form in _names(item["name"])]
    if order.get("status") in ("pending", "delivered"):
        forms.append(order["status"])
    return forms


def order_ref(ctx: GateContext, order_id: str) -> RecordRef:
    me = ctx.session.user_id
    profile = ctx.peek(f"users.{me}") if me else None
    listed = profile.get("orders") if isinstance(profile, dict) else None
    records = rules.customer_records(ctx, "orders.", "user_id", listed)
    return rules.record_ref("order", order_id, ORDER_NOUNS, records, _describe)


def _order(ctx: GateContext) -> dict[str, Any]:
    return ctx.latest("orders." + ctx.arguments["order_id"])


def _original(order: dict[str, Any]) -> str | None:
    history = order.get("payment_history") or []
    return history[0].get("payment_method_id") if history else None


def _payment(ctx: GateContext, user_id: str | None, payment_id: str, original: str | None, label: str) -> Detail | None:
    if payment_id == original:
        return None
    if consent.mentions(ctx.session.last_assistant_text, payment_id, ctx.session.year) or not user_id:
        return Detail(label, (payment_id,))
    profile = ctx.latest(f"users.{user_id}")
    return rules.payment_detail(payment_id, profile.get("payment_methods") or {}, original, label)


def _option_forms(key: str, value: Any) -> tuple[Any, ...]:
    """How an option value is said: "blue"; a yes/no option by its name ("waterproof", "not
    waterproof"); "not resistant" of "water resistance" also as "not water resistant"."""
    text = str(value)
    if text.lower() == "yes":
        return (key,)
    if text.lower() == "no":
        return (f"no {key}", f"not {key}", f"non-{key}", f"without {key}", f"non {key}")
    words = text.split()
    key_words = key.split()
    if len(words) > 1 and words[0].lower() in ("not", "no", "non") and len(key_words) > 1:
        return (text, " ".join([words[0], *key_words[:-1], *words[1:]]))
    return (text,)


def _item_details(ctx: GateContext, order: dict[str, Any], old_ids: list[str], new_ids: list[str] | None) -> list[Detail]:
    details: list[Detail] = []
    items = {i["item_id"]: i for i in order.get("items") or []}
    for n, old_id in enumerate(old_ids):
        item = items.get(old_id) or {}
        name = item.get("name") or old_id
        details.append(Detail(f"the item ({name})", (*_names(name), old_id)))
        if new_ids is None or n >= len(new_ids):
            continue
        new_id = new_ids[n]
        if consent.mentions(ctx.session.last_assistant_text, new_id, ctx.session.year):
            continue
        product = ctx.latest("products." + item["product_id"]) if item.get("product_id") else {}
        variant = (product.get("variants") or {}).get(new_id) or {}
        old_options = item.get("options") or {}
        for key, value in (variant.get("options") or {}).items():
            if old_options.get(key) != value:
                details.append(Detail(f"the new {key} of the {name} ({value})", _option_forms(key, value)))
    return details


def cancel_terms(ctx: GateContext) -> Terms:
    oid = ctx.arguments["order_id"]
    return Terms(("cancel",), f"cancel order {oid}", order_ref(ctx, oid))


def address_terms(ctx: GateContext) -> Terms:
    a = ctx.arguments
    if ctx.call.name == "modify_user_address":
        current = (ctx.peek(f"users.{a.get('user_id')}") or {}).get("address") or {}
        what, record = "change the customer's default address", None
    else:
        current = _order(ctx).get("address") or {}
        what, record = f"change the shipping address of order {a['order_id']}", order_ref(ctx, a["order_id"])
    details = []
    profile = _profile_address(ctx)
    if profile and all((profile.get(f) or "") == (a.get(f) or "") for f in ADDRESS_FIELDS):
        # the customer knows it as their default address
        forms = (a.get("address1"), "default address", "address on file", "address in your profile", "profile address")
        details.append(Detail(f"the new address ({a.get('address1')})", forms))
    else:
        for field in ADDRESS_FIELDS:
            value = a.get(field)
            if value and (not current or current.get(field) != value or field in ("address1", "zip")):
                details.append(Detail(f"the new {field} ({value})", (value,)))
    if ctx.call.name == "modify_user_address":
        details.append(Detail("that it is the default address of the account", PROFILE_WORDS))
    return Terms(("address", "change"), what, record, tuple(details))


PROFILE_WORDS = (
    "default address", "default shipping address", "profile", "account", "address on file", "for future orders",
    "adresse par defaut", "direccion predeterminada", "standardadresse", "indirizzo predefinito", "endereco padrao",
)


def _profile_address(ctx: GateContext) -> dict[str, Any] | None:
    me = ctx.session.user_id
    profile = ctx.peek(f"users.{me}") if me else None
    if not isinstance(profile, dict):
        profile = ctx.ledger.value(f"users.{me}") if me else None
    return profile.get("address") if isinstance(profile, dict) else None


def payment_terms(ctx: GateContext) -> Terms:
    a = ctx.arguments
    order = _order(ctx)
    detail = _payment(ctx, order.get("user_id"), a["payment_method_id"], None, "the new payment method")
    return Terms(("payment", "change"), f"change the payment method of order {a['order_id']}", order_ref(ctx, a["order_id"]), (detail,) if detail else ())


def items_terms(ctx: GateContext) -> Terms:
    a = ctx.arguments
    order = _order(ctx)
    details = _item_details(ctx, order, list(a.get("item_ids") or []), list(a.get("new_item_ids") or []))
    pay = _payment(ctx, order.get("user_id"), a["payment_method_id"], _original(order), "the payment method for the difference")
    if pay is not None:
        details.append(pay)
    if ctx.call.name == "modify_pending_order_items":
        details.append(Detail("that every item to change is listed (it can be done only once)", ALL_ITEMS))
        families, what = ("items", "change", "exchange"), f"change items of order {a['order_id']}"
    else:
        families, what = ("exchange", "change"), f"exchange items of order {a['order_id']}"
    return Terms(families, what, order_ref(ctx, a["order_id"]), tuple(details))


def return_terms(ctx: GateContext) -> Terms:
    a = ctx.arguments
    order = _order(ctx)
    details = _item_details(ctx, order, list(a.get("item_ids") or []), None)
    pay = _payment(ctx, order.get("user_id"), a["payment_method_id"], _original(order), "the refund method")
    if pay is not None:
        details.append(pay)
    return Terms(("return", "refund"), f"return items of order {a['order_id']}", order_ref(ctx, a["order_id"]), tuple(details))


terms = consent.by_tool({
    "cancel_pending_order": cancel_terms,
    "modify_pending_order_address": address_terms,
    "modify_user_address": address_terms,
    "modify_pending_order_payment": payment_terms,
    "modify_pending_order_items": items_terms,
    "exchange_delivered_order_items": items_terms,
    "return_delivered_order_items": return_terms,
})


# ----------------------------------------------------------------------------- the card
# What a confirmation card shows of each write (cards.py): every argument, as the customer knows it.


def _money(amount: Any) -> str:
    return f"${amount:,.2f}" if isinstance(amount, (int, float)) else str(amount)


def _shown_method(ctx: GateContext, user_id: str | None, payment_id: str) -> str:
    profile = ctx.ledger.value(f"users.{user_id}") if user_id else None
    methods = profile.get("payment_methods") if isinstance(profile, dict) else None
    return rules.payment_shown(payment_id, methods)


def _item_shown(item: dict[str, Any] | None, item_id: str) -> str:
    if not item:
        return f"item {item_id}"
    options = ", ".join(f"{k} {v}" for k, v in (item.get("options") or {}).items())
    return f"{item.get('name') or item_id}" + (f" ({options})" if options else "")


def _order_of(ctx: GateContext) -> dict[str, Any]:
    found = ctx.ledger.value("orders." + ctx.arguments["order_id"])
    return found if isinstance(found, dict) else {}


def _items(order: dict[str, Any]) -> dict[str, Any]:
    return {i.get("item_id"): i for i in order.get("items") or [] if isinstance(i, dict)}


def _address(a: dict[str, Any]) -> str:
    parts = [a.get("address1"), a.get("address2"), a.get("city"), f"{a.get('state', '')} {a.get('zip', '')}".strip(), a.get("country")]
    return ", ".join(str(p) for p in parts if p)


def cancel_card(ctx: GateContext) -> list[str]:
    order = _order_of(ctx)
    items = [_item_shown(i, i.get("item_id", "")) for i in order.get("items") or [] if isinstance(i, dict)]
    lines = [f"Items: {'; '.join(items)}"] if items else []
    lines.append(f"Reason: {ctx.arguments.get('reason')}")
    lines.append("Refund: to the original payment method")
    return lines


def address_card(ctx: GateContext) -> list[str]:
    which = "New default address" if ctx.call.name == "modify_user_address" else "New shipping address"
    return [f"{which}: {_address(ctx.arguments)}"]


def payment_card(ctx: GateContext) -> list[str]:
    order = _order_of(ctx)
    return [f"New payment method: {_shown_method(ctx, order.get('user_id'), ctx.arguments.get('payment_method_id', ''))}"]


def items_card(ctx: GateContext) -> list[str]:
    a = ctx.arguments
    order = _order_of(ctx)
    items = _items(order)
    lines = []
    for n, old in enumerate(a.get("item_ids") or []):
        item = items.get(old)
        new = (a.get("new_item_ids") or [None] * (n + 1))[n] if n < len(a.get("new_item_ids") or []) else None
        product = ctx.ledger.value("products." + item["product_id"]) if item and item.get("product_id") else None
        variant = ((product or {}).get("variants") or {}).get(new) if isinstance(product, dict) else None
        after = ", ".join(f"{k} {v}" for k, v in ((variant or {}).get("options") or {}).items()) or f"item {new}"
        price = f" ({_money(variant.get('price'))})" if isinstance(variant, dict) and variant.get("price") is not None else ""
        lines.append(f"{_item_shown(item, old)} → {after}{price}")
    lines.append(f"Price difference: paid with or refunded to {_shown_method(ctx, order.get('user_id'), a.get('payment_method_id', ''))}")
    if ctx.call.name == "modify_pending_order_items":
        lines.append("Items of a pending order can be changed only once: every item to change is on this card")
    return lines


def return_card(ctx: GateContext) -> list[str]:
    a = ctx.arguments
    order = _order_of(ctx)
    items = _items(order)
    chosen = [items.get(i) for i in a.get("item_ids") or []]
    total = sum(float(i.get("price") or 0) for i in chosen if i)
    lines = [f"Return: {'; '.join(_item_shown(items.get(i), i) for i in a.get('item_ids') or [])}"]
    lines.append(f"Refund: {_money(total)} to {_shown_method(ctx, order.get('user_id'), a.get('payment_method_id', ''))}")
    return lines


card = consent.by_tool({
    "cancel_pending_order": cancel_card,
    "modify_pending_order_address": address_card,
    "modify_user_address": address_card,
    "modify_pending_order_payment": payment_card,
    "modify_pending_order_items": items_card,
    "exchange_delivered_order_items": items_card,
    "return_delivered_order_items": return_card,
})

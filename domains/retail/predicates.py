"""The retail policy as code: one predicate per rule, each naming its clause in policy.md.

The tools already refuse much of what the policy forbids, but not all of it: an address or payment
change on a `pending (item modified)` order, an exchange of an item for itself, a cancellation
reason the customer never gave, or a write on someone else's order all run if asked. The gate
checks these before the call, from observed records only (orders, profiles, products in the
ledger); what the customer said (their cancellation reason) is read as a stated fact, never as
evidence.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable

from ledger_tui.engine import rules
from ledger_tui.engine.domain import Statement, keyword_statement
from ledger_tui.engine.events import Verdict
from ledger_tui.engine.gate import Failure, GateContext, Predicate, predicate

from . import proposals
from .schema import CANCEL_REASONS

CANCEL = "cancel_pending_order"
ORDER_ADDRESS = "modify_pending_order_address"
ORDER_PAYMENT = "modify_pending_order_payment"
ORDER_ITEMS = "modify_pending_order_items"
EXCHANGE = "exchange_delivered_order_items"
RETURN = "return_delivered_order_items"
USER_ADDRESS = "modify_user_address"

PENDING_WRITES = (CANCEL, ORDER_ADDRESS, ORDER_PAYMENT, ORDER_ITEMS)
DELIVERED_WRITES = (EXCHANGE, RETURN)
ORDER_WRITES = PENDING_WRITES + DELIVERED_WRITES
SWAP_WRITES = (ORDER_ITEMS, EXCHANGE)
ALL_WRITES = ORDER_WRITES + (USER_ADDRESS,)

HOW_TO_IDENTIFY = (
    "ask for their email, or their first name, last name and zip code, and call "
    "find_user_id_by_email or find_user_id_by_name_zip; a user id alone is not enough"
)


# ---------------------------------------------------------------- evidence helpers
def _order(ctx: GateContext) -> dict[str, Any]:
    return ctx.read("orders." + ctx.arguments["order_id"])


def _owner_profile(ctx: GateContext, order: dict[str, Any]) -> dict[str, Any]:
    return ctx.read("users." + order["user_id"])


def _first_item(order: dict[str, Any], item_id: str) -> dict[str, Any] | None:
    return next((i for i in order["items"] if i["item_id"] == item_id), None)


def _missing_items(order: dict[str, Any], item_ids: Iterable[str]) -> list[str]:
    """Ids asked for more often than the order holds them."""
    held = Counter(i["item_id"] for i in order["items"])
    asked = Counter(item_ids)
    return sorted(i for i, n in asked.items() if n > held[i])


# ---------------------------------------------------------------- shared rules
IDENTIFIED = rules.identified("identity.verified", HOW_TO_IDENTIFY)
ONE_CUSTOMER = rules.one_customer("identity.one-customer")
OWNED = rules.owned_by_customer(
    "ownership.orders",
    ORDER_WRITES,
    record_path=lambda a: "orders." + a["order_id"] if a.get("order_id") else None,
    owner_of=lambda order: order.get("user_id"),
    what="order",
)
CONFIRMED = rules.confirmed("confirm.explicit", ALL_WRITES, proposals.terms)


# ---------------------------------------------------------------- retail rules
@predicate("own_profile_only", clause="profile.own-address", on_fail=Verdict.BLOCK, tools=[USER_ADDRESS])
def own_profile_only(ctx: GateContext) -> Failure | None:
    """A profile address may be changed only for the identified customer."""
    me = ctx.user_id()
    target = ctx.arguments["user_id"]
    if me is None:
        return ctx.fail("No customer is identified yet.", f"First {HOW_TO_IDENTIFY}.", verdict=Verdict.REVISE)
    if target != me:
        return ctx.fail(
            f"The profile {target} is not the identified customer's ({me}).",
            "Only the identified customer's own profile address can be changed.",
        )
    return None


@predicate(
    "order_status_pending", clause="pending.exact", on_fail=Verdict.BLOCK, tools=PENDING_WRITES,
    reads=("orders.{order_id}",),
)
def order_status_pending(ctx: GateContext) -> Failure | None:
    """Cancel and every pending-order change need the status to be exactly `pending`."""
    order = _order(ctx)
    status = order["status"]
    if status == "pending":
        return None
    order_id = order["order_id"]
    if status == "pending (item modified)":
        return ctx.fail(
            f"Order {order_id} already had its items modified (status 'pending (item modified)'); "
            "it can no longer be cancelled or changed.",
            "Tell the customer this order cannot be changed any more.",
        )
    if status == "delivered":
        hint = "A delivered order can only be returned or exchanged."
    else:
        hint = f"An order that is '{status}' cannot be cancelled or changed."
    return ctx.fail(f"Order {order_id} is '{status}', not 'pending'.", hint)


@predicate(
    "cancel_reason_valid", clause="cancel.reason", on_fail=Verdict.REVISE, tools=[CANCEL],
    reads=("said.cancel_reason",),
)
def cancel_reason_valid(ctx: GateContext) -> Failure | None:
    """The reason is one of the two accepted ones, and it is the one the customer gave."""
    reason = ctx.arguments["reason"]
    if reason not in CANCEL_REASONS:
        return ctx.fail(
            f"'{reason}' is not an accepted cancellation reason.",
            "The reason must be 'no longer needed' or 'ordered by mistake', as the customer says.",
        )
    stated = ctx.stated("cancel_reason", ctx.arguments["order_id"])
    if stated is None:
        return ctx.inferred(
            "The customer has not said why they want to cancel.",
            "Ask whether the order is no longer needed or was ordered by mistake.",
        )
    if stated != reason:
        return ctx.inferred(
            f"The customer's reason was '{stated}', not '{reason}'.",
            f"Use reason='{stated}', the reason the customer gave.",
        )
    return None


@predicate(
    "payment_change_valid", clause="payment.change", on_fail=Verdict.REVISE, tools=[ORDER_PAYMENT],
    reads=("orders.{order_id}", "users.<owner>"),
)
def payment_change_valid(ctx: GateContext) -> Failure | None:
    """One new method, different from the current one, from the profile; a gift card covers the total."""
    order = _order(ctx)
    new_id = ctx.arguments["payment_method_id"]
    history = order["payment_history"]
    if len(history) != 1 or history[0]["transaction_type"] != "payment":
        return ctx.fail(
            f"Order {order['order_id']} no longer has a single payment; its payment was already changed.",
            "Tell the customer the payment method of this order cannot be changed again.",
            verdict=Verdict.BLOCK,
        )
    current = history[0]["payment_method_id"]
    if new_id == current:
        return ctx.fail(
            f"{new_id} already pays for order {order['order_id']}.",
            "Ask the customer for a different payment method from their profile.",
        )
    methods = _owner_profile(ctx, order)["payment_methods"]
    method = methods.get(new_id)
    if method is None:
        return ctx.fail(
            f"{new_id} is not a payment method in the customer's profile.",
            f"Choose one of: {', '.join(sorted(methods))}.",
        )
    total = history[0]["amount"]
    if method["source"] == "gift_card" and method["balance"] < total:
        return ctx.fail(
            f"Gift card {new_id} has {method['balance']}, less than the order total {total}.",
            "Ask the customer for another payment method.",
        )
    return None


@predicate(
    "order_status_delivered", clause="delivered.status", on_fail=Verdict.BLOCK, tools=DELIVERED_WRITES,
    reads=("orders.{order_id}",),
)
def order_status_delivered(ctx: GateContext) -> Failure | None:
    """Returns and exchanges need a delivered order (so each happens at most once)."""
    order = _order(ctx)
    if order["status"] == "delivered":
        return None
    status = order["status"]
    hint = {
        "exchange requested": "An exchange was already requested for this order; it cannot be returned or exchanged again.",
        "return requested": "A return was already requested for this order; it cannot be returned or exchanged again.",
        "pending": "A pending order can be cancelled or modified instead.",
    }.get(status, "Only delivered orders can be returned or exchanged.")
    return ctx.fail(f"Order {order['order_id']} is '{status}', not 'delivered'.", hint)


@predicate(
    "return_items_in_order", clause="return.items", on_fail=Verdict.REVISE, tools=[RETURN],
    reads=("orders.{order_id}",),
)
def return_items_in_order(ctx: GateContext) -> Failure | None:
    """The items to return are items of this order (each at most as often as it was bought)."""
    order = _order(ctx)
    item_ids = ctx.arguments["item_ids"]
    if not item_ids:
        return ctx.fail("No items were named for the return.", "Ask the customer which items to return.")
    missing = _missing_items(order, item_ids)
    if missing:
        return ctx.fail(
            f"Order {order['order_id']} does not hold {', '.join(missing)} (that many times).",
            "Use item ids from the order's items.",
        )
    return None


@predicate(
    "refund_to_original_or_gift_card", clause="return.refund-method", on_fail=Verdict.REVISE, tools=[RETURN],
    reads=("orders.{order_id}", "users.<owner>"),
)
def refund_to_original_or_gift_card(ctx: GateContext) -> Failure | None:
    """A return is refunded to the order's original payment method or to a gift card in the profile."""
    order = _order(ctx)
    chosen = ctx.arguments["payment_method_id"]
    original = order["payment_history"][0]["payment_method_id"] if order["payment_history"] else None
    if chosen == original:
        return None
    methods = _owner_profile(ctx, order)["payment_methods"]
    method = methods.get(chosen)
    if method is not None and method["source"] == "gift_card":
        return None
    gift_cards = sorted(m for m, v in methods.items() if v["source"] == "gift_card")
    options = f"the original method {original}" + (f" or a gift card ({', '.join(gift_cards)})" if gift_cards else "")
    what = "is not in the customer's profile" if method is None else "is neither the original payment method nor a gift card"
    return ctx.fail(f"Refund method {chosen} {what}.", f"Refund to {options}.")


@predicate(
    "item_swaps_valid", clause="items.swap", on_fail=Verdict.REVISE, tools=SWAP_WRITES,
    reads=("orders.{order_id}", "products.<product of each item>"),
)
def item_swaps_valid(ctx: GateContext) -> Failure | None:
    """Each new item is an available, different variant of the same product as the item it replaces."""
    order = _order(ctx)
    old_ids, new_ids = ctx.arguments["item_ids"], ctx.arguments["new_item_ids"]
    if not old_ids or len(old_ids) != len(new_ids):
        return ctx.fail(
            "Every item to swap needs exactly one new item (the two lists must be non-empty and equally long).",
            "Pair each item with its replacement.",
        )
    missing = _missing_items(order, old_ids)
    if missing:
        return ctx.fail(
            f"Order {order['order_id']} does not hold {', '.join(missing)} (that many times).",
            "Use item ids from the order's items.",
        )
    for old_id, new_id in zip(old_ids, new_ids):
        if old_id == new_id:
            return ctx.fail(
                f"Item {old_id} would be replaced by itself.",
                "The new item must have different options; ask the customer which variant they want.",
            )
        item = _first_item(order, old_id)
        assert item is not None
        product = ctx.read("products." + item["product_id"])
        variant = product["variants"].get(new_id)
        if variant is None:
            return ctx.fail(
                f"{new_id} is not a variant of {item['name']} ({item['product_id']}), the product of {old_id}.",
                "An item can only be swapped for another variant of the same product.",
            )
        if not variant["available"]:
            return ctx.fail(f"Variant {new_id} of {item['name']} is not available.", "Offer an available variant.")
    return None


@predicate(
    "price_difference_covered", clause="items.payment", on_fail=Verdict.REVISE, tools=SWAP_WRITES,
    reads=("orders.{order_id}", "products.<product of each item>", "users.<owner>"),
)
def price_difference_covered(ctx: GateContext) -> Failure | None:
    """The difference is settled with a method from the profile; a gift card must cover an increase."""
    order = _order(ctx)
    chosen = ctx.arguments["payment_method_id"]
    methods = _owner_profile(ctx, order)["payment_methods"]
    method = methods.get(chosen)
    if method is None:
        return ctx.fail(
            f"{chosen} is not a payment method in the customer's profile.",
            f"Choose one of: {', '.join(sorted(methods))}.",
        )
    if method["source"] != "gift_card":
        return None
    diff: float = 0
    for old_id, new_id in zip(ctx.arguments["item_ids"], ctx.arguments["new_item_ids"]):
        item = _first_item(order, old_id)
        if item is None:
            return None  # item_swaps_valid reports it
        variant = ctx.read("products." + item["product_id"])["variants"].get(new_id)
        if variant is None:
            return None
        diff += variant["price"] - item["price"]
    if ctx.call.name == EXCHANGE:
        diff = round(diff, 2)
    if method["balance"] < diff:
        return ctx.fail(
            f"Gift card {chosen} has {method['balance']}, less than the price difference {round(diff, 2)}.",
            "Ask the customer for another payment method for the difference.",
        )
    return None


PREDICATES: list[Predicate] = [
    IDENTIFIED,
    ONE_CUSTOMER,
    OWNED,
    own_profile_only,
    order_status_pending,
    cancel_reason_valid,
    payment_change_valid,
    order_status_delivered,
    return_items_in_order,
    refund_to_original_or_gift_card,
    item_swaps_valid,
    price_difference_covered,
    CONFIRMED,
]

# Clauses of policy.md no predicate names, each with why (`ledger-tui check-domain` reads this):
# none, every clause is enforced by a predicate or the read gate.
NOT_GATED: dict[str, str] = {}


ORDER_ID = r"#?\bW\d{7}\b"

STATEMENTS: list[Statement] = [
    keyword_statement(
        "cancel_reason",
        "Why the customer wants to cancel an order, when it is one of the two accepted reasons.",
        {
            "ordered by mistake": [
                "ordered by mistake", "by mistake", "mistakenly", "accidentally", "by accident", "accidental",
                "ordered it in error", "in error", "by error", "did not mean to order", "did not mean to buy",
                "wrong item", "ordered the wrong", "ordered twice", "duplicate order", "clicked the wrong",
                "par erreur", "por error", "por equivocacion", "versehentlich", "aus versehen", "per sbaglio",
                "per errore", "por engano", "sem querer",
            ],
            "no longer needed": [
                "no longer needed", "no longer need", "do not need", "not needed", "no longer want",
                "do not want it", "changed my mind", "no use for", "no need for it", "will not need",
                "plus besoin", "n en ai plus besoin", "ya no lo necesito", "ya no la necesito", "ya no necesito",
                "brauche nicht mehr", "brauche es nicht mehr", "non mi serve piu", "non serve piu",
                "nao preciso mais", "nao preciso",
            ],
        },
        records=ORDER_ID,
        examples={"ordered by mistake": "I ordered it by mistake.", "no longer needed": "I no longer need it."},
    ),  # fmt: skip
]

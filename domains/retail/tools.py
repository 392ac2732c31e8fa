"""The retail tools: the same names, arguments and database effects as τ²-bench's retail domain.

Each tool checks everything before it mutates, and its mutations follow the reference step by
step, including the quirks a digest can see (tau2-compat §3): "pending" means exactly `pending`
for cancelling and item changes but any status containing "pending" for address and payment
changes; item modification stores an unrounded price difference and copies the *last* new variant's
price and options onto every changed item; an exchange accepts an item swapped for itself; request
lists are stored sorted; gift-card balances are re-rounded to cents after every change.

The texts the model reads are τ²-bench's, word for word: capitalised fixed sentences that echo no
id ("Order not found", "Payment method should be the original payment method"), except the
per-item ones ("Number of <id> not found." in an exchange, "<id> not found" in a modification,
"New item <id> not found or available"). Arguments run as τ²-bench's unchecked Python runs them:
a mistyped id or list fails where Python fails ("unhashable type: 'list'", "'dict' object has no
attribute 'count'"), a lookup name that is not text fails on `.lower()`, a mistyped address field
fails building the address record (pydantic's message), a mistyped cancel reason is an invalid or
unhashable reason. None of them can store a value of the wrong type, so no retail argument is
refused as mistyped.

What the tools do *not* enforce (exact `pending` for address/payment, new ≠ old in exchanges,
reasons stated by the customer, ownership) is the policy gate's job, in `predicates.py`.
"""

from __future__ import annotations

import json
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict

from ledger_tui.engine.store.cow import edit, first_match_index, look
from ledger_tui.engine.domain import Tool, ToolError
from ledger_tui.engine.generic_tools import calculate_tool, transfer_tool

from . import paths
from .schema import (
    CANCEL_REASONS,
    GiftCard,
    Order,
    OrderItem,
    OrderPayment,
    Product,
    RetailDB,
    User,
    UserAddress,
    Variant,
)


class Args(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------- argument models
class NoArgs(Args):
    pass


class EmailArgs(Args):
    email: str


class NameZipArgs(Args):
    first_name: str
    last_name: str
    zip: str


class UserIdArgs(Args):
    user_id: str


class OrderIdArgs(Args):
    order_id: str


class ProductIdArgs(Args):
    product_id: str


class ItemIdArgs(Args):
    item_id: str


class CancelArgs(Args):
    order_id: str
    reason: str


# fields in τ²-bench's parameter order (its Python errors list missing arguments in that order)
class OrderAddressArgs(Args):
    order_id: str
    address1: str
    address2: str
    city: str
    state: str
    country: str
    zip: str


class UserAddressArgs(Args):
    user_id: str
    address1: str
    address2: str
    city: str
    state: str
    country: str
    zip: str


class OrderPaymentArgs(Args):
    order_id: str
    payment_method_id: str


class SwapItemsArgs(Args):
    order_id: str
    item_ids: list[str]
    new_item_ids: list[str]
    payment_method_id: str


class ReturnArgs(Args):
    order_id: str
    item_ids: list[str]
    payment_method_id: str


# a set, as τ²-bench checks the reason against one: an unhashable reason fails as Python fails
_REASONS = frozenset(CANCEL_REASONS)


# ---------------------------------------------------------------- shared lookups
# A write looks records up (`look`: shared, read-only) for its checks and takes a private copy only
# of what it then changes (`edit`: an order's own fields, its payment history or items, one gift
# card of a user).
def _order(db: RetailDB, order_id: str) -> Order:
    """The order, to look at."""
    try:
        return look(db.orders, order_id)
    except KeyError:
        raise ToolError("Order not found") from None


def _user(db: RetailDB, user_id: str) -> User:
    """The user, to look at."""
    try:
        return look(db.users, user_id)
    except KeyError:
        raise ToolError("User not found") from None


def _gift_card(db: RetailDB, user_id: str, payment_method_id: str) -> GiftCard:
    """The user's private copy of a gift card, to change its balance."""
    return edit(db.users, user_id, "payment_methods", payment_method_id)


def _payment_method(db: RetailDB, user_id: str, payment_method_id: str) -> Any:
    methods = _user(db, user_id).payment_methods
    if payment_method_id not in methods:
        raise ToolError("Payment method not found")
    return methods[payment_method_id]


def _product(db: RetailDB, product_id: str) -> Product:
    """The product, to look at."""
    try:
        return look(db.products, product_id)
    except KeyError:
        raise ToolError("Product not found") from None


def _variant(db: RetailDB, product_id: str, item_id: str) -> Variant:
    variants = _product(db, product_id).variants
    if item_id not in variants:
        raise ToolError("Variant not found")
    return variants[item_id]


def _check_counts(order: Order, item_ids: list[str], error: Callable[[str], str]) -> None:
    """Each id may be asked for at most as many times as the order holds it (counted on the
    arguments as given: a mistyped list fails as Python fails on it)."""
    held = [item.item_id for item in order.items]
    for item_id in item_ids:
        if item_ids.count(item_id) > held.count(item_id):
            raise ToolError(error(item_id))


def _address(args: OrderAddressArgs | UserAddressArgs) -> UserAddress:
    """The address record, built from the arguments as given (a field that is not text fails with
    pydantic's message, as in τ²-bench)."""
    return UserAddress(
        address1=args.address1,
        address2=args.address2,
        city=args.city,
        country=args.country,
        state=args.state,
        zip=args.zip,
    )


# ---------------------------------------------------------------- reads
def find_user_id_by_email(db: RetailDB, args: EmailArgs) -> str:
    """The first user, in the database's order, whose email matches (case-insensitive)."""
    index = first_match_index(db.users, "email", lambda user: user.email.lower())
    if index is not None and isinstance(args.email, str):  # the answer the scan below would give
        found = index.get(args.email.lower())
        if found is None:
            raise ToolError("User not found")
        return found
    for user_id, user in db.users.items():
        if user.email.lower() == args.email.lower():
            return user_id
    raise ToolError("User not found")


def find_user_id_by_name_zip(db: RetailDB, args: NameZipArgs) -> str:
    """Compared per user, first name, then last name, then zip: a mistyped last name fails only
    once some first name matches, a mistyped zip never matches."""
    index = first_match_index(
        db.users, "name_zip", lambda u: (u.name.first_name.lower(), u.name.last_name.lower(), u.address.zip)
    )
    if index is not None and all(isinstance(v, str) for v in (args.first_name, args.last_name, args.zip)):
        found = index.get((args.first_name.lower(), args.last_name.lower(), args.zip))
        if found is None:
            raise ToolError("User not found")
        return found
    for user_id, user in db.users.items():
        if (
            user.name.first_name.lower() == args.first_name.lower()
            and user.name.last_name.lower() == args.last_name.lower()
            and user.address.zip == args.zip
        ):
            return user_id
    raise ToolError("User not found")


def get_user_details(db: RetailDB, args: UserIdArgs) -> User:
    return _user(db, args.user_id)


def get_order_details(db: RetailDB, args: OrderIdArgs) -> Order:
    return _order(db, args.order_id)


def get_product_details(db: RetailDB, args: ProductIdArgs) -> Product:
    return _product(db, args.product_id)


def get_item_details(db: RetailDB, args: ItemIdArgs) -> Variant:
    for product in db.products.values():
        if args.item_id in product.variants:
            return product.variants[args.item_id]
    raise ToolError("Item not found")


def list_all_product_types(db: RetailDB, args: NoArgs) -> str:
    catalog = {product.name: product.product_id for product in db.products.values()}
    return json.dumps(catalog, sort_keys=True)


# ---------------------------------------------------------------- writes
def cancel_pending_order(db: RetailDB, args: CancelArgs) -> Order:
    order = _order(db, args.order_id)
    if order.status != "pending":
        raise ToolError("Non-pending order cannot be cancelled")
    if args.reason not in _REASONS:
        raise ToolError("Invalid reason")
    refunds = []
    # Every history entry is refunded, earlier refunds included (a τ²-bench quirk kept on purpose).
    for payment in order.payment_history:
        method = _payment_method(db, order.user_id, payment.payment_method_id)
        refunds.append(
            OrderPayment(transaction_type="refund", amount=payment.amount, payment_method_id=payment.payment_method_id)
        )
        if isinstance(method, GiftCard):
            card = _gift_card(db, order.user_id, payment.payment_method_id)
            card.balance = round(card.balance + payment.amount, 2)
    order = edit(db.orders, args.order_id, shallow=True)
    order.status = "cancelled"
    order.cancel_reason = args.reason  # type: ignore[assignment]
    edit(db.orders, args.order_id, "payment_history", shallow=True).extend(refunds)
    return order


def modify_pending_order_address(db: RetailDB, args: OrderAddressArgs) -> Order:
    order = _order(db, args.order_id)
    if "pending" not in order.status:
        raise ToolError("Non-pending order cannot be modified")
    address = _address(args)
    order = edit(db.orders, args.order_id, shallow=True)
    order.address = address
    return order


def modify_user_address(db: RetailDB, args: UserAddressArgs) -> User:
    _user(db, args.user_id)
    address = _address(args)
    user = edit(db.users, args.user_id, shallow=True)
    user.address = address
    return user


def modify_pending_order_payment(db: RetailDB, args: OrderPaymentArgs) -> Order:
    order = _order(db, args.order_id)
    if "pending" not in order.status:
        raise ToolError("Non-pending order cannot be modified")
    new_method = _payment_method(db, order.user_id, args.payment_method_id)
    history = order.payment_history
    if len(history) != 1 or history[0].transaction_type != "payment":
        raise ToolError("There should be exactly one payment for a pending order")
    paid = history[0]
    if paid.payment_method_id == args.payment_method_id:
        raise ToolError("The new payment method should be different from the current one")
    amount = paid.amount
    if isinstance(new_method, GiftCard) and new_method.balance < amount:
        raise ToolError("Insufficient gift card balance to pay for the order")
    edit(db.orders, args.order_id, "payment_history", shallow=True).extend(
        [
            OrderPayment(transaction_type="payment", amount=amount, payment_method_id=args.payment_method_id),
            OrderPayment(transaction_type="refund", amount=amount, payment_method_id=paid.payment_method_id),
        ]
    )
    order = edit(db.orders, args.order_id, shallow=True)
    if isinstance(new_method, GiftCard):
        card = _gift_card(db, order.user_id, args.payment_method_id)
        card.balance = round(card.balance - amount, 2)
    old_method = _payment_method(db, order.user_id, paid.payment_method_id)
    if isinstance(old_method, GiftCard):
        card = _gift_card(db, order.user_id, paid.payment_method_id)
        card.balance = round(card.balance + amount, 2)
    return order


def _first_index(order: Order, item_id: str) -> int:
    """Where the first item with this id is in the order."""
    for at, item in enumerate(order.items):
        if item.item_id == item_id:
            return at
    raise ToolError(f"Item {item_id} not found")


def _first_item(order: Order, item_id: str) -> OrderItem:
    return order.items[_first_index(order, item_id)]


def _price_difference(db: RetailDB, order: Order, args: SwapItemsArgs, reject_same: bool) -> tuple[Any, Variant | None]:
    """Validate the swaps position by position; return the summed difference and the last variant."""
    diff: Any = 0
    variant: Variant | None = None
    for old_id, new_id in zip(args.item_ids, args.new_item_ids):
        if reject_same and old_id == new_id:
            raise ToolError("The new item id should be different from the old item id")
        item = _first_item(order, old_id)
        variant = _variant(db, item.product_id, new_id)
        if not variant.available:
            raise ToolError(f"New item {new_id} not found or available")
        diff += variant.price - item.price
    return diff, variant


def modify_pending_order_items(db: RetailDB, args: SwapItemsArgs) -> Order:
    order = _order(db, args.order_id)
    if order.status != "pending":
        raise ToolError("Non-pending order cannot be modified")
    _check_counts(order, args.item_ids, lambda i: f"{i} not found")
    if len(args.item_ids) != len(args.new_item_ids):
        raise ToolError("The number of items to be exchanged should match")
    diff, last_variant = _price_difference(db, order, args, reject_same=True)
    method = _payment_method(db, order.user_id, args.payment_method_id)
    if isinstance(method, GiftCard) and method.balance < diff:
        raise ToolError("Insufficient gift card balance to pay for the new item")
    edit(db.orders, args.order_id, "payment_history", shallow=True).append(
        OrderPayment(
            transaction_type="payment" if diff > 0 else "refund",
            amount=abs(diff),  # unrounded, as the reference stores it
            payment_method_id=args.payment_method_id,
        )
    )
    if isinstance(method, GiftCard):
        card = _gift_card(db, order.user_id, args.payment_method_id)
        card.balance = round(card.balance - diff, 2)
    order = edit(db.orders, args.order_id, shallow=True)
    for old_id, new_id in zip(args.item_ids, args.new_item_ids):
        # an item changed earlier in the list may match again; only the items changed are copied
        item = edit(db.orders, args.order_id, "items", _first_index(order, old_id), shallow=True)
        item.item_id = new_id
        # The reference copies the variant of the *last* pair onto every changed item.
        assert last_variant is not None
        item.price = last_variant.price
        item.options = dict(last_variant.options)
    order.status = "pending (item modified)"
    return order


def exchange_delivered_order_items(db: RetailDB, args: SwapItemsArgs) -> Order:
    order = _order(db, args.order_id)
    if order.status != "delivered":
        raise ToolError("Non-delivered order cannot be exchanged")
    _check_counts(order, args.item_ids, lambda i: f"Number of {i} not found.")
    if len(args.item_ids) != len(args.new_item_ids):
        raise ToolError("The number of items to be exchanged should match.")
    diff, _ = _price_difference(db, order, args, reject_same=False)
    diff = round(diff, 2)
    method = _payment_method(db, order.user_id, args.payment_method_id)
    if isinstance(method, GiftCard) and method.balance < diff:
        raise ToolError("Insufficient gift card balance to pay for the price difference")
    order = edit(db.orders, args.order_id, shallow=True)
    order.status = "exchange requested"
    order.exchange_items = sorted(args.item_ids)
    order.exchange_new_items = sorted(args.new_item_ids)
    order.exchange_payment_method_id = args.payment_method_id
    order.exchange_price_difference = diff
    return order


def return_delivered_order_items(db: RetailDB, args: ReturnArgs) -> Order:
    order = _order(db, args.order_id)
    if order.status != "delivered":
        raise ToolError("Non-delivered order cannot be returned")
    method = _payment_method(db, order.user_id, args.payment_method_id)
    if not isinstance(method, GiftCard) and args.payment_method_id != order.payment_history[0].payment_method_id:
        raise ToolError("Payment method should be the original payment method")
    _check_counts(order, args.item_ids, lambda _: "Some item not found")
    order = edit(db.orders, args.order_id, shallow=True)
    order.status = "return requested"
    order.return_items = sorted(args.item_ids)
    order.return_payment_method_id = args.payment_method_id
    return order


# ---------------------------------------------------------------- the table
TOOLS: list[Tool] = [
    Tool(
        "find_user_id_by_email", "read", EmailArgs, find_user_id_by_email,
        "Look up a customer's user id from their email address (case-insensitive). "
        "This identifies the customer.",
        absorbs=paths.absorb_nothing, identifies=paths.identified_user,
    ),
    Tool(
        "find_user_id_by_name_zip", "read", NameZipArgs, find_user_id_by_name_zip,
        "Look up a customer's user id from their first name, last name and the zip code of their "
        "profile address. This identifies the customer.",
        absorbs=paths.absorb_nothing, identifies=paths.identified_user,
    ),
    Tool(
        "get_user_details", "read", UserIdArgs, get_user_details,
        "Show a customer's profile: name, address, email, payment methods (with gift card "
        "balances) and order ids. Does not identify the customer.",
        absorbs=paths.absorb_user,
    ),
    Tool(
        "get_order_details", "read", OrderIdArgs, get_order_details,
        "Show an order: owner, address, items, status, fulfillments, payment history and any "
        "cancellation, exchange or return details. The order id includes the leading '#'.",
        absorbs=paths.absorb_order,
    ),
    Tool(
        "get_product_details", "read", ProductIdArgs, get_product_details,
        "Show a product and every one of its variants (item id, options, availability, price).",
        absorbs=paths.absorb_product,
    ),
    Tool(
        "get_item_details", "read", ItemIdArgs, get_item_details,
        "Show one variant by item id: options, availability and price.",
        absorbs=paths.absorb_item,
    ),
    Tool(
        "list_all_product_types", "read", NoArgs, list_all_product_types,
        "List every product type in the store, name to product id, sorted by name.",
        absorbs=paths.absorb_catalog,
    ),
    Tool(
        "cancel_pending_order", "write", CancelArgs, cancel_pending_order,
        "Cancel a pending order. The reason must be 'no longer needed' or 'ordered by mistake'. "
        "Every payment is refunded to its method; gift card refunds are immediate.",
        touches=paths.touches_order_and_owner,
        # a mistyped reason is an invalid (or unhashable) reason, as in τ²-bench: it never gets stored
        raw_args=frozenset({"order_id", "reason"}),
    ),
    Tool(
        "modify_pending_order_address", "write", OrderAddressArgs, modify_pending_order_address,
        "Change the shipping address of a pending order.",
        touches=("orders.{order_id}",),
        # a field that is not text fails building the address record, with pydantic's message
        raw_args=frozenset(OrderAddressArgs.model_fields),
    ),
    Tool(
        "modify_pending_order_payment", "write", OrderPaymentArgs, modify_pending_order_payment,
        "Pay for a pending order with a different payment method from the customer's profile; "
        "the original method is refunded.",
        touches=paths.touches_order_and_owner,
    ),
    Tool(
        "modify_pending_order_items", "write", SwapItemsArgs, modify_pending_order_items,
        "Swap items of a pending order for other variants of the same products, paying or "
        "refunding the price difference with the given method. Possible once per order.",
        touches=paths.touches_order_and_gift_card_owner,
    ),
    Tool(
        "exchange_delivered_order_items", "write", SwapItemsArgs, exchange_delivered_order_items,
        "Request an exchange of delivered items for other variants of the same products; the "
        "price difference is settled with the given method.",
        touches=("orders.{order_id}",),
    ),
    Tool(
        "return_delivered_order_items", "write", ReturnArgs, return_delivered_order_items,
        "Request a return of delivered items, refunded to the original payment method or a gift card.",
        touches=("orders.{order_id}",),
    ),
    Tool(
        "modify_user_address", "write", UserAddressArgs, modify_user_address,
        "Change the default address in a customer's profile (existing orders keep theirs).",
        touches=("users.{user_id}",),
        raw_args=frozenset(UserAddressArgs.model_fields),
    ),
    calculate_tool(),
    transfer_tool(
        "Hand the conversation to a human agent, with a summary of the customer's issue. Use only "
        "when the request is outside what the policy lets you do.",
    ),
]

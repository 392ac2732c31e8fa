"""The retail tools: the same names, arguments and database effects as τ²-bench's retail domain.

Each tool checks everything before it mutates, and its mutations follow the reference step by
step, including the quirks a digest can see (tau2-compat §3): "pending" means exactly `pending`
for cancelling and item changes but any status containing "pending" for address and payment
changes; item modification stores an unrounded price difference and copies the *last* new variant's
price and options onto every changed item; an exchange accepts an item swapped for itself; request
lists are stored sorted; gift-card balances are re-rounded to cents after every change. Errors are
fixed short phrases that echo no id (except the per-item "<id> not found").

What the tools do *not* enforce (exact `pending` for address/payment, new ≠ old in exchanges,
reasons stated by the customer, ownership) is the policy gate's job, in `predicates.py`.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Callable

from pydantic import BaseModel, ConfigDict

from ledger_tui.engine.domain import Tool, ToolError
from ledger_tui.engine.generic_tools import calculate_tool, transfer_tool

from . import paths
from .schema import CANCEL_REASONS, GiftCard, Order, OrderPayment, RetailDB, User, UserAddress, Variant


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


# ---------------------------------------------------------------- shared lookups
def _order(db: RetailDB, order_id: str) -> Order:
    order = db.orders.get(order_id)
    if order is None:
        raise ToolError("order not found")
    return order


def _user(db: RetailDB, user_id: str) -> User:
    user = db.users.get(user_id)
    if user is None:
        raise ToolError("user not found")
    return user


def _payment_method(db: RetailDB, user_id: str, payment_method_id: str) -> Any:
    method = _user(db, user_id).payment_methods.get(payment_method_id)
    if method is None:
        raise ToolError("payment method not found")
    return method


def _variant(db: RetailDB, product_id: str, item_id: str) -> Variant:
    product = db.products.get(product_id)
    if product is None:
        raise ToolError("product not found")
    variant = product.variants.get(item_id)
    if variant is None:
        raise ToolError("variant not found")
    return variant


def _check_counts(order: Order, item_ids: list[str], error: Callable[[str], str]) -> None:
    """Each id may be asked for at most as many times as the order holds it."""
    held = Counter(item.item_id for item in order.items)
    asked = Counter(item_ids)
    for item_id in item_ids:
        if asked[item_id] > held[item_id]:
            raise ToolError(error(item_id))


def _address(args: OrderAddressArgs | UserAddressArgs) -> UserAddress:
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
    wanted = args.email.lower()
    for user_id, user in db.users.items():
        if user.email.lower() == wanted:
            return user_id
    raise ToolError("user not found")


def find_user_id_by_name_zip(db: RetailDB, args: NameZipArgs) -> str:
    first, last = args.first_name.lower(), args.last_name.lower()
    for user_id, user in db.users.items():
        if (
            user.name.first_name.lower() == first
            and user.name.last_name.lower() == last
            and user.address.zip == args.zip
        ):
            return user_id
    raise ToolError("user not found")


def get_user_details(db: RetailDB, args: UserIdArgs) -> User:
    return _user(db, args.user_id)


def get_order_details(db: RetailDB, args: OrderIdArgs) -> Order:
    return _order(db, args.order_id)


def get_product_details(db: RetailDB, args: ProductIdArgs) -> Any:
    product = db.products.get(args.product_id)
    if product is None:
        raise ToolError("product not found")
    return product


def get_item_details(db: RetailDB, args: ItemIdArgs) -> Variant:
    for product in db.products.values():
        variant = product.variants.get(args.item_id)
        if variant is not None:
            return variant
    raise ToolError("item not found")


def list_all_product_types(db: RetailDB, args: NoArgs) -> str:
    catalog = {product.name: product.product_id for product in db.products.values()}
    return json.dumps(dict(sorted(catalog.items())))


# ---------------------------------------------------------------- writes
def cancel_pending_order(db: RetailDB, args: CancelArgs) -> Order:
    order = _order(db, args.order_id)
    if order.status != "pending":
        raise ToolError("non-pending order cannot be cancelled")
    if args.reason not in CANCEL_REASONS:
        raise ToolError("invalid reason")
    refunds = []
    # Every history entry is refunded, earlier refunds included (a τ²-bench quirk kept on purpose).
    for payment in order.payment_history:
        method = _payment_method(db, order.user_id, payment.payment_method_id)
        refunds.append(
            OrderPayment(transaction_type="refund", amount=payment.amount, payment_method_id=method.id)
        )
        if isinstance(method, GiftCard):
            method.balance = round(method.balance + payment.amount, 2)
    order.status = "cancelled"
    order.cancel_reason = args.reason  # type: ignore[assignment]
    order.payment_history.extend(refunds)
    return order


def modify_pending_order_address(db: RetailDB, args: OrderAddressArgs) -> Order:
    order = _order(db, args.order_id)
    if "pending" not in order.status:
        raise ToolError("non-pending order cannot be modified")
    order.address = _address(args)
    return order


def modify_user_address(db: RetailDB, args: UserAddressArgs) -> User:
    user = _user(db, args.user_id)
    user.address = _address(args)
    return user


def modify_pending_order_payment(db: RetailDB, args: OrderPaymentArgs) -> Order:
    order = _order(db, args.order_id)
    if "pending" not in order.status:
        raise ToolError("non-pending order cannot be modified")
    new_method = _payment_method(db, order.user_id, args.payment_method_id)
    history = order.payment_history
    if len(history) != 1 or history[0].transaction_type != "payment":
        raise ToolError("there should be exactly one payment for a pending order")
    paid = history[0]
    if paid.payment_method_id == args.payment_method_id:
        raise ToolError("the new payment method should be different from the current one")
    amount = paid.amount
    if isinstance(new_method, GiftCard) and new_method.balance < amount:
        raise ToolError("insufficient gift card balance to pay for the order")
    history.extend(
        [
            OrderPayment(transaction_type="payment", amount=amount, payment_method_id=new_method.id),
            OrderPayment(transaction_type="refund", amount=amount, payment_method_id=paid.payment_method_id),
        ]
    )
    if isinstance(new_method, GiftCard):
        new_method.balance = round(new_method.balance - amount, 2)
    old_method = _payment_method(db, order.user_id, paid.payment_method_id)
    if isinstance(old_method, GiftCard):
        old_method.balance = round(old_method.balance + amount, 2)
    return order


def _price_difference(db: RetailDB, order: Order, args: SwapItemsArgs, reject_same: bool) -> tuple[Any, Variant | None]:
    """Validate the swaps position by position; return the summed difference and the last variant."""
    diff: Any = 0
    variant: Variant | None = None
    for old_id, new_id in zip(args.item_ids, args.new_item_ids):
        if reject_same and old_id == new_id:
            raise ToolError("the new item id should be different from the old item id")
        item = next((i for i in order.items if i.item_id == old_id), None)
        if item is None:
            raise ToolError(f"{old_id} not found")
        variant = _variant(db, item.product_id, new_id)
        if not variant.available:
            raise ToolError(f"new item {new_id} not found or available")
        diff += variant.price - item.price
    return diff, variant


def modify_pending_order_items(db: RetailDB, args: SwapItemsArgs) -> Order:
    order = _order(db, args.order_id)
    if order.status != "pending":
        raise ToolError("non-pending order cannot be modified")
    _check_counts(order, args.item_ids, lambda i: f"{i} not found")
    if len(args.item_ids) != len(args.new_item_ids):
        raise ToolError("the number of items to be exchanged should match")
    diff, last_variant = _price_difference(db, order, args, reject_same=True)
    method = _payment_method(db, order.user_id, args.payment_method_id)
    if isinstance(method, GiftCard) and method.balance < diff:
        raise ToolError("insufficient gift card balance to pay for the new item")
    order.payment_history.append(
        OrderPayment(
            transaction_type="payment" if diff > 0 else "refund",
            amount=abs(diff),  # unrounded, as the reference stores it
            payment_method_id=method.id,
        )
    )
    if isinstance(method, GiftCard):
        method.balance = round(method.balance - diff, 2)
    for old_id, new_id in zip(args.item_ids, args.new_item_ids):
        item = next(i for i in order.items if i.item_id == old_id)
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
        raise ToolError("non-delivered order cannot be exchanged")
    _check_counts(order, args.item_ids, lambda i: f"{i} not found")
    if len(args.item_ids) != len(args.new_item_ids):
        raise ToolError("the number of items to be exchanged should match")
    diff, _ = _price_difference(db, order, args, reject_same=False)
    diff = round(diff, 2)
    method = _payment_method(db, order.user_id, args.payment_method_id)
    if isinstance(method, GiftCard) and method.balance < diff:
        raise ToolError("insufficient gift card balance to pay for the price difference")
    order.status = "exchange requested"
    order.exchange_items = sorted(args.item_ids)
    order.exchange_new_items = sorted(args.new_item_ids)
    order.exchange_payment_method_id = args.payment_method_id
    order.exchange_price_difference = diff
    return order


def return_delivered_order_items(db: RetailDB, args: ReturnArgs) -> Order:
    order = _order(db, args.order_id)
    if order.status != "delivered":
        raise ToolError("non-delivered order cannot be returned")
    method = _payment_method(db, order.user_id, args.payment_method_id)
    if not isinstance(method, GiftCard) and method.id != order.payment_history[0].payment_method_id:
        raise ToolError("payment method should be either the original payment method or a gift card")
    _check_counts(order, args.item_ids, lambda _: "some item not found")
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
    ),
    Tool(
        "modify_pending_order_address", "write", OrderAddressArgs, modify_pending_order_address,
        "Change the shipping address of a pending order.",
        touches=("orders.{order_id}",),
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
    ),
    calculate_tool(),
    transfer_tool(
        "Hand the conversation to a human agent, with a summary of the customer's issue. Use only "
        "when the request is outside what the policy lets you do.",
    ),
]

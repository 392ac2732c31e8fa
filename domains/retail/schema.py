"""The retail database, shaped exactly like τ²-bench's `RetailDB` so its own db.json loads here.

Field order is declaration order is the order a tool result prints in. Only the top-level container
is strict (an unknown top-level key is an error); inner records drop unknown keys, as the benchmark's
do. Orders carry seven optional fields that are absent on disk and materialise as null, so the
digest of a freshly loaded database matches the reference digest of the same file.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

OrderStatus = Literal[
    "processed",
    "pending",
    "pending (item modified)",
    "delivered",
    "cancelled",
    "exchange requested",
    "return requested",
]
CancelReason = Literal["no longer needed", "ordered by mistake"]
CANCEL_REASONS: tuple[str, ...] = ("no longer needed", "ordered by mistake")


class Variant(BaseModel):
    """One purchasable configuration of a product (its `item_id` is what orders reference)."""

    item_id: str
    options: dict[str, str]
    available: bool
    price: float


class Product(BaseModel):
    name: str
    product_id: str
    variants: dict[str, Variant]


class UserName(BaseModel):
    first_name: str
    last_name: str


class UserAddress(BaseModel):
    """A postal address; `address2` is an empty string when unused, never null."""

    address1: str
    address2: str
    city: str
    country: str
    state: str
    zip: str


class CreditCard(BaseModel):
    source: Literal["credit_card"]
    id: str
    brand: str
    last_four: str


class GiftCard(BaseModel):
    source: Literal["gift_card"]
    id: str
    balance: float


class Paypal(BaseModel):
    source: Literal["paypal"]
    id: str


PaymentMethod = Annotated[Union[CreditCard, GiftCard, Paypal], Field(discriminator="source")]


class User(BaseModel):
    user_id: str
    name: UserName
    address: UserAddress
    email: str
    payment_methods: dict[str, PaymentMethod]
    orders: list[str]


class OrderItem(BaseModel):
    name: str
    product_id: str
    item_id: str
    price: float
    options: dict[str, str]


class Fulfillment(BaseModel):
    tracking_id: list[str]
    item_ids: list[str]


class OrderPayment(BaseModel):
    transaction_type: Literal["payment", "refund"]
    amount: float
    payment_method_id: str


class Order(BaseModel):
    order_id: str
    user_id: str
    address: UserAddress
    items: list[OrderItem]
    status: OrderStatus
    fulfillments: list[Fulfillment]
    payment_history: list[OrderPayment]
    cancel_reason: CancelReason | None = None
    exchange_items: list[str] | None = None
    exchange_new_items: list[str] | None = None
    exchange_payment_method_id: str | None = None
    exchange_price_difference: float | None = None
    return_items: list[str] | None = None
    return_payment_method_id: str | None = None


class RetailDB(BaseModel):
    """The whole store: products, users and orders, each a map keyed by id."""

    model_config = ConfigDict(extra="forbid")

    products: dict[str, Product]
    users: dict[str, User]
    orders: dict[str, Order]


# Maps keyed by their records' own ids: a load whose key names another record is refused.
KEYED: tuple[tuple[str, str], ...] = (
    ("products", "product_id"),
    ("products.*.variants", "item_id"),
    ("users", "user_id"),
    ("users.*.payment_methods", "id"),
    ("orders", "order_id"),
)

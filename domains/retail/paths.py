"""The retail path map: where read results land in the ledger and which writes make them stale.

Paths: `users.<user_id>`, `orders.<order_id>` (the id keeps its `#`), `products.<product_id>`,
`items.<item_id>` and `catalog`. The two lookup tools identify the customer (the engine records
`identified.<id>` and `users.current`); `get_user_details` shows a profile but never identifies,
because the policy asks for an email or a name + zip even when the customer offers a user id.

Writes make the order stale, and those that can move a gift-card balance (cancel, payment change,
item change paid by gift card) also the owner's profile. The owner is not among a write's arguments,
so the whole `users.*` subtree is marked (see the report: `touches` sees only the arguments).
"""

from __future__ import annotations

import json
import re
from typing import Any, Iterable, Sequence

from ledger_tui.engine.disclosure import by_field
from ledger_tui.engine.events import SuggestedCall
from ledger_tui.engine.conversation.text import EMAIL

Pairs = Iterable[tuple[str, Any]]


def absorb_nothing(arguments: dict[str, Any], value: Any) -> Pairs:
    """Lookups only identify; the id itself is recorded by the engine as `identified.<id>`."""
    return ()


def identified_user(arguments: dict[str, Any], value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def absorb_user(arguments: dict[str, Any], value: Any) -> Pairs:
    yield "users." + str(value.get("user_id", arguments.get("user_id"))), value


def absorb_order(arguments: dict[str, Any], value: Any) -> Pairs:
    yield "orders." + str(value.get("order_id", arguments.get("order_id"))), value


def absorb_product(arguments: dict[str, Any], value: Any) -> Pairs:
    # Variants stay inside the product record: predicates check "same product" against it, and
    # copying every variant to `items.*` would double the rendered ledger.
    yield "products." + str(value.get("product_id", arguments.get("product_id"))), value


def absorb_item(arguments: dict[str, Any], value: Any) -> Pairs:
    yield "items." + str(value.get("item_id", arguments.get("item_id"))), value


def absorb_catalog(arguments: dict[str, Any], value: Any) -> Pairs:
    yield "catalog", json.loads(value) if isinstance(value, str) else value


def _owner(result: Any) -> str:
    """The order's owner from the write's result (the updated order); every user if it does not say."""
    owner = result.get("user_id") if isinstance(result, dict) else None
    return f"users.{owner}" if isinstance(owner, str) and owner else "users.*"


def touches_order_and_owner(arguments: dict[str, Any], result: Any = None) -> list[str]:
    """A cancellation or return refunds to the owner's payment methods (a gift card's balance)."""
    return [f"orders.{arguments.get('order_id')}", _owner(result)]


def touches_order_and_gift_card_owner(arguments: dict[str, Any], result: Any = None) -> list[str]:
    """An item change moves a balance only when the difference is settled with a gift card."""
    touched = [f"orders.{arguments.get('order_id')}"]
    if str(arguments.get("payment_method_id", "")).startswith("gift_card"):
        touched.append(_owner(result))
    return touched


SOURCES: list[tuple[str, str]] = [
    ("users.{user_id}", "get_user_details"),
    ("orders.{order_id}", "get_order_details"),
    ("products.{product_id}", "get_product_details"),
    ("items.{item_id}", "get_item_details"),
    ("catalog", "list_all_product_types"),
]


# (the zip within a few sentences of the name: an unbounded gap would rescan the rest of the text
# from every "name is")
_NAME_ZIP = re.compile(r"\bname is ([A-Z][\w'-]+) ([A-Z][\w'-]+)\b.{0,300}?\b(\d{5})\b", re.S)


def identify_hint(arguments: dict[str, Any], customer_text: Sequence[str] = ()) -> SuggestedCall | None:
    """The lookup of the email the customer gave, if they gave one; otherwise the agent must ask
    (an order id or a user id does not identify anyone under this policy)."""
    for text in reversed(customer_text):
        emails = EMAIL.findall(text or "")
        if emails:
            return SuggestedCall(name="find_user_id_by_email", arguments={"email": emails[-1].rstrip(".")})
        named = _NAME_ZIP.search(text or "")
        if named:
            first, last, zip_code = named.groups()
            return SuggestedCall(name="find_user_id_by_name_zip", arguments={"first_name": first, "last_name": last, "zip": zip_code})
    return None


def identity_sentence(db: Any, arguments: dict[str, Any]) -> str | None:
    """What the owner of the order or profile a call acts on says to be identified: their name and
    zip code (what τ²-bench's customers know; an email they remember may be wrong)."""
    user_id = arguments.get("user_id")
    if not user_id and arguments.get("order_id"):
        order = db.orders.get(arguments["order_id"])
        user_id = order.user_id if order is not None else None
    user = db.users.get(user_id) if user_id else None
    if user is None:
        return None
    return f"My name is {user.name.first_name} {user.name.last_name} and my zip code is {user.address.zip}."



# ----------------------------------------------------------------------------- the read gate

# a profile and an order are their user's; products, items and the catalog are everyone's
READ_GATE = by_field(
    "identity.privacy", {"users": "user_id", "orders": "user_id"}, ("users.",),
    "their email, or first name, last name and zip code, looked up with find_user_id_by_email or find_user_id_by_name_zip",
)

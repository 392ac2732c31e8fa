"""Retail tools behave like τ²-bench's: effects, quirks, error texts, output and digest conventions."""

from __future__ import annotations

import json

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.domains.retail import generate
from ledger_tui.domains.retail.schema import GiftCard
from ledger_tui.engine.domain import clause_text
from ledger_tui.engine.environment import Environment
from ledger_tui.engine.errors import DatabaseError
from ledger_tui.engine.events import ToolCall
from ledger_tui.engine.store.serialize import digest

DOMAIN = load_domain("retail")


@pytest.fixture
def env() -> Environment:
    return Environment(DOMAIN)


def run(env: Environment, name: str, **arguments):
    outcome = env.execute(ToolCall(id="t", name=name, arguments=arguments))
    return outcome


def ok(env: Environment, name: str, **arguments):
    outcome = run(env, name, **arguments)
    assert not outcome.error, outcome.content
    return json.loads(outcome.content) if outcome.content[:1] in "{[" else outcome.content


def first(db, status: str, when=lambda o, u: True):
    return next(o for o in db.orders.values() if o.status == status and when(o, db.users[o.user_id]))


def method_kind(order, kind: str) -> bool:
    return order.payment_history[0].payment_method_id.startswith(kind)


def swaps(db, order, count: int, distinct_prices: bool = False):
    """(old item, new variant) pairs for `count` items of different products in the order."""
    pairs, seen = [], set()
    for item in order.items:
        if item.product_id in seen:
            continue
        for v in db.products[item.product_id].variants.values():
            if v.item_id != item.item_id and v.available and (not distinct_prices or v.price != item.price):
                pairs.append((item, v))
                seen.add(item.product_id)
                break
        if len(pairs) == count:
            return pairs
    return None


# ---------------------------------------------------------------- reads
def test_lookups_identify_by_email_case_insensitively_and_by_name_zip(env):
    user = next(iter(env.db.users.values()))
    assert ok(env, "find_user_id_by_email", email=user.email.upper()) == user.user_id
    assert ok(
        env, "find_user_id_by_name_zip",
        first_name=user.name.first_name.lower(), last_name=user.name.last_name.upper(), zip=user.address.zip,
    ) == user.user_id
    wrong_zip = run(env, "find_user_id_by_name_zip", first_name=user.name.first_name, last_name=user.name.last_name, zip="00000")
    assert (wrong_zip.error, wrong_zip.content) == (True, "Error: User not found")


@pytest.mark.parametrize(
    "name, arguments, text",
    [
        ("get_user_details", {"user_id": "nobody_1"}, "User not found"),
        ("get_order_details", {"order_id": "#W0000000"}, "Order not found"),
        ("get_product_details", {"product_id": "1"}, "Product not found"),
        ("get_item_details", {"item_id": "1"}, "Item not found"),
        ("find_user_id_by_email", {"email": "nobody@example.com"}, "User not found"),
    ],
)
def test_read_errors_are_the_benchmarks_fixed_sentences(env, name, arguments, text):
    outcome = run(env, name, **arguments)
    assert outcome.error and outcome.content == f"Error: {text}"


def test_order_output_lists_every_field_in_schema_order_with_nulls(env):
    order = first(env.db, "delivered")
    outcome = run(env, "get_order_details", order_id=order.order_id)
    data = json.loads(outcome.content)
    assert list(data) == [
        "order_id", "user_id", "address", "items", "status", "fulfillments", "payment_history",
        "cancel_reason", "exchange_items", "exchange_new_items", "exchange_payment_method_id",
        "exchange_price_difference", "return_items", "return_payment_method_id",
    ]
    assert all(data[k] is None for k in list(data)[7:])
    assert outcome.content.startswith('{"order_id": "#W')  # standard separators, like the reference


def test_catalog_is_text_sorted_by_name_and_item_details_come_from_the_product(env):
    outcome = run(env, "list_all_product_types")
    catalog = json.loads(outcome.content)
    assert outcome.content == json.dumps(catalog)  # the tool's own JSON text, passed through verbatim
    assert list(catalog) == sorted(catalog) and len(catalog) == 50
    product = ok(env, "get_product_details", product_id=catalog["Laptop"])
    item_id, variant = next(iter(product["variants"].items()))
    assert ok(env, "get_item_details", item_id=item_id) == variant
    assert list(variant) == ["item_id", "options", "available", "price"]


def test_calculate_and_transfer(env):
    assert ok(env, "calculate", expression="2+2") == "4.0"
    assert ok(env, "calculate", expression="10 / 3") == "3.33"
    assert ok(env, "calculate", expression="(2 ** 3) // 3") == "2.0"
    for bad in ("1/0", "2 +", "import os", "1e5"):
        assert run(env, "calculate", expression=bad).error
    assert ok(env, "transfer_to_human_agents", summary="wants a refund to another card") == "Transfer successful"


def test_unknown_arguments_are_refused(env):
    order = first(env.db, "pending")
    outcome = run(env, "cancel_pending_order", order_id=order.order_id, reason="no longer needed", note="x")
    assert outcome.error and env.db.orders[order.order_id].status == "pending"


# ---------------------------------------------------------------- cancel
def test_cancel_needs_exactly_pending_and_a_known_reason(env):
    modified = first(env.db, "pending (item modified)")
    out = run(env, "cancel_pending_order", order_id=modified.order_id, reason="no longer needed")
    assert out.content == "Error: Non-pending order cannot be cancelled"
    pending = first(env.db, "pending")
    out = run(env, "cancel_pending_order", order_id=pending.order_id, reason="found it cheaper")
    assert out.content == "Error: Invalid reason" and pending.status == "pending"


def test_cancel_refunds_gift_card_immediately_with_rounding(env):
    order = first(env.db, "pending", lambda o, u: method_kind(o, "gift_card"))
    card = env.db.users[order.user_id].payment_methods[order.payment_history[0].payment_method_id]
    card.balance, order.payment_history[0].amount = 0.1, 0.2  # 0.1 + 0.2 is 0.30000000000000004
    data = ok(env, "cancel_pending_order", order_id=order.order_id, reason="ordered by mistake")
    assert data["status"] == "cancelled" and data["cancel_reason"] == "ordered by mistake"
    assert data["payment_history"][-1] == {"transaction_type": "refund", "amount": 0.2, "payment_method_id": card.id}
    assert card.balance == 0.3


def test_cancel_after_payment_change_refunds_every_history_entry(env):
    order = first(env.db, "pending", lambda o, u: method_kind(o, "gift_card"))
    user = env.db.users[order.user_id]
    a, b = order.payment_history[0].payment_method_id, "gift_card_0000001"
    user.payment_methods[b] = GiftCard(source="gift_card", id=b, balance=5000.0)
    amount = order.payment_history[0].amount
    start_a = user.payment_methods[a].balance
    ok(env, "modify_pending_order_payment", order_id=order.order_id, payment_method_id=b)
    assert user.payment_methods[a].balance == round(start_a + amount, 2)
    assert user.payment_methods[b].balance == round(5000.0 - amount, 2)
    data = ok(env, "cancel_pending_order", order_id=order.order_id, reason="no longer needed")
    kinds = [(p["transaction_type"], p["payment_method_id"]) for p in data["payment_history"]]
    assert kinds == [("payment", a), ("payment", b), ("refund", a), ("refund", a), ("refund", b), ("refund", a)]
    # card A got the total back three times: once from the payment change, twice from the cancel
    assert user.payment_methods[a].balance == round(round(round(start_a + amount, 2) + amount, 2) + amount, 2)
    assert user.payment_methods[b].balance == round(round(5000.0 - amount, 2) + amount, 2)


# ---------------------------------------------------------------- address and payment
def test_order_address_change_accepts_item_modified_orders_in_the_tool(env):
    order = first(env.db, "pending (item modified)")
    data = ok(
        env, "modify_pending_order_address", order_id=order.order_id, address1="1 Main Street", address2="",
        city="Austin", state="TX", country="USA", zip="78701",
    )
    assert data["status"] == "pending (item modified)"
    assert list(data["address"]) == ["address1", "address2", "city", "country", "state", "zip"]
    assert data["address"]["zip"] == "78701"
    assert run(env, "modify_pending_order_address", order_id=first(env.db, "processed").order_id, address1="x",
               address2="", city="y", state="z", country="USA", zip="1").content == "Error: Non-pending order cannot be modified"


def test_user_address_change_leaves_orders_alone(env):
    user = next(u for u in env.db.users.values() if u.orders)
    before = env.db.orders[user.orders[0]].address.model_dump()
    data = ok(env, "modify_user_address", user_id=user.user_id, address1="9 Elm Street", address2="Apt 2",
              city="Boston", state="MA", country="USA", zip="02110")
    assert data["address"]["address1"] == "9 Elm Street"
    assert env.db.orders[user.orders[0]].address.model_dump() == before


def test_payment_change_appends_payment_then_refund_and_moves_gift_card_balances(env):
    order = first(env.db, "pending", lambda o, u: not method_kind(o, "gift_card")
                  and any(m.source == "gift_card" for m in u.payment_methods.values()))
    user = env.db.users[order.user_id]
    card = next(m for m in user.payment_methods.values() if m.source == "gift_card")
    card.balance = 10000.55
    old = order.payment_history[0].payment_method_id
    amount = order.payment_history[0].amount
    data = ok(env, "modify_pending_order_payment", order_id=order.order_id, payment_method_id=card.id)
    assert data["payment_history"][1:] == [
        {"transaction_type": "payment", "amount": amount, "payment_method_id": card.id},
        {"transaction_type": "refund", "amount": amount, "payment_method_id": old},
    ]
    assert card.balance == round(10000.55 - amount, 2) and data["status"] == "pending"
    again = run(env, "modify_pending_order_payment", order_id=order.order_id, payment_method_id=old)
    assert again.content == "Error: There should be exactly one payment for a pending order"


def test_payment_change_errors(env):
    order = first(env.db, "pending")
    current = order.payment_history[0].payment_method_id
    same = run(env, "modify_pending_order_payment", order_id=order.order_id, payment_method_id=current)
    assert same.content == "Error: The new payment method should be different from the current one"
    missing = run(env, "modify_pending_order_payment", order_id=order.order_id, payment_method_id="paypal_0")
    assert missing.content == "Error: Payment method not found"


# ---------------------------------------------------------------- item modification
def test_item_modification_copies_the_last_variant_onto_every_changed_item(env):
    order = first(env.db, "pending", lambda o, u: swaps(env.db, o, 2, distinct_prices=True) is not None)
    (a, va), (b, vb) = swaps(env.db, order, 2, distinct_prices=True)
    a_name, a_product = a.name, a.product_id
    method = order.payment_history[0].payment_method_id
    if method.startswith("gift_card"):
        env.db.users[order.user_id].payment_methods[method].balance = 100000.0
    data = ok(env, "modify_pending_order_items", order_id=order.order_id, item_ids=[a.item_id, b.item_id],
              new_item_ids=[va.item_id, vb.item_id], payment_method_id=method)
    changed = {i["item_id"]: i for i in data["items"]}
    assert changed[va.item_id]["price"] == vb.price and changed[va.item_id]["options"] == vb.options
    assert changed[vb.item_id]["price"] == vb.price and changed[vb.item_id]["options"] == vb.options
    assert (changed[va.item_id]["name"], changed[va.item_id]["product_id"]) == (a_name, a_product)
    assert data["status"] == "pending (item modified)"
    second = run(env, "modify_pending_order_items", order_id=order.order_id, item_ids=[va.item_id],
                 new_item_ids=[a.item_id], payment_method_id=method)
    assert second.content == "Error: Non-pending order cannot be modified"


def test_item_modification_stores_the_difference_unrounded_and_rounds_gift_cards(env):
    order = first(env.db, "pending", lambda o, u: swaps(env.db, o, 1) is not None
                  and any(m.source == "gift_card" for m in u.payment_methods.values()))
    ((item, variant),) = swaps(env.db, order, 1)
    card = next(m for m in env.db.users[order.user_id].payment_methods.values() if m.source == "gift_card")
    item.price, variant.price, card.balance = 100.1, 100.3, 50.0
    data = ok(env, "modify_pending_order_items", order_id=order.order_id, item_ids=[item.item_id],
              new_item_ids=[variant.item_id], payment_method_id=card.id)
    assert data["payment_history"][-1] == {
        "transaction_type": "payment", "amount": 100.3 - 100.1, "payment_method_id": card.id,
    }
    assert data["payment_history"][-1]["amount"] == 0.20000000000000284
    assert card.balance == 49.8


def test_item_modification_rejects_same_item_and_other_products(env):
    order = first(env.db, "pending", lambda o, u: swaps(env.db, o, 1) is not None)
    item = order.items[0]
    method = order.payment_history[0].payment_method_id
    same = run(env, "modify_pending_order_items", order_id=order.order_id, item_ids=[item.item_id],
               new_item_ids=[item.item_id], payment_method_id=method)
    assert same.content == "Error: The new item id should be different from the old item id"
    other_product = next(p for p in env.db.products.values() if p.product_id != item.product_id)
    foreign = run(env, "modify_pending_order_items", order_id=order.order_id, item_ids=[item.item_id],
                  new_item_ids=[next(iter(other_product.variants))], payment_method_id=method)
    assert foreign.content == "Error: Variant not found"
    uneven = run(env, "modify_pending_order_items", order_id=order.order_id, item_ids=[item.item_id],
                 new_item_ids=[], payment_method_id=method)
    assert uneven.content == "Error: The number of items to be exchanged should match"
    assert env.db.orders[order.order_id].status == "pending"


# ---------------------------------------------------------------- exchange and return
def test_exchange_accepts_an_item_for_itself_and_records_sorted_requests(env):
    order = first(env.db, "delivered", lambda o, u: len(o.items) >= 2 and not method_kind(o, "gift_card")
                  and all(env.db.products[i.product_id].variants.get(i.item_id) is not None
                          and env.db.products[i.product_id].variants[i.item_id].available for i in o.items[:2]))
    a, b = order.items[0], order.items[1]
    method = order.payment_history[0].payment_method_id
    history = [p.model_dump() for p in order.payment_history]
    data = ok(env, "exchange_delivered_order_items", order_id=order.order_id, item_ids=[b.item_id, a.item_id],
              new_item_ids=[b.item_id, a.item_id], payment_method_id=method)
    assert data["status"] == "exchange requested"
    assert data["exchange_items"] == sorted([a.item_id, b.item_id]) == data["exchange_new_items"]
    expected = round((env.db.products[b.product_id].variants[b.item_id].price - b.price)
                     + (env.db.products[a.product_id].variants[a.item_id].price - a.price), 2)
    assert data["exchange_price_difference"] == expected
    assert data["exchange_payment_method_id"] == method
    assert data["payment_history"] == history  # no payment entry until the items come back


def test_exchange_and_return_need_delivered(env):
    order = first(env.db, "processed")
    item = order.items[0].item_id
    method = order.payment_history[0].payment_method_id
    ex = run(env, "exchange_delivered_order_items", order_id=order.order_id, item_ids=[item], new_item_ids=[item],
             payment_method_id=method)
    assert ex.content == "Error: Non-delivered order cannot be exchanged"
    ret = run(env, "return_delivered_order_items", order_id=order.order_id, item_ids=[item], payment_method_id=method)
    assert ret.content == "Error: Non-delivered order cannot be returned"


def test_return_goes_to_original_method_or_a_gift_card(env):
    order = first(env.db, "delivered", lambda o, u: len(o.items) >= 2
                  and any(m.id != o.payment_history[0].payment_method_id and m.source != "gift_card"
                          for m in u.payment_methods.values()))
    user = env.db.users[order.user_id]
    original = order.payment_history[0].payment_method_id
    other = next(m.id for m in user.payment_methods.values() if m.id != original and m.source != "gift_card")
    items = [order.items[1].item_id, order.items[0].item_id]
    refused = run(env, "return_delivered_order_items", order_id=order.order_id, item_ids=items, payment_method_id=other)
    assert refused.content == "Error: Payment method should be the original payment method"
    unknown = run(env, "return_delivered_order_items", order_id=order.order_id, item_ids=["123"], payment_method_id=original)
    assert unknown.content == "Error: Some item not found"
    data = ok(env, "return_delivered_order_items", order_id=order.order_id, item_ids=items, payment_method_id=original)
    assert data["status"] == "return requested"
    assert data["return_items"] == sorted(items) and data["return_payment_method_id"] == original
    assert len(data["payment_history"]) == 1


# ---------------------------------------------------------------- arguments of the wrong type
def test_mistyped_arguments_fail_in_pythons_words_and_change_nothing(env):
    # τ²-bench runs its tools unchecked; none of these can store a value of the wrong type
    user = next(iter(env.db.users.values()))
    assert run(env, "find_user_id_by_email", email=5).content == "Error: 'int' object has no attribute 'lower'"
    assert run(env, "get_order_details", order_id=["#W0000000"]).content == "Error: unhashable type: 'list'"
    # the name is compared user by user: a mistyped last name fails only once a first name matches
    assert run(env, "find_user_id_by_name_zip", first_name="Nobody-at-all", last_name=5, zip="1").content == "Error: User not found"
    assert run(env, "find_user_id_by_name_zip", first_name=user.name.first_name, last_name=5,
               zip="1").content == "Error: 'int' object has no attribute 'lower'"
    before = digest(env.db)
    pending = first(env.db, "pending")
    assert run(env, "cancel_pending_order", order_id=pending.order_id, reason=["no longer needed"]).content == (
        "Error: unhashable type: 'list'"
    )
    assert run(env, "cancel_pending_order", order_id=pending.order_id, reason=None).content == "Error: Invalid reason"
    assert run(env, "modify_pending_order_address", order_id=pending.order_id, address1=12, address2="", city="Austin",
               state="TX", country="USA", zip="78701").content == (
        "Error: 1 validation error for UserAddress\naddress1\n  Input should be a valid string "
        "[type=string_type, input_value=12, input_type=int]\n"
        "    For further information visit https://errors.pydantic.dev/2.14/v/string_type"
    )
    delivered = first(env.db, "delivered")
    item = delivered.items[0].item_id
    method = delivered.payment_history[0].payment_method_id
    assert run(env, "exchange_delivered_order_items", order_id=delivered.order_id, item_ids={"items": [item]},
               new_item_ids=[item], payment_method_id=method).content == "Error: 'dict' object has no attribute 'count'"
    assert run(env, "exchange_delivered_order_items", order_id=delivered.order_id, item_ids=item, new_item_ids=[item],
               payment_method_id=method).content == f"Error: Number of {item[0]} not found."
    assert run(env, "return_delivered_order_items", order_id=delivered.order_id, item_ids=[item],
               payment_method_id=7).content == "Error: Payment method not found"
    assert digest(env.db) == before


# ---------------------------------------------------------------- database and digests
def test_a_tau2_format_db_loads_by_path_with_optional_fields_defaulted(tmp_path):
    raw = json.loads(DOMAIN.db_path.read_text())
    small = {
        "products": dict(list(raw["products"].items())[:2]),
        "users": {},
        "orders": {},
    }
    user_id, user = next((k, v) for k, v in raw["users"].items()
                         if any(m["source"] == "gift_card" for m in v["payment_methods"].values()))
    card = next(m for m in user["payment_methods"].values() if m["source"] == "gift_card")
    card["balance"] = 25  # an int on disk becomes a float
    user["payment_methods"][card["id"]]["unused_key"] = "dropped"
    small["users"][user_id] = user
    for order_id in user["orders"]:
        small["orders"][order_id] = raw["orders"][order_id]
    path = tmp_path / "db.json"
    path.write_text(json.dumps(small))
    db = DOMAIN.load_db(path)
    assert db.users[user_id].payment_methods[card["id"]].balance == 25.0
    dumped = db.model_dump()
    order = dumped["orders"][user["orders"][0]]
    assert order["cancel_reason"] is None and order["return_payment_method_id"] is None
    assert "unused_key" not in dumped["users"][user_id]["payment_methods"][card["id"]]
    assert DOMAIN.digests(db)[0] == digest(dumped)
    assert '"balance": 25.0' in json.dumps(dumped, sort_keys=True)

    small["extra_table"] = {}  # the top level is strict
    strict = tmp_path / "db_with_extra_table.json"
    strict.write_text(json.dumps(small))
    with pytest.raises(DatabaseError):
        DOMAIN.load_db(strict)


def test_generated_db_has_the_benchmark_shape():
    db = DOMAIN.load_db()
    assert (len(db.products), len(db.users), len(db.orders)) == (50, 500, 1000)
    assert {o.status for o in db.orders.values()} == {
        "processed", "pending", "pending (item modified)", "delivered", "cancelled", "exchange requested", "return requested",
    }
    assert all(o.order_id.startswith("#W") and len(o.order_id) == 9 for o in db.orders.values())
    assert sum(len(p.variants) for p in db.products.values()) >= 500
    raw = json.loads(DOMAIN.db_path.read_text())
    assert all("cancel_reason" not in o for o in raw["orders"].values())  # absent on disk, like τ²-bench


def test_generator_is_deterministic_and_db_json_is_current():
    first_run = generate.dumps(generate.generate())
    assert first_run == generate.dumps(generate.generate())
    assert first_run == DOMAIN.db_path.read_text(encoding="utf-8")
    assert generate.dumps(generate.generate(seed=7)) != first_run


def test_every_predicate_clause_is_tagged_in_the_policy():
    policy = DOMAIN.policy
    for p in DOMAIN.predicates:
        text = clause_text(policy, p.clause)
        assert text and f"[{p.clause}]" in text, p.clause
        assert len(text) > 60, p.clause


def test_number_types_follow_the_reference_arithmetic(env):
    """An empty exchange keeps the integer 0 (digest-visible); an equal-price swap is a 0.0 refund."""
    delivered = first(env.db, "delivered")
    data = ok(env, "exchange_delivered_order_items", order_id=delivered.order_id, item_ids=[], new_item_ids=[],
              payment_method_id=original_method(delivered))
    assert data["exchange_price_difference"] == 0
    assert type(env.db.orders[delivered.order_id].exchange_price_difference) is int

    order = first(env.db, "pending", lambda o, u: swaps(env.db, o, 1) is not None and not method_kind(o, "gift_card"))
    ((item, variant),) = swaps(env.db, order, 1)
    item.price = variant.price
    ok(env, "modify_pending_order_items", order_id=order.order_id, item_ids=[item.item_id],
              new_item_ids=[variant.item_id], payment_method_id=original_method(order))
    last = env.db.orders[order.order_id].payment_history[-1]
    assert (last.transaction_type, last.amount, type(last.amount)) == ("refund", 0.0, float)


def original_method(order) -> str:
    return order.payment_history[0].payment_method_id

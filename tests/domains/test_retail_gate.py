"""The retail gate, rule by rule: one call that passes and one that fails with the expected verdict
and predicate, including calls the tools themselves would accept."""

from __future__ import annotations

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.engine.events import Verdict
from ledger_tui.testing import Probe

DOMAIN = load_domain("retail")
DB = DOMAIN.load_db()  # read-only: for choosing test data; every probe gets its own fresh copy


def probe() -> Probe:
    return Probe(DOMAIN, db=DOMAIN.load_db())


def find(status: str, when=lambda o, u: True):
    return next(o for o in DB.orders.values() if o.status == status and when(o, DB.users[o.user_id]))


def original(order) -> str:
    return order.payment_history[0].payment_method_id


def swap_for(order, *, available: bool = True):
    """(old item, new variant) of the same product with different options, or None."""
    for item in order.items:
        for v in DB.products[item.product_id].variants.values():
            if v.item_id != item.item_id and v.available == available:
                return item, v
    return None


def identify(p: Probe, user) -> None:
    """The customer gives their email and the agent looks it up."""
    p.say(f"Hi, my email is {user.email}.")
    assert not p.read("find_user_id_by_email", email=user.email).error


def ready(order, identify_owner: bool = True) -> Probe:
    """A probe that identified the order's owner (from the email they gave) and read the order,
    profile and products."""
    p = probe()
    user = DB.users[order.user_id]
    if identify_owner:
        identify(p, user)
    p.read("get_order_details", order_id=order.order_id)
    p.read("get_user_details", user_id=user.user_id)
    for item in order.items:
        p.read("get_product_details", product_id=item.product_id)
    return p


def propose(p: Probe, name: str, confirm: bool = True, **arguments):
    """The agent proposes the write in the customer's terms, the customer says yes, then the call
    goes to the gate."""
    if confirm:
        return p.propose(name, **arguments)
    return p.gate(name, **arguments)


def failed(decision) -> list[str]:
    return [r.name for r in decision.failed()]


def assert_stopped(decision, verdict: Verdict, predicate: str) -> None:
    assert decision.verdict == verdict, (decision.verdict, decision.reason)
    assert predicate in failed(decision), failed(decision)


def assert_allowed(decision) -> None:
    assert decision.verdict == Verdict.ALLOW, decision.reason


ADDRESS = {"address1": "1 Main Street", "address2": "", "city": "Austin", "state": "TX", "country": "USA", "zip": "78701"}


# ---------------------------------------------------------------- everywhere
def test_a_user_id_alone_does_not_identify_the_customer():
    order = find("pending")
    p = ready(order, identify_owner=False)
    p.say("I no longer need it.")
    decision = propose(p, "cancel_pending_order", order_id=order.order_id, reason="no longer needed")
    assert_stopped(decision, Verdict.REVISE, "customer_identified")
    # Looking up an email the customer never said identifies nobody either.
    p.read("find_user_id_by_email", email=DB.users[order.user_id].email)
    decision = propose(p, "cancel_pending_order", order_id=order.order_id, reason="no longer needed")
    assert_stopped(decision, Verdict.REVISE, "customer_identified")
    identify(p, DB.users[order.user_id])
    p.say("I no longer need it.")
    assert_allowed(propose(p, "cancel_pending_order", order_id=order.order_id, reason="no longer needed"))


def test_identification_by_name_and_zip_counts():
    order = find("pending")
    user = DB.users[order.user_id]
    p = ready(order, identify_owner=False)
    p.say(f"I'm {user.name.first_name} {user.name.last_name}, zip code {user.address.zip}.")
    p.read("find_user_id_by_name_zip", first_name=user.name.first_name, last_name=user.name.last_name, zip=user.address.zip)
    assert_allowed(propose(p, "modify_pending_order_address", order_id=order.order_id, **ADDRESS))


def test_one_customer_per_conversation():
    order = find("pending")
    p = ready(order)
    other = next(u for u in DB.users.values() if u.user_id != order.user_id)
    p.read("find_user_id_by_email", email=other.email)  # never said by the customer: identifies nobody
    assert_allowed(propose(p, "modify_pending_order_address", order_id=order.order_id, **ADDRESS))
    p.say(f"Actually, my husband's email is {other.email}, could you check his account too?")
    p.read("find_user_id_by_email", email=other.email)  # another person's: identifies nobody
    assert_allowed(propose(p, "modify_pending_order_address", order_id=order.order_id, **ADDRESS))
    second = next(u for u in DB.users.values() if u.user_id not in (order.user_id, other.user_id))
    p.say(f"Oh, I also have an older account with you: my email there is {second.email}.")
    p.read("find_user_id_by_email", email=second.email)
    decision = propose(p, "modify_pending_order_address", order_id=order.order_id, **ADDRESS)
    assert_stopped(decision, Verdict.BLOCK, "one_customer_per_conversation")


def test_another_customers_order_is_blocked():
    mine = find("pending")
    theirs = find("pending", lambda o, u: o.user_id != mine.user_id)
    p = ready(mine)
    p.read("get_order_details", order_id=theirs.order_id)
    assert_allowed(propose(p, "modify_pending_order_address", order_id=mine.order_id, **ADDRESS))
    decision = propose(p, "modify_pending_order_address", order_id=theirs.order_id, **ADDRESS)
    assert_stopped(decision, Verdict.BLOCK, "record_owned_by_customer")


def test_confirmation_needs_the_details_and_an_explicit_yes():
    order = find("pending")
    p = ready(order)
    decision = propose(p, "modify_pending_order_address", confirm=False, order_id=order.order_id, **ADDRESS)
    assert_stopped(decision, Verdict.REVISE, "explicit_confirmation")
    p.confirm("I will update your order's address. OK?")  # no order id, no street, no zip
    decision = p.gate("modify_pending_order_address", order_id=order.order_id, **ADDRESS)
    assert_stopped(decision, Verdict.REVISE, "explicit_confirmation")
    proposal = f"Shall I change the shipping address of order {order.order_id} to 1 Main Street, Austin, TX 78701?"
    p.confirm(proposal, yes="No, wait.")
    decision = p.gate("modify_pending_order_address", order_id=order.order_id, **ADDRESS)
    assert_stopped(decision, Verdict.REVISE, "explicit_confirmation")
    p.confirm(proposal, yes="Yes, that's right.")
    assert_allowed(p.gate("modify_pending_order_address", order_id=order.order_id, **ADDRESS))
    # A tool call and its arguments are not a proposal in the customer's terms.
    p.confirm(f"I will run modify_pending_order_address with {dict(order_id=order.order_id, **ADDRESS)}. Shall I proceed?")
    decision = p.gate("modify_pending_order_address", order_id=order.order_id, **ADDRESS)
    assert_stopped(decision, Verdict.REVISE, "explicit_confirmation")


def test_missing_evidence_asks_for_the_read_that_supplies_it():
    order = find("pending", lambda o, u: swap_for(o) is not None)
    item, variant = swap_for(order)
    p = probe()
    identify(p, DB.users[order.user_id])
    options = ", ".join(f"{v}" for v in variant.options.values())
    p.confirm(f"To confirm, I will change the {item.name} in order {order.order_id} to the {options} one "
              f"(item {variant.item_id}), any price difference on the original payment method. Please make sure you "
              "have listed all the items you want to change: it can only be done once. Shall I go ahead?")
    decision = p.gate("modify_pending_order_items", order_id=order.order_id, item_ids=[item.item_id],
                      new_item_ids=[variant.item_id], payment_method_id=original(order))
    assert decision.verdict == Verdict.REVISE
    assert {(c.name, tuple(c.arguments.items())) for c in decision.suggested_calls} == {
        ("get_order_details", (("order_id", order.order_id),)),
    }
    p.read("get_order_details", order_id=order.order_id)
    decision = p.gate("modify_pending_order_items", order_id=order.order_id, item_ids=[item.item_id],
                      new_item_ids=[variant.item_id], payment_method_id=original(order))
    names = {c.name: c.arguments for c in decision.suggested_calls}
    assert names == {"get_product_details": {"product_id": item.product_id}, "get_user_details": {"user_id": order.user_id}}


def test_a_write_makes_the_order_and_gift_card_owner_stale():
    order = find("pending", lambda o, u: original(o).startswith("gift_card"))
    p = ready(order)
    p.say("I don't need it.")
    assert_allowed(propose(p, "cancel_pending_order", order_id=order.order_id, reason="no longer needed"))
    assert not p.write("cancel_pending_order", order_id=order.order_id, reason="no longer needed").error
    assert p.ledger["orders." + order.order_id].stale
    assert p.ledger["users." + order.user_id].stale  # the refund moved a gift card balance
    decision = propose(p, "cancel_pending_order", order_id=order.order_id, reason="no longer needed")
    assert decision.verdict == Verdict.REVISE
    assert [c.name for c in decision.suggested_calls] == ["get_order_details"]
    p.read("get_order_details", order_id=order.order_id)
    assert_stopped(propose(p, "cancel_pending_order", order_id=order.order_id, reason="no longer needed"),
                   Verdict.BLOCK, "order_status_pending")


# ---------------------------------------------------------------- pending orders
@pytest.mark.parametrize("status", ["processed", "delivered", "cancelled", "pending (item modified)"])
def test_cancel_needs_exactly_pending(status):
    order = find(status)
    p = ready(order)
    p.say("I ordered it by mistake.")
    decision = propose(p, "cancel_pending_order", order_id=order.order_id, reason="ordered by mistake")
    assert_stopped(decision, Verdict.BLOCK, "order_status_pending")


def test_address_change_on_item_modified_order_is_blocked_though_the_tool_accepts_it():
    order = find("pending (item modified)")
    p = ready(order)
    decision = propose(p, "modify_pending_order_address", order_id=order.order_id, **ADDRESS)
    assert_stopped(decision, Verdict.BLOCK, "order_status_pending")
    assert not p.write("modify_pending_order_address", order_id=order.order_id, **ADDRESS).error


def test_payment_change_on_item_modified_order_is_blocked_though_the_tool_accepts_it():
    order = find("pending (item modified)", lambda o, u: any(m != original(o) and not m.startswith("gift_card")
                                                             for m in u.payment_methods))
    new = next(m for m in DB.users[order.user_id].payment_methods if m != original(order) and not m.startswith("gift_card"))
    p = ready(order)
    decision = propose(p, "modify_pending_order_payment", order_id=order.order_id, payment_method_id=new)
    assert_stopped(decision, Verdict.BLOCK, "order_status_pending")
    assert not p.write("modify_pending_order_payment", order_id=order.order_id, payment_method_id=new).error


def test_items_can_be_modified_only_once():
    order = find("pending", lambda o, u: swap_for(o) is not None and not original(o).startswith("gift_card"))
    item, variant = swap_for(order)
    args = dict(order_id=order.order_id, item_ids=[item.item_id], new_item_ids=[variant.item_id],
                payment_method_id=original(order))
    p = ready(order)
    assert_allowed(propose(p, "modify_pending_order_items", **args))
    assert not p.write("modify_pending_order_items", **args).error
    p.read("get_order_details", order_id=order.order_id)
    p.read("get_user_details", user_id=order.user_id)
    back = dict(args, item_ids=[variant.item_id], new_item_ids=[item.item_id])
    assert_stopped(propose(p, "modify_pending_order_items", **back), Verdict.BLOCK, "order_status_pending")


# ---------------------------------------------------------------- cancellation reason
def test_cancel_reason_must_be_the_one_the_customer_gave():
    order = find("pending")
    p = ready(order)
    decision = propose(p, "cancel_pending_order", order_id=order.order_id, reason="no longer needed")
    assert_stopped(decision, Verdict.REVISE, "cancel_reason_valid")  # nothing said yet
    p.say("Honestly I just don't need it any more.")
    assert p.ledger["said.cancel_reason"].origin == "stated"
    assert p.ledger["said.cancel_reason"].value == "no longer needed"
    decision = propose(p, "cancel_pending_order", order_id=order.order_id, reason="ordered by mistake")
    assert_stopped(decision, Verdict.REVISE, "cancel_reason_valid")
    decision = propose(p, "cancel_pending_order", order_id=order.order_id, reason="too expensive")
    assert_stopped(decision, Verdict.REVISE, "cancel_reason_valid")
    assert_allowed(propose(p, "cancel_pending_order", order_id=order.order_id, reason="no longer needed"))


def test_cancel_reason_statement_recognises_both_reasons():
    extract = next(s for s in DOMAIN.statements if s.key == "cancel_reason").extract
    assert extract("I ordered this by mistake, sorry") == "ordered by mistake"
    assert extract("I accidentally bought two") == "ordered by mistake"
    assert extract("We no longer need it") == "no longer needed"
    assert extract("I found a cheaper one elsewhere") is None


# ---------------------------------------------------------------- payment change
def test_payment_change_rules():
    order = find("pending", lambda o, u: any(m.source == "gift_card" for m in u.payment_methods.values())
                 and any(m.source != "gift_card" and m.id != original(o) for m in u.payment_methods.values())
                 and not original(o).startswith("gift_card"))
    methods = DB.users[order.user_id].payment_methods
    card = next(m for m in methods.values() if m.source == "gift_card")
    other = next(m for m in methods.values() if m.source != "gift_card" and m.id != original(order))
    p = ready(order)

    def pay(method_id):
        return propose(p, "modify_pending_order_payment", order_id=order.order_id, payment_method_id=method_id)

    assert_stopped(pay(original(order)), Verdict.REVISE, "payment_change_valid")
    assert_stopped(pay("credit_card_0000000"), Verdict.REVISE, "payment_change_valid")
    total = order.payment_history[0].amount
    if card.balance < total:
        assert_stopped(pay(card.id), Verdict.REVISE, "payment_change_valid")
    assert_allowed(pay(other.id))
    assert not p.write("modify_pending_order_payment", order_id=order.order_id, payment_method_id=other.id).error
    p.read("get_order_details", order_id=order.order_id)
    p.read("get_user_details", user_id=order.user_id)
    assert_stopped(pay(original(order)), Verdict.BLOCK, "payment_change_valid")  # already changed once


def test_gift_card_must_cover_the_order_total():
    db = DOMAIN.load_db()
    order = find("pending", lambda o, u: any(m.source == "gift_card" for m in u.payment_methods.values())
                 and not original(o).startswith("gift_card"))
    card = next(m for m in db.users[order.user_id].payment_methods.values() if m.source == "gift_card")
    card.balance = order.payment_history[0].amount - 0.01
    p = Probe(DOMAIN, db=db)
    identify(p, DB.users[order.user_id])
    p.read("get_order_details", order_id=order.order_id)
    p.read("get_user_details", user_id=order.user_id)
    decision = propose(p, "modify_pending_order_payment", order_id=order.order_id, payment_method_id=card.id)
    assert_stopped(decision, Verdict.REVISE, "payment_change_valid")
    card.balance = order.payment_history[0].amount
    p.read("get_user_details", user_id=order.user_id)
    assert_allowed(propose(p, "modify_pending_order_payment", order_id=order.order_id, payment_method_id=card.id))


# ---------------------------------------------------------------- item swaps
def test_item_modification_needs_another_available_variant_of_the_same_product():
    order = find("pending", lambda o, u: swap_for(o) is not None and swap_for(o, available=False) is not None
                 and not original(o).startswith("gift_card"))
    item, good = swap_for(order)
    bad_item, unavailable = swap_for(order, available=False)
    foreign = next(v for p in DB.products.values() if p.product_id != item.product_id for v in p.variants.values())
    p = ready(order)

    def modify(old, new):
        return propose(p, "modify_pending_order_items", order_id=order.order_id, item_ids=[old],
                       new_item_ids=[new], payment_method_id=original(order))

    assert_stopped(modify(item.item_id, item.item_id), Verdict.REVISE, "item_swaps_valid")
    assert_stopped(modify(item.item_id, foreign.item_id), Verdict.REVISE, "item_swaps_valid")
    assert_stopped(modify(bad_item.item_id, unavailable.item_id), Verdict.REVISE, "item_swaps_valid")
    assert_stopped(modify("0000000000", good.item_id), Verdict.REVISE, "item_swaps_valid")
    assert_allowed(modify(item.item_id, good.item_id))


def test_exchange_for_the_same_item_is_revised_though_the_tool_accepts_it():
    def same_available(o, u):
        v = DB.products[o.items[0].product_id].variants.get(o.items[0].item_id)
        return v is not None and v.available and not original(o).startswith("gift_card")

    order = find("delivered", same_available)
    item = order.items[0]
    args = dict(order_id=order.order_id, item_ids=[item.item_id], new_item_ids=[item.item_id],
                payment_method_id=original(order))
    p = ready(order)
    assert_stopped(propose(p, "exchange_delivered_order_items", **args), Verdict.REVISE, "item_swaps_valid")
    assert not p.write("exchange_delivered_order_items", **args).error


def test_gift_card_must_cover_a_price_increase():
    db = DOMAIN.load_db()

    def dearer(o, u):
        pair = swap_for(o)
        return (pair is not None and pair[1].price > pair[0].price and not original(o).startswith("gift_card")
                and any(m.source == "gift_card" for m in u.payment_methods.values()))

    order = find("delivered", dearer)
    item, variant = swap_for(order)
    card = next(m for m in db.users[order.user_id].payment_methods.values() if m.source == "gift_card")
    card.balance = round(variant.price - item.price - 0.01, 2)
    p = Probe(DOMAIN, db=db)
    identify(p, DB.users[order.user_id])
    p.read("get_order_details", order_id=order.order_id)
    p.read("get_user_details", user_id=order.user_id)
    p.read("get_product_details", product_id=item.product_id)
    args = dict(order_id=order.order_id, item_ids=[item.item_id], new_item_ids=[variant.item_id], payment_method_id=card.id)
    assert_stopped(propose(p, "exchange_delivered_order_items", **args), Verdict.REVISE, "price_difference_covered")
    assert_stopped(propose(p, "exchange_delivered_order_items", **dict(args, payment_method_id="paypal_0000000")),
                   Verdict.REVISE, "price_difference_covered")
    assert_allowed(propose(p, "exchange_delivered_order_items", **dict(args, payment_method_id=original(order))))


# ---------------------------------------------------------------- delivered orders
@pytest.mark.parametrize("status", ["processed", "pending", "exchange requested", "return requested", "cancelled"])
def test_returns_and_exchanges_need_a_delivered_order(status):
    order = find(status)
    p = ready(order)
    item = order.items[0]
    ret = propose(p, "return_delivered_order_items", order_id=order.order_id, item_ids=[item.item_id],
                  payment_method_id=original(order))
    assert_stopped(ret, Verdict.BLOCK, "order_status_delivered")
    pair = swap_for(order)
    if pair is not None:
        ex = propose(p, "exchange_delivered_order_items", order_id=order.order_id, item_ids=[pair[0].item_id],
                     new_item_ids=[pair[1].item_id], payment_method_id=original(order))
        assert_stopped(ex, Verdict.BLOCK, "order_status_delivered")


def test_return_items_must_be_in_the_order():
    order = find("delivered", lambda o, u: len(o.items) == len({i.item_id for i in o.items}))
    p = ready(order)
    item = order.items[0].item_id

    def ret(items):
        return propose(p, "return_delivered_order_items", order_id=order.order_id, item_ids=items,
                       payment_method_id=original(order))

    assert_stopped(ret([]), Verdict.REVISE, "return_items_in_order")
    assert_stopped(ret(["0000000000"]), Verdict.REVISE, "return_items_in_order")
    assert_stopped(ret([item, item]), Verdict.REVISE, "return_items_in_order")
    assert_allowed(ret([item]))


def test_refund_goes_to_the_original_method_or_a_gift_card():
    def fits(o, u):
        others = [m for m in u.payment_methods.values() if m.id != original(o)]
        return (any(m.source == "gift_card" for m in others) and any(m.source != "gift_card" for m in others)
                and not original(o).startswith("gift_card"))

    order = find("delivered", fits)
    methods = DB.users[order.user_id].payment_methods.values()
    card = next(m.id for m in methods if m.source == "gift_card")
    other = next(m.id for m in methods if m.source != "gift_card" and m.id != original(order))
    p = ready(order)

    def ret(method):
        return propose(p, "return_delivered_order_items", order_id=order.order_id,
                       item_ids=[order.items[0].item_id], payment_method_id=method)

    decision = ret(other)
    assert_stopped(decision, Verdict.REVISE, "refund_to_original_or_gift_card")
    assert original(order) in decision.hint
    assert_stopped(ret("gift_card_0000000"), Verdict.REVISE, "refund_to_original_or_gift_card")
    assert_allowed(ret(card))
    assert_allowed(ret(original(order)))


# ---------------------------------------------------------------- profile
def test_only_the_identified_customers_profile_address_changes():
    user = next(iter(DB.users.values()))
    other = list(DB.users.values())[1]
    p = probe()
    identify(p, user)
    assert_stopped(propose(p, "modify_user_address", user_id=other.user_id, **ADDRESS), Verdict.BLOCK, "own_profile_only")
    assert_allowed(propose(p, "modify_user_address", user_id=user.user_id, **ADDRESS))


def test_an_unknown_write_is_blocked():
    p = probe()
    decision = p.gate("delete_order", order_id="#W0000000")
    assert decision.verdict == Verdict.BLOCK

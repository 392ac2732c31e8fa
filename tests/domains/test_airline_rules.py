"""Every airline rule: one call the gate lets through and one it stops, with the verdict and the
predicate that decides it (driven by hand with `Probe` on the planted scenarios)."""

from __future__ import annotations

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.domains.airline.generate import generate
from ledger_tui.domains.airline.predicates import PREDICATES
from ledger_tui.engine.domain import clause_text
from ledger_tui.engine.events import GateDecision, Verdict
from ledger_tui.testing import Probe

DOMAIN = load_domain("airline")
_, PLANTED = generate()


def probe(*, user: str | None = None, reservation: str | None = None, opening: str = "Hello") -> Probe:
    """The customer opens, says their user id when there is one, and the agent reads what was asked."""
    p = Probe(DOMAIN)
    p.say(opening)
    if user:
        p.say(f"My user id is {user}.")
        assert not p.read("get_user_details", user_id=user).error
    if reservation:
        assert not p.read("get_reservation_details", reservation_id=reservation).error
    return p


def scenario(key: str, opening: str = "Hello") -> tuple[Probe, str, str]:
    s = PLANTED[key]
    p = probe(user=s["user_id"], reservation=s.get("reservation_id"), opening=opening)
    return p, s["user_id"], s.get("reservation_id", "")


def res(p: Probe, rid: str):
    return p.env.db.reservations[rid]


def statuses(p: Probe, rid: str) -> None:
    for f in res(p, rid).flights:
        p.read("get_flight_status", flight_number=f.flight_number, date=f.date)


def gate(p: Probe, name: str, **args) -> GateDecision:
    """The agent proposes the write in the customer's terms, the customer says yes, the gate decides."""
    return p.propose(name, **args)


def failed(decision: GateDecision) -> list[str]:
    return [r.name for r in decision.predicates if not r.passed]


def stopped(decision: GateDecision, verdict: Verdict, name: str) -> None:
    assert decision.verdict == verdict, (decision.verdict, decision.reason)
    assert name in failed(decision), failed(decision)


def allowed(decision: GateDecision) -> None:
    assert decision.verdict == Verdict.ALLOW, (decision.reason, failed(decision))


def seg_args(p: Probe, rid: str) -> list[dict[str, str]]:
    return [{"flight_number": f.flight_number, "date": f.date} for f in res(p, rid).flights]


def search_segments(p: Probe, rid: str) -> None:
    for f in res(p, rid).flights:
        p.read("search_direct_flight", origin=f.origin, destination=f.destination, date=f.date)


def card(p: Probe, uid: str, source: str = "credit_card") -> str:
    return [m.id for m in p.env.db.users[uid].payment_methods.values() if m.source == source][-1]


# ---------------------------------------------------------------- everywhere


def test_every_predicate_names_a_clause_present_in_the_policy():
    policy = DOMAIN.policy
    for pred in PREDICATES:
        text = clause_text(policy, pred.clause)
        assert text.startswith(f"[{pred.clause}]") and len(text) > 40, pred.name


def test_a_write_before_identification_is_revised_with_the_lookup_to_make():
    s = PLANTED["cancel_recent"]
    uid = s["user_id"]
    p = probe(opening="I want to cancel, my plans changed")
    p.say(f"My user id is {uid}.")  # said, but no read has confirmed it yet
    args = _booking_args(p, uid)
    f = args["flights"][0]
    me = args["passengers"][0]
    pay = args["payment_methods"][0]
    p.confirm(
        f"To confirm, I will book {args['origin']} to {args['destination']}: flight {f['flight_number']} on {f['date']}, "
        f"economy, for {me['first_name']} {me['last_name']}, ${pay['amount']:g} on {pay['payment_id']}. Shall I go ahead?"
    )
    decision = p.gate("book_reservation", **args)
    stopped(decision, Verdict.REVISE, "customer_identified")
    # identifying is a policy step (the lookup may find nobody), not missing evidence: a violation
    # whose hint is the lookup of the id the customer gave
    assert not next(r for r in decision.predicates if r.name == "customer_identified").needs_a_read()
    assert decision.suggested_calls[0].name == "get_user_details"
    assert decision.suggested_calls[0].arguments == {"user_id": uid}
    # A customer who never said who they are is asked first: no lookup is suggested for them.
    p0 = probe(reservation=s["reservation_id"], opening="I want to cancel, my plans changed")
    decision = gate(p0, "cancel_reservation", reservation_id=s["reservation_id"])
    stopped(decision, Verdict.REVISE, "customer_identified")
    assert not next(r for r in decision.predicates if r.name == "customer_identified").needs_a_read()
    assert decision.category() == "violation" and decision.suggested_calls == []
    p2, uid, rid = scenario("cancel_recent", "I want to cancel, my plans changed")
    allowed(gate(p2, "cancel_reservation", reservation_id=rid))


def test_a_second_customer_in_the_conversation_blocks_writes():
    p, uid, rid = scenario("cancel_recent", "My plans changed, cancel please")
    other = PLANTED["cancel_business"]["user_id"]
    p.read("get_user_details", user_id=other)  # a lookup of someone the customer never named identifies nobody
    allowed(gate(p, "cancel_reservation", reservation_id=rid))
    p.say(f"Oh, and my colleague's user id is {other}.")  # another person's: identifies nobody
    p.read("get_user_details", user_id=other)
    allowed(gate(p, "cancel_reservation", reservation_id=rid))
    second = next(s["user_id"] for s in PLANTED.values() if s.get("user_id") not in (uid, other))
    p.say(f"I have a second account as well, my other user id is {second}.")  # the caller's own
    p.read("get_user_details", user_id=second)
    stopped(gate(p, "cancel_reservation", reservation_id=rid), Verdict.BLOCK, "one_customer_per_conversation")


def test_someone_elses_reservation_cannot_be_cancelled():
    p, uid, rid = scenario("cancel_other_refused", "I can't make it, cancel it")
    assert res(p, rid).user_id != uid
    stopped(gate(p, "cancel_reservation", reservation_id=rid), Verdict.BLOCK, "record_owned_by_customer")


def test_bookings_and_certificates_only_for_the_identified_customer():
    p, uid, _ = scenario("comp_cancelled", "I want compensation")
    other = PLANTED["cancel_business"]["user_id"]
    stopped(gate(p, "send_certificate", user_id=other, amount=200), Verdict.BLOCK, "acts_for_identified_customer")


def _second_reservation(p: Probe, uid: str, rid: str) -> str:
    """Give the customer a second reservation (another route) and read their profile again."""
    copy = res(p, rid).model_copy(deep=True)
    copy.reservation_id, copy.origin, copy.destination = "ZZ9ZZ9", copy.destination, copy.origin
    p.env.db.reservations[copy.reservation_id] = copy
    p.env.db.users[uid].reservations.append(copy.reservation_id)
    p.read("get_user_details", user_id=uid)
    return copy.reservation_id


def test_confirmation_needs_the_details_then_an_explicit_yes():
    p, uid, rid = scenario("cancel_recent", "Plans changed, please cancel")
    stopped(p.gate("cancel_reservation", reservation_id=rid), Verdict.REVISE, "explicit_confirmation")
    p.confirm("Shall I go ahead with it?")  # neither the action nor the reservation
    stopped(p.gate("cancel_reservation", reservation_id=rid), Verdict.REVISE, "explicit_confirmation")
    p.confirm("Shall I cancel it?")  # the action, but not which reservation
    stopped(p.gate("cancel_reservation", reservation_id=rid), Verdict.REVISE, "explicit_confirmation")
    p.confirm(f"I will cancel reservation {rid}. Proceed?", yes="No, wait.")
    stopped(p.gate("cancel_reservation", reservation_id=rid), Verdict.REVISE, "explicit_confirmation")
    p.confirm(f"I am about to run cancel_reservation(reservation_id={rid!r}). Shall I proceed?")  # a tool call is not a proposal
    stopped(p.gate("cancel_reservation", reservation_id=rid), Verdict.REVISE, "explicit_confirmation")
    # With one reservation, "your booking" singles it out; once the customer has two, only its id
    # (or what tells it apart) does.
    p.confirm("Shall I cancel your booking?")
    allowed(p.gate("cancel_reservation", reservation_id=rid))
    _second_reservation(p, uid, rid)
    p.confirm("Shall I cancel your booking?")  # the id was never listed
    stopped(p.gate("cancel_reservation", reservation_id=rid), Verdict.REVISE, "explicit_confirmation")
    allowed(gate(p, "cancel_reservation", reservation_id=rid))


def test_stale_evidence_after_a_write_asks_for_a_fresh_read():
    p, uid, rid = scenario("add_bags", "add bags")
    cc = card(p, uid)
    allowed(gate(p, "update_reservation_baggages", reservation_id=rid, total_baggages=2, nonfree_baggages=0, payment_id=cc))
    p.write("update_reservation_baggages", reservation_id=rid, total_baggages=2, nonfree_baggages=0, payment_id=cc)
    decision = gate(p, "update_reservation_baggages", reservation_id=rid, total_baggages=4, nonfree_baggages=1, payment_id=cc)
    assert decision.verdict == Verdict.REVISE and "stale" in decision.reason
    assert decision.suggested_calls[0].name == "get_reservation_details"
    p.read("get_reservation_details", reservation_id=rid)
    allowed(gate(p, "update_reservation_baggages", reservation_id=rid, total_baggages=4, nonfree_baggages=1, payment_id=cc))


def test_a_cancelled_reservation_is_final():
    p, uid, rid = scenario("cancel_recent", "my plans changed")
    p.write("cancel_reservation", reservation_id=rid)
    p.read("get_reservation_details", reservation_id=rid)
    stopped(gate(p, "cancel_reservation", reservation_id=rid), Verdict.BLOCK, "reservation_not_cancelled")


def test_an_unknown_write_fails_closed():
    p, uid, rid = scenario("cancel_recent")
    stopped(p.gate("refund_everything", reservation_id=rid), Verdict.BLOCK, "known_tool")


# ---------------------------------------------------------------- booking


def _booking_args(p: Probe, uid: str, **over) -> dict:
    n, d = PLANTED["book_one_way"]["flight"] if uid == PLANTED["book_one_way"]["user_id"] else PLANTED["book_certificate"]["flight"]
    f = p.env.db.flights[n]
    user = p.env.db.users[uid]
    me = {"first_name": user.name.first_name, "last_name": user.name.last_name, "dob": user.dob}
    price = f.dates[d].prices["economy"]
    args = {
        "user_id": uid, "origin": f.origin, "destination": f.destination, "flight_type": "one_way", "cabin": "economy",
        "flights": [{"flight_number": n, "date": d}], "passengers": [me],
        "payment_methods": [{"payment_id": card(p, uid), "amount": price}],
        "total_baggages": 0, "nonfree_baggages": 0, "insurance": "no",
    }  # fmt: skip
    args.update(over)
    return args


def _booking_probe() -> tuple[Probe, str]:
    uid = PLANTED["book_one_way"]["user_id"]
    p = probe(user=uid, opening="book me a flight")
    n, d = PLANTED["book_one_way"]["flight"]
    f = p.env.db.flights[n]
    p.read("search_direct_flight", origin=f.origin, destination=f.destination, date=d)
    return p, uid


def test_booking_is_allowed_when_everything_checks_out():
    p, uid = _booking_probe()
    allowed(gate(p, "book_reservation", **_booking_args(p, uid)))


def test_booking_needs_one_to_five_passengers_with_names_and_birth_dates():
    p, uid = _booking_probe()
    six = [{"first_name": "A", "last_name": "B", "dob": "1990-01-01"}] * 6
    stopped(gate(p, "book_reservation", **_booking_args(p, uid, passengers=six)), Verdict.REVISE, "booking_passengers_valid")
    no_dob = [{"first_name": "A", "last_name": "B", "dob": ""}]
    stopped(gate(p, "book_reservation", **_booking_args(p, uid, passengers=no_dob)), Verdict.REVISE, "booking_passengers_valid")


def test_booking_needs_flights_seen_available_with_seats():
    uid = PLANTED["book_one_way"]["user_id"]
    p = probe(user=uid, opening="book")
    decision = gate(p, "book_reservation", **_booking_args(p, uid))
    stopped(decision, Verdict.REVISE, "booking_flights_available")
    assert decision.suggested_calls[0].name == "search_direct_flight"
    p, uid = _booking_probe()
    n, d = PLANTED["book_one_way"]["flight"]
    seats = p.env.db.flights[n].dates[d].available_seats["economy"]
    crowd = [{"first_name": f"P{i}", "last_name": "X", "dob": "1990-01-01"} for i in range(5)]
    if seats < 5:
        stopped(gate(p, "book_reservation", **_booking_args(p, uid, passengers=crowd)), Verdict.REVISE, "booking_flights_available")
    p.env.db.flights[n].dates[d].available_seats["economy"] = 0
    p.read("search_direct_flight", origin=p.env.db.flights[n].origin, destination=p.env.db.flights[n].destination, date=d)
    stopped(gate(p, "book_reservation", **_booking_args(p, uid)), Verdict.REVISE, "booking_flights_available")


def test_booking_payment_must_be_saved_within_limits_and_add_up():
    p, uid = _booking_probe()
    args = _booking_args(p, uid)
    price = args["payment_methods"][0]["amount"]
    stopped(gate(p, "book_reservation", **_booking_args(p, uid, payment_methods=[{"payment_id": "credit_card_0000001", "amount": price}])), Verdict.REVISE, "booking_payment_valid")
    stopped(gate(p, "book_reservation", **_booking_args(p, uid, payment_methods=[{"payment_id": card(p, uid), "amount": price + 1}])), Verdict.REVISE, "booking_payment_valid")
    stopped(gate(p, "book_reservation", **_booking_args(p, uid, insurance="yes")), Verdict.REVISE, "booking_payment_valid")


def test_booking_with_two_certificates_is_revised():
    uid = PLANTED["book_certificate"]["user_id"]
    p = Probe(DOMAIN)
    from ledger_tui.domains.airline.schema import Certificate

    methods = p.env.db.users[uid].payment_methods
    methods["certificate_1111111"] = Certificate(source="certificate", id="certificate_1111111", amount=100.0)
    p.say("book")
    p.say(f"My user id is {uid}.")
    p.read("get_user_details", user_id=uid)
    n, d = PLANTED["book_certificate"]["flight"]
    f = p.env.db.flights[n]
    p.read("search_direct_flight", origin=f.origin, destination=f.destination, date=d)
    price = f.dates[d].prices["economy"]
    cert = PLANTED["book_certificate"]["certificate"]
    pays = [{"payment_id": cert, "amount": price - 50}, {"payment_id": "certificate_1111111", "amount": 50}]
    stopped(gate(p, "book_reservation", **_booking_args(p, uid, payment_methods=pays)), Verdict.REVISE, "booking_payment_valid")
    allowed(gate(p, "book_reservation", **_booking_args(p, uid, payment_methods=[{"payment_id": cert, "amount": price}])))


def test_booking_counts_paid_bags_from_membership_and_cabin():
    p, uid = _booking_probe()  # silver: 2 free bags per passenger in economy
    price = _booking_args(p, uid)["payment_methods"][0]["amount"]
    pay = lambda extra: [{"payment_id": card(p, uid), "amount": price + extra}]  # noqa: E731
    stopped(gate(p, "book_reservation", **_booking_args(p, uid, total_baggages=2, nonfree_baggages=1, payment_methods=pay(50))), Verdict.REVISE, "booking_bags_counted")
    allowed(gate(p, "book_reservation", **_booking_args(p, uid, total_baggages=3, nonfree_baggages=1, payment_methods=pay(50))))


# ---------------------------------------------------------------- flight and cabin changes


def test_basic_economy_flights_cannot_change_but_the_cabin_can():
    p, uid, rid = scenario("basic_change_refused", "move my flight")
    n, d = PLANTED["basic_change_refused"]["new_leg"]
    f = p.env.db.flights[n]
    p.read("search_direct_flight", origin=f.origin, destination=f.destination, date=d)
    move = dict(reservation_id=rid, cabin="basic_economy", flights=[{"flight_number": n, "date": d}], payment_id=card(p, uid))
    stopped(gate(p, "update_reservation_flights", **move), Verdict.BLOCK, "flight_change_not_basic_economy")
    search_segments(p, rid)
    allowed(gate(p, "update_reservation_flights", reservation_id=rid, cabin="economy", flights=seg_args(p, rid), payment_id=card(p, uid)))


def test_a_flight_change_keeps_origin_destination_and_trip_type():
    p, uid, rid = scenario("change_destination_refused", "fly elsewhere")
    n, d = PLANTED["change_destination_refused"]["new_leg"]
    f = p.env.db.flights[n]
    p.read("search_direct_flight", origin=f.origin, destination=f.destination, date=d)
    stopped(gate(p, "update_reservation_flights", reservation_id=rid, cabin="economy", flights=[{"flight_number": n, "date": d}], payment_id=card(p, uid)), Verdict.BLOCK, "flight_change_same_route")
    p, uid, rid = scenario("change_date", "move my trip")
    n, d = PLANTED["change_date"]["new_leg"]
    f = p.env.db.flights[n]
    p.read("search_direct_flight", origin=f.origin, destination=f.destination, date=d)
    allowed(gate(p, "update_reservation_flights", reservation_id=rid, cabin="economy", flights=[{"flight_number": n, "date": d}], payment_id=card(p, uid)))


def test_new_segments_must_have_been_searched():
    p, uid, rid = scenario("change_date", "move my trip")
    n, d = PLANTED["change_date"]["new_leg"]
    decision = gate(p, "update_reservation_flights", reservation_id=rid, cabin="economy", flights=[{"flight_number": n, "date": d}], payment_id=card(p, uid))
    stopped(decision, Verdict.REVISE, "new_flights_available")
    f = p.env.db.flights[n]
    assert decision.suggested_calls[0].arguments == {"origin": f.origin, "destination": f.destination, "date": d}


def test_changes_are_paid_by_a_saved_card_or_a_gift_card_that_covers_them():
    p, uid, rid = scenario("upgrade_business", "upgrade please")
    search_segments(p, rid)
    up = dict(reservation_id=rid, cabin="business", flights=seg_args(p, rid))
    from ledger_tui.domains.airline.schema import Certificate, GiftCard

    methods = p.env.db.users[uid].payment_methods
    methods["certificate_7777777"] = Certificate(source="certificate", id="certificate_7777777", amount=5000.0)
    methods["gift_card_7777777"] = GiftCard(source="gift_card", id="gift_card_7777777", amount=1.0)
    p.read("get_user_details", user_id=uid)
    stopped(gate(p, "update_reservation_flights", **up, payment_id="certificate_7777777"), Verdict.REVISE, "update_payment_method")
    stopped(gate(p, "update_reservation_flights", **up, payment_id="gift_card_7777777"), Verdict.REVISE, "update_payment_method")
    stopped(gate(p, "update_reservation_flights", **up, payment_id="credit_card_0000001"), Verdict.REVISE, "update_payment_method")
    allowed(gate(p, "update_reservation_flights", **up, payment_id=PLANTED["upgrade_business"]["gift_card"]))


def test_the_cabin_cannot_change_once_a_segment_is_flown():
    p, uid, rid = scenario("cabin_after_flown_refused", "upgrade")
    statuses(p, rid)
    search_segments(p, rid)
    stopped(gate(p, "update_reservation_flights", reservation_id=rid, cabin="business", flights=seg_args(p, rid), payment_id=card(p, uid)), Verdict.BLOCK, "cabin_change_nothing_flown")


# ---------------------------------------------------------------- bags and passengers


def test_bags_can_be_added_never_removed():
    p, uid, rid = scenario("remove_bags_refused", "bags")
    cc = card(p, uid)
    stopped(gate(p, "update_reservation_baggages", reservation_id=rid, total_baggages=2, nonfree_baggages=0, payment_id=cc), Verdict.BLOCK, "baggage_only_added")
    allowed(gate(p, "update_reservation_baggages", reservation_id=rid, total_baggages=5, nonfree_baggages=2, payment_id=cc))


def test_the_number_of_passengers_cannot_change():
    p, uid, rid = scenario("remove_passenger_refused", "passengers")
    people = [x.model_dump() for x in res(p, rid).passengers]
    stopped(gate(p, "update_reservation_passengers", reservation_id=rid, passengers=people[:2]), Verdict.BLOCK, "same_passenger_count")
    people[0]["first_name"] = "Renamed"
    allowed(gate(p, "update_reservation_passengers", reservation_id=rid, passengers=people))


# ---------------------------------------------------------------- cancellation


def test_the_reason_must_be_asked_before_cancelling():
    p, uid, rid = scenario("cancel_recent", "Hi there")
    stopped(gate(p, "cancel_reservation", reservation_id=rid), Verdict.REVISE, "cancel_reason_asked")
    p.say("It's a change of plans.")
    allowed(gate(p, "cancel_reservation", reservation_id=rid))


def test_a_partly_flown_trip_cannot_be_cancelled():
    p, uid, rid = scenario("cancel_flown_refused", "plans changed")
    decision = gate(p, "cancel_reservation", reservation_id=rid)
    assert decision.verdict == Verdict.REVISE and decision.suggested_calls[0].name == "get_flight_status"
    statuses(p, rid)
    stopped(gate(p, "cancel_reservation", reservation_id=rid), Verdict.BLOCK, "cancel_nothing_flown")


@pytest.mark.parametrize(
    "key, opening",
    [
        ("cancel_recent", "My plans changed."),
        ("cancel_business", "My plans changed."),
        ("cancel_insured_health", "I'm sick and can't fly."),
        ("cancel_airline_cancelled", "The airline cancelled my flight."),
    ],
)
def test_each_cancellation_ground_is_enough(key, opening):
    p, uid, rid = scenario(key, opening)
    statuses(p, rid)
    allowed(gate(p, "cancel_reservation", reservation_id=rid))


@pytest.mark.parametrize(
    "key, opening",
    [("cancel_refused_no_insurance", "My plans changed."), ("cancel_refused_wrong_reason", "My plans changed.")],
)
def test_without_a_ground_the_cancellation_is_blocked(key, opening):
    p, uid, rid = scenario(key, opening)
    statuses(p, rid)
    stopped(gate(p, "cancel_reservation", reservation_id=rid), Verdict.BLOCK, "cancel_eligible")


def test_insurance_covers_health_but_not_a_change_of_plans():
    p, uid, rid = scenario("cancel_refused_wrong_reason", "I have a fever, the doctor says no flying.")
    allowed(gate(p, "cancel_reservation", reservation_id=rid))


# ---------------------------------------------------------------- compensation


def test_no_certificate_unless_the_customer_asks():
    p, uid, rid = scenario("comp_cancelled", "My flight was cancelled.")
    n, d = PLANTED["comp_cancelled"]["leg"]
    p.read("get_flight_status", flight_number=n, date=d)
    stopped(gate(p, "send_certificate", user_id=uid, amount=200), Verdict.BLOCK, "compensation_requested")
    p.say("I'd like some compensation for this.")
    allowed(gate(p, "send_certificate", user_id=uid, amount=200))


def test_regular_uninsured_economy_members_get_no_certificate():
    p, uid, rid = scenario("certificate_regular_refused", "I want compensation")
    n, d = PLANTED["certificate_regular_refused"]["leg"]
    decision = gate(p, "send_certificate", user_id=uid, amount=100)
    assert decision.verdict == Verdict.REVISE and decision.suggested_calls[0].name == "get_flight_status"
    p.read("get_flight_status", flight_number=n, date=d)
    stopped(gate(p, "send_certificate", user_id=uid, amount=100), Verdict.BLOCK, "certificate_eligible")


def test_certificate_amount_is_100_per_passenger_for_a_cancelled_flight():
    p, uid, rid = scenario("comp_cancelled", "compensation please")
    n, d = PLANTED["comp_cancelled"]["leg"]
    p.read("get_flight_status", flight_number=n, date=d)
    stopped(gate(p, "send_certificate", user_id=uid, amount=100), Verdict.REVISE, "certificate_amount")
    allowed(gate(p, "send_certificate", user_id=uid, amount=200))


def test_delay_compensation_comes_after_the_change():
    p, uid, rid = scenario("delay_change_comp", "delayed! compensation please")
    n, d = PLANTED["delay_change_comp"]["leg"]
    n2, d2 = PLANTED["delay_change_comp"]["new_leg"]
    p.read("get_flight_status", flight_number=n, date=d)
    stopped(gate(p, "send_certificate", user_id=uid, amount=50), Verdict.REVISE, "certificate_amount")
    f = p.env.db.flights[n2]
    p.read("search_direct_flight", origin=f.origin, destination=f.destination, date=d2)
    change = dict(reservation_id=rid, cabin="economy", flights=[{"flight_number": n2, "date": d2}], payment_id=card(p, uid))
    allowed(gate(p, "update_reservation_flights", **change))
    p.write("update_reservation_flights", **change)
    allowed(gate(p, "send_certificate", user_id=uid, amount=50))
    p.read("get_reservation_details", reservation_id=rid)  # re-read: the delayed flight is gone from it
    allowed(gate(p, "send_certificate", user_id=uid, amount=50))
    stopped(gate(p, "send_certificate", user_id=uid, amount=100), Verdict.REVISE, "certificate_amount")


def test_stated_facts_are_never_taken_as_observed_evidence():
    p, uid, rid = scenario("cancel_refused_no_insurance", "The airline cancelled my flight!")
    statuses(p, rid)  # the flights are fine: the customer's claim does not make it eligible
    decision = gate(p, "cancel_reservation", reservation_id=rid)
    stopped(decision, Verdict.BLOCK, "cancel_eligible")
    reads = next(r for r in decision.predicates if r.name == "cancel_eligible").reads
    assert any(r.path == "said.cancel_reason" and r.origin == "stated" for r in reads)

"""Stated facts: negation, the record they belong to, and the words they came from."""

from __future__ import annotations

import pytest

from ledger_tui.domains import load_domain

AIRLINE = load_domain("airline")
RETAIL = load_domain("retail")
TELECOM = load_domain("telecom")


def facts(domain, key: str, message: str) -> dict[str | None, str]:
    statement = next(st for st in domain.statements if st.key == key)
    return {f.record: f.value for f in statement.facts(message)}


@pytest.mark.parametrize(
    "message, reason",
    [
        ("I need to cancel, I'm feeling unwell.", "health"),
        ("I'm not feeling well at all.", "health"),
        ("I'm a bit under the weather.", "health"),
        ("There's a blizzard coming.", "weather"),
        ("I booked it by accident.", "other"),
        ("My plans changed.", "change_of_plan"),
        ("Je suis malade.", "health"),
        ("This has nothing to do with my health, my plans changed.", "change_of_plan"),
    ],
)
def test_cancellation_reasons_as_people_say_them(message: str, reason: str):
    assert facts(AIRLINE, "cancel_reason", message) == {None: reason}


def test_a_negation_over_the_cue_voids_it_and_a_negation_that_is_the_cue_states_it():
    assert facts(AIRLINE, "cancel_reason", "This has nothing to do with my health.") == {}
    assert facts(AIRLINE, "cancel_reason", "It's not because I'm sick.") == {}
    assert facts(RETAIL, "cancel_reason", "I didn't order it by mistake.") == {}
    assert facts(RETAIL, "cancel_reason", "Not that I don't need it, I just want it cheaper.") == {}
    assert facts(RETAIL, "cancel_reason", "I no longer need it.") == {None: "no longer needed"}
    assert facts(AIRLINE, "bags_needed", "I don't need any checked bags.") == {None: "no"}
    assert facts(AIRLINE, "bags_needed", "Two checked bags, please.") == {None: "yes"}
    assert facts(TELECOM, "abroad", "I'm not abroad, I'm home.") == {None: "no"}


def test_each_record_gets_the_reason_stated_for_it():
    said = facts(AIRLINE, "cancel_reason", "Please cancel DCRZJM because I'm sick, and BVPF5T because my plans changed.")
    assert said == {"DCRZJM": "health", "BVPF5T": "change_of_plan"}
    said = facts(RETAIL, "cancel_reason", "Cancel #W1234567 since I ordered it by mistake, and #W7654321, I no longer need it.")
    assert said == {"#W1234567": "ordered by mistake", "#W7654321": "no longer needed"}


def test_a_stated_fact_keeps_the_words_it_came_from():
    statement = next(st for st in AIRLINE.statements if st.key == "cancel_reason")
    (fact,) = statement.facts("Hello. I have the flu, so I can't fly on Friday.")
    assert fact.value == "health" and fact.quote == "I have the flu, so I can't fly on Friday." and fact.path == "said.cancel_reason"

"""The closed reader: a reply to a confirmation card is yes only when it is a plain yes.

Measured on tables of replies written blind (tests/data/consent/replies-*.json, by people who had
not seen the reader): no false yes at all, and at least 90 % of each language's plain yeses read as
yes. `python -m benchmarks.answer_tables -v` prints the figures and every miss.
"""

from __future__ import annotations

import pytest

from benchmarks.answer_tables import FOLDER, LANGS, measure
from ledger_tui.engine.conversation.answers import CardWords, answer_reading, reply_words

TABLES = sorted(FOLDER.glob("replies-*.json"))
CANCEL = reply_words(["cancel"], ["CAA302", "JFK", "LAX"], ["Cancel reservation CAA302", "Refund: $157 to your Visa ending in 9431"])


@pytest.mark.parametrize("table", TABLES, ids=[t.stem for t in TABLES])
def test_no_false_yes_and_nine_in_ten_plain_yeses_in_every_language(table):
    figures = measure(table)
    assert figures.false_yes == [], [r["reply"] for r in figures.false_yes]
    for lang in LANGS:
        assert figures.yes[lang] >= 30 and figures.not_yes[lang] >= 30, f"{table.name}: too few {lang} replies"
        assert figures.recall(lang) >= 0.9, (lang, [r["reply"] for r, _ in figures.missed if r["lang"] == lang])


@pytest.mark.parametrize(
    "reply, answer",
    [
        ("Yes, please.", "yes"),
        ("Yes, cancel CAA302.", "yes"),  # the card's own verb and record
        ("Oui, allez-y, merci", "yes"),
        ("yesss", "yes"),  # a letter held
        ("Yes, refund it to my Visa 9431", "yes"),  # money and values the card shows
        ("No.", "no"),
        ("No, absolutely not. Do not cancel it.", "no"),
        ("Yes, but not CAA302", "unclear"),
        ("Yes, cancel XY8842 instead", "unclear"),  # a record the card does not show
        ("Yes, refund it to my Mastercard", "unclear"),
        ("Yes, refund it to my PayPal", "unclear"),  # a verb of money is not a wildcard for a method
        ("Yes. Actually no, wait.", "unclear"),  # a change of mind
        ("Yes if there is no fee", "unclear"),
        ("Yes? Is there a fee", "unclear"),
        ("Yeah right", "unclear"),  # sarcasm
        ("Yes and also change my seat", "unclear"),  # another request
        ("", "unclear"),
    ],
)
def test_reading(reply, answer):
    assert answer_reading(reply, CANCEL).answer == answer


def test_a_yes_repeating_a_verb_of_another_action_is_not_a_yes():
    assert answer_reading("Yes, change it", CANCEL).answer == "unclear"
    assert answer_reading("Yes, change it", CardWords()).answer == "unclear"


def test_a_long_reply_is_never_a_plain_yes_and_costs_little():
    assert answer_reading("yes " * 10_000, CANCEL).answer == "unclear"

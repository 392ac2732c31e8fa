"""Whose identifier the customer gave: their own, or another person's.

A lookup identifies the customer only with what the customer gave *as their own*. A caller who
acts for a spouse, a parent or an employer and gives that person's email, phone number or user id
has not identified themselves, and every domain's policy says to decline: that person must
contact us. Relatives named as passengers, recipients or travellers do not count; a relative
whose account it is does. Precision first: when the words say the identifier is someone else's,
it identifies nobody.

The words that decide, nearest first:

- the possessor next to the identifier in its sentence: "my email is …", "I'm …", "you can find
  me under …" (the caller's); "his user id is …", "my mother's number is …", "on behalf of my
  boss, user …", "… is my husband's account", "… belongs to my girlfriend" (someone else's);
- when its sentence names no possessor, the conversation: a caller who said they act for
  someone ("I'm calling for my grandmother", "my wife asked me to sort out her booking", "on
  behalf of …") gave that person's identifier, unless they called it their own.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

from ledger_tui.engine.conversation import lexicon as lx
from ledger_tui.engine.conversation.text import find, tokens, value_tokens

RELATIONS = frozenset(
    "wife husband spouse partner mother mom mum mommy mummy mama father dad daddy papa parent parents son "
    "daughter child children kid kids baby brother sister sibling siblings friend boss employer manager "
    "colleague coworker grandmother grandma granny grandfather grandpa grandparent grandparents aunt uncle "
    "cousin niece nephew client roommate flatmate housemate fiance fiancee girlfriend boyfriend neighbor "
    "neighbour stepmother stepfather stepson stepdaughter teenager grandson granddaughter".split()
)
_THIRD = frozenset({"his", "her", "their", "hers", "theirs"})
_OWN = frozenset({"my", "mine", "me", "our", "ours"})
# a possessive's own "s" that is really "is" ("the account's mine")
_IS_AFTER = frozenset({"mine", "my", "me", "ours", "our"})
_REACH = 8
_NOT_OWNERS = frozenset({"it", "that", "this", "what", "there", "here"})  # "that's": an "is"

# what a caller says to act for someone: a word of speaking for them ("calling for my
# grandmother"), or of handling their records ("sort out her booking"). Booking, buying or asking
# for a relative is not acting for them: they are a passenger or a recipient.
_SPEAK_FOR = lx.phrases(
    "acting for|speaking for|calling for|phoning for|ringing for|writing for|reaching out for|contacting you for|"
    "here for|calling in for"
)
_HANDLE = lx.phrases("help|helping|handle|handling|sort out|sorting out|manage|managing|deal with|dealing with")
_ASKED = lx.phrases("asked me|wants me|wanted me|needs me|told me|sent me|got me|had me|would like me")
_CANNOT = lx.phrases("can not call|cannot call|can not phone|unable to call|can not get through|can not hear|not good with")
_RECORDS = frozenset(
    "account booking bookings reservation reservations trip trips flight flights order orders line lines "
    "phone number appointment appointments session sessions profile file".split()
)
_BELONGS = lx.phrases("belongs to|belonging to|is for|registered to|in the name of|owned by")
_NEGATORS = lx.NEGATORS


def given_for_another(customer_text: Sequence[str], value: Any) -> str | None:
    """The customer's words that give `value` as another person's identifier, or None when they
    gave it as their own (or never gave it)."""
    needle = value_tokens(value)
    if not needle:
        return None
    undecided: str | None = None
    for n, message in enumerate(customer_text):
        for sentence in _sentences(message or ""):
            toks = tokens(sentence)
            at = find(toks, needle)
            if at < 0:
                continue
            whose = _possessor(toks, at, at + len(needle))
            if whose == "other":
                return sentence.strip()
            if whose == "own":
                continue
            acting = _acting_for(customer_text[: n + 1])
            if acting is not None:
                undecided = undecided or acting
    return undecided


def any_given_for_another(customer_text: Sequence[str], values: Iterable[Any]) -> str | None:
    """The words giving the first of `values` the customer gave as another person's, or None."""
    for value in values:
        quote = given_for_another(customer_text, value)
        if quote is not None:
            return quote
    return None


def _possessive(toks: tuple[str, ...], i: int) -> bool:
    """Is toks[i] the "s" of a possessive ("mother's")? Not after a pronoun ("that's"), and not an
    "is" before the caller's own ("the account's mine")."""
    return (
        toks[i] == "s"
        and i > 0
        and toks[i - 1] not in _NOT_OWNERS
        and not (i + 1 < len(toks) and toks[i + 1] in _IS_AFTER)
    )


def _possessor(toks: tuple[str, ...], start: int, end: int) -> str | None:
    """'own', 'other' or None, from the words next to the identifier at toks[start:end]."""
    # after it: "… is my husband's account", "… belongs to my girlfriend", "… is mine"
    stop = min(len(toks), end + _REACH)
    for i in range(end, stop):
        tok = toks[i]
        if tok in _THIRD or (i > end and _possessive(toks, i)):
            return "other"
        if lx.at(toks[:stop], i, _BELONGS):
            rest = toks[i + 2 : min(stop, i + 5)]
            if rest and rest[0] in {"me", "myself"}:
                return "own"
            if any(t in RELATIONS or t in {"him", "her", "them", "someone", "somebody"} for t in rest):
                return "other"
        if tok in _OWN:
            # "… is my mom's email", "… is my husband's": a relation's, not the caller's
            return "other" if i + 1 < stop and toks[i + 1] in RELATIONS else "own"
    # before it, the nearest possessor: "my email is …", "his id is …", "my mother's number is …",
    # "on behalf of my boss, user …"
    for i in range(start - 1, max(0, start - _REACH) - 1, -1):
        tok = toks[i]
        if tok in _THIRD or _possessive(toks, i):
            return "other"
        if tok in RELATIONS and i > 0 and toks[i - 1] in {"my", "our"}:
            return "other"
        if tok in {"my", "mine", "me", "our"}:
            return "own"
        if tok == "am" and i > 0 and toks[i - 1] == "i":
            return "own"
    return None


def _acting_for(messages: Sequence[str]) -> str | None:
    """The words in which the caller says they act for someone else, if they do."""
    for message in messages:
        for sentence in _sentences(message or ""):
            toks = tokens(sentence)
            if _says_agency(toks):
                return sentence.strip()
    return None


def _says_agency(toks: tuple[str, ...]) -> bool:
    for i, tok in enumerate(toks):  # "on behalf of", "on my father's behalf" (not "on my behalf")
        if tok == "behalf" and "on" in toks[max(0, i - 4) : i] and toks[i - 1] != "my" and not _negated(toks, max(0, i - 4)):
            return True
    if lx.spans(toks, lx.phrases("in the name of")):
        return True
    for a, b in lx.spans(toks, _SPEAK_FOR):
        if not _negated(toks, a) and _a_person(toks[b : b + 4]):
            return True
    for a, b in lx.spans(toks, _HANDLE):
        if not _negated(toks, a) and _their_records(toks[b : b + 6]):
            return True
    for a, _b in lx.spans(toks, _ASKED):
        if not _negated(toks, a) and any(t in RELATIONS or t in {"he", "she", "they"} for t in toks[max(0, a - 4) : a]):
            return True
    for a, _b in lx.spans(toks, _CANNOT):
        if any(t in RELATIONS or t in {"he", "she", "they"} for t in toks[max(0, a - 4) : a]):
            return True
    for i in range(len(toks) - 3):  # "I'm his daughter", "i am her husband"
        if toks[i : i + 2] == ("i", "am") and toks[i + 2] in _THIRD and toks[i + 3] in RELATIONS:
            return True
    return False


def _a_person(follow: tuple[str, ...]) -> bool:
    """After "calling for": another person ("my grandmother", "him"), not a record of theirs that
    may be the caller's ("my daughter's order")."""
    if not follow:
        return False
    if follow[0] in {"him", "them"} or (follow[0] == "her" and (len(follow) == 1 or follow[1] not in _RECORDS)):
        return True
    for i, tok in enumerate(follow[:3]):
        if tok in RELATIONS:
            nxt = follow[i + 1 : i + 3]
            return not (nxt[:1] == ("s",) or (nxt[:1] == ("and",) and nxt[1:2] in {("me",), ("i",), ("myself",)}))
    return False


def _their_records(follow: tuple[str, ...]) -> bool:
    """After "help", "sort out": another person's records ("her booking", "my aunt with her
    reservation", "him out")."""
    if follow[:1] in {("him",), ("them",)}:
        return True
    for i, tok in enumerate(follow):
        if tok in _THIRD and i + 1 < len(follow) and follow[i + 1] in _RECORDS:
            return True
    return False


_STOPS = re.compile(r"(?<=[.!?])\s+|\n+")


def _sentences(message: str) -> list[str]:
    """Sentences at full stops and line breaks only: "her user id: mia_li_3668" is one."""
    return [s.strip() for s in _STOPS.split(message) if s.strip()]


def _negated(toks: tuple[str, ...], at: int) -> bool:
    return any(lx.at(toks, i, _NEGATORS) for i in range(max(0, at - 3), at))

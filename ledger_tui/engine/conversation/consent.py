"""Confirmation as the policy reads it: an agent's proposal bound to the customer's acceptance.

A write that needs the customer's go-ahead is authorized when
1. the agent's last message before the customer's latest one is a *proposal* of this write: it names
   the action (a live verb of the write's kind: not negated, not a report of something done), the
   record (its id, or a description that singles it out among the customer's records of that kind
   the ledger knows), bound to that verb rather than to "keep" or another action, and every detail
   that matters (`Terms.details`), each as whole tokens (`text.py`);
2. the customer's latest message *accepts* it (`acceptance.read_reply`): an explicit yes at clause
   level, in English, French, Spanish, German, Italian or Portuguese; negations, deferrals,
   conditions, questions before the yes, a yes to keeping it or to another action are not a yes;
3. the same write on the same record has not already run since that message (a yes is used up by
   the writes it authorized).

Domains describe each write's `Terms` from the ledger. This module reads the proposal (1);
`acceptance.py` reads the reply (2) and `verbs.py` holds what both ask of a verb (is it live). Only
text is read: everything here is deterministic and makes no model call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Sequence

from ledger_tui.engine.conversation import lexicon as lx
from ledger_tui.engine.conversation.text import contains, positions, sentences, tokens, value_tokens
from ledger_tui.engine.conversation.verbs import STRONG, live_verbs, negated


@dataclass(frozen=True)
class Detail:
    """Something the proposal must name: any one of `forms` (values, matched as whole tokens)."""

    label: str
    forms: tuple[Any, ...]
    # the customer named it themselves earlier ("$4.00 is fine"): then the proposal need not
    customer_may_name: bool = False


@dataclass(frozen=True)
class RecordRef:
    """The record a write acts on, and what tells it apart from the customer's other records.

    `count` is how many records of this kind the customer has, as far as the ledger knows;
    `forms` are values describing this record (a route, item names, a phone number), `others` the
    same for each of the customer's other records of the kind."""

    kind: str
    id: str
    nouns: tuple[str, ...]
    count: int = 1
    forms: tuple[Any, ...] = ()
    others: tuple[tuple[Any, ...], ...] = ()
    other_ids: tuple[str, ...] = ()  # the customer's other records of the kind


@dataclass(frozen=True)
class Terms:
    """What a proposal of one write must say."""

    families: tuple[str, ...]
    action: str  # in words, for messages: "cancel reservation ZFA04Y"
    record: RecordRef | None = None
    details: tuple[Detail, ...] = field(default_factory=tuple)


def _named_forms(toks: tuple[str, ...], forms: Iterable[Any], year: int) -> list[int]:
    found: list[int] = []
    for form in forms:
        if form in (None, ""):
            continue
        needle = value_tokens(form, year)
        if needle:
            found.extend(positions(toks, needle))
    return found


def _named_spans(toks: tuple[str, ...], forms: Iterable[Any], year: int) -> list[tuple[int, int]]:
    out = []
    for form in forms:
        if form in (None, ""):
            continue
        needle = value_tokens(form, year)
        out.extend((p, p + len(needle)) for p in positions(toks, needle) if needle)
    return out


_UNTOUCHED = lx.phrases(
    "is not|are not|will not|won t|not be|not affected|unaffected|remains|remain|stays|stay|untouched|"
    "unchanged|is not used|n est pas|ne sera pas|no se|no sera|bleibt|wird nicht|non sara|nao sera|continua"
)


def _denied(toks: tuple[str, ...], start: int, end: int) -> bool:
    """Is this mention of a value said not to apply ("not your gift card", "your gift card … is
    not affected")?"""
    before = toks[max(0, start - 2) : start]
    if lx.has(before, lx.NEGATORS):
        return True
    after = toks[end : end + 6]
    return lx.has(after, _UNTOUCHED)


def _bound(mentions: list[int], mine: list[int], rivals: list[int], sentence_of: list[int]) -> bool:
    """Is some mention of the record closest to one of this write's verbs rather than to a rival
    (keep, another action)? Distance counts sentences first, then words."""
    if not rivals:
        return bool(mine)
    for m in mentions:
        best = min(
            ((abs(sentence_of[m] - sentence_of[c]), abs(m - c), c in mine) for c in mine + rivals),
            key=lambda t: (t[0], t[1], not t[2]),
        )
        if best[2]:
            return True
    return False


_ASK = re.compile(
    r"\?\s*$|\b(?:confirm|shall i|should i|would you like|do you want|can i go ahead|may i|please reply|"
    r"let me know if you|ready for me to|ok to proceed|okay to proceed)\b",
    re.I,
)


def proposal_problem(proposal: str, terms: Terms, year: int, customer_said: Sequence[str] = ()) -> str | None:
    """(see `_proposal_problem`; memoized: a turn's writes and retries read the same proposal)"""
    try:
        return _proposal_problem_cached(proposal, terms, year, tuple(customer_said))
    except TypeError:  # an unhashable detail value
        return _proposal_problem(proposal, terms, year, customer_said)


@lru_cache(maxsize=2048)
def _proposal_problem_cached(proposal: str, terms: Terms, year: int, customer_said: tuple[str, ...]) -> str | None:
    return _proposal_problem(proposal, terms, year, customer_said)


def _proposal_problem(proposal: str, terms: Terms, year: int, customer_said: Sequence[str] = ()) -> str | None:
    """What the proposal fails to say about this write, or None if it proposes it.

    When the sentence that asks for the yes names records of the kind, it says which ones the yes
    is for ("…Let's take DCRZJM first: shall I cancel it?"), and each must be bound there to this
    write's verb, not to "keep" or another action."""
    toks: list[str] = []
    sentence_of: list[int] = []
    asking: set[int] = set()
    for n, sentence in enumerate(sentences(proposal)):
        st = tokens(sentence, year)
        toks.extend(st)
        sentence_of.extend([n] * len(st))
        if _ASK.search(sentence):
            asking.add(n)
    all_toks = tuple(toks)
    if not all_toks:
        return "there is no message from the agent describing it before the customer's reply"
    mine = live_verbs(all_toks, terms.families)
    if not mine:
        return f"it does not propose to {terms.action}"
    rec = terms.record
    if rec is not None:
        mentions = _named_forms(all_toks, [rec.id], year)
        if not mentions:
            distinct = [f for f in rec.forms if not any(_same(f, o, year) for other in rec.others for o in other)]
            mentions = _named_forms(all_toks, distinct, year)
            if not mentions and rec.count == 1:
                mentions = _named_forms(all_toks, rec.nouns + rec.forms, year)
        if not mentions:
            hint = "" if rec.count == 1 else f" (the customer has {rec.count} {rec.nouns[0]}s)"
            return f"it does not say which {rec.kind} ({rec.id}){hint}"
        rival_families = [f for f in STRONG if f not in terms.families]
        nouns = {value_tokens(n, year)[0] for n in rec.nouns if value_tokens(n, year)}
        rivals = live_verbs(all_toks, rival_families)
        rivals += [a for a, b in lx.spans(all_toks, lx.KEEP) if not negated(all_toks, a) and _keeps_record(all_toks, b, rec, nouns, year)]
        rivals = [r for r in rivals if all_toks[r] not in nouns and not all_toks[r].rstrip("s") in nouns]
        rivals = sorted(set(rivals) - set(mine))
        asked = {sentence_of[m] for m in _named_forms(all_toks, (rec.id, *rec.other_ids), year)} & asking
        if asked:
            here = [m for m in mentions if sentence_of[m] in asked]
            if not here:
                return f"the question it asks is about another {rec.kind}, not {rec.id}"
            cues_here = [c for c in mine + rivals if sentence_of[c] in asked]
            if cues_here and not _bound(here, [c for c in mine if sentence_of[c] in asked], [c for c in rivals if sentence_of[c] in asked], sentence_of):
                return f"it asks about {rec.kind} {rec.id} for another action, not to {terms.action}"
            if cues_here:
                rivals = []
        if not _bound(mentions, mine, rivals, sentence_of):
            return f"it names {rec.kind} {rec.id} for another action, not to {terms.action}"
    missing = [
        d.label
        for d in terms.details
        if not [m for m in _named_spans(all_toks, d.forms, year) if not _denied(all_toks, *m)]
        and not (d.customer_may_name and any(_named_spans(tokens(t, year), d.forms, year) for t in customer_said))
    ]
    if missing:
        return f"it does not name {', '.join(missing)}"
    return None


def _keeps_record(toks: tuple[str, ...], end: int, rec: RecordRef, nouns: set[str], year: int) -> bool:
    """Does a "keep" at `toks[:end]` keep the record ("keep it", "keep reservation X") rather than
    something else ("keeping all flights the same")?"""
    after = list(toks[end : end + 4])
    while after and after[0] in _DETERMINERS:
        after.pop(0)
    if not after or lx.has(tuple(after[:1]), lx.KEEP_OBJECT) or after[0] in nouns or after[0].rstrip("s") in nouns:
        return True
    return contains(tuple(after), value_tokens(rec.id, year))


_DETERMINERS = {"the", "your", "my", "this", "that", "these", "those", "our", "votre", "la", "le", "tu", "su", "ihre", "la", "sua", "sua"}


def _same(a: Any, b: Any, year: int) -> bool:
    return value_tokens(a, year) == value_tokens(b, year)


def by_tool(table: dict[str, Any]) -> Any:
    """A domain's `terms(ctx)`: each write tool's own function from `table`."""

    def terms(ctx: Any) -> Terms:
        return table[ctx.call.name](ctx)

    return terms


def proposal_text(terms: Terms) -> str:
    """A proposal of the write that names everything its `Terms` ask for (the first form of each
    detail): the words the gold agent says, and an example for anyone reading a REVISE."""
    parts = [f"{d.label.split(' (')[0]}: {d.forms[0]}" for d in terms.details if d.forms]
    text = f"To confirm, I will {terms.action}"
    if parts:
        text += " (" + "; ".join(parts) + ")"
    return text + ". Shall I go ahead?"


def mentions(text: str, value: Any, year: int = 2024) -> bool:
    """Does the text name this value (whole tokens)? For checks outside confirmation."""
    needle = value_tokens(value, year)
    return bool(needle) and contains(tokens(text, year), needle)

"""Confirmation as the policy reads it: an agent's proposal bound to the customer's acceptance.

A write that needs the customer's go-ahead is authorized when
1. the agent's last message before the customer's latest one is a *proposal* of this write: it names
   the action (a live verb of the write's kind: not negated, not a report of something done), the
   record (its id, or a description that singles it out among the customer's records of that kind
   the ledger knows), bound to that verb rather than to "keep" or another action, and every detail
   that matters (`Terms.details`), each as whole tokens (`text.py`);
2. the customer's latest message *accepts* it (`read_reply`): an explicit yes at clause level, in
   English, French, Spanish, German, Italian or Portuguese; negations, deferrals, conditions,
   questions before the yes, a yes to keeping it or to another action are not a yes;
3. the same write on the same record has not already run since that message (a yes is used up by
   the writes it authorized).

Domains describe each write's `Terms` from the ledger; this module only reads text. Everything here
is deterministic and makes no model call.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Sequence

from ledger_tui.engine.conversation import lexicon as lx
from ledger_tui.engine.conversation.text import contains, positions, sentences, tokens, value_tokens

# Verb families a reply can switch to: a yes that names only one of these, and none of the proposed
# write's, is a yes to another action.
STRONG = ("cancel", "change", "book", "return", "exchange", "resume", "suspend", "reschedule", "transfer", "roaming_on", "roaming_off")


# ----------------------------------------------------------------------------- the customer's reply


@dataclass(frozen=True)
class Reading:
    """What the customer's reply says about the proposal."""

    accepted: bool
    kind: str  # yes | negation | deferral | condition | question | keep | other_action | unclear
    clause: str = ""

    def explain(self) -> str:
        what = {
            "yes": "an explicit yes",
            "negation": "a refusal",
            "deferral": "a request to wait",
            "condition": "a conditional answer",
            "question": "a question",
            "keep": "a wish to keep things as they are",
            "other_action": "a yes to a different action",
            "unclear": "no explicit yes",
        }[self.kind]
        return f"{what} ({self.clause!r})" if self.clause and self.kind != "yes" else what


_CONTRAST_RX = re.compile(
    r"\b(?:but|however|though|although|mais|cependant|pourtant|pero|sin embargo|aunque|aber|jedoch|"
    r"allerdings|tuttavia|però|porem|porém|contudo|entretanto|except that|only that|sauf que|"
    r"salvo que|solo que|solo che|nur dass|nur ist|só que|so que)\b"
    # "ma" (Italian "but", French "my") and "mas" (Portuguese "but", Spanish "more") only where a
    # clause starts
    r"|(?:^|(?<=[,;—–-]))\s*(?:ma|mas)\b",
    re.I,
)
# A clause also ends where a new request starts: ", and could you…", "; also…".
_REQUEST_SPLIT = re.compile(r",\s*(?=(?:and|et|y|und|e)\s+(?:also\s+|aussi\s+|auch\s+|tambien\s+|anche\s+|tambem\s+)?(?:could|can|would|will|pourriez|pouvez|puedes|puede|podria|konnen|konnten|potrebbe|puoi|pode|poderia)\b)", re.I)
_SI_YES = re.compile(r"^\W*(s[ií]|sim|oui|ja|yes)\b\s*(?:$|[,.!;:)-])", re.I)
_SI_ACCENT = re.compile(r"\bs[íì]\b", re.I)
_IF_WORDS = {"si", "se"}
_CLITICS = ("me", "lo", "la", "le", "los", "las", "melo", "mela", "selo", "sela", "gli")
_PRONOUN_AFTER_KEEP = 3


@dataclass(frozen=True)
class _Clause:
    raw: str
    toks: tuple[str, ...]
    question: bool
    contrast: bool


def _clauses(reply: str) -> list[_Clause]:
    out: list[_Clause] = []
    for sentence in sentences(reply):
        for piece in _REQUEST_SPLIT.split(sentence):
            question = piece.rstrip().endswith("?") or piece.lstrip().startswith("¿")
            parts = _CONTRAST_RX.split(piece)
            for i, part in enumerate(parts):
                toks = tokens(part)
                if toks:
                    out.append(_Clause(part.strip(), toks, question and i == len(parts) - 1, i > 0))
    return out


def _without(toks: tuple[str, ...], table: Iterable[lx.Phrase]) -> tuple[str, ...]:
    cut = lx.spans(toks, table)
    if not cut:
        return toks
    keep, last = [], 0
    for a, b in cut:
        keep.extend(toks[last:a])
        last = b
    keep.extend(toks[last:])
    return tuple(keep)


def _negated(toks: tuple[str, ...], span_start: int, reach: int = 3) -> bool:
    """Is the word at `span_start` governed by a negation in the `reach` words before it?"""
    lo = max(0, span_start - reach)
    return any(
        lx.at(toks, i, lx.NEGATORS) and not _preposition(toks, i) for i in range(lo, span_start)
    )


def _preposition(toks: tuple[str, ...], i: int) -> bool:
    """Portuguese "no"/"na" (in the): "no cartão final 8902", "no fim"."""
    return toks[i] in ("no", "na") and i + 1 < len(toks) and toks[i + 1] in lx.PT_AFTER_NO


def _starts_refusing(toks: tuple[str, ...], raw: str) -> bool:
    """A bare "no" opening the clause ("No, don't", "Well... no."): not "No me importa", "Non l'ho"."""
    i = 0
    while i < len(toks):
        marker = lx.longest_at(toks, i, lx.DISCOURSE)
        if marker is None:
            break
        i += len(marker)
    if not lx.at(toks, i, lx.NEGATION_START):
        return False
    return i + 1 >= len(toks) or bool(_BARE_NO.search(raw))


_BARE_NO_THEN = re.compile(
    r"^\W*(?:no|non|nein|não|nao|nope)\W+(?:thanks|thank you|merci|gracias|danke|grazie|obrigad[oa]|actually|"
    r"en fait|wait|attendez|espera|aspetta|warte|pera|ehrlich gesagt|en realidad|in realtà|na verdade)\b",
    re.I,
)
_BARE_NO = re.compile(r"\b(?:no|nope|nah|non|nein|nee|não|nao)\b\s*(?:$|[,.!;:…—–-])", re.I)


_TRAILING_NO = {"no", "non", "nao", "nein"}


def _refuses(toks: tuple[str, ...], proposed: Sequence[str], raw: str = "") -> bool:
    if _starts_refusing(toks, raw) or lx.has(toks, lx.REFUSAL) or toks[-1] in _TRAILING_NO:
        return True
    if _BARE_NO_THEN.match(raw):
        return True  # "No thanks, …", "Non en fait, …": a no, then what follows it
    if toks[-1] == "nicht" and _live_families(toks, STRONG + tuple(proposed)):
        return True  # "Stornieren Sie die Buchung nicht"
    governed = [a for a, _ in lx.spans(toks, lx.GOVERNED)]
    for fam in lx.ACTIONS.values():
        governed.extend(a for a, _ in lx.spans(toks, fam))
    if any(_negated(toks, a, reach=2) for a in governed):
        return True
    # "I don't want to cancel it" refuses; "I don't want to pay for nothing" gives a reason
    for a, b in lx.spans(toks, lx.WANT):
        if not _negated(toks, a, reach=2):
            continue
        after = toks[b : b + 4]
        if len(after) <= 1 or _live_families(after, STRONG + tuple(proposed)) or lx.has(after[:2], lx.KEEP_OBJECT):
            return True
    return False


def _live_families(toks: tuple[str, ...], names: Iterable[str]) -> set[str]:
    """Families named by a verb that is not negated and not part of a report ("I had booked it")."""
    return {name for name in names if _live_positions(toks, name)}


def _mine_and_others(toks: tuple[str, ...], proposed: Sequence[str]) -> tuple[set[str], set[str]]:
    """Families of the proposal named by a live verb, and other strong families named by a verb the
    proposal's families do not also cover ("changez" is a change, not a second action)."""
    live = {name: _live_positions(toks, name) for name in set(STRONG) | set(proposed)}
    covered = {a for name in proposed for a in live[name]}
    mine = {name for name in proposed if live[name]}
    others = {name for name in STRONG if name not in proposed and set(live[name]) - covered}
    return mine, others


def _live_positions(toks: tuple[str, ...], name: str) -> list[int]:
    return [
        a
        for a, _ in lx.spans(toks, lx.ACTIONS[name])
        if toks[a] not in lx.RECORD_NOUNS and _word(toks[a]) and not _negated(toks, a) and not _report(toks, a)
    ]


def _conditional(toks: tuple[str, ...], raw: str) -> bool:
    for a, b in lx.spans(toks, lx.WHILE):
        # "OK, as long as…", "while … not": a condition; "I won't use it while abroad": a reason
        if lx.starts_with(toks[max(0, a - 2) : a], lx.AFFIRM) or any(
            lx.at(toks, i, lx.NEGATORS) for i in range(b, min(len(toks), b + 5))
        ):
            return True
    for a, b in lx.spans(toks, lx.CONDITION):
        if b - a == 1 and toks[a] in _IF_WORDS and not _if_here(toks, a, raw):
            continue
        return True
    return False


def _if_here(toks: tuple[str, ...], a: int, raw: str) -> bool:
    """Is this "si"/"se" an "if"? It is also "yes" ("Sí, claro", "si cancellala") and a pronoun
    ("se lo agradezco", "que se cancele")."""
    nxt = toks[a + 1] if a + 1 < len(toks) else None
    prev = toks[a - 1] if a > 0 else None
    if nxt is None or prev in ("que", "lo", "la", "le", "me", "te", "nos", "non", "no", "ya", "ja"):
        return False
    if toks[a] == "si":
        if a == 0 and _SI_YES.match(raw):
            return False
        if _SI_ACCENT.search(raw) and not re.search(r"\bsi\b", raw, re.I):
            return False  # written "sí"/"sì": the yes
        follows = toks[a + 1 :]
        if nxt == "si" or lx.starts_with(follows, lx.AFFIRM):
            return False
        if len(nxt) > 4 and nxt.endswith(_CLITICS):
            return False  # "si, agrégame los 2 GB", "si cancellala": an imperative, so a yes
        if any(lx.starts_with(follows, fam) for fam in lx.ACTIONS.values()):
            return False
        return True
    # "se": an "if" where a clause opens with it, or before a subject or verb that starts one
    if nxt in ("lo", "la", "le", "los", "las", "me", "te", "nos", "les"):
        return False
    return a == 0 or lx.at(toks, a + 1, lx.IF_NEXT)


def _keeps_this(toks: tuple[str, ...], mine: bool, raw: str) -> bool:
    """A "keep" about the proposed thing: as it is, the current one, a pronoun, or nothing named
    ("keep the pet bed", about another item, is not)."""
    if lx.has(toks, lx.AS_IS) and not mine:
        return True
    for a, b in lx.spans(toks, lx.KEEP):
        if _negated(toks, a) or (toks[a] == "deja" and "déjà" in raw.lower()):
            continue
        if lx.has(toks, lx.AS_IS):
            return True
        after = toks[b:]
        if not after or lx.has(after[:_PRONOUN_AFTER_KEEP], lx.KEEP_OBJECT) or lx.has(after, _CURRENT):
            return True
    return False


def _short_time(toks: tuple[str, ...]) -> bool:
    rest = _without(_without(toks, lx.TIME), lx.AFFIRM)
    return lx.has(toks, lx.TIME) and len(rest) <= 2


def _classify(
    clause: _Clause, proposed: Sequence[str], after_yes: bool, details: Sequence[Any], restating: bool = False
) -> str:
    if lx.has(clause.toks, lx.REFUSAL):
        return "negation"  # before "thanks" and the like are set aside: "no thanks" refuses
    toks = _without(clause.toks, lx.HARMLESS)
    if not toks:
        return "neutral"
    if _refuses(toks, proposed, clause.raw):
        return "negation"
    mine, others = _mine_and_others(toks, proposed)
    affirm = (
        lx.has(toks, lx.AFFIRM)
        or toks in lx.AFFIRM_ALONE
        or bool(_SI_ACCENT.search(clause.raw))
        or bool(_SI_YES.match(clause.raw))
    )
    request = clause.question and lx.has(toks, lx.REQUEST) and bool(mine or affirm) and not lx.has(toks, lx.MEANING)
    follow_up = clause.question and after_yes and not clause.contrast
    if lx.has(toks, lx.DEFER) and not (follow_up and not lx.has(toks, _WAIT)):
        return "deferral"
    if (clause.contrast or _short_time(toks)) and lx.has(toks, lx.TIME):
        return "deferral"
    if _conditional(toks, clause.raw) and not follow_up:
        return "condition"
    if lx.has(toks, lx.RESTRICT) and (others or not _restates(toks, details)):
        return "other_action"  # "just the return flight", "only the blue one"
    if lx.has(toks, lx.INSTEAD):
        # "HAT045 on May 20 instead of May 16" restates the proposal when the value before "instead"
        # is the proposal's; without the proposal at hand, a clause that says it restates does
        said_restating = restating or lx.has(toks, lx.RESTATE)
        if others or not (_restates_before_instead(toks, details) or (not details and said_restating)):
            return "other_action"
    if _keeps_this(toks, bool(mine), clause.raw):
        return "keep"
    if clause.question and not request:
        return "question"
    if clause.contrast and (others or lx.has(toks, lx.NEGATORS)):
        return "other_action"
    if clause.contrast and mine and not affirm and not _restates(toks, details):
        return "other_action"  # "yes, but book the evening flight": the same action, other terms
    if others and not mine and affirm:
        return "other_action"
    if affirm or mine or request:
        return "yes"
    return "neutral"


def _restates(toks: tuple[str, ...], details: Sequence[Any]) -> bool:
    return any(contains(toks, value_tokens(d)) for d in details if d not in (None, ""))


def _restates_before_instead(toks: tuple[str, ...], details: Sequence[Any]) -> bool:
    """Is a value of the proposal named before "instead (of)" (the new value, not the old one)?"""
    starts = [a for a, _ in lx.spans(toks, lx.INSTEAD)]
    if not starts:
        return False
    first = min(starts)
    return any(
        any(p < first for p in positions(toks, value_tokens(d)))
        for d in details
        if d not in (None, "") and value_tokens(d)
    )


_WAIT = lx.phrases("wait|hold on|not yet|attendez|espera|warten|aspetta|espere")
_CURRENT = lx.phrases("current|existing|actuel|actuelle|actual|aktuell*|bisherig*|attuale|atual")


def read_reply(reply: str, proposed: Sequence[str] = (), details: Sequence[Any] = ()) -> Reading:
    """(see `_read_reply`; memoized: a turn's writes and retries read the same reply)"""
    try:
        return _read_reply_cached(reply, tuple(proposed), tuple(details))
    except TypeError:  # an unhashable detail value
        return _read_reply(reply, proposed, details)


@lru_cache(maxsize=2048)
def _read_reply_cached(reply: str, proposed: tuple[str, ...], details: tuple[Any, ...]) -> Reading:
    return _read_reply(reply, proposed, details)


def _read_reply(reply: str, proposed: Sequence[str] = (), details: Sequence[Any] = ()) -> Reading:
    """Does the customer's reply accept a proposal of an action of the `proposed` families (whose
    values are `details`)?

    Clause by clause: any refusal, deferral, condition, keep or switch to another action anywhere
    makes it not a yes; a question before the first yes does too (a follow-up question after it
    does not)."""
    seen_yes = False
    restating = False
    for clause in _clauses(reply):
        if seen_yes and lx.starts_with(clause.toks, lx.NEW_TOPIC):
            break  # "Also, can you check…": what follows is a new request, not part of the answer
        kind = _classify(clause, proposed, seen_yes, details, restating)
        restating = restating or lx.has(clause.toks, lx.RESTATE)
        if kind in ("negation", "deferral", "condition", "keep", "other_action"):
            return Reading(False, kind, clause.raw)
        if kind == "question" and (not seen_yes or clause.contrast):
            return Reading(False, "question", clause.raw)
        if kind == "yes":
            seen_yes = True
    if seen_yes:
        return Reading(True, "yes")
    return Reading(False, "unclear", reply.strip()[:80])


# ----------------------------------------------------------------------------- the agent's proposal


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


_FILLERS = {"now", "just", "already", "also", "been", "successfully", "fully", "all", "ete", "sido", "stato", "gia", "ja", "bereits", "erfolgreich", "deja", "ya"}


_SHORT_AUX = {"ha", "he", "ho", "ai", "han", "hemos", "avons", "ont", "hat", "ist"}
_PARTICIPLE = ("ed", "e", "ee", "es", "ees", "ado", "ido", "ato", "ito", "ata", "ita", "t", "en", "u", "is")


def _report(toks: tuple[str, ...], start: int) -> bool:
    """Is the verb at `start` part of a report of something done ("has been cancelled", "I
    cancelled")?"""
    if toks[start].endswith("ed") and start > 0 and toks[start - 1] in ("i", "we"):
        return True
    if start > 0 and toks[start - 1] in _SHORT_AUX:
        return toks[start].endswith(_PARTICIPLE)
    i = start - 1
    while i >= 0 and toks[i] in _FILLERS and start - i <= 3:
        if lx.at(toks, i, lx.REPORT_AUX):
            return True
        i -= 1
    return i >= 0 and any(lx.match_at(toks, i - len(p) + 1, p) for p in lx.REPORT_AUX if i - len(p) + 1 >= 0)


def _word(tok: str) -> bool:
    """A word, not an identifier: no underscore, not letters glued to digits ("address1")."""
    return "_" not in tok and not (any(c.isdigit() for c in tok) and any(c.isalpha() for c in tok))


def _live(toks: tuple[str, ...], families: Iterable[str]) -> list[int]:
    """Positions of verbs of these families that propose (not negated, not a report; a tool's
    snake_case name is not a word: "I will run cancel_pending_order" proposes nothing)."""
    out = []
    for name in families:
        for a, _ in lx.spans(toks, lx.ACTIONS[name]):
            if _word(toks[a]) and not _negated(toks, a) and not _report(toks, a):
                out.append(a)
    return sorted(out)


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
    mine = _live(all_toks, terms.families)
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
        rivals = _live(all_toks, rival_families)
        rivals += [a for a, b in lx.spans(all_toks, lx.KEEP) if not _negated(all_toks, a) and _keeps_record(all_toks, b, rec, nouns, year)]
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

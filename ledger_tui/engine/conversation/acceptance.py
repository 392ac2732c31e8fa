"""The customer's reply to a proposal, read clause by clause: is it a yes to this write?

The second half of confirmation (`consent.py` holds the first, the agent's proposal): the
customer's latest message accepts a proposal when it says an explicit yes at clause level, in
English, French, Spanish, German, Italian or Portuguese; negations, deferrals, conditions, questions
before the yes, a yes to keeping it or to another action are not a yes. Deterministic, no model
call; `read_reply` is memoized because a turn's writes and retries read the same reply.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable, Sequence

from ledger_tui.engine.conversation import lexicon as lx
from ledger_tui.engine.conversation.text import contains, positions, sentences, tokens, value_tokens
from ledger_tui.engine.conversation.verbs import STRONG, live_positions, negated


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
    if any(negated(toks, a, reach=2) for a in governed):
        return True
    # "I don't want to cancel it" refuses; "I don't want to pay for nothing" gives a reason
    for a, b in lx.spans(toks, lx.WANT):
        if not negated(toks, a, reach=2):
            continue
        after = toks[b : b + 4]
        if len(after) <= 1 or _live_families(after, STRONG + tuple(proposed)) or lx.has(after[:2], lx.KEEP_OBJECT):
            return True
    return False


def _live_families(toks: tuple[str, ...], names: Iterable[str]) -> set[str]:
    """Families named by a verb that is not negated and not part of a report ("I had booked it")."""
    return {name for name in names if live_positions(toks, name)}


def _mine_and_others(toks: tuple[str, ...], proposed: Sequence[str]) -> tuple[set[str], set[str]]:
    """Families of the proposal named by a live verb, and other strong families named by a verb the
    proposal's families do not also cover ("changez" is a change, not a second action)."""
    live = {name: live_positions(toks, name) for name in set(STRONG) | set(proposed)}
    covered = {a for name in proposed for a in live[name]}
    mine = {name for name in proposed if live[name]}
    others = {name for name in STRONG if name not in proposed and set(live[name]) - covered}
    return mine, others


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
        if negated(toks, a) or (toks[a] == "deja" and "déjà" in raw.lower()):
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

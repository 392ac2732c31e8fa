"""Live verbs: whether a word in a message names an action someone means to take now.

Both halves of confirmation ask it: a proposal (`consent.py`) must name the write with a live verb,
and a reply (`acceptance.py`) that names another action with one is a yes to something else. A verb
is live when it is a word (not a tool's snake_case name), not governed by a negation ("don't
cancel") and not part of a report of something done ("has been cancelled", "I cancelled").
"""

from __future__ import annotations

from typing import Iterable

from ledger_tui.engine.conversation import lexicon as lx

# Verb families a reply can switch to: a yes that names only one of these, and none of the proposed
# write's, is a yes to another action.
STRONG = ("cancel", "change", "book", "return", "exchange", "resume", "suspend", "reschedule", "transfer", "roaming_on", "roaming_off")


def negated(toks: tuple[str, ...], span_start: int, reach: int = 3) -> bool:
    """Is the word at `span_start` governed by a negation in the `reach` words before it?"""
    lo = max(0, span_start - reach)
    return any(
        lx.at(toks, i, lx.NEGATORS) and not _preposition(toks, i) for i in range(lo, span_start)
    )


def _preposition(toks: tuple[str, ...], i: int) -> bool:
    """Portuguese "no"/"na" (in the): "no cartão final 8902", "no fim"."""
    return toks[i] in ("no", "na") and i + 1 < len(toks) and toks[i + 1] in lx.PT_AFTER_NO


def live_positions(toks: tuple[str, ...], name: str) -> list[int]:
    """Positions of live verbs of the family `name`, record nouns aside ("the return" is a thing)."""
    return [
        a
        for a, _ in lx.spans(toks, lx.ACTIONS[name])
        if toks[a] not in lx.RECORD_NOUNS and is_word(toks[a]) and not negated(toks, a) and not reported(toks, a)
    ]


_FILLERS = {"now", "just", "already", "also", "been", "successfully", "fully", "all", "ete", "sido", "stato", "gia", "ja", "bereits", "erfolgreich", "deja", "ya"}
_SHORT_AUX = {"ha", "he", "ho", "ai", "han", "hemos", "avons", "ont", "hat", "ist"}
_PARTICIPLE = ("ed", "e", "ee", "es", "ees", "ado", "ido", "ato", "ito", "ata", "ita", "t", "en", "u", "is")


def reported(toks: tuple[str, ...], start: int) -> bool:
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


def is_word(tok: str) -> bool:
    """A word, not an identifier: no underscore, not letters glued to digits ("address1")."""
    return "_" not in tok and not (any(c.isdigit() for c in tok) and any(c.isalpha() for c in tok))


def live_verbs(toks: tuple[str, ...], families: Iterable[str]) -> list[int]:
    """Positions of verbs of these families that propose (not negated, not a report; a tool's
    snake_case name is not a word: "I will run cancel_pending_order" proposes nothing)."""
    out = []
    for name in families:
        for a, _ in lx.spans(toks, lx.ACTIONS[name]):
            if is_word(toks[a]) and not negated(toks, a) and not reported(toks, a):
                out.append(a)
    return sorted(out)

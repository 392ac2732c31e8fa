"""What the customer *says*, as the gate may use it: stated facts with their words and their record.

No read returns a cancellation reason, a request for compensation or being abroad; the customer
says them. A `Statement` finds them in a customer message, clause by clause:

- a cue under a negation is void ("this has nothing to do with my health" states no health reason;
  "I didn't order it by mistake" states no mistake), unless the statement declares what a negated
  cue means ("I'm not abroad" states abroad = no; "no bags" states bags = no);
- a negation that *is* the cue is the statement ("I no longer need it", "still not working");
- a fact belongs to the record named next to it: "cancel ZFA04Y because I'm sick, and H8Q05L
  because my plans changed" states health for ZFA04Y and a change of plan for H8Q05L;
- every fact keeps the words it came from (`StatedFact.quote`), shown by the Why screen.

The engine records a fact under `said.<key>` (no record named) or `said.<key>.<record>`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping

from ledger_tui.engine.conversation import lexicon as lx
from ledger_tui.engine.conversation.text import sentences, tokens

# Phrases that void a cue after them in the clause without a plain negator ("nothing to do with").
_DENIALS = lx.phrases(
    "nothing to do with|not about|not because|not due to|has nothing to do|rather than|instead of|"
    "n a rien a voir|rien a voir|pas a cause|no tiene nada que ver|nada que ver|no es por|"
    "hat nichts mit|nichts zu tun|nicht wegen|non c entra|niente a che fare|non e per|"
    "nao tem nada a ver|nada a ver|nao e por"
)
_NEGATORS = lx.NEGATORS + lx.phrases("without|sans|sin|ohne|senza|sem")
_REACH = 6


@dataclass(frozen=True)
class StatedFact:
    key: str
    value: Any
    quote: str
    record: str | None = None

    @property
    def path(self) -> str:
        return f"said.{self.key}" + (f".{self.record}" if self.record else "")


@dataclass(frozen=True)
class Statement:
    """A fact the customer can *say* that no read returns (a reason, a request, being abroad).

    `facts(message)` returns what the message states; the engine records each under `said.*` with
    origin "stated", so the gate sees it but never confuses it with observed evidence."""

    key: str
    description: str
    facts: Callable[[str], list[StatedFact]]
    # how a customer says each value ("health": "I'm sick."), for the gold customer and for hints
    examples: Mapping[str, str] = field(default_factory=dict)
    # the value to assume of a customer who has not said: the one that unlocks nothing
    neutral: str | None = None

    def extract(self, message: str) -> Any:
        """The value stated without a record, or of the first fact (for quick checks)."""
        found = self.facts(message)
        general = [f for f in found if f.record is None]
        return (general or found)[0].value if found else None


_FILLERS = frozenset(
    "be am is are was were being need needs want wants have has any anymore more longer yet still currently "
    "actually really even checking check bring bringing carry carrying travel travelling traveling going to "
    "the a an my our in at out of".split()
)


def _negated(
    toks: tuple[str, ...],
    start: int,
    cue_spans: list[tuple[int, int]],
    part: list[int],
    reach: int = _REACH,
    close: bool = False,
) -> bool:
    """A negator in the words before the cue, within its part of the sentence ("I don't want to
    see a psychiatrist"; not "this has nothing to do with my health, my plans changed")."""
    inside = {i for a, b in cue_spans for i in range(a, b)}
    lo = start
    while lo > 0 and part[lo - 1] == part[start]:
        lo -= 1
    for i in range(max(lo, start - reach), start):
        if i in inside:
            continue
        if lx.at(toks, i, _NEGATORS):
            if close and not all(t in _FILLERS for t in toks[i + 1 : start]):
                continue  # the negation is about another verb ("data doesn't work here in Portugal")
            return True
    return bool(lx.spans(toks[lo:start], _DENIALS))


# (the spaces around a comma are left on the pieces, which are tokenized: a pattern that takes them
# would scan a run of spaces once from each of its positions)
_PUNCT = re.compile(r"[,;:—–()]|(?<=\s)-(?=\s)")


def _parts(sentence: str) -> tuple[tuple[str, ...], list[int]]:
    """The sentence's tokens, and which part each is in: parts end at commas, semicolons, dashes
    and at "and", "but" (a negation or a reason does not reach over them)."""
    toks: list[str] = []
    part: list[int] = []
    n = 0
    for piece in _PUNCT.split(sentence):
        for tok in tokens(piece):
            if tok in _BREAKS:
                n += 1
            toks.append(tok)
            part.append(n)
        n += 1
    return tuple(toks), part


@lru_cache(maxsize=64)
def _sentences(message: str) -> tuple[tuple[str, tuple[str, ...], list[int]], ...]:
    """Each sentence of a message with its tokens and parts, once for every statement that reads
    it (a domain has several: each parsing again a message of thousands of sentences missed the
    token cache and took seconds)."""
    return tuple((sentence, *_parts(sentence)) for sentence in sentences(message))


def keyword_statement(
    key: str,
    description: str,
    table: Mapping[str, Iterable[str]],
    *,
    negated: str | None = None,
    records: str | None = None,
    examples: Mapping[str, str] | None = None,
    after: Iterable[str] | None = None,
    neutral: str | None = None,
    complaint: bool = False,
) -> Statement:
    """A statement whose value is the label of `table` whose phrase the message says.

    Phrases are matched as whole words in normalized text (see `lexicon.phrases`), longest first;
    labels earlier in `table` win when one clause says several. A cue under a negation is void,
    or states `negated` if given. `records` is a regex for record ids the customer may name, to
    bind each fact to the record named nearest to it in its sentence. With `after`, a cue counts
    only after one of those phrases (a request: "I need a …", "book me with a …"). A `complaint`
    is stated with a negation as often as without ("I can't send picture messages"): negations
    do not void it."""
    labels = list(table)
    compiled = {label: lx.phrases("|".join(words)) for label, words in table.items()}
    record_rx = re.compile(records) if records else None
    lead = lx.phrases("|".join(after)) if after else None

    def facts(message: str) -> list[StatedFact]:
        out: list[StatedFact] = []
        for sentence, toks, part in _sentences(message):
            spans = sorted(
                ((a, b, label) for label in labels for a, b in lx.spans(toks, compiled[label])),
                key=lambda s: (s[0], -(s[1] - s[0])),
            )
            cues: list[tuple[int, Any]] = []
            taken: set[int] = set()
            for a, b, label in spans:
                if taken & set(range(a, b)):
                    continue
                taken.update(range(a, b))
                if lead is not None and not lx.spans(toks[max(0, a - _REACH) : a], lead):
                    continue  # said of something else ("my psychiatrist visit is fine"), not asked for
                value: Any = label
                # a negation voids a cue within its clause ("I don't want to see a psychiatrist");
                # one that flips its value must be about it ("I'm not abroad", "I don't need any
                # bags"), not about another verb ("data doesn't work here in Portugal")
                if not complaint and _negated(toks, a, [(x, y) for x, y, _ in spans], part, close=negated is not None):
                    if negated is None:
                        continue
                    value = negated
                cues.append((a, value))
            if not cues:
                continue
            mentions = _mentions(sentence, toks, record_rx)
            if not mentions:
                best = min(cues, key=lambda c: labels.index(c[1]) if c[1] in labels else len(labels))
                out.append(StatedFact(key, best[1], sentence.strip()))
                continue
            for record, pos in mentions:
                # the cue in the record's own part of the sentence ("ZFA04Y because I'm sick, and
                # H8Q05L because my plans changed"), else the nearest one
                same = [c for c in cues if part[c[0]] == part[pos]]
                _, value = min(same or cues, key=lambda c: abs(c[0] - pos))
                out.append(StatedFact(key, value, sentence.strip(), record))
        return _one_per_path(out, labels)

    return Statement(key, description, facts, dict(examples or {}), neutral)


_BREAKS = {"and", "but", "while", "whereas", "et", "mais", "y", "pero", "und", "aber", "e", "ma", "mas"}


def _mentions(sentence: str, toks: tuple[str, ...], rx: re.Pattern[str] | None) -> list[tuple[str, int]]:
    if rx is None:
        return []
    found = []
    for m in rx.finditer(sentence):
        record = m.group(0)
        needle = tokens(record)
        for i in range(len(toks) - len(needle) + 1):
            if toks[i : i + len(needle)] == needle:
                found.append((record, i))
                break
    return found


def _one_per_path(found: list[StatedFact], labels: list[str]) -> list[StatedFact]:
    """When a message states a key twice for the same record, the stronger label wins (its
    table order), so "I'm sick and my plans changed" keeps the health reason."""
    best: dict[str, StatedFact] = {}
    rank = {label: i for i, label in enumerate(labels)}
    for fact in found:
        kept = best.get(fact.path)
        if kept is None or rank.get(fact.value, len(labels)) < rank.get(kept.value, len(labels)):
            best[fact.path] = fact
    return list(best.values())

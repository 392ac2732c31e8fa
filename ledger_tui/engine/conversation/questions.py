"""What only the customer can say, asked in closed form: the question card.

Some checks need a fact no read returns and no call argument carries: why the customer cancels a
reservation (an insured one is refundable for health or weather only), whether they are abroad
(roaming is turned on only for a customer who is). In consent mode "card" these facts are not
read from the conversation: a check that needs one and has no answer holds the call, and the
system (not the model) asks the customer one closed question about that record, rendered from the
domain's `Question`: the record, and numbered choices taken from the policy ("other / not sure"
among them).

The reply is read by `read_answer`: it counts when it names exactly one choice, by its number
(alone in its clause: "3", "option 3", "the third") or by a phrase the domain declares for it
("I'm sick", "my plans changed"), and nothing in it contradicts or hedges: a question, a
condition or a hypothesis ("if I got sick"), a doubt ("maybe", "I guess", "or"), two choices, a
choice under a negation ("it's not about my health"), said of another time ("I was abroad last
month", "I fly out tomorrow") or of another person who is not travelling ("my grandmother is
sick"). Anything else is unclear: the question is asked once more, then the model is told.

An answer becomes an observed ledger fact, `answers.<key>.<record>`, with the customer's words;
the checks read it there (`GateContext.answered`). Nothing the agent says and nothing inferred
from earlier free text sets it. In consent mode "text" and in transcripts the system did not
conduct, the free-text reader (`stated.py`) stays, its findings labelled inferred.

This module declares and reads questions; the session (`session_calls.py`) holds, asks and re-gates.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable

from ledger_tui.engine.conversation import lexicon as lx
from ledger_tui.engine.events import QuestionAnswered, QuestionChoice, QuestionRequested, ToolCall
from ledger_tui.engine.conversation.text import tokens

ANSWERS_PREFIX = "answers."
AWAITING = "Not run yet: the system asked the customer a question this call depends on; their answer decides."
MAX_CHARS = 600
ASKS = 2  # a question is asked at most this many times in a row; then the model is told


def answer_path(key: str, record: str) -> str:
    """Where the answer to question `key` about `record` is kept in the ledger."""
    return f"{ANSWERS_PREFIX}{key}.{record}"


def path_parts(path: str) -> tuple[str, str]:
    """(key, record) of an `answer_path`."""
    key, _, record = path[len(ANSWERS_PREFIX) :].partition(".")
    return key, record


@dataclass(frozen=True)
class Choice:
    value: str  # what the checks compare: "health"
    label: str  # what the customer reads: "Health: you, or someone travelling on it, are ill or injured"
    words: tuple[str, ...] = ()  # the phrases that name it ("sick", "plans changed"); see `lexicon.phrases`


@dataclass(frozen=True)
class Question:
    """A closed question about one record, declared by a domain next to the checks that need it."""

    key: str  # "cancel_reason": the fact's name; its answer is at `answers.<key>.<record>`
    record: str  # the call argument that names the record ("reservation_id", "line_id")
    ask: str  # "Why do you want to cancel reservation {record}?"
    choices: tuple[Choice, ...]
    tools: tuple[str, ...] = ()  # the writes whose checks may ask it (documentation, the linter)
    _tables: dict[str, tuple[lx.Phrase, ...]] = field(default_factory=dict, compare=False, repr=False)

    def choice(self, value: str) -> Choice | None:
        return next((c for c in self.choices if c.value == value), None)

    def text(self, record: str, again: str | None = None) -> str:
        """The question as the customer reads it; `again`: why it is asked once more."""
        lead = [f"I could not read your answer as one of the choices ({again}). Once more, please:"] if again else []
        body = [f"{n}. {c.label}" for n, c in enumerate(self.choices, 1)]
        return "\n".join([*lead, self.ask.format(record=record), *body, "Reply with the number of one choice."])

    def table(self, value: str) -> tuple[lx.Phrase, ...]:
        found = self._tables.get(value)
        if found is None:
            choice = self.choice(value)
            found = self._tables[value] = lx.phrases("|".join(choice.words)) if choice and choice.words else ()
        return found


@dataclass(frozen=True)
class AnswerReading:
    value: str | None  # the choice's value; None: unclear
    reason: str  # "choice 3 (Health)"; "a question"; "two choices: health and weather"
    choice: int | None = None  # its number, 1-based


# ----------------------------------------------------------------------------- the reader's words

_NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "1st": 1, "2nd": 2, "3rd": 3,
    "4th": 4, "5th": 5, "6th": 6, "un": 1, "une": 1, "deux": 2, "trois": 3, "quatre": 4, "cinq": 5,
    "uno": 1, "una": 1, "dos": 2, "tres": 3, "cuatro": 4, "cinco": 5, "eins": 1, "zwei": 2, "drei": 3,
    "vier": 4, "funf": 5, "due": 2, "tre": 3, "quattro": 4, "um": 1, "dois": 2, "quatro": 4,
}  # fmt: skip
# Words that may stand next to a choice's number in its clause ("option 3, please").
_AROUND_NUMBER = frozenset(
    "option options choice number no nr num answer the a it its is s i pick choose take go with say now "
    "please thanks thank you ok okay yes one sure definitely that this opcion opcao numero nummer "
    "la le el il o die der das".split()
)
_SPLIT = re.compile(r"[,;:.!()\[\]/]+|\s[-–—]+\s|\n")
_JOINS = frozenset("but and so because as since though although however while then also plus except".split())
# Hedges and conditions: the reply is no answer to a closed question ("maybe 3", "if I got sick").
_HEDGES = lx.phrases(
    "if|what if|only if|as long as|unless|suppose|supposing|assuming|in case|maybe|perhaps|might|guess|"
    "i guess|probably|possibly|wait|whatever|you said|or|either|not sure if|"
    "peut etre|quizas|quiza|tal vez|vielleicht|forse|talvez|ou bien|o bien|oder|oppure"
)
# Another time than now: a choice said of it does not count ("I was abroad last month").
_OTHER_TIME = lx.phrases(
    "last week|last month|last year|last time|ago|used to|in the past|previously|back then|will|will be|"
    "going to|gonna|next week|next month|next year|tomorrow|later|soon|not yet|plan to|planning to|"
    "about to|from monday|from tuesday|from wednesday|from thursday|from friday|from saturday|from sunday|"
    "before then|in a few days|in two weeks|demain|la semaine prochaine|manana|la semana que viene|"
    "morgen|nachste woche|domani|amanha"
)
# Another person as the subject of a choice ("my grandmother is sick"): it counts only when the
# reply says that person travels with the customer.
_PEOPLE = (
    "wife|husband|partner|spouse|son|daughter|kid|kids|child|children|baby|mother|mom|mum|father|dad|"
    "parent|parents|grandmother|grandma|grandfather|grandpa|granny|brother|sister|friend|boss|colleague|"
    "coworker|neighbour|neighbor|neighbours|neighbors|dog|cat|pet|aunt|uncle|cousin|girlfriend|"
    "boyfriend|fiance|fiancee|family|niece|nephew|roommate|manager"
)
_OTHER_PERSON = lx.phrases(
    "he|she|they|him|them|his|their|someone|somebody|",
    "|".join(f"{p} {n}" for p in ("my", "our", "her", "his", "their", "a") for n in _PEOPLE.split("|")),
)
_COMPANION = lx.phrases(
    "travel with me|travelling with me|traveling with me|travels with me|flying with me|flies with me|"
    "fly with me|coming with me|comes with me|going with me|on the booking|on this booking|on the reservation|"
    "on this reservation|on the trip|on this trip|a passenger|passenger on|passengers|with me on"
)
_NEGATORS = lx.NEGATORS + lx.phrases("nothing|none|neither|nor|without|sans|sin|ohne|senza|sem")


@dataclass(frozen=True)
class _Clause:
    toks: tuple[str, ...]
    choices: tuple[tuple[str, int], ...]  # (value, position) of each choice named
    numbers: tuple[int, ...]  # choice numbers standing alone in the clause
    covered: frozenset[int] = frozenset()  # the positions of the choices' phrases

    def hedged(self) -> bool:
        """A hedge or a condition outside the choices' own words ("maybe 3"; not "I'd rather not say")."""
        return any(not (self.covered & set(range(a, b))) for a, b in lx.spans(self.toks, _HEDGES))


def _clauses(reply: str) -> list[tuple[str, ...]]:
    out: list[tuple[str, ...]] = []
    for piece in _SPLIT.split(reply):
        current: list[str] = []
        for tok in tokens(piece):
            if tok in _JOINS:
                if current:
                    out.append(tuple(current))
                current = []
                continue
            current.append(tok)
        if current:
            out.append(tuple(current))
    return out


def _number(tok: str) -> int | None:
    if tok.isdigit():
        return int(tok)
    return _NUMBER_WORDS.get(tok)


def _read_clause(toks: tuple[str, ...], question: Question) -> _Clause:
    named: list[tuple[int, int, str]] = []  # (start, end, value)
    for choice in question.choices:
        for a, b in lx.spans(toks, question.table(choice.value)):
            named.append((a, b, choice.value))
    kept: list[tuple[int, int, str]] = []
    taken: set[int] = set()
    for a, b, value in sorted(named, key=lambda m: -(m[1] - m[0])):  # the longest phrase first
        if taken & set(range(a, b)):
            continue
        taken.update(range(a, b))
        kept.append((a, b, value))
    kept.sort()
    covered = {i for a, b, _ in kept for i in range(a, b)}
    loose = [t for i, t in enumerate(toks) if i not in covered]
    numbers: tuple[int, ...] = ()
    nums = [_number(t) for t in loose]
    if any(n is not None for n in nums) and all(n is not None or t in _AROUND_NUMBER for n, t in zip(nums, loose)):
        found = {n for n, t in zip(nums, loose) if n is not None and t != "one"}
        numbers = tuple(sorted(found or {1}))  # "the third one" is 3; "one" alone is 1
    return _Clause(toks, tuple((v, a) for a, _, v in kept), numbers, frozenset(covered))


def _void(clause: _Clause, value: str, pos: int, companion: bool) -> str | None:
    """Why a choice named in this clause does not count, or None."""
    before = clause.toks[:pos]
    if lx.has(before, _NEGATORS):
        return "said under a negation"
    if lx.spans(clause.toks, _OTHER_TIME):
        return "said of another time"
    if not companion and lx.spans(before, _OTHER_PERSON):
        return "said of someone else"
    return None


def read_answer(reply: str, question: Question) -> AnswerReading:
    """The one choice a reply names, or None with the reason (see the module's docstring)."""
    text = (reply or "").strip()
    if not text:
        return AnswerReading(None, "an empty reply")
    if len(text) > MAX_CHARS:
        return AnswerReading(None, "a long reply, not one of the choices")
    if "?" in text or "¿" in text:
        return AnswerReading(None, "a question")
    clauses = [_read_clause(c, question) for c in _clauses(text)]
    if any(c.hedged() for c in clauses):
        return AnswerReading(None, "a condition or a doubt, not one choice")
    companion = any(lx.spans(c.toks, _COMPANION) and not lx.has(c.toks, _NEGATORS) for c in clauses)
    values = [c.value for c in question.choices]
    named: dict[str, None] = {}
    voided: list[str] = []
    for clause in clauses:
        for n in clause.numbers:
            if not 1 <= n <= len(values):
                return AnswerReading(None, f"no choice {n}")
            named[values[n - 1]] = None
        for value, pos in clause.choices:
            why = _void(clause, value, pos, companion)
            if why is None:
                named[value] = None
            else:
                voided.append(why)
    for i, clause in enumerate(clauses):  # "I'm abroad, but not with this line"
        if not clause.choices and not clause.numbers and i > 0 and lx.at(clause.toks, 0, _NEGATORS):
            return AnswerReading(None, "a choice with a negation after it")
    if len(named) > 1:
        return AnswerReading(None, "more than one choice: " + " and ".join(named))
    if not named:
        return AnswerReading(None, voided[0] if voided else "names none of the choices")
    value = next(iter(named))
    number = values.index(value) + 1
    return AnswerReading(value, f"choice {number} ({question.choices[number - 1].label})", number)


def said_as(*groups: str) -> tuple[str, ...]:
    """A choice's phrases from `|`-separated groups (as `lexicon.phrases` takes them)."""
    return tuple(p.strip() for g in groups for p in g.split("|") if p.strip())


def needed(questions: Iterable[Question], key: str) -> Question | None:
    return next((q for q in questions if q.key == key), None)


def request(question: Question, record: str, calls: list[ToolCall], number: int, attempt: int = 1, again: str | None = None) -> QuestionRequested:
    """`question_<number>`: the declared `question` about `record`, which `calls` wait on."""
    return QuestionRequested(
        question=f"question_{number}", key=question.key, record=record, calls=calls,
        choices=[QuestionChoice(value=c.value, label=c.label) for c in question.choices],
        text=question.text(record, again), attempt=attempt,
    )


def reading(declared: Iterable[Question], asked: QuestionRequested, domain: str, reply: str) -> AnswerReading:
    """The customer's `reply` to `asked`, read by the closed reader (unclear when the domain no
    longer declares the question)."""
    question = needed(declared, asked.key)
    if question is None:
        return AnswerReading(None, f"domain {domain} no longer declares this question")
    return read_answer(reply, question)


def answer_fact(asked: QuestionRequested, answered: QuestionAnswered) -> tuple[str, dict[str, object]] | None:
    """An answer as the observed fact the checks read: `answers.<key>.<record>` = the choice,
    its number and label, the customer's words; None when it was unclear."""
    if answered.value is None:
        return None
    label = next((c.label for c in asked.choices if c.value == answered.value), answered.value)
    value = {"value": answered.value, "choice": answered.choice, "label": label, "quote": answered.quote}
    return answer_path(asked.key, asked.record), value

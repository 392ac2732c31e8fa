"""Plain-text explanations of gate decisions, from the recorded evidence alone.

Used by `ledger-tui why`; the TUI's Why screen, gate log and conversation show the same facts in
widgets and take their wording from here (`verdict_label`, `verdict_tag`, `check_label`, `stated_where`), so a
stop reads the same everywhere. Nothing is re-run: a decision is explained by what the gate
recorded when it decided.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Callable, Iterable

from ledger_tui.engine.events import (
    CATEGORY_LABELS,
    AssistantMessage,
    Category,
    SessionStarted,
    ToolResult,
    ConfirmationAnswered,
    ConfirmationRequested,
    QuestionAnswered,
    QuestionRequested,
    EvidenceRead,
    Event,
    GateDecided,
    GateDecision,
    PredicateResult,
    Verdict,
    json_text,
    asked_of,
)
from ledger_tui.engine.policy_text import clause_text

READ_MARK = "needs a read"


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 write`, `2 writes`."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


# `json.dumps(value, ensure_ascii=False, ...)`'s encoders, made once: `json.dumps` with any option
# makes a new encoder on every call (a long file's explanations quote 26,000 values); quotes are
# shown as calls' arguments are (`json_text`)
_short_text = json.JSONEncoder(ensure_ascii=False, default=str, sort_keys=True).encode


def _one_shot(encode: Callable[[Any], str]) -> Callable[[Any], str]:
    """`encode` (a `JSONEncoder`'s, with these options) for a list or dict, from C made once:
    `JSONEncoder.encode` makes its C encoder again on each call, half the time of quoting a
    record; and for a string, its own encoder's. The same text (the values quoted come from JSON:
    none contains itself, so nothing needs the check for a circular value). `encode` itself where
    Python has no C encoder."""
    make = getattr(json.encoder, "c_make_encoder", None)
    if make is None:
        return encode
    string = json.encoder.encode_basestring
    containers = make(None, str, string, None, ": ", ", ", True, False, True)
    return lambda value: (
        string(value) if type(value) is str else "".join(containers(value, 0)) if isinstance(value, (list, dict)) else encode(value)
    )


_short_text = _one_shot(_short_text)


def short(value: Any, limit: int = 160) -> str:
    text = _short_text(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def category_label(d: GateDecision, category: Category | None = None) -> str:
    """`allowed`, `violation`, `disclosure` (a read withheld), `inferred from text`, `asks the
    customer` (held for a card) or `needs a read` (`category`: the decision's, if known)."""
    return CATEGORY_LABELS[category or d.category()]


def verdict_label(d: GateDecision, sep: str = " · ", category: Category | None = None) -> str:
    """`ALLOW`; a stop says what kind it is: `REVISE · needs a read`, `BLOCK · violation`
    (`category`: the decision's, if the caller has it: it is asked once)."""
    if d.verdict == Verdict.ALLOW:
        return d.verdict.value
    category = category or d.category()
    return f"{d.shown_verdict(category)}{sep}{category_label(d, category)}"


def verdict_tag(d: GateDecision) -> str:
    """The verdict as a narrow row shows it: `REVISE · read` for a stop that only needs a read,
    `REVISE · ask` for a call held while the customer answers a question, `REVISE · card` while they
    answer a card, `REVISE · text` for a stop the free-text reader decided, the bare verdict
    otherwise (a stop without the tag is a violation)."""
    category = d.category()
    if category == "disclosure":
        return d.shown_verdict()
    if category == "needs_read":
        return f"{d.verdict.value} · read"
    if category == "inferred":
        return f"{d.verdict.value} · text"
    if d.held():
        return f"{d.verdict.value} · {'ask' if any(p.asks_question() for p in d.failed()) else 'card'}"
    return d.verdict.value


def check_label(p: PredicateResult, arrow: str = "→") -> str:
    """`pass`, `FAIL→BLOCK`, or `FAIL→REVISE · needs a read` for a check that only lacks evidence."""
    if p.passed:
        return "pass"
    mark = f"FAIL{arrow}{'WITHHELD' if p.withheld else p.verdict_on_fail.value}"
    if p.inferred:
        return f"{mark} · inferred from text"
    return f"{mark} · {READ_MARK}" if p.needs_a_read() else mark


def stated_where(r: EvidenceRead) -> str:
    """Where a stated fact came from: the customer's message (its step) and their words."""
    where = "stated by the customer" + (f" at step {r.source_seq}" if r.source_seq is not None else "")
    return f"{where}: {json_text(r.quote)}" if r.quote else where


def category_counts(kinds: Iterable[str]) -> str:
    """`1 violation, 2 needs a read`: these kinds of stop (`GateDecision.category`), counted."""
    counts = Counter(kinds)
    return ", ".join(f"{counts[c]} {CATEGORY_LABELS[c]}" for c in ("violation", "disclosure", "inferred", "needs_read", "consent") if counts[c])


def explain_decision(
    event: GateDecided, policy: str | None = None, only_failed: bool = False, category: Category | None = None
) -> list[str]:
    """`why`'s lines for one decision (`category`: the decision's, if the caller has it)."""
    d = event.decision
    lines = [
        f"step {event.seq}: {d.call.signature()}  [{d.call.requestor}]",
        f"  verdict: {verdict_label(d, category=category)} — {d.reason}",
    ]
    if d.hint:
        lines.append(f"  hint: {d.hint}")
    for s in d.suggested_calls:
        lines.append(f"  suggested read: {s.signature()}")
    lines.append("  predicates:")
    for p in d.predicates:
        if only_failed and p.passed:
            continue
        lines.append(f"    [{check_label(p)}] {p.name}  (clause {p.clause})")
        if not p.passed and p.reason:
            lines.append(f"        reason: {p.reason}")
        for r in p.reads:
            if r.origin == "context":
                lines.append(f"        context {r.path[len('context.'):]} = {short(r.value, 100)}")
                continue
            if not r.present:
                lines.append(f"        read {r.path}: not in the ledger")
                continue
            if r.origin == "stated":
                where = stated_where(r)
            else:
                where = f"read at step {r.source_seq}" if r.source_seq is not None else "read"
                if r.source_call:
                    where += f" by {r.source_call}"
            stale = " (STALE)" if r.stale else ""
            if r.fields and isinstance(r.value, dict):  # the fields the check used, each in full
                lines.append(f"        {r.path}{stale}, {where}:")
                lines.extend(
                    f"            {name} = {short(r.value[name], 120) if name in r.value else '(not in the record)'}"
                    for name in r.fields
                )
                continue
            lines.append(f"        {r.path}{stale} = {short(r.value)}")
            lines.append(f"            {where}")
        if policy and not p.passed:
            text = clause_text(policy, p.clause)
            if text:
                lines.append(f"        policy: {text}")
    return lines


def card_of(events: Iterable[Event], call_id: str) -> tuple[ConfirmationRequested, ConfirmationAnswered | None] | None:
    """The confirmation card a call is on (held for it) or was run from (on its yes), and the
    customer's answer to it, if they gave one."""
    return asked_of(events, call_id, ConfirmationRequested, ConfirmationAnswered, "card")


def card_lines(card: ConfirmationRequested, answer: ConfirmationAnswered | None, indent: str = "  ") -> list[str]:
    """A card and its answer as `why` prints them."""
    lines = [f"{indent}confirmation card {card.card} (shown at step {card.seq}), as the customer saw it:"]
    lines.extend(f"{indent}  | {line}" for line in card.text.splitlines())
    if answer is None:
        lines.append(f"{indent}not answered yet")
    else:
        ran = f"; ran as {', '.join(answer.runs)}" if answer.runs else "; nothing on it ran"
        lines.append(f"{indent}answered at step {answer.seq}: {answer.answer} ({answer.reason}){ran}")
        lines.append(f"{indent}  the customer's words: {json_text(answer.quote)}")
    return lines


def question_of(events: Iterable[Event], call_id: str) -> tuple[QuestionRequested, QuestionAnswered | None] | None:
    """The closed question a call waits on (held for it; the last time it was asked) or was gated
    again after (on its answer), and the customer's answer to it, if they gave one."""
    return asked_of(events, call_id, QuestionRequested, QuestionAnswered, "question")


def question_lines(question: QuestionRequested, answer: QuestionAnswered | None, indent: str = "  ") -> list[str]:
    """A question and its answer as `why` prints them."""
    again = f", the {'second' if question.attempt == 2 else str(question.attempt) + 'th'} time" if question.attempt > 1 else ""
    lines = [f"{indent}question {question.question} about {question.record} (asked at step {question.seq}{again}), as the customer saw it:"]
    lines.extend(f"{indent}  | {line}" for line in question.text.splitlines())
    if answer is None:
        lines.append(f"{indent}not answered yet")
    else:
        if answer.value is not None:
            got = f"{answer.reason}; recorded as answers.{question.key}.{question.record} = {answer.value}"
            got += f"; gated again as {', '.join(answer.runs)}" if answer.runs else ""
        else:
            got = f"unclear ({answer.reason}); nothing recorded"
        lines.append(f"{indent}answered at step {answer.seq}: {got}")
        lines.append(f"{indent}  the customer's words: {json_text(answer.quote)}")
    return lines


def asks_and_answers(events: Iterable[Event]) -> list[Event]:
    """The cards and questions of a trajectory and their answers, in order: all that `waits_lines`
    reads. Explaining every decision of a long file, pass these instead of every event (each
    decision otherwise rescans the whole file: 90 s for the 4,854 decisions of 100,000 events)."""
    kinds = (ConfirmationRequested, ConfirmationAnswered, QuestionRequested, QuestionAnswered)
    return [e for e in events if isinstance(e, kinds)]


def waits_lines(events: list[Event], call_id: str, indent: str = "  ") -> list[str]:
    """What a held call waited on, as `why` prints it: its question, its card."""
    lines: list[str] = []
    asked = question_of(events, call_id)
    if asked is not None:
        lines.extend(question_lines(*asked, indent=indent))
    card = card_of(events, call_id)
    if card is not None:
        lines.extend(card_lines(*card, indent=indent))
    return lines


# What `why` reads of a trajectory: the decisions, the cards and questions they waited on
# (WHY_EXPLAINS), and for a withheld read its result and what the agent said after it
# (WHY_DISCLOSES, read only if a decision it explains withholds a read: `withholds`); at 100,000
# events, a few percent of them, then a third (`read_for_why`).
WHY_EXPLAINS = (SessionStarted, GateDecided, ConfirmationRequested, ConfirmationAnswered, QuestionRequested, QuestionAnswered)
WHY_DISCLOSES = (ToolResult, AssistantMessage)
WHY_READS = WHY_EXPLAINS + WHY_DISCLOSES


def withholds(events: Iterable[Event]) -> bool:
    """Whether a decision among these withholds a read (its lines need `WHY_DISCLOSES`): only
    one with a check that withheld it may (its category is asked of those alone)."""
    return any(
        isinstance(e, GateDecided) and any(p.withheld for p in e.decision.predicates) and e.decision.category() == "disclosure"
        for e in events
    )


def decisions(events: Iterable[Event], verdicts: Iterable[Verdict] = (Verdict.REVISE, Verdict.BLOCK)) -> list[GateDecided]:
    wanted = set(verdicts)
    return [e for e in events if isinstance(e, GateDecided) and e.decision.verdict in wanted]


def disclosure_lines(events: list[Event], event: GateDecided, indent: str = "  ") -> list[str]:
    """For a read the read gate withholds: whether the model saw it (a recording made without the
    read gate: an imported run) and what of it the agent then said."""
    from ledger_tui.engine.disclosure import disclosed, said_after

    d = event.decision
    if d.category() != "disclosure":
        return []
    result = next((e for e in events if isinstance(e, ToolResult) and e.call_id == d.call.id and e.seq > event.seq), None)
    if result is not None and result.withheld:
        lines = [f"{indent}the result: withheld from the model (step {result.seq}); the record is in the ledger, out of the prompt"]
    else:
        lines = [f"{indent}the result: shown to the agent (this recording ran without the read gate)"]
    said = disclosed(d, said_after(events, event.seq))
    if said:
        lines.append(f"{indent}the agent then said what it holds: " + ", ".join(f"{name} {short(value, 60)}" for name, value in said[:8]))
    elif result is not None and not result.withheld:
        lines.append(f"{indent}the agent said none of its values afterwards")
    return lines

"""The gate as a library, for a stack that runs its own agent and its own tools.

    from ledger_tui import PolicyGate

    gate = PolicyGate("airline")
    gate.customer_says("Hi, I'm mia_li_3668; please cancel reservation NO6JO3.")
    gate.observe("get_user_details", {"user_id": "mia_li_3668"}, user_record)    # a read you ran
    gate.observe("get_reservation_details", {"reservation_id": "NO6JO3"}, reservation)
    decision = gate.check("cancel_reservation", {"reservation_id": "NO6JO3"})   # before you run it
    decision.verdict        # "ALLOW", "REVISE" or "BLOCK"
    decision.feedback       # what your model reads instead of a result when it is not ALLOW
    decision.card           # held for the customer's yes: the card to show them
    gate.customer_says("Yes, go ahead.")  # their answer to it; then check again: ALLOW
    gate.ledger_block()     # the ledger as the prompt shows it

What it records is a trajectory of this project's format (`events`, `save`): `ledger-tui why`,
`replay` and `audit` read it. Nothing here runs a tool: you run them and tell the gate what came
back (`observe` for reads, `ran` for writes, which makes what they touched stale: observe, don't
assume). The gate fails closed: a call it cannot evaluate is not ALLOW.
"""

from __future__ import annotations

import hashlib
import json
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ledger_tui.engine.conversation import cards, questions
from ledger_tui.engine.conversation.answers import answer_reading
from ledger_tui.engine.disclosure import check_read
from ledger_tui.engine.domain import Domain
from ledger_tui.engine.environment import Outcome
from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.events import (
    AssistantMessage,
    ConfirmationAnswered,
    ConfirmationRequested,
    Event,
    GateDecided,
    GateDecision,
    QuestionAnswered,
    QuestionRequested,
    SessionStarted,
    ToolCall,
    ToolCallProposed,
    ToolResult,
    UserMessage,
    Verdict,
)
from ledger_tui.engine.store.fold import SessionState, advance
from ledger_tui.engine.gate import evaluate, feedback
from ledger_tui.engine.ledger import answered as answered_fact
from ledger_tui.engine.observe import observe_read, observe_statements, observe_write, read_pairs
from ledger_tui.engine.store.serialize import jsonable
from ledger_tui.engine.store.trajectories import write_trajectory

__all__ = ["PolicyGate", "Decision", "Check", "Evidence", "Observation", "Reply", "LedgerTuiError"]


@dataclass(frozen=True)
class Evidence:
    """One ledger path a check read: the value it saw, where the value came from ("observed": a
    read's result or an answer the system asked for; "stated": the customer's words; "context"),
    and the step of the event that put it there."""

    path: str
    value: Any
    present: bool
    origin: str
    step: int | None
    quote: str | None = None


@dataclass(frozen=True)
class Check:
    name: str
    clause: str  # the policy clause it enforces
    passed: bool
    reason: str
    evidence: tuple[Evidence, ...]
    verdict: str = ""  # failed: the verdict it asks for (BLOCK, REVISE)
    kind: str = ""  # failed: "violation", "needs a read", "asks the customer", "inferred from text"


@dataclass(frozen=True)
class Decision:
    """The gate's answer on one call, with the evidence behind it."""

    verdict: str  # ALLOW, REVISE or BLOCK (WITHHELD for a read's result kept from the model)
    category: str  # allowed, violation, needs a read, asks the customer, inferred from text, disclosure
    reason: str
    hint: str
    feedback: str  # the tool message your model reads in place of a result ("" on ALLOW)
    checks: tuple[Check, ...]
    card: str | None = None  # held for the customer's yes: the card to show them, rendered from the call
    question: str | None = None  # held for a fact only the customer can say: the closed question
    step: int = -1  # the decision's step in `events`
    decision: GateDecision | None = field(default=None, repr=False)  # the engine's own record

    @property
    def allowed(self) -> bool:
        return self.verdict == "ALLOW"

    def failed(self) -> tuple[Check, ...]:
        return tuple(c for c in self.checks if not c.passed)

    def deciding(self) -> tuple[Check, ...]:
        """The failed checks that decided the verdict, broken rules first (as the reason reads)."""
        order = {"violation": 0, "inferred from text": 1, "needs a read": 2, "asks the customer": 3}
        return tuple(sorted((c for c in self.failed() if c.verdict == self.verdict), key=lambda c: order.get(c.kind, 0)))


@dataclass(frozen=True)
class Observation:
    """What a read added to the ledger, and what your model may see of it."""

    paths: tuple[str, ...]  # ledger paths the result was stored under
    withheld: bool  # a record of someone other than the identified customer: not for the model
    model_text: str  # what to give the model as the tool's result (the result, or why it is withheld)
    decision: Decision | None = None  # the read gate's, when it withheld the result


@dataclass(frozen=True)
class Reply:
    """The customer's words read as the answer to what the system asked them."""

    answer: str | None  # a card: "yes", "no", "unclear"; a question: the choice's value, or None
    reason: str
    confirmed: tuple[tuple[str, dict[str, Any]], ...] = ()  # on a card's yes: (tool, arguments) now allowed once


def _kind(p: Any) -> str:
    if p.needs_a_read():
        return "needs a read"
    if p.asks_consent():
        return "asks the customer"
    return "inferred from text" if p.inferred else "violation"


def _domain(domain: str | Domain) -> Domain:
    if isinstance(domain, Domain):
        return domain
    from ledger_tui.domains import load_domain

    return load_domain(domain)


def _result_text(result: Any) -> str:
    return result if isinstance(result, str) else json.dumps(jsonable(result), ensure_ascii=False, sort_keys=True)


def _parsed(result: Any) -> Any:
    if isinstance(result, str):
        try:
            return json.loads(result)
        except ValueError:
            return result
    return jsonable(result)


class PolicyGate:
    """A ledger and a policy gate over one conversation of `domain` (a name: `airline`, `retail`,
    `telecom`, `telehealth`, a plugin's; or a `Domain`). `consent="card"` (the default) asks the
    customer to confirm each write on a card rendered from the exact call; `"text"` reads their
    consent from the conversation instead (`agent_says` then matters)."""

    def __init__(self, domain: str | Domain, *, consent: str = "card", session_id: str | None = None) -> None:
        if consent not in ("card", "text"):
            raise LedgerTuiError(f"Unknown consent {consent!r}; choose card or text.")
        self.domain = _domain(domain)
        self._events: list[Event] = []
        self._state = SessionState()
        self._ids = 0
        self._confirmed: list[tuple[str, str]] = []  # (card, call key) a yes allows once
        self._allowed: dict[str, ToolCall] = {}  # call key -> the allowed call, until ran() records it
        self._emit(SessionStarted(
            session_id=session_id or uuid.uuid4().hex[:12], domain=self.domain.name, model="library", mode="full",
            policy_digest=hashlib.sha256(self.domain.policy.encode()).hexdigest(), db_digest="(outside)",
            clock=self.domain.clock, consent=consent,  # type: ignore[arg-type]
        ))

    # ------------------------------------------------------------------ what happened
    def customer_says(self, text: str) -> Reply | None:
        """The customer's message. What it states goes to the ledger as their words; a card or a
        question the system asked is answered by it (the Reply; None when nothing was asked)."""
        card, question = self._state.pending_card, self._state.pending_question
        said = self._emit(UserMessage(text=text))
        reply = None
        if card is not None:
            reply = self._answer_card(card, text)
        elif question is not None:
            reply = self._answer_question(question, text)
        _, updates = observe_statements(self.domain, self._state.ledger, text, said.seq)
        self._emit_all(updates)
        return reply

    def agent_says(self, text: str) -> None:
        """What your agent told the customer (consent "text" reads a proposal from it)."""
        self._emit(AssistantMessage(text=text, author="model"))

    def observe(self, tool: str, arguments: dict[str, Any], result: Any, *, error: bool = False) -> Observation:
        """A read your stack ran and what it returned (an object, or its JSON text): stored in the
        ledger at the paths the domain maps it to. A result showing a customer other than the one
        identified is stored withheld: give your model `model_text` instead."""
        spec = self.domain.tool(tool)
        if spec is None or spec.kind != "read":
            what = "not a tool of" if spec is None else f"a {spec.kind}, not a read, of"
            raise LedgerTuiError(f"{tool} is {what} the {self.domain.name} domain; observe() takes reads (a write that ran goes to ran()).")
        call = self._call(tool, arguments)
        self._emit(ToolCallProposed(call=call, kind="read"))
        outcome = Outcome(content=_result_text(result), error=error, value=None if error else _parsed(result), tool=spec)
        if error:
            self._emit(ToolResult(call_id=call.id, name=tool, content=outcome.content, error=True))
            return Observation((), False, outcome.content)
        pairs = read_pairs(call, outcome)
        held = check_read(self.domain, call, outcome.value, pairs, self._state.ledger, self._state.context(), self._state.user_messages, len(self._events) + 1)
        decided = None
        if held is not None:
            decided = self._emit(GateDecided(decision=held[0]))
        text = held[1] if held is not None else outcome.content
        shown = self._emit(ToolResult(call_id=call.id, name=tool, content=text, withheld=True if held else None))
        _, updates = observe_read(self.domain, self._state.ledger, call, outcome, shown.seq, self._state.user_messages, withheld=held is not None, pairs=pairs)
        self._emit_all(updates)
        paths = tuple(u.path for u in updates if u.origin == "observed")
        return Observation(paths, held is not None, text, self._decision(decided) if decided else None)

    def check(self, tool: str, arguments: dict[str, Any]) -> Decision:
        """Ask the gate about a write before your stack runs it. Run it only when `allowed`;
        otherwise give your model `feedback` as the tool's result. A call held for the customer
        comes with the `card` (or the `question`) to show them; their answer goes to
        `customer_says`, and the confirmed call is then allowed once."""
        call = self._call(tool, arguments)
        spec = self.domain.tool(tool)
        if spec is not None and spec.kind == "read":
            raise LedgerTuiError(f"{tool} is a read: run it and pass its result to observe(); check() judges writes.")
        self._emit(ToolCallProposed(call=call, kind=spec.kind if spec else "unknown"))  # type: ignore[arg-type]
        context = self._state.context()
        key = cards.call_key(call)
        card = next((c for c, k in self._confirmed if k == key), None)
        if card is not None:
            context = replace(context, confirming=card)
        decision = evaluate(call, self.domain, self._state.ledger, context)
        decided = self._emit(GateDecided(decision=decision))
        if decision.verdict == Verdict.ALLOW and card is not None:
            self._confirmed.remove((card, key))
        shown = card_text = question_text = None
        if decision.held():
            waits = [q for p in decision.failed() if (q := p.asks_question())]
            if waits:
                question_text = self._ask(waits[0], call)
                shown = questions.AWAITING
            else:
                card_text = self._card(call)
                shown = cards.AWAITING
        if decision.verdict == Verdict.ALLOW:  # the caller runs it: ran() records its result
            self._allowed[key] = call
            return self._decision(decided, feedback_text="")
        text = shown or feedback(decision)
        self._emit(ToolResult(call_id=call.id, name=tool, content=text, executed=False, error=shown is None))
        return self._decision(decided, card=card_text, question=question_text, feedback_text=text)

    def ran(self, tool: str, arguments: dict[str, Any], result: Any = None, *, error: bool = False) -> tuple[str, ...]:
        """A write your stack ran (after an ALLOW; one run without asking is recorded unjudged):
        the ledger paths it touched turn stale, to be read again before anything relies on them.
        Returns those paths."""
        spec = self.domain.tool(tool)
        if spec is None or spec.kind == "read":
            raise LedgerTuiError(f"{tool} is not a write of the {self.domain.name} domain; ran() takes writes (a read goes to observe()).")
        call = self._allowed.pop(cards.call_key(ToolCall(id="", name=tool, arguments=jsonable(arguments))), None)
        if call is None:  # run without asking the gate: recorded as it was, unjudged
            call = self._call(tool, arguments)
            self._emit(ToolCallProposed(call=call, kind=spec.kind))  # type: ignore[arg-type]
        done = self._emit(ToolResult(call_id=call.id, name=tool, content=_result_text(result), error=error))
        outcome = Outcome(content=_result_text(result), error=error, value=_parsed(result), tool=spec)
        _, updates = observe_write(self.domain, self._state.ledger, call, outcome, done.seq)
        self._emit_all(updates)
        return tuple(u.path for u in updates if u.change == "stale")

    # ------------------------------------------------------------------ what it knows
    def ledger_block(self) -> str:
        """The ledger as the prompt shows it (deterministic; withheld records left out)."""
        return self._state.ledger.render()

    @property
    def ledger(self) -> dict[str, Any]:
        """The ledger as JSON: each path's value, origin, step and freshness."""
        return self._state.ledger.to_json()

    @property
    def identified(self) -> str | None:
        """The customer the conversation serves, once a read identified them."""
        return self._state.context().user_id

    @property
    def events(self) -> list[Event]:
        return list(self._events)

    def save(self, path: Path | str) -> Path:
        """Write the conversation as a trajectory: `ledger-tui why FILE` explains every stop."""
        write_trajectory(Path(path), self._events)
        return Path(path)

    # ------------------------------------------------------------------ plumbing
    def _emit(self, event: Event) -> Any:
        event = event.model_copy(update={"seq": len(self._events)})
        self._events.append(event)
        self._state = advance(self._state, event)
        return event

    def _emit_all(self, events: list[Any]) -> None:
        for e in events:
            self._emit(e)

    def _call(self, tool: str, arguments: dict[str, Any]) -> ToolCall:
        if not isinstance(arguments, dict):
            raise LedgerTuiError(f"The arguments of {tool} must be a JSON object (a dict), not {type(arguments).__name__}.")
        self._ids += 1
        return ToolCall(id=f"api_{self._ids}", name=tool, arguments=jsonable(arguments))

    def _card(self, call: ToolCall) -> str:
        card = self._emit(cards.request(self.domain, [call], self._state.ledger, self._state.context(), 1 + self._state.totals.cards))
        return card.text

    def _ask(self, path: str, call: ToolCall) -> str:
        key, record = questions.path_parts(path)
        declared = questions.needed(self.domain.questions, key)
        if declared is None:
            return f"(the {self.domain.name} domain declares no question for {key!r}: the call stays held)"
        return self._emit(questions.request(declared, record, [call], 1 + self._state.totals.questions)).text

    def _answer_card(self, card: ConfirmationRequested, text: str) -> Reply:
        reading = answer_reading(text, cards.card_words(card, self._state.context().year))
        answered = self._emit(ConfirmationAnswered(card=card.card, answer=reading.answer, quote=text, reason=reading.reason, runs=[]))
        path, value = cards.consent_fact(card, answered)
        self._emit_all(answered_fact(self._state.ledger, path, value, source=card.card, seq=answered.seq, quote=text))
        confirmed: tuple[tuple[str, dict[str, Any]], ...] = ()
        if reading.answer == "yes":
            self._confirmed += [(card.card, cards.call_key(c)) for c in card.calls]
            confirmed = tuple((c.name, c.arguments) for c in card.calls)
        return Reply(reading.answer, reading.reason, confirmed)

    def _answer_question(self, question: QuestionRequested, text: str) -> Reply:
        reading = questions.reading(self.domain.questions, question, self.domain.name, text)
        answered = self._emit(QuestionAnswered(
            question=question.question, value=reading.value, choice=reading.choice, quote=text, reason=reading.reason, runs=[],
        ))
        fact = questions.answer_fact(question, answered)
        if fact is not None:
            self._emit_all(answered_fact(self._state.ledger, *fact, source=question.question, seq=answered.seq, quote=text))
        return Reply(reading.value, reading.reason)

    def _decision(self, decided: GateDecided, card: str | None = None, question: str | None = None, feedback_text: str | None = None) -> Decision:
        from ledger_tui.explain import category_label

        d = decided.decision
        checks = tuple(
            Check(
                p.name, p.clause, p.passed, p.reason,
                tuple(Evidence(r.path, r.value, r.present, r.origin, r.source_seq, r.quote) for r in p.reads),
                "" if p.passed else p.verdict_on_fail.value, "" if p.passed else _kind(p),
            )
            for p in d.predicates
        )
        text = feedback_text if feedback_text is not None else ("" if d.verdict == Verdict.ALLOW else feedback(d))
        return Decision(d.shown_verdict(), category_label(d), d.reason, d.hint, text, checks, card, question, decided.seq, d)

"""The path of one call through a session: the gate, a write held for a card or a closed question,
the run, and what the result tells the ledger.

A part of `Session` (session.py), mixed into it: the loop hands each call of the agent and of the
operator to `_handle_call` (the customer's own, on their device, to `_execute`: never gated), and
the customer's next message answers a card (`_answer`, then `_run_confirmed`) or a question
(`_answer_question`, then `_regate`). The methods use the session's state, transcript and `emit`,
and the held calls set up in `Session.__init__`; they are kept apart so that the loop reads as the
conversation and this as the policy's write path.
"""

from __future__ import annotations

import dataclasses
from typing import Any, AsyncIterator

from ledger_tui.engine import limits
from ledger_tui.engine.conversation import cards, questions
from ledger_tui.engine.conversation.answers import answer_reading
from ledger_tui.engine.events import (
    AssistantMessage,
    ConfirmationAnswered,
    ConfirmationRequested,
    Event,
    GateDecided,
    Notice,
    QuestionAnswered,
    QuestionRequested,
    Refusal,
    ToolCall,
    ToolCallProposed,
    ToolResult,
    Verdict,
)
from ledger_tui.engine.gate import evaluate, feedback, guarded
from ledger_tui.engine.ledger import answered as answered_fact
from ledger_tui.engine.disclosure import check_read
from ledger_tui.engine.observe import observe_read, observe_write, read_pairs
from ledger_tui.engine.model.prompt import assistant_message
from ledger_tui.engine.store.serialize import jsonable

NOT_RUN = "Not executed: the turn ended with a refusal before this call."


class CallHandling:
    """Gate, hold and run calls for a `Session` (which sets the fields these methods use)."""

    # ------------------------------------------------------------------ consent on cards
    def _answer(self, card: ConfirmationRequested, text: str) -> ConfirmationAnswered:
        """The customer's reply to `card`, read by the closed reader; on a yes, the fresh ids the
        card's calls will run under."""
        reading = answer_reading(text, cards.card_words(card, self.state.context().year))
        runs = [self._new_call_id("gate") for _ in card.calls] if reading.answer == "yes" else []
        answered = self.emit(
            ConfirmationAnswered(card=card.card, answer=reading.answer, quote=text, reason=reading.reason, runs=runs)
        )
        if reading.answer != "yes":  # the model reads the answer with the customer's message
            self.transcript[-1] = {
                **self.transcript[-1],
                "content": f"{text}\n\n[The customer's answer to the confirmation card was read as {reading.answer} "
                f"({reading.reason}); nothing on the card was run.]",
            }
        return answered  # type: ignore[return-value]

    def _consent_fact(self, card: ConfirmationRequested, answered: ConfirmationAnswered) -> list[Any]:
        """The answer as an observed ledger fact, `consent.<card>`, with the customer's words."""
        path, value = cards.consent_fact(card, answered)
        return answered_fact(self.state.ledger, path, value, source=card.card, seq=answered.seq, quote=answered.quote)

    async def _gate_runs(self, calls: list[ToolCall], after_hold: bool = False) -> AsyncIterator[Event]:
        """`calls` as one message of the gate's, each gated (again) on the ledger as it is now; a
        refusal ends the message, and the calls after it are not run."""
        yield self.emit(AssistantMessage(text="", tool_calls=calls, author="gate"))
        self.transcript.append(assistant_message("", calls))
        ended = False
        for call in calls:
            if ended:
                yield self._result(call, NOT_RUN, error=True, executed=False)
                continue
            async for e in self._handle_call(call, malformed=None, after_hold=after_hold and bool(self._held)):
                yield e
                ended = ended or isinstance(e, Refusal)

    async def _run_confirmed(self, card: ConfirmationRequested, runs: list[str]) -> AsyncIterator[Event]:
        """Run the calls the customer confirmed, in card order, as one message of the gate's,
        each under a fresh id and gated again on the ledger as it is now; a BLOCK ends the run."""
        calls = [c.model_copy(update={"id": rid}) for c, rid in zip(card.calls, runs)]
        self._confirming = card.card
        try:
            async for e in self._gate_runs(calls):
                yield e
        finally:
            self._confirming = None

    # ------------------------------------------------------------------ closed questions
    def _answer_question(self, question: QuestionRequested, text: str) -> QuestionAnswered:
        """The customer's reply to `question`, read by the closed reader; on an answer, the fresh
        ids the held calls are gated again under. Unclear twice: the model is told."""
        reading = questions.reading(self.domain.questions, question, self.domain.name, text)
        runs = [self._new_call_id("gate") for _ in question.calls] if reading.value is not None else []
        answered = self.emit(
            QuestionAnswered(
                question=question.question, value=reading.value, choice=reading.choice, quote=text, reason=reading.reason, runs=runs
            )
        )
        if reading.value is None and question.attempt >= questions.ASKS:
            names = ", ".join(c.signature() for c in question.calls)
            self.transcript[-1] = {
                **self.transcript[-1],
                "content": f"{text}\n\n[The system asked the customer: {question.text.splitlines()[0]} Their answer was read as "
                f"unclear {question.attempt} times ({reading.reason}); {names} was not run. Explain the choices to them in "
                "your own words; calling it again asks them once more.]",
            }
        return answered  # type: ignore[return-value]

    def _answer_fact(self, question: QuestionRequested, answered: QuestionAnswered) -> list[Any]:
        """An answer as an observed ledger fact, `answers.<key>.<record>`, with the customer's words."""
        fact = questions.answer_fact(question, answered)
        if fact is None:
            return []
        return answered_fact(self.state.ledger, *fact, source=question.question, seq=answered.seq, quote=answered.quote)

    async def _ask(self, key: str, record: str, held: list[ToolCall], attempt: int = 1, again: str | None = None) -> AsyncIterator[Event]:
        """Ask the customer the domain's closed question `key` about `record`: the turn ends with it."""
        declared = questions.needed(self.domain.questions, key)
        if declared is None:  # fail closed: nothing held runs on a question nobody can ask
            names = ", ".join(c.signature() for c in held)
            text = f"A check needs the customer's answer to {key!r}, which domain {self.domain.name} declares no question for; {names} was not run."
            yield self.emit(Notice(level="error", text=text))
            self.transcript.append({"role": "user", "content": f"[{text}]"})
            return
        number = 1 + self.state.totals.questions  # (every question asked is counted there)
        asked = self.emit(questions.request(declared, record, held, number, attempt, again))
        yield asked
        self.transcript.append({"role": "assistant", "content": asked.text})

    async def _regate(self, question: QuestionRequested, runs: list[str]) -> AsyncIterator[Event]:
        """The held calls, now that the customer answered, gated again under fresh ids as one
        message of the gate's: on to a card, another question, the model (a REVISE) or a refusal."""
        calls = [c.model_copy(update={"id": rid}) for c, rid in zip(question.calls, runs)]
        ended = False
        async for e in self._gate_runs(calls, after_hold=True):
            yield e
            ended = ended or isinstance(e, Refusal)
        if ended:
            self._held, self._held_questions = [], []
            return
        async for e in self._show_card():
            yield e

    async def _show_card(self) -> AsyncIterator[Event]:
        """The card for the writes held in the message just handled, or first the question they
        wait on: the turn ends with it."""
        held, self._held = self._held, []
        waiting, self._held_questions = self._held_questions, []
        if not held:
            return
        if waiting:
            async for e in self._ask(*questions.path_parts(waiting[0]), held):
                yield e
            return
        card = self.emit(cards.request(self.domain, held, self.state.ledger, self.state.context(), 1 + self.state.totals.cards))
        yield card
        self.transcript.append({"role": "assistant", "content": card.text})

    # ------------------------------------------------------------------ one call: gate, hold or run, observe
    def _result(self, call: ToolCall, content: str, *, error: bool, executed: bool, withheld: bool = False) -> Event:
        event = self.emit(
            ToolResult(
                call_id=call.id,
                name=call.name,
                requestor=call.requestor,
                content=content,
                error=error,
                executed=executed,
                withheld=True if withheld else None,
            )
        )
        if call.requestor != "user":
            self.transcript.append({"role": "tool", "tool_call_id": call.id, "content": content})
        return event

    async def _handle_call(self, call: ToolCall, malformed: str | None, after_hold: bool = False) -> AsyncIterator[Event]:
        """Gate and run one call. `after_hold`: a call of the message after a write was held for a
        card: only a write that is held too joins the card; nothing else of the message runs."""
        kind = self.domain.kind(call.name)
        yield self.emit(ToolCallProposed(call=call, kind=kind))  # type: ignore[arg-type]
        if after_hold and not (self.gates_writes and guarded(self.domain, call)):
            yield self._result(call, cards.NOT_RUN_AFTER_CARD, error=True, executed=False)
            return
        if malformed:
            fix = "Send fewer or shorter arguments in one reply." if limits.is_too_long(malformed) else "Send the arguments as one JSON object."
            yield self._result(
                call,
                f"Error: {call.name} was not run: {malformed}. {fix}",
                error=True,
                executed=False,
            )
            return
        if self.gates_writes and guarded(self.domain, call):
            session = self.state.context()
            if self._confirming is not None:
                session = dataclasses.replace(session, confirming=self._confirming)
            decision = evaluate(call, self.domain, self.state.ledger, session)
            if after_hold and decision.verdict == Verdict.ALLOW:  # (it would run out of order)
                yield self._result(call, cards.NOT_RUN_AFTER_CARD, error=True, executed=False)
                return
            yield self.emit(GateDecided(decision=decision))
            if decision.held():
                self._held.append(call)
                waits = [q for p in decision.failed() if (q := p.asks_question())]
                self._held_questions.extend(q for q in waits if q not in self._held_questions)
                yield self._result(call, questions.AWAITING if waits else cards.AWAITING, error=False, executed=False)
                return
            if decision.verdict == Verdict.ALLOW:
                self._resolved.update(self._revised.pop(call.name, []))
            elif decision.verdict == Verdict.REVISE:
                self._revised.setdefault(call.name, []).append(call.id)
            if decision.verdict != Verdict.ALLOW:
                self._refused.add(call.id)
                yield self._result(call, feedback(decision), error=True, executed=False)
                if decision.verdict == Verdict.BLOCK:
                    text = f"I'm sorry, but I can't do that. {decision.reason}"
                    yield self.emit(Refusal(call_id=call.id, text=text))
                    self.transcript.append({"role": "assistant", "content": text})
                return
        async for e in self._execute(call):
            yield e

    async def _execute(self, call: ToolCall) -> AsyncIterator[Event]:
        outcome = self.env.execute(call)
        if len(outcome.content) > limits.MAX_RESULT:  # (only a hand-made --db record gets here)
            said = limits.too_long_result(call.name, len(outcome.content), ran=outcome.tool is not None and outcome.tool.kind != "read")
            yield self._result(call, f"Error: {said}", error=True, executed=True)
            yield self.emit(Notice(level="warning", text=said[0].upper() + said[1:]))
            return
        withholding = pairs = None
        if self.gates_writes and not outcome.error and outcome.tool is not None and outcome.tool.kind == "read":
            # the read gate: a record of anyone but the identified customer is not shown (disclosure.py)
            pairs = read_pairs(call, outcome)
            withholding = check_read(
                self.domain, call, jsonable(outcome.value), pairs, self.state.ledger,
                self.state.context(), self.state.user_messages, len(self.events) + 1,
            )
        if withholding is not None:
            decision, text = withholding
            yield self.emit(GateDecided(decision=decision))
            result = self._result(call, text, error=False, executed=True, withheld=True)
        else:
            result = self._result(call, outcome.content, error=outcome.error, executed=True)
        yield result
        if outcome.error:
            return
        if outcome.tool is not None and outcome.tool.kind == "read":
            _, updates = observe_read(
                self.domain, self.state.ledger, call, outcome, result.seq, self.state.user_messages,
                withheld=withholding is not None, pairs=pairs,
            )
            paths = [u.path for u in updates if u.origin == "observed"]
            if paths and withholding is None:
                self._absorbed[call.id] = paths
        else:
            _, updates = observe_write(self.domain, self.state.ledger, call, outcome, result.seq)
            stale = [u.path for u in updates if u.change == "stale"]
            if stale:
                self._written[call.id] = stale
        for update in updates:
            yield self.emit(update)

"""A session: the LedgerAgent loop over one domain environment, emitting typed events.

Every public method is an async generator of the events it caused, so a caller (the CLI, the TUI's
one worker, the evaluator) iterates them and reacts. Each event is numbered, folded into the
session's state and appended to the trajectory file before it is yielded, so a crash loses at most
the line being written.

Modes (the ablations): `baseline` plain function calling; `ledger` renders the ledger into every
prompt; `gate` checks writes with the policy gate; `full` does both. `irma` is the paper's other
baseline (see `irma.py`): no ledger, no gate, and before each agent turn that answers the customer,
two helper calls rewrite what the agent reads.

The loop is here: the session's life, the customer, the operator and the agent's turn. Two parts
of `Session` live beside it, mixed in: the path of one call (`session_calls.py`: the gate, a write
held for a card or a closed question, the run and what it tells the ledger) and the prompt fitted
to the model's context window (`session_prompt.py`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as _dt
import hashlib
import uuid
from pathlib import Path
from typing import Any, AsyncIterable, AsyncIterator

from ledger_tui.engine.domain import Domain
from ledger_tui.engine.environment import Environment
from ledger_tui.engine import limits
from ledger_tui.engine.agents import irma
from ledger_tui.engine.conversation import questions
from ledger_tui.engine.model.context import Window
from ledger_tui.engine.errors import LedgerTuiError, ModelError
from ledger_tui.engine.events import (
    AssistantMessage,
    ConfirmationRequested,
    Event,
    GateDecided,
    Notice,
    QuestionRequested,
    ReformulatedInput,
    Refusal,
    SessionEnded,
    SessionStarted,
    TokenUsage,
    ToolCall,
    ToolCallProposed,
    UserMessage,
    Verdict,
)
from ledger_tui.engine.store.fold import SessionState, advance
from ledger_tui.engine.model.models import Model, ModelTurn
from ledger_tui.engine.modes import CONSENT_MODES, GATED_MODES, MODES, Mode, ungated  # noqa: F401  (their names here too)
from ledger_tui.engine.observe import observe_statements
from ledger_tui.engine.model.prompt import LEDGER_AT, assistant_message, system_prompt, token_split
from ledger_tui.engine.session_calls import NOT_RUN, CallHandling
from ledger_tui.engine.session_prompt import PromptFitting
from ledger_tui.engine.store.trajectories import TrajectoryWriter



class Session(CallHandling, PromptFitting):
    def __init__(
        self,
        domain: Domain,
        model: Model,
        mode: Mode = "full",
        *,
        env: Environment | None = None,
        db_path: Path | None = None,
        out: Path | None = None,
        task_id: str | None = None,
        session_id: str | None = None,
        max_steps: int = 30,
        max_revisions: int = 4,
        timestamps: bool = True,
        compact: bool = False,
        context_window: int | None = None,
        ledger_at: str = "customer",
        helper: Model | None = None,
        consent: str | None = None,
    ) -> None:
        if mode not in MODES:
            raise LedgerTuiError(f"Unknown mode {mode!r}; choose one of: {', '.join(MODES)}.")
        if consent is not None and consent not in CONSENT_MODES:
            raise LedgerTuiError(f"Unknown --consent {consent!r}; choose card or text.")
        self.domain = domain
        self.model = model
        self.mode: Mode = mode
        self.env = env or Environment(domain, db_path=db_path)
        self.task_id = task_id
        self.session_id = session_id or uuid.uuid4().hex[:12]
        self.max_steps = max_steps
        self.max_revisions = max_revisions
        self.timestamps = timestamps
        self.events: list[Event] = []
        self.state = SessionState()
        self.transcript: list[dict[str, Any]] = []
        self.system = system_prompt(domain.policy, mode)
        self._writer = TrajectoryWriter(out) if out else None
        self.out = out
        self._call_counter = 0
        # Transcript compaction: tool results already absorbed into the (rendered) ledger are sent
        # to the model as a reference to their paths instead of the full text.
        self.compact = compact and self.renders_ledger
        self._absorbed: dict[str, list[str]] = {}
        self._written: dict[str, list[str]] = {}  # write call id -> ledger paths it made stale
        self._revised: dict[str, list[str]] = {}  # tool name -> call ids whose feedback was REVISE
        self._resolved: set[str] = set()
        self._refused: set[str] = set()  # call ids answered with gate feedback (REVISE or BLOCK)
        # Context management (see context.py): the window (from the caller, else asked of the
        # server once), tool results folded to a reference, and leading messages folded to a note.
        self.context_window = context_window
        if ledger_at not in LEDGER_AT:
            raise LedgerTuiError(f"Unknown --ledger-at {ledger_at!r}; choose one of: {', '.join(LEDGER_AT)}.")
        self.ledger_at = ledger_at
        self.last_model_error: ModelError | None = None  # the last failure of a model call (or of fitting its prompt)
        self._window: Window | None = None
        self._window_known = False
        self._folded_results: set[str] = set()
        self._folded_turns = 0
        # IRMA: the model of the helper calls (the agent's unless given), and what the agent reads
        # in place of the customer's latest message: (its index in the transcript, the text)
        self.helper = helper
        self._reformulated: tuple[int, str] | None = None
        # How the customer's consent is observed (gated modes only): "card", the default, asks
        # them on a card (cards.py); "text" reads it from the conversation (consent.py, acceptance.py).
        self.consent: str | None = (consent or "card") if mode in GATED_MODES else None
        self._held: list[ToolCall] = []  # writes of the current message held for a card
        self._held_questions: list[str] = []  # the answers they wait on (questions.py), as ledger paths
        self._confirming: str | None = None  # the card whose yes is being run

    # ------------------------------------------------------------------ plumbing
    @property
    def renders_ledger(self) -> bool:
        return self.mode in ("ledger", "full")

    @property
    def gates_writes(self) -> bool:
        return self.mode in GATED_MODES

    def emit(self, event: Event) -> Event:
        event = event.model_copy(update={"seq": len(self.events)})
        self.events.append(event)
        self.state = advance(self.state, event)
        if self._writer is not None:
            self._writer.write(event)
        return event

    def _new_call_id(self, prefix: str) -> str:
        self._call_counter += 1
        return f"{prefix}_{self._call_counter}"

    # ------------------------------------------------------------------ lifecycle
    async def start(self) -> AsyncIterator[Event]:
        agent_digest, user_digest = self.env.digests()
        yield self.emit(
            SessionStarted(
                session_id=self.session_id,
                domain=self.domain.name,
                model=self.model.name,
                mode=self.mode,
                policy_digest=hashlib.sha256(self.domain.policy.encode()).hexdigest(),
                db_digest=agent_digest,
                user_db_digest=user_digest,
                clock=self.domain.clock,
                task_id=self.task_id,
                started_at=_dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds") if self.timestamps else None,
                consent=self.consent,  # type: ignore[arg-type]
            )
        )

    async def end(
        self,
        reason: str = "completed",
        *,
        reward: float | None = None,
        termination: str | None = None,
        grade: dict[str, Any] | None = None,
    ) -> AsyncIterator[Event]:
        if self.state.ended is not None:
            return
        agent_digest, user_digest = self.env.digests()
        yield self.emit(
            SessionEnded(
                reason=reason,
                db_digest=agent_digest,
                user_db_digest=user_digest,
                reward=reward,
                termination=termination,
                grade=grade,
            )
        )
        self.close()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    # ------------------------------------------------------------------ the customer
    async def user_says(self, text: str, respond: bool = True, final: bool = False) -> AsyncIterator[Event]:
        """The customer speaks; then (by default) the agent takes its turn. A card awaiting an
        answer is answered by this message, and on a yes its calls run, even when the agent does
        not respond (play without a model); not by the message a customer leaves with (`final`)."""
        card = self.state.pending_card if not final else None
        question = self.state.pending_question if not final else None
        text, cut = limits.cut_text(text, "The customer's message")
        event = self.emit(UserMessage(text=text))
        yield event
        if cut:
            yield self.emit(Notice(level="warning", text=cut))
        self.transcript.append({"role": "user", "content": text})
        answered = asked = None
        if card is not None:
            answered = self._answer(card, text)
            yield answered
            for update in self._consent_fact(card, answered):
                yield self.emit(update)
        if question is not None:
            asked = self._answer_question(question, text)
            yield asked
            for update in self._answer_fact(question, asked):
                yield self.emit(update)
        ledger, updates = observe_statements(self.domain, self.state.ledger, text, event.seq)
        for update in updates:
            yield self.emit(update)
        if answered is not None and answered.answer == "yes":
            refused = False
            async for e in self._run_confirmed(card, answered.runs):  # type: ignore[arg-type]
                yield e
                refused = refused or isinstance(e, Refusal)
            if refused:
                return
        if asked is not None and question is not None:
            if asked.value is None and question.attempt < questions.ASKS:
                async for e in self._ask(question.key, question.record, question.calls, question.attempt + 1, asked.reason):
                    yield e
                return  # asked once more: the customer's answer decides
            if asked.value is not None:
                waiting = False
                async for e in self._regate(question, asked.runs):
                    yield e
                    waiting = waiting or isinstance(e, (Refusal, QuestionRequested, ConfirmationRequested))
                if waiting:
                    return  # refused, or the calls wait on the customer again (a card, another question)
        if not respond:
            return
        if self.mode == "irma":
            async for e in self._reformulate(event):
                yield e
            if self._reformulated is None:
                return  # a helper call failed: said in a notice, as a failed agent call is
        async for e in self.agent_turn():
            yield e

    async def _reformulate(self, message: UserMessage) -> AsyncIterator[Event]:
        """IRMA's two helper calls on the conversation up to `message`, made at the same time and
        recorded in a fixed order (constraints, then tools); then the agent's input for this turn.
        A helper's model error ends here with a notice and `last_model_error` set, as the agent's
        own would."""
        self._reformulated = None  # the earlier message goes back to the customer's words
        helper = self.helper or self.model
        prompts = [
            irma.helper_messages(name, policy=self.domain.policy, tools=self.domain.tool_schemas(), transcript=self.transcript)
            for name in irma.HELPERS
        ]
        answers = await asyncio.gather(*(helper.complete(p, []) for p in prompts), return_exceptions=True)
        outputs: dict[str, str] = {}
        failure: ModelError | None = None
        for name, messages, answer in zip(irma.HELPERS, prompts, answers):
            if isinstance(answer, ModelError):
                failure = failure or answer
            elif isinstance(answer, BaseException):
                raise answer
            else:
                outputs[name] = answer.text
                yield self.emit(irma.helper_event(name, helper.name, messages, answer))
        if failure is not None:
            self.last_model_error = failure
            yield self.emit(Notice(level="error", text=f"IRMA's helper call failed: {failure}"))
            return
        earlier = list(self.state.user_messages)[:-1]
        text = irma.reformulate(message.text, earlier, outputs["constraints"], outputs["tools"])
        self._reformulated = (len(self.transcript) - 1, text)
        yield self.emit(ReformulatedInput(user_seq=message.seq, text=text, earlier=len(earlier)))

    async def customer_action(self, name: str, arguments: dict[str, Any] | None = None) -> AsyncIterator[Event]:
        """The customer acts on their own device (dual-control domains). Never gated."""
        call = ToolCall(id=self._new_call_id("user"), name=limits.short_name(name), arguments=arguments or {}, requestor="user")
        problem = limits.arguments_problem(call.arguments)
        if problem:
            call = call.model_copy(update={"arguments": {}})
        yield self.emit(ToolCallProposed(call=call, kind=self.domain.kind(call.name, "user")))  # type: ignore[arg-type]
        if problem:
            yield self._result(call, f"Error: {call.name} was not run: {problem}.", error=True, executed=False)
            return
        async for e in self._execute(call):
            yield e

    # ------------------------------------------------------------------ the operator
    async def operator_call(self, name: str, arguments: dict[str, Any] | None = None) -> AsyncIterator[Event]:
        """The operator acts as the agent: the call goes through the same gate and environment."""
        call = ToolCall(id=self._new_call_id("op"), name=limits.short_name(name), arguments=arguments or {}, requestor="operator")
        problem = limits.arguments_problem(call.arguments)
        if problem:
            call = call.model_copy(update={"arguments": {}})
        yield self.emit(AssistantMessage(text="", tool_calls=[call], author="operator"))
        self.transcript.append(assistant_message("", [call]))
        async for e in self._handle_call(call, malformed=problem):
            yield e
        async for e in self._show_card():
            yield e

    # ------------------------------------------------------------------ the agent
    async def agent_turn(self) -> AsyncIterator[Event]:
        """Model calls until the agent answers in text, is refused, or runs out of steps."""
        revisions = 0
        for _ in range(self.max_steps):
            block = self.state.ledger.render() if self.renders_ledger else None
            try:
                messages, transcript, notes = await self._fit(block)
                for note in notes:
                    yield self.emit(Notice(level="info", text=note))
                turn = await self.model.complete(messages, self.domain.tool_schemas())
            except ModelError as exc:
                self.last_model_error = exc
                yield self.emit(Notice(level="error", text=str(exc)))
                return
            turn, cuts = self._bounded(turn)
            calls = [self._normalise(c) for c in turn.tool_calls]
            yield self.emit(AssistantMessage(text=turn.text, tool_calls=calls, finish_reason=turn.finish_reason))
            for cut in cuts:
                yield self.emit(Notice(level="warning", text=cut))
            if turn.finish_reason == "length":
                yield self.emit(
                    Notice(
                        level="warning",
                        text="The model's reply was cut at the completion cap (finish_reason: length); raise --max-tokens if this repeats.",
                    )
                )
            ledger_t, policy_t, transcript_t = token_split(turn.prompt_tokens, self.system, block, transcript)
            yield self.emit(
                TokenUsage(
                    prompt_tokens=turn.prompt_tokens,
                    completion_tokens=turn.completion_tokens,
                    ledger_tokens=ledger_t,
                    policy_tokens=policy_t,
                    transcript_tokens=transcript_t,
                    cached_tokens=turn.cached_tokens,
                )
            )
            self.transcript.append(assistant_message(turn.text, calls))
            if not calls:
                return
            ended = False
            for call in calls:
                if ended:
                    yield self._result(call, NOT_RUN, error=True, executed=False)
                    continue
                stop = False
                async for e in self._handle_call(call, malformed=turn.malformed.get(call.id), after_hold=bool(self._held)):
                    yield e
                    if isinstance(e, GateDecided) and e.decision.verdict == Verdict.REVISE and not e.decision.held():
                        revisions += 1  # (a call held for a card is no revision)
                    if isinstance(e, Refusal):
                        stop = True
                if stop:
                    ended = True
                elif revisions > self.max_revisions:
                    text = (
                        "I'm sorry, I could not complete this request within our policy. "
                        "I can transfer you to a human agent if you like."
                    )
                    yield self.emit(Refusal(call_id=call.id, text=f"{text} (revise limit {self.max_revisions} reached)"))
                    self.transcript.append({"role": "assistant", "content": text})
                    ended = True
            if self._held:  # the turn ends with the card; the customer's answer decides
                async for e in self._show_card():
                    yield e
                return
            if ended:
                return
        yield self.emit(Notice(level="warning", text=f"The agent used {self.max_steps} model calls in one turn; turn ended."))

    def _bounded(self, turn: ModelTurn) -> tuple[ModelTurn, list[str]]:
        """The model's reply within the session's caps (`engine.limits`), and a notice for each cut:
        its text, its calls after the first MAX_CALLS (dropped, so no tool message answers them),
        a call id or tool name too long to keep (a new id; a name cut, so the tool is unknown),
        arguments over the reply's cap, alone or with the calls before them (the call is answered
        with a tool error the model reads)."""
        text, cut = limits.cut_text(turn.text, "The model's reply")
        cuts = [cut] if cut else []
        calls = list(turn.tool_calls)
        if len(calls) > limits.MAX_CALLS:
            cuts.append(
                f"The model's reply has {len(calls):,} tool calls; the first {limits.MAX_CALLS} are kept "
                "(the most ledger-tui runs from one reply)."
            )
            calls = calls[: limits.MAX_CALLS]
        malformed = dict(turn.malformed)
        kept: list[ToolCall] = []
        total = 0
        for call in calls:
            problem = malformed.pop(call.id, None)
            if len(call.id) > limits.MAX_NAME or len(call.name) > limits.MAX_NAME:
                cuts.append(
                    f"A tool call's id or name is longer than {limits.size(limits.MAX_NAME)}; "
                    "it is kept shortened, with an id of the session's."
                )
                call = call.model_copy(update={"id": self._new_call_id("call"), "name": limits.short_name(call.name)})
            if problem is None and call.arguments:
                n = limits.arguments_size(call.arguments)
                if total + n > limits.MAX_ARGUMENTS:  # (alone, or with the calls taken before it)
                    problem = limits.too_long_arguments(n if n > limits.MAX_ARGUMENTS else total + n, reply=n <= limits.MAX_ARGUMENTS)
                else:
                    total += n
            if limits.is_too_long(problem):
                cuts.append(f"The model's call to {call.name} was not run: {problem}.")
                call = call.model_copy(update={"arguments": {}})
            if problem is not None:
                malformed[call.id] = problem
            kept.append(call)
        if not cuts:
            return turn, []
        return dataclasses.replace(turn, text=text, tool_calls=tuple(kept), malformed=malformed), cuts

    def _normalise(self, call: ToolCall) -> ToolCall:
        if call.id:
            return call
        return call.model_copy(update={"id": self._new_call_id("call")})

    # ------------------------------------------------------------------ words no model wrote
    async def agent_says(self, text: str) -> AsyncIterator[Event]:
        """The operator, acting as the agent, says `text` to the customer (no model involved).

        Recorded as an assistant message, so it counts as "the agent listed the details" for the
        confirmation rule, exactly like a model's text."""
        text, cut = limits.cut_text(text, "The operator's message")
        yield self.emit(AssistantMessage(text=text, author="operator"))
        if cut:
            yield self.emit(Notice(level="warning", text=cut))
        self.transcript.append({"role": "assistant", "content": text})

    async def greet(self, text: str = "Hi! How can I help you today?") -> AsyncIterator[Event]:
        """The fixed greeting a run opens with (no model produced it), as in τ²-bench."""
        yield self.emit(AssistantMessage(text=text, author="fixed"))
        self.transcript.append({"role": "assistant", "content": text})


async def drain(stream: AsyncIterable[Event]) -> list[Event]:
    """Run an event stream (`start()`, `user_says(...)`, `end()`, a script) to its end; its events."""
    return [e async for e in stream]

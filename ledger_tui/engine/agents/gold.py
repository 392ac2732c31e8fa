"""The gold agent: an offline agent that solves a task from its gold actions, through the gate.

It sends the task's opening message as the customer, then works through the gold actions: reads
and generic calls are made directly; each write is proposed and, on REVISE, the gold agent does what
the gate asks (the suggested read calls; or it lists the call's details and the gold customer says
yes) and retries. Customer-side actions (dual control) are performed by the gold customer. In a
refusal task the forbidden write is attempted last and must be stopped with the expected verdict.

A task passes when every gold write was ALLOWED and executed, the final db digest equals the digest
of the gold actions applied directly to a fresh db, and (refusal tasks) the forbidden write got the
expected verdict from the expected predicate.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from pydantic import ValidationError

from ledger_tui.engine.domain import Domain
from ledger_tui.engine.environment import Environment
from ledger_tui.engine.errors import LedgerTuiError, TaskError
from ledger_tui.engine.conversation.cards import call_key
from ledger_tui.engine.events import (
    ConfirmationAnswered,
    ConfirmationRequested,
    Event,
    GateDecided,
    GateDecision,
    QuestionAnswered,
    QuestionRequested,
    ToolCall,
    asked_of,
    ToolResult,
    Verdict,
)
from ledger_tui.engine.model.models import FunctionModel, ModelTurn
from ledger_tui.engine.outside import printable
from ledger_tui.engine.store.reading import words
from ledger_tui.engine.session import Mode, Session, drain
from ledger_tui.engine.agents.tasks import Action, Task

IRMA_NEEDS_A_MODEL = (
    "Mode irma compares model agents (its helper calls need a model); run the gold agent in another mode, "
    "or a model agent with `ledger-tui eval --agent llm --mode irma`."
)

YES = "Yes, please go ahead."
NOT_MINE = "No, that is not what I asked for."
MAX_ATTEMPTS = 8
CONFIRMATION_PREDICATES = ("explicit_confirmation",)
IDENTITY_PREDICATES = ("customer_identified",)


def fresh_environment(domain: Domain, task: Task | None = None, db_path: Path | None = None) -> Environment:
    env = Environment(domain, db_path=db_path)
    if task is not None and task.initial_state and domain.init_task is not None:
        env.touched()
        try:
            domain.init_task(env.db, task)
            if domain.sync is not None:
                domain.sync(env.db)
        except LedgerTuiError:
            raise
        except ValidationError as exc:
            raise TaskError(f"Task {task.id}'s initial_state cannot be applied: {words(exc)}; fix the task file.") from None
        except Exception as exc:  # the domain's set-up code ran on the file's values, and failed
            raise TaskError(
                f"Task {task.id}'s initial_state cannot be applied ({type(exc).__name__}: {printable(str(exc), 160)}); fix the task file."
            ) from None
    return env


_GOLD: dict[tuple[Any, ...], tuple[str, str | None]] = {}


def gold_digests(domain: Domain, task: Task, db_path: Path | None = None) -> tuple[str, str | None]:
    """Digests after applying the task's gold actions directly (failing ones change nothing).

    Cached per process by domain, task content and database, since every trial of a task is graded
    against the same gold state."""
    source = Path(db_path or domain.db_override or domain.db_path)
    stamp = source.stat().st_mtime_ns if source.exists() else 0
    key = (domain.name, str(source), stamp, task.model_dump_json())
    cached = _GOLD.get(key)
    if cached is not None:
        return cached
    env = fresh_environment(domain, task, db_path)
    for i, action in enumerate(task.gold_actions):
        env.execute(ToolCall(id=f"gold_{i}", name=action.name, arguments=action.arguments, requestor=action.requestor))
    cached = _GOLD[key] = env.digests()
    return cached


@dataclass
class ActionOutcome:
    action: Action
    verdict: Verdict | None = None  # last gate verdict (None: not gated)
    executed: bool = False
    error: bool = False
    failed_predicates: list[str] = field(default_factory=list)
    decision: GateDecision | None = None


class GoldAgent:
    """Decides each model turn from the task plan and the session's recorded events."""

    def __init__(self, domain: Domain, task: Task) -> None:
        self.domain = domain
        self.task = task
        plan: list[Action] = list(task.gold_actions)
        if task.ledger_tui.identify is not None:
            plan.insert(0, task.ledger_tui.identify)
        if task.is_refusal and task.ledger_tui.forbidden_action is not None:
            plan.append(task.ledger_tui.forbidden_action)
        self.plan: deque[Action] = deque(plan)
        self.session: Session | None = None
        self.current: Action | None = None
        self.current_call_id: str | None = None
        self.attempts = 0
        self.retry_next = False
        # what the gold customer says next when the agent asked them something: a yes, who they
        # are, or a fact the policy needs from them (a cancellation reason)
        self.customer_reply: str | None = None
        self.customer_todo: list[Action] = []
        self.finished = False
        self.outcomes: list[ActionOutcome] = []
        self.problems: list[str] = []
        self._ids = 0

    # -------------------------------------------------------------- helpers
    def _id(self) -> str:
        self._ids += 1
        return f"gold_{self._ids}"

    def _call(self, action: Action) -> ToolCall:
        return ToolCall(id=self._id(), name=action.name, arguments=action.arguments)

    def _find(self, call_id: str) -> tuple[GateDecision | None, ToolResult | None]:
        assert self.session is not None
        decision = result = None
        for event in reversed(self.session.events):
            if isinstance(event, ToolResult) and event.call_id == call_id and result is None:
                result = event
            elif isinstance(event, GateDecided) and event.decision.call.id == call_id:
                decision = event.decision
                break
        return decision, result

    def _propose(self) -> ModelTurn:
        assert self.current is not None
        call = self._call(self.current)
        self.current_call_id = call.id
        return ModelTurn(tool_calls=(call,))

    def _card_of(self, call_id: str) -> tuple[ConfirmationRequested | None, ConfirmationAnswered | None]:
        assert self.session is not None
        return asked_of(self.session.events, call_id, ConfirmationRequested, ConfirmationAnswered, "card") or (None, None)

    def _question_of(self, call_id: str) -> tuple[QuestionRequested | None, QuestionAnswered | None]:
        assert self.session is not None
        return asked_of(self.session.events, call_id, QuestionRequested, QuestionAnswered, "question") or (None, None)

    def question_answer(self, asked: QuestionRequested) -> str:
        """The gold customer's answer to a closed question: the number of the choice the task's own
        words state of this record (else of no record), else of the value that unlocks nothing."""
        statement = next((st for st in self.domain.statements if st.key == asked.key), None)
        value = None
        if statement is not None:
            found = statement.facts(self.task.user_scenario.text() if self.task.user_scenario else "")
            mine = [f for f in found if f.record == asked.record] or [f for f in found if f.record is None]
            value = mine[0].value if mine else statement.neutral
        values = [c.value for c in asked.choices]
        if value not in values:
            return "I'm not sure."
        return str(values.index(value) + 1)

    def card_answer(self, card: ConfirmationRequested) -> str:
        """The gold customer's answer to a card: yes when every call on it is one the task's
        customer asks for (a gold action, or the write a refusal task's customer wants)."""
        wanted = {call_key({"name": a.name, "arguments": a.arguments}) for a in self.task.gold_actions}
        if self.task.ledger_tui.forbidden_action is not None:
            f = self.task.ledger_tui.forbidden_action
            wanted.add(call_key({"name": f.name, "arguments": f.arguments}))
        return YES if all(call_key(c) in wanted for c in card.calls) else NOT_MINE

    def resolve(self) -> None:
        """Settle the current write from what the session recorded about its last proposal."""
        if self.current is None or self.current_call_id is None or self.retry_next:
            return
        decision, result = self._find(self.current_call_id)
        while decision is not None and decision.held() and any(p.asks_question() for p in decision.failed()):
            # a closed question first: the gold customer answers it; on an answer the engine gated
            # the call again under a fresh id, whose decision goes on
            asked, answer = self._question_of(self.current_call_id)
            if asked is None:
                return
            if answer is None:
                self.customer_reply = self.question_answer(asked)
                return
            if answer.value is None:
                self.problems.append(f"{self.current.name}: the gold customer's answer was not read ({answer.quote!r}: {answer.reason})")
                self._settle(ActionOutcome(self.current, verdict=decision.verdict, decision=decision))
                return
            self.current_call_id = answer.runs[[c.id for c in asked.calls].index(self.current_call_id)]
            decision, result = self._find(self.current_call_id)
        if decision is not None and decision.held():
            # consent on a card: the gold customer answers it; on a yes the engine ran the call
            # under a fresh id, whose outcome settles the write
            card, answer = self._card_of(self.current_call_id)
            if card is None:
                return
            if answer is None:
                self.customer_reply = self.card_answer(card)
                return
            if answer.answer != "yes":
                self.problems.append(f"{self.current.name}: the gold customer did not confirm the card ({answer.quote!r})")
                self._settle(ActionOutcome(self.current, verdict=decision.verdict, decision=decision))
                return
            ran = answer.runs[[c.id for c in card.calls].index(self.current_call_id)]
            decision, result = self._find(ran)
        if result is None and decision is None:
            return
        outcome = ActionOutcome(self.current, decision=decision)
        if decision is not None:
            outcome.verdict = decision.verdict
            outcome.failed_predicates = [p.name for p in decision.failed()]
        if result is not None:
            outcome.executed = result.executed
            outcome.error = result.error
        if decision is not None and decision.verdict == Verdict.REVISE and self._expected_revise(outcome):
            self._settle(outcome)
            return
        if decision is not None and decision.verdict == Verdict.REVISE:
            self.attempts += 1
            if self.attempts >= MAX_ATTEMPTS:
                self.problems.append(f"{self.current.name}: still REVISE after {self.attempts} attempts ({decision.reason})")
                self._settle(outcome)
                return
            if decision.suggested_calls:
                self.retry_next = True
                self._pending = ModelTurn(
                    tool_calls=tuple(
                        ToolCall(id=self._id(), name=s.name, arguments=s.arguments) for s in decision.suggested_calls
                    )
                )
                return
            asked = self._ask(decision)
            if asked is not None:
                question, answer = asked
                self.retry_next = True
                self.customer_reply = answer
                self._pending = ModelTurn(text=question)
                return
            self.problems.append(f"{self.current.name}: REVISE the gold agent cannot act on ({decision.reason})")
            self._settle(outcome)
            return
        self._settle(outcome)

    def _ask(self, decision: GateDecision) -> tuple[str, str] | None:
        """What to ask the customer for a REVISE no read can fix, and what the gold customer
        answers: who they are; a fact only they can state; or the proposal and its yes."""
        failed = decision.failed()
        names = {p.name for p in failed}
        if names & set(IDENTITY_PREDICATES) and self.domain.identity_sentence is not None:
            said = self.domain.identity_sentence(self.session.env.db, self.current.arguments)  # type: ignore[union-attr]
            if said:
                return "Before I change anything, I need to identify you. How can I find your account?", said
        for p in failed:
            stated = [r for r in p.reads if r.path.startswith("said.")]
            if stated and p.name not in CONFIRMATION_PREDICATES:
                # missing, or not what this write needs (a reason said of another order): ask again
                answer = self._statement(stated[0].path, fresh=stated[0].present)
                if answer:
                    return "May I ask why?" if "reason" in stated[0].path else "Could you tell me more?", answer
        if names & set(CONFIRMATION_PREDICATES):
            return self._proposal(), YES
        return None

    def _statement(self, path: str, fresh: bool = False) -> str | None:
        """The gold customer's words for a stated fact: the task's own sentence that states it, or
        the statement's example for the value the gold write implies (asked again, `fresh`: the
        example for the write's own argument, about this record)."""
        key = path.split(".")[1]
        statement = next((st for st in self.domain.statements if st.key == key), None)
        if statement is None:
            return None
        wanted = self.current.arguments.get("reason")  # type: ignore[union-attr]
        if fresh and wanted in statement.examples:
            record = next((v for k, v in self.current.arguments.items() if k.endswith("_id") and k != "user_id"), None)  # type: ignore[union-attr]
            return statement.examples[wanted] + (f" That is for {record}." if record else "")
        for fact in statement.facts(self.task.user_scenario.text() if self.task.user_scenario else ""):
            return fact.quote
        # the write's own argument says which value (retail's cancellation reason); otherwise the
        # gold customer says the value that unlocks nothing: a gold agent never invents a reason
        wanted = self.current.arguments.get("reason") or statement.neutral  # type: ignore[union-attr]
        return statement.examples.get(wanted) if wanted else None

    def _proposal(self) -> str:
        """The write in the customer's terms, from what its proposal must name (`Terms`)."""
        from ledger_tui.engine.rules import proposal_for

        call = self._call(self.current)  # type: ignore[arg-type]
        assert self.session is not None
        try:
            return proposal_for(self.domain, call, self.session.state.ledger, self.session.state.context())
        except Exception:  # no terms, or they need a read: the signature, which the gate refuses
            return f"To confirm, I am about to run {call.signature()}. Shall I proceed?"

    def _expected_revise(self, outcome: ActionOutcome) -> bool:
        """A refusal task whose forbidden write must end in REVISE from a named predicate."""
        info = self.task.ledger_tui
        if not (self.task.is_refusal and self.current is info.forbidden_action and info.expected_verdict == "REVISE"):
            return False
        if info.expected_predicate:
            return info.expected_predicate in outcome.failed_predicates
        d = outcome.decision
        return d is not None and not d.suggested_calls and not any(
            n in CONFIRMATION_PREDICATES for n in outcome.failed_predicates
        )

    def _settle(self, outcome: ActionOutcome) -> None:
        self.outcomes.append(outcome)
        self.current = None
        self.current_call_id = None
        self.attempts = 0

    # -------------------------------------------------------------- the model
    def __call__(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelTurn:
        self.resolve()
        if self.retry_next:
            pending = getattr(self, "_pending", None)
            if pending is not None:
                self._pending = None
                if not pending.tool_calls:  # a question to the customer: the turn ends here
                    return pending
                return pending
            self.retry_next = False
            self.customer_reply = None
            return self._propose()
        if self.current is not None:
            return self._propose()
        while self.plan:
            action = self.plan.popleft()
            if action.requestor == "user":
                self.customer_todo.append(action)
                return ModelTurn(text=f"Please do this on your device: {self._call(action).signature()}.")
            kind = self.domain.kind(action.name)
            if kind == "write" or (kind != "read" and self._gated(action.name)):
                self.current = action
                self.attempts = 0
                return self._propose()
            self.outcomes.append(ActionOutcome(action, executed=True))
            return ModelTurn(tool_calls=(self._call(action),))
        self.finished = True
        facts = self.task.evaluation_criteria.communicate_info or []
        text = "Everything you asked for is done."
        if facts:
            text += " For your information: " + "; ".join(facts) + "."
        return ModelTurn(text=text)

    def _gated(self, name: str) -> bool:
        return any(p.tools is not None and name in p.tools for p in self.domain.predicates)


@dataclass
class GoldReport:
    task_id: str
    passed: bool
    problems: list[str]
    outcomes: list[ActionOutcome]
    decisions: list[GateDecision]
    final_digest: str
    gold_digest: str
    events: list[Event]
    env: Environment


async def run_gold(
    domain: Domain,
    task: Task,
    *,
    mode: Mode = "full",
    db_path: Path | None = None,
    out: Path | None = None,
    max_customer_turns: int = 40,
    session_options: dict[str, Any] | None = None,
    observe: Callable[[list[dict[str, Any]], list[dict[str, Any]]], None] | None = None,
    agent: GoldAgent | None = None,
) -> GoldReport:
    """`session_options` go to the Session (`compact`, `ledger_at`, …); `observe(messages, tools)`
    sees every prompt the agent is sent (benchmarks/prompt_cache.py measures them); `agent`, a
    GoldAgent of this task whose customer answers otherwise (tests/property_cards.py)."""
    if mode == "irma":
        raise LedgerTuiError(IRMA_NEEDS_A_MODEL)
    agent = agent or GoldAgent(domain, task)

    def decide(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> ModelTurn:
        if observe is not None:
            observe(messages, tools)
        return agent(messages, tools)

    session = Session(
        domain,
        FunctionModel(decide, name="gold"),
        mode,
        **(session_options or {}),
        env=fresh_environment(domain, task, db_path),
        out=out,
        task_id=task.id,
        max_revisions=MAX_ATTEMPTS * max(1, len(agent.plan)),
        timestamps=out is not None,
    )
    agent.session = session
    await drain(session.start())
    opening = task.ledger_tui.opening or task.user_scenario.text() or "Hello."
    await drain(session.user_says(opening))
    for _ in range(max_customer_turns):
        agent.resolve()
        if agent.finished or (not agent.plan and agent.current is None and not agent.customer_todo and not agent.retry_next):
            break
        if agent.customer_todo:
            for action in agent.customer_todo:
                await drain(session.customer_action(action.name, action.arguments))
            agent.customer_todo = []
            reply = "Done, I did that on my phone."
        elif agent.customer_reply is not None:
            reply = agent.customer_reply
            agent.customer_reply = None
        else:
            reply = "Please continue."
        await drain(session.user_says(reply))
    await drain(session.end("gold agent finished"))

    problems = list(agent.problems)
    for outcome in agent.outcomes:
        name = outcome.action.name
        is_forbidden = task.is_refusal and outcome.action is task.ledger_tui.forbidden_action
        if is_forbidden:
            expected = Verdict(task.ledger_tui.expected_verdict)
            if outcome.verdict != expected:
                problems.append(f"forbidden {name}: expected {expected.value}, got {outcome.verdict.value if outcome.verdict else 'no gate decision'}")
            want = task.ledger_tui.expected_predicate
            if want and want not in outcome.failed_predicates:
                problems.append(f"forbidden {name}: expected predicate {want!r} to fail, failed: {outcome.failed_predicates}")
        elif domain.kind(name) == "write" and outcome.action.requestor == "assistant":
            if outcome.verdict not in (None, Verdict.ALLOW) or not outcome.executed:
                problems.append(f"gold write {name} was not allowed ({outcome.verdict.value if outcome.verdict else 'not run'})")
            elif outcome.error:
                problems.append(f"gold write {name} was allowed but the tool returned an error")
    if task.is_refusal and not any(o.action is task.ledger_tui.forbidden_action for o in agent.outcomes):
        problems.append("the forbidden action was never attempted")
    final, _ = session.env.digests()
    gold, _ = gold_digests(domain, task, db_path)
    if final != gold:
        problems.append("final db digest differs from the gold actions applied directly")
    decisions = [e.decision for e in session.events if isinstance(e, GateDecided)]
    return GoldReport(task.id, not problems, problems, agent.outcomes, decisions, final, gold, session.events, session.env)

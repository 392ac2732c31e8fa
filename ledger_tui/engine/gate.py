"""The policy gate: executable predicates over the ledger, checked before any write runs.

`evaluate` turns one proposed call into a `GateDecision`: ALLOW (run it), REVISE (recoverable:
the model gets feedback and tries again) or BLOCK (refuse). Every predicate that ran is recorded
with the ledger paths and values it read, so "why was this blocked?" is answered from the record.

The gate fails closed: an unknown tool, arguments it cannot validate, or a predicate that raises
all stop the call. Evidence that is missing or stale is a REVISE whose hint is the read call that
would supply it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable

from pydantic import BaseModel, ValidationError

from ledger_tui.engine.events import (
    EvidenceRead,
    GateDecision,
    PredicateResult,
    SuggestedCall,
    ToolCall,
    Verdict,
)
from ledger_tui.engine.ledger import STATED_PREFIX, Ledger

if TYPE_CHECKING:
    from ledger_tui.engine.domain import Domain


@dataclass(frozen=True)
class SessionContext:
    """What the gate knows about the conversation besides the ledger."""

    now: str
    user_id: str | None = None
    identified: tuple[str, ...] = ()
    last_user_message: str = ""
    last_assistant_text: str = ""  # the agent's last text before the customer's latest message
    user_messages: tuple[str, ...] = ()
    assistant_texts: tuple[str, ...] = ()
    # writes that ran (allowed, executed, no tool error) since the customer's latest message: a
    # yes is used up by the writes it authorized
    recent_writes: tuple[ToolCall, ...] = ()
    # every successful read call of the session, by signature: a hint does not suggest again a
    # read that was made and did not supply what is missing
    reads_done: frozenset[str] = frozenset()
    reads_failed: frozenset[str] = frozenset()  # reads that answered an error
    writes_done: tuple[ToolCall, ...] = ()  # every agent write that ran in the session
    # how consent is observed: "card" (asked by the system, answered, recorded under consent.*)
    # or "text" (read from the conversation); see cards.py
    consent: str = "text"
    # the card whose yes the engine is running now (only the calls on it pass the consent check)
    confirming: str | None = None
    # (call key, the customer's words) for each call of a card answered without a yes
    declined: tuple[tuple[str, str], ...] = ()

    @property
    def year(self) -> int:
        """The domain clock's year: dates written without one ("May 16") are in it."""
        try:
            return int(self.now[:4])
        except ValueError:
            return 2024


QUESTION_HINT = "Nothing to do: the system asks the customer, and their answers (the question's, then the card's) decide."


@dataclass(frozen=True)
class Failure:
    reason: str
    hint: str = ""
    call: SuggestedCall | None = None
    verdict: Verdict | None = None  # overrides the predicate's default verdict
    needs_read: bool = False  # only evidence is missing, and `call` is the read that supplies it
    consent: bool = False  # only the customer's confirmation of this exact call is missing (card mode)
    question: str | None = None  # only the customer's answer to this closed question is missing (its ledger path)
    inferred: bool = False  # decided on what the free-text reader took from words, not on the ledger


class MissingEvidence(Exception):
    """Raised by `GateContext.read` when a path is absent or stale: the gate answers REVISE."""

    def __init__(self, path: str, stale: bool) -> None:
        super().__init__(path)
        self.path = path
        self.stale = stale


class _Used(dict):  # type: ignore[type-arg]
    """A record as a check sees it: a copy of the ledger's value that notes which of its top-level
    fields the check looked at (indexing, `get`, `in`; iterating uses them all)."""

    __slots__ = ("used",)

    def __init__(self, value: dict[str, Any] | None = None, used: dict[str, None] | None = None) -> None:
        super().__init__(value or {})
        self.used = {} if used is None else used

    def __getitem__(self, key: str) -> Any:
        self.used[key] = None
        return super().__getitem__(key)

    def get(self, key: str, default: Any = None) -> Any:
        self.used[key] = None
        return super().get(key, default)

    def __contains__(self, key: object) -> bool:
        if isinstance(key, str):
            self.used[key] = None
        return super().__contains__(key)

    def _all(self) -> None:
        for key in super().keys():
            self.used[key] = None

    def __iter__(self):  # type: ignore[no-untyped-def]
        self._all()
        return super().__iter__()

    def items(self):  # type: ignore[no-untyped-def]
        self._all()
        return super().items()

    def values(self):  # type: ignore[no-untyped-def]
        self._all()
        return super().values()


@dataclass
class GateContext:
    """What one predicate sees. Every read goes through here so it lands in the evidence."""

    call: ToolCall
    args: BaseModel
    ledger: Ledger
    session: SessionContext
    domain: "Domain"
    reads: list[EvidenceRead] = field(default_factory=list)
    _used: dict[int, dict[str, None]] = field(default_factory=dict)  # read index -> fields used

    @property
    def arguments(self) -> dict[str, Any]:
        return self.call.arguments

    def _record(self, path: str) -> EvidenceRead:
        entry = self.ledger.get(path)
        if entry is None:
            ev = EvidenceRead(path=path, present=False)
        else:
            ev = EvidenceRead(
                path=path,
                value=entry.value,
                stale=entry.stale,
                origin=entry.origin,
                source_seq=entry.source_seq,
                source_call=entry.source_call,
                quote=entry.quote,
            )
        self.reads.append(ev)
        return ev

    def _shown(self, ev: EvidenceRead) -> Any:
        """The value a check gets back: a record notes the fields the check uses."""
        if not isinstance(ev.value, dict):
            return ev.value
        used = self._used.setdefault(len(self.reads) - 1, {})
        return _Used(ev.value, used)

    def evidence(self) -> list[EvidenceRead]:
        """What the check read, each record with the fields it used."""
        out = list(self.reads)
        for i, used in self._used.items():
            if used:
                out[i] = out[i].model_copy(update={"fields": list(used)})
        return out

    def read(self, path: str) -> Any:
        """An observed, fresh value; raises MissingEvidence (→ REVISE "read it first") otherwise."""
        if path.startswith(STATED_PREFIX):
            raise ValueError("stated facts are read with ctx.stated(), never as evidence")
        ev = self._record(path)
        if not ev.present or ev.stale or ev.origin != "observed":
            raise MissingEvidence(path, stale=ev.stale)
        return self._shown(ev)

    def recall(self, path: str) -> EvidenceRead:
        """What the ledger holds at `path`, stale or not, recorded as evidence. For rules about
        history (e.g. a flight that *was* delayed) where a stale value is still the right fact."""
        ev = self._record(path)
        return ev.model_copy(update={"value": self._shown(ev)}) if isinstance(ev.value, dict) else ev

    def latest(self, path: str) -> Any:
        """The last observed value at `path`, even if stale; raises MissingEvidence if it was
        never read. For what a proposal must name: a write changes few of the facts that decide
        what the customer has to hear (the record's id, its original payment method)."""
        ev = self._record(path)
        if not ev.present or ev.origin != "observed":
            raise MissingEvidence(path, stale=False)
        return self._shown(ev)

    def peek(self, path: str, default: Any = None) -> Any:
        """An observed value if present and fresh, else `default` (no REVISE)."""
        ev = self._record(path)
        if not ev.present or ev.stale or ev.origin != "observed":
            return default
        return self._shown(ev)

    def observed_paths(self, prefix: str) -> list[str]:
        ledger = self.ledger
        return [p for p in ledger.under(prefix) if ledger[p].origin == "observed"]

    def stated(self, key: str, record: str | None = None) -> Any:
        """What the customer said (`said.<key>`), or None. Recorded as stated evidence. With a
        record, what they said of that record (`said.<key>.<record>`) comes first."""
        path = key if key.startswith(STATED_PREFIX) else STATED_PREFIX + key
        if record is not None and self.ledger.get(f"{path}.{record}") is not None:
            path = f"{path}.{record}"
        ev = self._record(path)
        return ev.value if ev.present else None

    def context(self, name: str, value: Any) -> Any:
        """Record a session-context fact (e.g. the customer's latest message) as evidence."""
        self.reads.append(EvidenceRead(path=f"context.{name}", value=value, origin="context"))
        return value

    def user_id(self) -> str | None:
        return self.context("user_id", self.session.user_id)

    @staticmethod
    def fail(
        reason: str, hint: str = "", call: SuggestedCall | None = None, verdict: Verdict | None = None
    ) -> Failure:
        return Failure(reason, hint, call, verdict)

    @staticmethod
    def inferred(reason: str, hint: str = "", verdict: Verdict | None = None) -> Failure:
        """A failure the free-text reader decided (a yes not found in a reply, a reason or a report
        not found in a message): an inferred finding, shown apart from ledger violations."""
        return Failure(reason, hint, None, verdict, inferred=True)

    @staticmethod
    def ask(reason: str, hint: str) -> Failure:
        """The customer has not confirmed this exact call: a REVISE the system answers by asking
        them on a card (consent mode "card"), not a violation."""
        return Failure(reason, hint, None, Verdict.REVISE, consent=True)

    def answered(self, key: str, record: str) -> str | None:
        """The customer's answer to the closed question `key` about `record`, as the system asked
        it and observed it (`answers.<key>.<record>`, see questions.py), or None."""
        from ledger_tui.engine.conversation.questions import answer_path

        ev = self._record(answer_path(key, record))
        if not ev.present or ev.origin != "observed" or not isinstance(ev.value, dict):
            return None
        value = ev.value.get("value")
        return value if isinstance(value, str) else None

    @property
    def asks_questions(self) -> bool:
        """Are facts only the customer can say asked in closed form (consent mode "card")?"""
        return self.session.consent == "card"

    def question(self, key: str, record: str, reason: str) -> Failure:
        """The fact is missing and the system asks the customer for it (consent mode "card"): a
        REVISE that holds the call until the answer, not a violation."""
        from ledger_tui.engine.conversation.questions import answer_path

        return Failure(reason, QUESTION_HINT, None, Verdict.REVISE, question=answer_path(key, record))

    @staticmethod
    def needs(reason: str, call: SuggestedCall, hint: str = "") -> Failure:
        """Evidence the check needs is missing and `call` supplies it: a REVISE that is not a
        violation."""
        return Failure(reason, hint or f"Call {call.signature()} first.", call, Verdict.REVISE, needs_read=True)


Check = Callable[[GateContext], "Failure | None"]


@dataclass(frozen=True)
class Predicate:
    """One executable policy clause.

    `tools` names the tools it guards (None: every write). `reads` documents the ledger path
    templates it consults. `on_fail` is its verdict when `check` returns a Failure.
    """

    name: str
    clause: str
    on_fail: Verdict
    check: Check
    tools: frozenset[str] | None = None
    reads: tuple[str, ...] = ()
    description: str = ""

    def applies(self, tool_name: str, kind: str) -> bool:
        if self.tools is None:
            return kind == "write"
        return tool_name in self.tools


def predicate(
    name: str,
    *,
    clause: str,
    on_fail: Verdict,
    tools: Iterable[str] | None = None,
    reads: Iterable[str] = (),
) -> Callable[[Check], Predicate]:
    """Decorator: turn `def check(ctx) -> Failure | None` into a Predicate (docstring = description)."""

    def wrap(fn: Check) -> Predicate:
        return Predicate(
            name=name,
            clause=clause,
            on_fail=on_fail,
            check=fn,
            tools=None if tools is None else frozenset(tools),
            reads=tuple(reads),
            description=(fn.__doc__ or "").strip(),
        )

    return wrap


def guarded(domain: "Domain", call: ToolCall) -> bool:
    """Does this call go through the gate? Writes always; other tools if a predicate names them."""
    if call.requestor == "user":
        return False
    kind = domain.kind(call.name, call.requestor)
    if kind in ("write", "unknown"):
        return True
    return any(p.tools is not None and call.name in p.tools for p in domain.predicates)


_SEVERITY = {Verdict.ALLOW: 0, Verdict.REVISE: 1, Verdict.BLOCK: 2}


def _finite_numbers(call: ToolCall, arguments: Any) -> GateDecision | None:
    """BLOCK a call with NaN or ±Infinity anywhere in its arguments (raw, or as validated).

    No policy rule can be checked against a non-finite amount: every comparison with NaN is
    false, so a limit like `amount <= 500` would silently pass or fail."""
    import math

    stack: list[tuple[str, Any]] = [("", arguments)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            name = "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
            return _refuse(
                call,
                "finite_numbers",
                "general.arguments",
                Verdict.BLOCK,
                f"{path or 'arguments'} is {name}; the gate does not run calls with non-finite numbers.",
                f"Call {call.name} again with finite numbers.",
            )
        if isinstance(value, BaseModel):
            items: Iterable[tuple[Any, Any]] = ((k, getattr(value, k)) for k in type(value).model_fields)
        elif isinstance(value, dict):
            items = value.items()
        elif isinstance(value, (list, tuple)):
            items = enumerate(value)
        else:
            continue
        stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in reversed(list(items)))
    return None


def evaluate(
    call: ToolCall,
    domain: "Domain",
    ledger: Ledger,
    session: SessionContext,
    predicates: Iterable[Predicate] | None = None,
) -> GateDecision:
    """The gate: every applicable predicate, evaluated; the most severe failure decides."""
    tool = domain.tool(call.name, call.requestor)
    if tool is None:
        return _refuse(
            call,
            "known_tool",
            "general.known-tools",
            Verdict.BLOCK,
            f"{call.name!r} is not a tool of the {domain.name} domain; the gate does not run what it cannot check.",
            "Use one of the domain's tools.",
        )
    refused = _finite_numbers(call, call.arguments)
    if refused is not None:
        return refused
    try:
        args = tool.args.model_validate(call.arguments)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(x) for x in e['loc']) or 'arguments'}: {e['msg']}" for e in exc.errors()[:4]
        )
        return _refuse(
            call,
            "valid_arguments",
            "general.arguments",
            Verdict.REVISE,
            f"The arguments of {call.name} are not valid ({problems}).",
            f"Call {call.name} again with arguments that match its schema.",
        )
    refused = _finite_numbers(call, args)  # strings such as "NaN" the model coerced to a float
    if refused is not None:
        return refused

    results: list[PredicateResult] = []
    for p in domain.predicates if predicates is None else predicates:
        if not p.applies(call.name, tool.kind):
            continue
        ctx = GateContext(call=call, args=args, ledger=ledger, session=session, domain=domain)
        try:
            failure = p.check(ctx)
        except MissingEvidence as missing:
            suggested = suggest_read(domain, missing.path, session)
            what = "is stale (changed since it was read)" if missing.stale else "has not been read"
            how = f"Call {suggested.signature()} first." if suggested else f"Read {missing.path} first."
            failure = Failure(
                reason=f"{missing.path} {what}.",
                hint=how,
                call=suggested,
                verdict=Verdict.REVISE,
                needs_read=suggested is not None,
            )
        except Exception as exc:  # fail closed: a predicate that cannot evaluate stops the call
            results.append(
                PredicateResult(
                    name=p.name,
                    clause=p.clause,
                    passed=False,
                    verdict_on_fail=Verdict.BLOCK,
                    reason=f"{p.name} could not be evaluated ({type(exc).__name__}: {exc}); the call is not executed.",
                    hint="Fix the predicate or the evidence it reads.",
                    reads=ctx.evidence(),
                    error=True,
                )
            )
            continue
        if failure is None:
            results.append(
                PredicateResult(
                    name=p.name, clause=p.clause, passed=True, verdict_on_fail=p.on_fail, reads=ctx.evidence()
                )
            )
            continue
        else:
            results.append(
                PredicateResult(
                    name=p.name,
                    clause=p.clause,
                    passed=False,
                    verdict_on_fail=failure.verdict or p.on_fail,
                    reason=failure.reason,
                    hint=failure.hint,
                    suggested_call=failure.call,
                    reads=ctx.evidence(),
                    needs_read=failure.needs_read,
                    consent=True if failure.consent else None,
                    question=failure.question,
                    inferred=True if failure.inferred else None,
                )
            )
    return _decide(call, results)


def _refuse(call: ToolCall, name: str, clause: str, verdict: Verdict, reason: str, hint: str) -> GateDecision:
    """A call stopped before any predicate runs (unknown tool, invalid or non-finite arguments)."""
    result = PredicateResult(name=name, clause=clause, passed=False, verdict_on_fail=verdict, reason=reason, hint=hint)
    return _decide(call, [result])


def _decide(call: ToolCall, results: list[PredicateResult]) -> GateDecision:
    failed = [r for r in results if not r.passed]
    if not failed:
        return GateDecision(call=call, verdict=Verdict.ALLOW, reason="All policy checks passed.", predicates=results)
    worst = max(_SEVERITY[r.verdict_on_fail] for r in failed)
    verdict = next(v for v, s in _SEVERITY.items() if s == worst)
    deciding = [r for r in failed if r.verdict_on_fail == verdict]
    # violations first: a missing read, a question to the customer, then a missing consent are
    # the smaller news when a rule is broken anyway (and the question is asked before the card)
    deciding.sort(key=lambda r: (bool(r.consent), bool(r.question), r.needs_a_read()))
    reasons: list[str] = []
    for r in deciding:
        if r.reason not in reasons:
            reasons.append(r.reason)
    hints = []
    for r in deciding:
        if r.hint and r.hint not in hints:
            hints.append(r.hint)
    if all(r.asks_consent() for r in deciding) and any(r.question for r in deciding):
        hints = [QUESTION_HINT]  # one sentence for what waits on the customer
    suggested: list[SuggestedCall] = []
    for r in deciding:
        if r.suggested_call and r.suggested_call not in suggested:
            suggested.append(r.suggested_call)
    return GateDecision(
        call=call,
        verdict=verdict,
        reason=" ".join(reasons),
        hint=" ".join(hints),
        suggested_calls=suggested,
        predicates=results,
    )


def suggest_read(domain: "Domain", path: str, session: SessionContext) -> SuggestedCall | None:
    """The read call that would put `path` in the ledger, from the domain's declared sources."""
    for pattern, tool_name in getattr(domain, "sources", []):
        args = _match_pattern(pattern, path)
        if args is not None:
            return SuggestedCall(name=tool_name, arguments=args)
    return None


_PATTERN_CACHE: dict[str, re.Pattern[str]] = {}


def _match_pattern(pattern: str, path: str) -> dict[str, str] | None:
    rx = _PATTERN_CACHE.get(pattern)
    if rx is None:
        parts = re.split(r"(\{[a-z_]+\})", pattern)
        regex = "".join(
            f"(?P<{p[1:-1]}>.+?)" if p.startswith("{") else re.escape(p) for p in parts
        )
        rx = _PATTERN_CACHE[pattern] = re.compile("^" + regex + "$")
    m = rx.match(path)
    return None if m is None else m.groupdict()


def feedback(decision: GateDecision) -> str:
    """The tool message the model reads when the gate stops a call."""
    if decision.verdict == Verdict.REVISE:
        text = f"POLICY GATE: REVISE. {decision.call.name} was not executed. {decision.reason}"
        if decision.hint:
            text += f" To proceed: {decision.hint}"
        return text
    return f"POLICY GATE: BLOCK. {decision.call.name} is not allowed and was not executed. {decision.reason}"

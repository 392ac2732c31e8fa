"""What-if: re-run the gate on a recorded decision with one thing changed.

The ledger and session context are rebuilt with the same fold replay uses (state just before the
decision), the operator's edit is applied to a call argument or a ledger value, and the domain's
current predicates judge again. Nothing is executed; this only answers "what would change the verdict?".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal, Sequence

from ledger_tui.engine.domain import Domain
from ledger_tui.engine.events import Event, GateDecided, GateDecision
from ledger_tui.engine.fold import SessionState, fold
from ledger_tui.engine.gate import evaluate
from ledger_tui.engine.ledger import STATED_PREFIX, absorb, state


@dataclass(frozen=True)
class Edit:
    """Change one argument of the call, or one ledger path (as a fresh observed value)."""

    target: Literal["argument", "ledger"]
    key: str
    value: Any


def state_before(events: Sequence[Event], decided: GateDecided) -> SessionState:
    """The state the gate saw: every event before the decision, folded."""
    index = next((i for i, e in enumerate(events) if e is decided or e.seq == decided.seq), len(events))
    return fold(events, upto=index - 1)


def what_if(decided: GateDecided, before: SessionState, domain: Domain, edit: Edit) -> GateDecision:
    """The verdict the gate would give with `edit` applied (the recorded decision is untouched)."""
    call = decided.decision.call
    ledger = before.ledger
    if edit.target == "argument":
        call = call.model_copy(update={"arguments": {**call.arguments, edit.key: edit.value}})
    elif edit.key.startswith(STATED_PREFIX):  # what the customer said stays "stated", never evidence
        ledger, _ = state(ledger, [(edit.key, edit.value)], source_call="what-if edit", source_seq=None)
    else:
        ledger, _ = absorb(ledger, [(edit.key, edit.value)], source_call="what-if edit", source_seq=None)
    return evaluate(call, domain, ledger, before.context())


def editable_targets(decided: GateDecided, before: SessionState) -> list[tuple[str, str, Any]]:
    """(target, key, current value) the operator may edit: the call's arguments, then every ledger
    path a predicate read (deduplicated, context facts excluded)."""
    out: list[tuple[str, str, Any]] = [("argument", k, v) for k, v in decided.decision.call.arguments.items()]
    seen: set[str] = set()
    for p in decided.decision.predicates:
        for r in p.reads:
            if r.origin == "context" or r.path in seen:
                continue
            seen.add(r.path)
            out.append(("ledger", r.path, before.ledger.value(r.path, r.value)))
    return out

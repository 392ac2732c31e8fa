"""What-if: re-run the gate on a recorded decision with some things changed.

The ledger and session context are rebuilt with the same fold replay uses (state just before the
decision), the operator's edits are applied (call arguments, ledger values, or single fields of a
ledger record), and the domain's current predicates judge again. Edits add up until reset. Nothing
is executed; this only answers "what would change the verdict?".
"""

from __future__ import annotations

import copy
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Literal, Sequence

from ledger_tui.engine.events import Event, GateDecided, GateDecision
from ledger_tui.engine.store.fold import SessionState, fold
from ledger_tui.engine.disclosure import is_read_decision, rejudge
from ledger_tui.engine.gate import evaluate
from ledger_tui.engine.ledger import STATED_PREFIX, absorb, state

if TYPE_CHECKING:
    from ledger_tui.engine.domain import Domain


@dataclass(frozen=True)
class Edit:
    """Change one argument of the call, or one ledger path (as a fresh observed value), or with
    `field`, one top-level field of the record at that path."""

    target: Literal["argument", "ledger"]
    key: str
    value: Any
    field: str | None = None

    @property
    def slot(self) -> tuple[str, str, str | None]:
        """What the edit changes: a later edit of the same slot replaces it."""
        return (self.target, self.key, self.field)

    def label(self) -> str:
        if self.target == "argument":
            return f"arg {self.key}"
        return f"{self.key} › {self.field}" if self.field is not None else self.key


def state_before(events: Sequence[Event], decided: GateDecided) -> SessionState:
    """The state the gate saw: every event before the decision, folded."""
    index = next((i for i, e in enumerate(events) if e is decided or e.seq == decided.seq), len(events))
    return fold(events, upto=index - 1)


def what_if(decided: GateDecided, before: SessionState, domain: Domain, edits: Edit | Iterable[Edit]) -> GateDecision:
    """The verdict the gate would give with `edits` applied (the recorded decision is untouched)."""
    edits = [edits] if isinstance(edits, Edit) else list(edits)
    call = decided.decision.call
    arguments = dict(call.arguments)
    values: dict[str, Any] = {}  # ledger path -> its edited value
    for edit in edits:
        if edit.target == "argument":
            arguments[edit.key] = edit.value
        elif edit.field is None:
            values[edit.key] = edit.value
        else:
            record = values.get(edit.key, before.ledger.value(edit.key))
            record = copy.deepcopy(record) if isinstance(record, dict) else {}
            record[edit.field] = edit.value
            values[edit.key] = record
    if arguments != call.arguments:
        call = call.model_copy(update={"arguments": arguments})
    ledger = before.ledger
    for path, value in values.items():
        if path.startswith(STATED_PREFIX):  # what the customer said stays "stated", never evidence
            ledger, _ = state(ledger, [(path, value)], source_call="what-if edit", source_seq=None)
        else:
            ledger, _ = absorb(ledger, [(path, value)], source_call="what-if edit", source_seq=None)
    context = before.context()
    if is_read_decision(decided.decision, domain):  # the read gate: judged on the records it read
        return rejudge(decided.decision, domain, ledger, context, values)
    card = before.confirming(decided.decision.call.id)
    if card is not None:  # the call ran on a card's yes: judged as the engine judged it then
        context = dataclasses.replace(context, confirming=card)
    return evaluate(call, domain, ledger, context)


def editable_targets(decided: GateDecided, before: SessionState) -> list[Edit]:
    """What the operator may edit, each as an Edit holding its current value: the call's
    arguments, then every ledger path a predicate read (context facts excluded). A record is
    edited a field at a time, the fields a check used first; any other value whole."""
    out: list[Edit] = [Edit("argument", k, v) for k, v in decided.decision.call.arguments.items()]
    used: dict[str, list[str]] = {}
    recorded: dict[str, Any] = {}
    for p in sorted(decided.decision.predicates, key=lambda p: p.passed):  # the failed checks' fields first
        for r in p.reads:
            if r.origin == "context":
                continue
            recorded.setdefault(r.path, r.value)
            fields = used.setdefault(r.path, [])
            fields += [f for f in r.fields or () if f not in fields]
    for path, fields in used.items():
        value = before.ledger.value(path, recorded[path])
        if isinstance(value, dict) and value:
            for name in fields + [k for k in value if k not in fields]:
                out.append(Edit("ledger", path, value.get(name), field=name))
        else:
            out.append(Edit("ledger", path, value))
    return out

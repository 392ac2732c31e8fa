"""How tool outcomes change the ledger: the only place the engine turns results into entries.

`observe_read` absorbs a successful read (and records who it identified); `observe_write` marks the
paths a successful write or customer action touched as stale. Failed calls change nothing.
"""

from __future__ import annotations

from typing import Any, Sequence

from ledger_tui.engine.domain import Domain
from ledger_tui.engine.environment import Outcome
from ledger_tui.engine.events import LedgerUpdated, ToolCall
from ledger_tui.engine.store.fold import CURRENT_USER, IDENTIFIED_PREFIX
from ledger_tui.engine.ledger import Ledger, absorb, mark_stale, state
from ledger_tui.engine.store.serialize import jsonable


def read_pairs(call: ToolCall, outcome: Outcome) -> list[tuple[str, Any]]:
    """The (path, value) pairs a successful read contributes, by its tool's path map."""
    tool = outcome.tool
    if outcome.error or tool is None or tool.kind != "read":
        return []
    return _pairs(tool, call, jsonable(outcome.value))


def _pairs(tool: Any, call: ToolCall, value: Any) -> list[tuple[str, Any]]:
    return list(tool.absorbs(call.arguments, value)) if tool.absorbs else []


def observe_read(
    domain: Domain,
    ledger: Ledger,
    call: ToolCall,
    outcome: Outcome,
    seq: int | None,
    customer_text: Sequence[str] = (),
    withheld: bool = False,
    pairs: list[tuple[str, Any]] | None = None,
) -> tuple[Ledger, list[LedgerUpdated]]:
    """Absorb a successful read. It identifies the customer only when the customer said what it
    looked up (`customer_text`: their messages so far). `withheld`: the read gate kept its result
    from the model (disclosure.py), so its records stay out of the prompt's block. `pairs`: the
    read's path-map pairs when the caller has them already (`read_pairs`)."""
    tool = outcome.tool
    if outcome.error or tool is None or tool.kind != "read":
        return ledger, []
    value = jsonable(outcome.value)
    pairs = list(pairs) if pairs is not None else _pairs(tool, call, value)
    served: list[tuple[str, Any]] = []  # who the conversation serves: never withheld
    if tool.identifies is not None:
        user_id = tool.identified_by(call.arguments, value, customer_text)
        if user_id and ledger.get(IDENTIFIED_PREFIX + str(user_id)) is None:  # the first read that did
            current = ledger.get(CURRENT_USER)
            found = [(IDENTIFIED_PREFIX + str(user_id), call.name)]
            if current is None:
                served += found + [(CURRENT_USER, str(user_id))]
            else:  # a second customer: withheld with the records when the read is (one customer)
                pairs += found
    if not withheld:
        return absorb(ledger, pairs + served, source_call=call.signature(), source_seq=seq)
    ledger, hidden = absorb(ledger, pairs, source_call=call.signature(), source_seq=seq, withheld=True)
    ledger, shown = absorb(ledger, served, source_call=call.signature(), source_seq=seq)
    return ledger, hidden + shown


def observe_write(
    domain: Domain, ledger: Ledger, call: ToolCall, outcome: Outcome, seq: int | None
) -> tuple[Ledger, list[LedgerUpdated]]:
    tool = outcome.tool
    if outcome.error or tool is None or tool.kind == "read":
        return ledger, []
    touched = tool.touched_paths(call.arguments, jsonable(outcome.value))
    if not touched:
        return ledger, []
    who = "the customer" if call.requestor == "user" else "a write"
    return mark_stale(
        ledger, touched, because=f"{call.signature()} by {who}", source_seq=seq, keep=(CURRENT_USER, IDENTIFIED_PREFIX)
    )


def observe_statements(
    domain: Domain, ledger: Ledger, message: str, seq: int | None
) -> tuple[Ledger, list[LedgerUpdated]]:
    """What the customer's message states (see `stated.py`), under `said.*` with its words."""
    facts = [fact for st in domain.statements for fact in st.facts(message)]
    if not facts:
        return ledger, []
    return state(
        ledger,
        [(f.path, f.value) for f in facts],
        source_call="customer message",
        source_seq=seq,
        quotes={f.path: f.quote for f in facts},
    )

"""The read gate: no customer sees another customer's data.

The method gates writes; in the gated modes (`gate`, `full`) this gates what a read shows the
model too. The read runs: its result is what says whose record it is. When that result holds a
record of a customer other than the identified one, a customer's record before anyone is
identified, or what an identifying lookup found of someone the customer did not give as
themselves, the model gets a tool result saying so in place of the record. The record still enters
the ledger, marked withheld: the gate's checks read it (a write on it BLOCKs on ownership as
before), the prompt's block leaves it out until a read shows it to its owner.

The decision is a `GateDecision` on the read, verdict REVISE (the call ran; the model is told and
goes on), one failed check, `record_of_identified_customer`, with `withheld` set: category
"disclosure". Its evidence is each record's path and the field that names its owner (as the read
returned them), who is identified, and, for a lookup, whom it found and whom the customer said
they are.

Shared facts (flights, products, plans, providers, suppliers) have no owner and are never withheld.
Which paths hold whose records is each domain's `ReadGate.owner_of`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Sequence

from ledger_tui.engine.events import EvidenceRead, GateDecision, PredicateResult, ToolCall, Verdict

if TYPE_CHECKING:
    from ledger_tui.engine.domain import Domain
    from ledger_tui.engine.gate import SessionContext
    from ledger_tui.engine.ledger import Ledger

PREDICATE = "record_of_identified_customer"
# what `owner_of` answers for a path that holds a customer's record when the ledger cannot tell
# whose (a line no customer record read so far lists): withheld, as another customer's would be
NOT_KNOWN = "?"


@dataclass(frozen=True)
class ReadGate:
    """A domain's part of the read gate."""

    clause: str  # the policy clause it enforces (in the domain's policy.md)
    # Whose record the ledger path holds, from the value read there and the ledger before the
    # read: a customer id, NOT_KNOWN, or None for a shared fact.
    owner_of: Callable[[str, Any, "Ledger"], str | None]
    # the owner's field of a record at a path, for the evidence ("user_id"); None: none names it
    owner_field: Callable[[str], str | None] = lambda path: None
    identify: str = "identify them first"  # how the customer is identified, for the hint
    # the path prefixes of customers' profiles ("users."): an identifying lookup that returns one
    # of someone else's says it found nobody to act for, as a lookup that returns only an id does
    profiles: tuple[str, ...] = ()


def by_field(
    clause: str,
    fields: dict[str, str],
    profiles: tuple[str, ...],
    identify: str,
    more: Callable[[str, Any, "Ledger"], str | None] | None = None,
) -> ReadGate:
    """The read gate of a domain whose records name their owner: `fields` maps a collection (the
    path's first part, "reservations") to the field that holds the owner's id ("user_id"); a
    profile collection's key is its owner when the field is missing; a record without it has an
    owner the ledger cannot name. `more` decides the other paths (None for a shared fact)."""

    def owner_of(path: str, value: Any, ledger: "Ledger") -> str | None:
        collection, _, key = path.partition(".")
        field_name = fields.get(collection)
        if field_name is None:
            return more(path, value, ledger) if more is not None else None
        owner = value.get(field_name) if isinstance(value, dict) else None
        if owner:
            return str(owner)
        return key if collection + "." in profiles else NOT_KNOWN

    return ReadGate(
        clause=clause, owner_of=owner_of, owner_field=lambda path: fields.get(path.partition(".")[0]),
        identify=identify, profiles=profiles,
    )


@dataclass(frozen=True)
class Owned:
    path: str
    value: Any
    owner: str  # a customer id, or NOT_KNOWN
    field: str | None


def owned_records(domain: "Domain", call: ToolCall, value: Any, pairs: Sequence[tuple[str, Any]], ledger: "Ledger") -> list[Owned]:
    """The customer records among a read's (path, value) pairs, with their owners; for an
    identifying lookup that records nothing of its own (retail's `find_user_id_by_email`), the
    customer it found."""
    gate = domain.read_gate
    if gate is None:
        return []
    found: list[Owned] = []
    for path, record in pairs:  # (the path map's: who was identified is added after, by observe_read)
        owner = gate.owner_of(path, record, ledger)
        if owner is not None:
            found.append(Owned(path, record, str(owner), gate.owner_field(path)))
    tool = domain.tool(call.name, call.requestor)
    if not found and tool is not None and tool.identifies is not None:
        who = tool.identifies(call.arguments, value)
        if who:
            found.append(Owned(f"{call.name} found", value, str(who), None))
    return found


def check_read(
    domain: "Domain",
    call: ToolCall,
    value: Any,
    pairs: Sequence[tuple[str, Any]],
    ledger: "Ledger",
    session: "SessionContext",
    customer_text: Sequence[str],
    seq: int | None,
) -> tuple[GateDecision, str] | None:
    """The read gate's decision on one successful read and the tool message the model reads in
    place of its result; None when the result shows nothing of a customer other than the one
    identified (by an earlier read, or by this one: the lookup that identifies the speaker)."""
    tool = domain.tool(call.name, call.requestor)
    if domain.read_gate is None or tool is None or tool.kind != "read" or call.requestor == "user":
        return None
    owned = owned_records(domain, call, value, pairs, ledger)
    if not owned:
        return None
    me = session.user_id
    speaker = tool.identified_by(call.arguments, value, customer_text) if tool.identifies is not None else None
    if me is None and speaker:
        me = speaker  # this read identifies the customer: their own record is theirs to see
    strangers = [o for o in owned if o.owner != me]
    if me is not None and not strangers:
        return None
    gate = domain.read_gate
    # an identifying lookup that found someone else's profile (or only their id): nobody to act for
    lookup = tool.identifies is not None and all(
        o.path == f"{call.name} found" or o.path.startswith(gate.profiles) for o in strangers
    ) and bool(gate.profiles or any(o.path == f"{call.name} found" for o in strangers))
    if lookup:
        found = ", ".join(sorted({o.owner for o in strangers}))
        if me is None:
            reason = (
                f"{call.name} found {found}, but the customer has not given what it looked up as their own, "
                "so it identifies nobody: there is no customer to act for, and the read gate withholds the result."
            )
        else:
            reason = f"{call.name} found {found}, not the identified customer {me}: the read gate withholds the result."
    elif me is None:
        whose = ", ".join(sorted({o.path for o in strangers}))
        reason = f"{whose} is a customer's record and no customer is identified yet: the read gate withholds it."
    else:
        parts = []
        for o in strangers:
            owner = "a customer the ledger cannot name" if o.owner == NOT_KNOWN else o.owner
            parts.append(f"{o.path} belongs to {owner}")
        reason = f"{'; '.join(parts)}, not to the identified customer {me}: the read gate withholds it."
    reads = [_evidence(o, call, seq) for o in owned]
    reads.append(EvidenceRead(path="context.user_id", value=session.user_id, origin="context"))
    if tool.identifies is not None:
        reads.append(EvidenceRead(path="context.speaker", value=speaker, origin="context"))
    result = PredicateResult(
        name=PREDICATE,
        clause=gate.clause,
        passed=False,
        verdict_on_fail=Verdict.REVISE,
        reason=reason,
        hint=_hint(me, bool(lookup), gate.identify),
        reads=reads,
        withheld=True,
    )
    decision = GateDecision(call=call, verdict=Verdict.REVISE, reason=reason, hint=result.hint, predicates=[result])
    return decision, _withheld_text(call.name, me, bool(lookup), result.hint)


def _evidence(owned: Owned, call: ToolCall, seq: int | None) -> EvidenceRead:
    if owned.field is None:
        return EvidenceRead(path=owned.path, value=owned.value, source_seq=seq, source_call=call.signature())
    return EvidenceRead(path=owned.path, value=owned.value, source_seq=seq, source_call=call.signature(), fields=[owned.field])


def _hint(me: str | None, lookup: bool, identify: str) -> str:
    if me is None:
        return f"Identify the customer from what they say is theirs ({identify}); share nothing of anyone else."
    if lookup:
        return "Serve the identified customer only; another person must contact us themselves."
    return "Share nothing of another customer's records; serve the identified customer only."


def _withheld_text(name: str, me: str | None, lookup: bool, hint: str) -> str:
    """The tool message the model reads in place of a withheld result: it names nobody (not even
    the owner's id, which is theirs too)."""
    head = f"POLICY GATE: WITHHELD. {name} ran, but its result is not shown:"
    if lookup:
        return f"{head} it found no customer you can act for with these details. {hint}"
    if me is None:
        return f"{head} it is a customer's record, and no customer is identified in this conversation yet. {hint}"
    return f"{head} it belongs to another customer, not to the customer you are serving. {hint}"


def disclosed(decision: GateDecision, later_texts: Sequence[str]) -> list[tuple[str, str]]:
    """What of the records a disclosure decision names the agent then said: (field, value) for
    each value of the records (a string of 4 or more characters, or a number of 3 or more digits;
    ids of the record itself left out) found in `later_texts`, the agent's messages after the read.
    For an imported run, whose agent saw the record, this is what it disclosed."""
    from ledger_tui.engine.conversation.text import find, tokens, value_tokens

    said_tokens = [tokens(t) for t in later_texts if t]
    found: list[tuple[str, str]] = []
    for result in decision.predicates:
        if not result.withheld:
            continue
        for read in result.reads:
            if read.origin == "context":
                continue
            record_id = read.path.rsplit(".", 1)[-1]
            for where, leaf in _leaves(read.path.split(".", 1)[0], read.value):
                text = str(leaf)
                if text == record_id or (isinstance(leaf, str) and len(text) < 4) or (not isinstance(leaf, str) and len(text.replace(".", "")) < 3):
                    continue
                needle = value_tokens(leaf)
                if needle and any(find(toks, needle) >= 0 for toks in said_tokens) and (where, text) not in found:
                    found.append((where, text))
    return found


def said_after(events: Sequence[Any], seq: int) -> list[str]:
    """What the agent said after event `seq` (its messages' text): where `disclosed` looks."""
    from ledger_tui.engine.events import AssistantMessage

    return [e.text for e in events if isinstance(e, AssistantMessage) and e.seq > seq and e.text]


def _leaves(where: str, value: Any, depth: int = 0) -> list[tuple[str, Any]]:
    if depth > 6:
        return []
    if isinstance(value, dict):
        return [leaf for k, v in value.items() for leaf in _leaves(str(k), v, depth + 1)]
    if isinstance(value, list):
        return [leaf for v in value for leaf in _leaves(where, v, depth + 1)]
    if isinstance(value, bool) or value is None:
        return []
    return [(where, value)]


ALLOWED_REASON = "The read shows only the identified customer's records (or shared facts)."


def rejudge(
    decision: GateDecision, domain: "Domain", ledger: "Ledger", session: "SessionContext", values: dict[str, Any] | None = None
) -> GateDecision:
    """A recorded read decision judged again on the records its evidence holds, with `values`
    (ledger path -> value, e.g. a what-if edit of the owner field) in place of those recorded:
    the read gate's decision, or an ALLOW when it would now show the result."""
    values = values or {}
    result = next((p for p in decision.predicates if p.withheld), None)
    reads = result.reads if result is not None else []
    pairs = [(r.path, values.get(r.path, r.value)) for r in reads if r.origin != "context" and not r.path.endswith(" found")]
    found = next((r for r in reads if r.path.endswith(" found")), None)
    if found is not None:
        value = values.get(found.path, found.value)
    else:
        value = pairs[0][1] if len(pairs) == 1 else [v for _, v in pairs]
    seq = next((r.source_seq for r in reads if r.source_seq is not None), None)
    again = check_read(domain, decision.call, value, pairs, ledger, session, session.user_messages, seq)
    if again is not None:
        return again[0]
    passed = PredicateResult(
        name=PREDICATE, clause=domain.read_gate.clause if domain.read_gate else "", passed=True,
        verdict_on_fail=Verdict.REVISE, reads=[*(r for r in reads if r.origin != "context"), EvidenceRead(path="context.user_id", value=session.user_id, origin="context")],
    )
    return GateDecision(call=decision.call, verdict=Verdict.ALLOW, reason=ALLOWED_REASON, predicates=[passed])


def is_read_decision(decision: GateDecision, domain: "Domain | None" = None) -> bool:
    """A decision of the read gate (recorded withheld, or on a call the domain says is a read)."""
    if any(p.withheld for p in decision.predicates) or any(p.name == PREDICATE for p in decision.predicates):
        return True
    return domain is not None and domain.kind(decision.call.name, decision.call.requestor) == "read"

"""The optional facts added to events after they were first written are left out of their JSON
while None (`OmitsUnset`), by pydantic's own serializer where it has `exclude_if` and by the model's
serializer in an older one: a file that never had them keeps its bytes, one that has them keeps them."""

from __future__ import annotations

import json

import pytest

from ledger_tui.engine import events as ev
from ledger_tui.engine.events import (
    AssistantMessage,
    EvidenceRead,
    GateDecided,
    GateDecision,
    HelperCall,
    LedgerUpdated,
    OmitsUnset,
    PredicateResult,
    SessionStarted,
    TokenUsage,
    ToolCall,
    ToolResult,
    Verdict,
    dump_event,
    parse_event,
)


def _models(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_models(sub)]
    return found


def test_each_omitted_field_is_declared_with_unset():
    named = 0
    for cls in _models(OmitsUnset):
        for name in cls._OMIT_WHEN_NONE:
            field = cls.model_fields[name]
            assert field.default is None, (cls.__name__, name)
            named += 1
        if ev._OMITTED_BY_PYDANTIC:
            by_value = {name for name, field in cls.model_fields.items() if field.exclude_if is not None}
            assert by_value == set(cls._OMIT_WHEN_NONE), cls.__name__
    assert named >= 13  # (the models counted, so an empty search cannot pass)


def _reads(**kw):
    return EvidenceRead(path="reservations.R1.status", value="confirmed", **kw)


def _check(**kw):
    return PredicateResult(name="p", clause="c", passed=False, verdict_on_fail=Verdict.REVISE, reads=[_reads()], **kw)


# each model with omitted fields: made without them, and with each set to a value
CASES = [
    (lambda **kw: SessionStarted(session_id="s", domain="d", model="m", mode="full", policy_digest="p", db_digest="d",
                                 clock="now", **kw), {"consent": "card", "forked_from": {"file": "a.jsonl", "step": 3}}),
    (lambda **kw: AssistantMessage(text="hi", **kw), {"finish_reason": "length"}),
    (lambda **kw: ToolResult(call_id="c", name="n", content="{}", **kw), {"withheld": True}),
    (lambda **kw: LedgerUpdated(path="a.b", change="added", after=1, **kw), {"withheld": False}),
    (lambda **kw: TokenUsage(prompt_tokens=3, **kw), {"cached_tokens": 0}),
    (lambda **kw: HelperCall(helper="tools", model="m", **kw), {"cached_tokens": 2, "finish_reason": "stop"}),
    (lambda **kw: EvidenceRead(path="x", **kw), {"fields": ["status"]}),
    (lambda **kw: _check(**kw), {"consent": True, "inferred": False, "question": "q.a", "withheld": False}),
]


@pytest.mark.parametrize("make,values", CASES, ids=lambda c: getattr(c, "__name__", "values"))
def test_unset_facts_are_left_out_and_set_ones_kept(make, values):
    bare = make()
    for dumped in (json.loads(bare.model_dump_json()), bare.model_dump(mode="json"), bare.model_dump()):
        assert not set(values) & set(dumped)
        assert "path" in dumped or "type" in dumped or "name" in dumped  # the other fields are there
    full = make(**values)
    dumped = json.loads(full.model_dump_json())
    for name, value in values.items():
        assert dumped[name] == value
    assert full.model_dump(mode="json")[name] == value
    assert type(full).model_validate_json(full.model_dump_json()) == full


def test_nested_models_omit_their_unset_facts_in_an_events_line():
    call = ToolCall(id="c1", name="cancel_reservation", arguments={"reservation_id": "R1"})
    decided = GateDecided(seq=4, decision=GateDecision(call=call, verdict=Verdict.REVISE, reason="r",
                                                       predicates=[_check(), _check(consent=True)]))
    line = dump_event(decided)
    checks = json.loads(line)["decision"]["predicates"]
    assert [sorted({"consent", "inferred", "question", "withheld"} & set(c)) for c in checks] == [[], ["consent"]]
    assert all("fields" not in r for c in checks for r in c["reads"])
    assert dump_event(parse_event(line)) == line

"""The ledger: absorb, staleness, stated facts, deterministic render, fold equivalence."""

from ledger_tui.engine.ledger import EMPTY, absorb, apply_update, mark_stale, render, state


def test_absorb_records_values_with_their_source_and_reports_changes():
    ledger, updates = absorb(EMPTY, [("reservations.ZFA04Y", {"cabin": "economy"})], source_call="get(ZFA04Y)", source_seq=4)
    assert ledger["reservations.ZFA04Y"].value == {"cabin": "economy"}
    assert ledger["reservations.ZFA04Y"].source_seq == 4
    assert [(u.path, u.change) for u in updates] == [("reservations.ZFA04Y", "added")]

    again, updates = absorb(ledger, [("reservations.ZFA04Y", {"cabin": "business"})], source_call="get(ZFA04Y)", source_seq=9)
    assert updates[0].change == "changed"
    assert updates[0].before == {"cabin": "economy"} and updates[0].after == {"cabin": "business"}
    assert ledger["reservations.ZFA04Y"].value == {"cabin": "economy"}, "absorb must not mutate the old ledger"


def test_render_is_byte_identical_whatever_the_insertion_order():
    a, _ = absorb(EMPTY, [("users.u1", {"b": 1, "a": 2}), ("orders.#W1", [1, 2])], source_call="x", source_seq=1)
    b, _ = absorb(EMPTY, [("orders.#W1", [1, 2]), ("users.u1", {"a": 2, "b": 1})], source_call="y", source_seq=7)
    assert render(a) == render(b)
    assert render(a).splitlines() == ["[Current Task State]", 'orders.#W1 = [1,2]', 'users.u1 = {"a":2,"b":1}']


def test_write_marks_touched_paths_stale_and_a_re_read_clears_it():
    ledger, _ = absorb(EMPTY, [("reservations.R1", {"n": 1}), ("reservations.R2", {"n": 2})], source_call="r", source_seq=1)
    ledger, updates = mark_stale(ledger, ["reservations.R1"], because="cancel(R1)", source_seq=5)
    assert [u.path for u in updates] == ["reservations.R1"]
    assert ledger.fresh("reservations.R1") is None and ledger.fresh("reservations.R2") is not None
    assert "STALE" in render(ledger).splitlines()[1]
    ledger, updates = absorb(ledger, [("reservations.R1", {"n": 1})], source_call="r", source_seq=8)
    assert updates[0].change == "refreshed"
    assert ledger.fresh("reservations.R1") is not None


def test_prefix_templates_mark_a_whole_subtree_stale():
    ledger, _ = absorb(EMPTY, [("bills.B1", 1), ("bills.B2", 2), ("lines.L1", 3)], source_call="r", source_seq=1)
    ledger, updates = mark_stale(ledger, ["bills.*"], because="make_payment by the customer", source_seq=2)
    assert sorted(u.path for u in updates) == ["bills.B1", "bills.B2"]
    assert ledger.fresh("lines.L1") is not None


def test_stated_facts_are_rendered_apart_and_never_as_observed():
    ledger, _ = absorb(EMPTY, [("users.u1", {"id": "u1"})], source_call="r", source_seq=1)
    ledger, _ = state(ledger, [("cancel_reason", "health")], source_call="customer message", source_seq=2)
    assert ledger["said.cancel_reason"].origin == "stated"
    text = render(ledger)
    observed_part, stated_part = text.split("[Stated by the customer (unverified)]")
    assert "said.cancel_reason" in stated_part and "said." not in observed_part


def test_replaying_updates_rebuilds_the_same_ledger():
    ledger, u1 = absorb(EMPTY, [("a.1", 1), ("a.2", 2)], source_call="r", source_seq=1)
    ledger, u2 = mark_stale(ledger, ["a.1"], because="w", source_seq=2)
    ledger, u3 = state(ledger, [("reason", "weather")], source_call="m", source_seq=3)
    rebuilt = EMPTY
    for u in u1 + u2 + u3:
        rebuilt = apply_update(rebuilt, u)
    assert render(rebuilt) == render(ledger)


def test_an_entry_marked_stale_keeps_every_other_field():
    """`Entry.staled` builds the stale entry field by field (a replay marks thousands): every field
    but the two it sets must come through, a field added to Entry later included."""
    from dataclasses import fields, replace

    from ledger_tui.engine.ledger import Entry

    given = {"path": "orders.#W1", "value": {"id": 1}, "origin": "observed", "source_seq": 7, "source_call": "get_order(order_id=\"#W1\")"}
    for f in fields(Entry):  # every other field set apart from its default, whatever its type
        if f.name not in given and f.name not in ("stale", "stale_because"):
            given[f.name] = True if f.type == "bool" else f"set {f.name}"
    entry = Entry(**given)
    entry.text  # (its text worked out once: kept by the stale entry too)
    because = "cancel_order(order_id=\"#W1\")"
    staled, replaced = entry.staled(because), replace(entry, stale=True, stale_because=because)
    assert {f.name: getattr(staled, f.name) for f in fields(Entry)} == {f.name: getattr(replaced, f.name) for f in fields(Entry)}
    assert staled.stale and staled.stale_because == because and staled._text == entry._text is not None

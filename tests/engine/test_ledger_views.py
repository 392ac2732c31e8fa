"""The ledger's shared views against a plain dict: a derived ledger, however it was built (updates
one by one, in batches, on branches, rendered at any point), renders the bytes a render from
scratch gives, iterates in insertion order, answers prefix queries and marks staleness as a scan
of every path would."""

from __future__ import annotations

from dataclasses import replace
from unittest import mock

from hypothesis import given, settings, strategies as st

from ledger_tui.engine.events import LedgerUpdated
from ledger_tui.engine.ledger import EMPTY, Ledger, absorb, apply_update, mark_stale, render, state

SEGMENTS = ("a", "b", "ab", "users", "identified", "said", "current", "x1", "x2", "x10")
paths = st.builds(lambda parts: ".".join(parts), st.lists(st.sampled_from(SEGMENTS), min_size=1, max_size=3))
values = st.one_of(
    st.integers(-3, 3),
    st.text(max_size=3),
    st.dictionaries(st.sampled_from("kv"), st.one_of(st.integers(0, 2), st.none(), st.lists(st.integers(0, 1), max_size=1)), max_size=2),
)
patterns = st.one_of(paths, paths.map(lambda p: p + ".*"))

op = st.one_of(
    st.tuples(st.just("absorb"), st.lists(st.tuples(paths, values), max_size=40), st.booleans()),  # withheld or shown
    st.tuples(st.just("state"), st.lists(st.tuples(paths, values), max_size=3)),
    st.tuples(st.just("stale"), st.lists(patterns, max_size=3), st.booleans()),
    st.tuples(st.just("replay"), paths, values, st.sampled_from(["added", "changed", "stale"])),
    st.tuples(st.just("render")),
    st.tuples(st.just("branch")),
    st.tuples(st.just("current"), st.sampled_from(SEGMENTS)),
)


def matches(template_path: str, path: str) -> bool:
    """`a.b` matches exactly; `a.*` matches every path under `a.`."""
    if template_path.endswith(".*"):
        return path.startswith(template_path[:-1])
    return path == template_path


def scan_stale(entries: dict, touched: list[str], because: str, keep: tuple[str, ...]) -> list[str]:
    """What mark_stale marked before it had views: a scan of every path, in the ledger's order."""
    return [
        p for p, e in entries.items()
        if e.origin == "observed" and not e.stale and not (keep and p.startswith(keep))
        and any(matches(t, p) for t in touched)
    ]


def check(ledger: Ledger, model: dict) -> None:
    assert list(ledger) == list(model)
    assert len(ledger) == len(model)
    assert ledger.render() == render(ledger) == render(Ledger(model))
    for p, e in model.items():  # a withheld read is in the ledger, never in the block
        if e.withheld:
            assert f"\n{p} = " not in "\n" + ledger.render()
    for prefix in ("a", "a.", "users.", "identified.", "x1", "said."):
        assert ledger.under(prefix) == sorted(p for p in model if p.startswith(prefix))
        for value in (0, 1, None):
            expected = sorted(
                p for p, e in model.items()
                if p.startswith(prefix) and e.origin == "observed" and isinstance(e.value, dict) and e.value.get("k") == value
            )
            assert ledger.where(prefix, "k", value) == expected
    for i, p in enumerate(model):
        assert ledger.position(p) == i and ledger[p] is model[p]


@settings(max_examples=150, deadline=None)
@given(st.lists(op, min_size=1, max_size=60), st.sampled_from([0, 1, 3, None]))
def test_a_derived_ledger_is_the_ledger_a_dict_would_hold(ops, limit):
    """`limit`: how many changes a ledger keeps apart before folding them into a new base (None:
    the real limit, which small examples seldom reach)."""
    if limit is None:
        run(ops)
    else:
        with mock.patch("ledger_tui.engine.ledger._overlay_limit", lambda size: limit):
            run(ops)


def run(ops) -> None:
    ledger, model = EMPTY, {}
    spare: list[tuple[Ledger, dict]] = []
    for step, o in enumerate(ops):
        kind = o[0]
        if kind == "absorb":
            ledger, _ = absorb(ledger, o[1], source_call=f"r{step}", source_seq=step, withheld=o[2])
        elif kind == "state":
            ledger, _ = state(ledger, o[1], source_call="m", source_seq=step)
        elif kind == "stale":
            keep = ("identified.",) if o[2] else ()
            expected = scan_stale(model, o[1], "w", keep)
            ledger, updates = mark_stale(ledger, o[1], because="w", source_seq=step, keep=keep)
            assert [u.path for u in updates] == expected
        elif kind == "replay":
            path, value, change = o[1], o[2], o[3]
            ledger = apply_update(ledger, LedgerUpdated(path=path, change=change, after=value, source_seq=step))
        elif kind == "render":
            ledger.render()
        elif kind == "branch":  # a sibling derived from the same parent must not disturb it
            spare.append((ledger, dict(model)))
            absorb(ledger, [(f"x2.{step}", step)], source_call="sibling", source_seq=step)[0].render()
        elif kind == "current":
            ledger, _ = absorb(ledger, [("users.current", o[1]), (f"identified.{o[1]}", "get")], source_call="id", source_seq=step)
        model = {p: ledger[p] for p in model} | {p: ledger[p] for p in ledger if p not in model}
        check(ledger, model)
    for old, old_model in spare:
        check(old, old_model)


def test_a_large_ledger_folds_its_changes_and_keeps_every_view():
    ledger = EMPTY
    for i in range(3000):
        ledger, _ = absorb(ledger, [(f"flights.F{i % 700}.{i % 13}", {"n": i})], source_call="r", source_seq=i)
        if i % 250 == 0:
            ledger.render()
    ledger, updates = mark_stale(ledger, ["flights.F1.*", "flights.F699.3"], because="w", source_seq=1)
    assert [u.path for u in updates] == [p for p in ledger if p.startswith("flights.F1.") or p == "flights.F699.3"]
    assert ledger.render() == render(ledger)
    assert "flights.F1.1 = " in ledger.render() and ledger.render().count("# STALE") == len(updates)


def test_render_leaves_out_the_identified_line_of_the_current_customer():
    ledger, _ = absorb(EMPTY, [("users.current", "u1"), ("identified.u1", "get"), ("identified.u2", "get")], source_call="r", source_seq=1)
    ledger.render()
    ledger = replace_entry(ledger)
    assert "identified.u1" not in ledger.render() and "identified.u2" in ledger.render()
    assert ledger.render() == render(ledger)


def replace_entry(ledger: Ledger) -> Ledger:
    entry = ledger["identified.u2"]
    return ledger.with_entries({"identified.u2": replace(entry, stale=True)})

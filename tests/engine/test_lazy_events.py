"""A lazy read (replay's: `read_trajectory(path, lazy=True)`) gives what the eager read gives: the
same events, the same states at every step, the same warnings, and the same sentence for a file it
refuses."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from ledger_tui.engine.errors import TrajectoryError
from ledger_tui.engine.events import AssistantMessage, GateDecided
from ledger_tui.engine.store import lazy
from ledger_tui.engine.store.fold import Timeline, advance
from ledger_tui.engine.store.lazy import LazyChain, LazyEvents, briefs, of_kinds, proposers, step_of, verdicts
from ledger_tui.engine.store.trajectories import read_trajectory
from tests.engine.test_cold_paths import SHAPES
from tests.fuzz_readers import _trajectory_seeds, jsonl_file

SESSIONS = Path(__file__).resolve().parents[2] / "sessions"
SHIPPED = sorted(SESSIONS.glob("*.jsonl"))


def _read(path: Path, **how: bool) -> tuple[object, ...]:
    try:
        loaded = read_trajectory(path, **how)
    except TrajectoryError as exc:
        return ("refused", str(exc))
    return list(loaded.events), loaded.warnings


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_a_lazy_read_folds_every_shipped_session_to_the_states_the_eager_read_does(path, monkeypatch):
    monkeypatch.setattr(lazy, "CACHED", 8)  # every event read back from its line, most of them again
    eager = read_trajectory(path).events
    events = read_trajectory(path, lazy=True).events
    assert isinstance(events, LazyEvents) and len(events._cache) <= 8
    assert list(events) == eager and events[-1] == eager[-1] and events[::-1] == eager[::-1]
    timeline, reference = events.timeline, Timeline(eager, every=events.timeline.every)
    assert timeline.final == reference.final
    assert isinstance(timeline.final.conversation, LazyChain) and isinstance(timeline.final.gate_log, LazyChain)
    for i in (*range(len(eager) - 1, -1, -1), -1):  # stepping back from the end, as a replay opens
        assert timeline.at(i) == reference.at(i)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_what_a_lazy_read_keeps_of_every_event_is_what_the_events_say(path):
    eager = read_trajectory(path).events
    events = read_trajectory(path, lazy=True).events
    decisions = [i for i, e in enumerate(eager) if isinstance(e, GateDecided)]
    assert verdicts(events, decisions) == verdicts(eager, decisions)
    assert proposers(events) == proposers(eager)
    assert of_kinds(events, GateDecided) == of_kinds(eager, GateDecided)
    for i, event in enumerate(eager):
        assert step_of(events, event.seq) == step_of(eager, event.seq) == i
    gate_log = events.timeline.final.gate_log
    kept = briefs(gate_log)
    assert kept is not None and briefs(Timeline(eager).final.gate_log) is None
    assert [kept(i) for i in range(len(gate_log))] == [(d.decision.verdict, d.decision.category()) for d in gate_log]


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_lazy_read_takes_or_refuses_these_files_as_the_eager_read_does(shape, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(SHAPES[shape])
    assert _read(path, lazy=True) == _read(path)


@settings(max_examples=200, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=jsonl_file(_trajectory_seeds()))
def test_a_lazy_read_takes_or_refuses_every_file_as_the_eager_read_does(data, tmp_path_factory):
    path = tmp_path_factory.mktemp("lazy") / "t.jsonl"
    path.write_bytes(data)
    assert _read(path, lazy=True) == _read(path)


def test_a_state_of_a_lazy_read_branches_as_an_eager_one_does():
    path = SESSIONS / "telecom-overdue-bill.jsonl"
    events = read_trajectory(path, lazy=True).events
    eager = read_trajectory(path).events
    timeline, reference = events.timeline, Timeline(eager)
    middle = len(eager) // 2
    # an older state extended again (a refold from a checkpoint) shares its chain; one extended
    # with another event copies its prefix, leaving the later states as they were
    before = timeline.at(middle)
    final = timeline.final

    said = max(i for i, e in enumerate(eager) if isinstance(e, AssistantMessage))
    branched = advance(before, events[said])
    assert branched.conversation[-1] == eager[said] and branched.conversation[:-1] == before.conversation[:]
    assert timeline.final == final == reference.final and timeline.at(middle) == reference.at(middle)


def test_a_step_number_past_64_bits_reads_lazily_as_it_reads_eagerly(tmp_path):
    # valid JSON and a valid event (a seq is any whole number): the lazy read kept seqs in a 64-bit
    # array and raised OverflowError where the eager read, and the replay's refusal, had none
    lines = (SESSIONS / "airline-cancel-blocked.jsonl").read_text(encoding="utf-8").splitlines()
    last = lines[-1].replace(lines[-1].split(",", 1)[0], '{"seq":' + str(2**70), 1)
    path = tmp_path / "huge-seq.jsonl"
    path.write_text("\n".join([*lines[:-1], last]) + "\n", encoding="utf-8")
    events = read_trajectory(path, lazy=True).events
    assert list(events) == read_trajectory(path).events
    assert events[-1].seq == 2**70 and step_of(events, 2**70) == len(events) - 1

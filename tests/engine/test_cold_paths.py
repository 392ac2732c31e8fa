"""The cold paths keep their answers (issue 31, item 4): a replay's timeline folds only as far as
it is asked, `why` explains each stop from the cards and questions alone, and a trajectory read
without holding its text whole reads the same. The figures are `benchmarks/cold_paths.py`'s."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledger_tui.engine.errors import TrajectoryError
from ledger_tui.engine.events import GateDecided
from ledger_tui.engine.store.fold import Timeline, fold
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.explain import asks_and_answers, waits_lines

SESSIONS = Path(__file__).resolve().parents[2] / "sessions"


def test_a_timeline_folds_nothing_until_asked_then_only_to_the_step_asked():
    events = read_trajectory(SESSIONS / "telecom-overdue-bill.jsonl").events
    timeline = Timeline(events, every=8)
    assert len(timeline._checkpoints) == 1  # opening costs nothing before a state is shown
    assert timeline.at(20) == fold(events, 20)
    assert len(timeline._checkpoints) == 3  # the states before events 0, 8 and 16
    assert timeline.final == fold(events)
    assert len(timeline._checkpoints) == (len(events) - 1) // 8 + 1
    assert timeline.at(3) == fold(events, 3)  # back from the end: from a checkpoint


@pytest.mark.parametrize("name", ["airline-cancel-on-a-card", "retail-refund-on-a-card-answered-twice", "telecom-roaming-asked"])
def test_why_says_the_same_from_the_cards_and_questions_alone(name):
    events = read_trajectory(SESSIONS / f"{name}.jsonl").events
    asked = asks_and_answers(events)
    decided = [e for e in events if isinstance(e, GateDecided)]
    assert decided and asked
    said = [waits_lines(asked, e.decision.call.id) for e in decided]
    assert said == [waits_lines(events, e.decision.call.id) for e in decided]
    assert any(said)  # some stop waited on a card or a question


def test_a_damaged_line_is_named_by_its_number_after_the_lines_before_it_are_dropped(tmp_path):
    lines = (SESSIONS / "telecom-overdue-bill.jsonl").read_text(encoding="utf-8").splitlines()
    lines.insert(5, "")  # a blank line: the numbers are the file's, not the events'
    lines[40] = lines[40].replace('"seq"', '"seq_"', 1)
    path = tmp_path / "damaged.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(TrajectoryError, match=r"^Line 41 of damaged\.jsonl is not a valid event"):
        read_trajectory(path)
    moved = lines[:40] + [lines[41], lines[40].replace('"seq_"', '"seq"', 1)] + lines[42:]
    path.write_text("\n".join(moved) + "\n", encoding="utf-8")
    with pytest.raises(TrajectoryError, match=r"^Line 42 of damaged\.jsonl is event 39, after event 40"):
        read_trajectory(path)

"""The cold paths keep their answers (issue 31, item 4): a replay's timeline folds only as far as
it is asked, `why` explains each stop from the cards and questions alone, and a trajectory read
without holding its text whole reads the same. The figures are `benchmarks/cold_paths.py`'s."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger_tui.engine.errors import TrajectoryError
from ledger_tui.engine.events import GateDecided
from ledger_tui.engine.store.fold import Timeline, fold
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.explain import WHY_READS, asks_and_answers, waits_lines
from tests.fuzz_readers import _trajectory_seeds, jsonl_file

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


def _outcome(read, path: Path) -> tuple[object, ...]:
    """What a way of reading a file gives: its events, warnings and line numbers, or its sentence."""
    try:
        return read()
    except TrajectoryError as exc:
        return ("refused", str(exc))


def _both_ways(path: Path, data: bytes) -> tuple[tuple[object, ...], tuple[object, ...]]:
    """A file read by the fast path (`_events`: every line valid, else the text from the first
    line it did not take) and as text line by line from the start (`_line_by_line`, every file's
    way before the fast path)."""
    from ledger_tui.engine.store.trajectories import _events, _line_by_line, _Read

    def what(read: _Read, warnings: list[str]) -> tuple[object, ...]:
        return read.events, read.line_numbers, read.seqs, read.calls, warnings

    fast = _outcome(lambda: what(*_events(path, [data], _Read(None))), path)
    return fast, _outcome(lambda: what(*_line_by_line(path, data, _Read(None))), path)


@settings(max_examples=300, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(data=jsonl_file(_trajectory_seeds()))
def test_the_fast_path_reads_every_file_as_the_text_is_read_line_by_line(data, tmp_path_factory):
    path = tmp_path_factory.mktemp("fast") / "t.jsonl"
    fast, slow = _both_ways(path, data)
    assert fast == slow


SESSION_TEXT = (SESSIONS / "telecom-overdue-bill.jsonl").read_bytes()


SHAPES = {  # what a file can be, against the session as written
    "as written": SESSION_TEXT,
    "a byte-order mark": b"\xef\xbb\xbf" + SESSION_TEXT,
    "CRLF line ends": SESSION_TEXT.replace(b"\n", b"\r\n"),
    "a truncated last line": SESSION_TEXT[:-40],  # taken up to it, then read as text
    "blank lines": SESSION_TEXT.replace(b"\n", b"\n\n", 3),
    "a line only Unicode calls blank": SESSION_TEXT.replace(b"\n", b"\n\xe2\x80\xa8\n", 2),
    "a byte-order mark inside": SESSION_TEXT.replace(b"\n", b"\n\xef\xbb\xbf", 2),
    "Latin-1 after valid lines": SESSION_TEXT.replace(b"Thanks", b"Thanks\xe9", 1),  # its line and byte named
    "too deep": SESSION_TEXT.replace(b'"text":"', b'"text":' + b"[" * 130 + b"]" * 130 + b',"t":"', 1),
    "deep, within the limit": SESSION_TEXT.replace(b'"text":"', b'"text":' + b"[" * 110 + b"]" * 110 + b',"t":"', 1),
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_fast_path_reads_these_files_as_the_text_is_read_line_by_line(shape, tmp_path):
    fast, slow = _both_ways(tmp_path / "t.jsonl", SHAPES[shape])
    assert fast == slow


@pytest.mark.parametrize("name", ["airline-acting-for-someone-else", "retail-refund-on-a-card-answered-twice", "telecom-roaming-asked"])
def test_why_keeps_the_events_it_reads_and_drops_the_rest(name):
    whole = read_trajectory(SESSIONS / f"{name}.jsonl")
    kept = read_trajectory(SESSIONS / f"{name}.jsonl", keep=WHY_READS)
    assert kept.events == [e for e in whole.events if isinstance(e, WHY_READS)]
    assert len(kept.events) < len(whole.events) and kept.started == whole.started


def test_a_line_why_does_not_keep_is_still_checked(tmp_path):
    lines = (SESSIONS / "telecom-overdue-bill.jsonl").read_text(encoding="utf-8").splitlines()
    at = next(i for i, line in enumerate(lines) if '"type":"ledger_update"' in line)
    path = tmp_path / "damaged.jsonl"
    for damaged in (lines[at].replace('"path"', '"path_"', 1), lines[at - 1]):  # a bad field; a line repeated
        path.write_text("\n".join(lines[:at] + [damaged] + lines[at + 1 :]) + "\n", encoding="utf-8")
        with pytest.raises(TrajectoryError) as whole:
            read_trajectory(path)
        with pytest.raises(TrajectoryError) as kept:
            read_trajectory(path, keep=WHY_READS)
        assert str(kept.value) == str(whole.value) and f"Line {at + 1} of damaged.jsonl" in str(whole.value)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(alphabet='ab"\\\n\u00e9\u201c', max_size=30) | st.dates(),
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(alphabet="abZ\u00e9", max_size=12), inner, max_size=6),
    max_leaves=40,
)


@settings(max_examples=400, derandomize=True, database=None, deadline=None)
@given(value=JSON_VALUES, limit=st.sampled_from([1, 2, 10, 100, 120, 160]))
def test_why_quotes_a_value_as_json_dumps_with_its_options_did(value, limit):
    from ledger_tui.explain import short

    whole = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    assert short(value, limit) == (whole if len(whole) <= limit else whole[: limit - 1] + "…")

"""`why`'s reader (engine/store/index.py) against the full reader (issue 31, item 4): on files
damaged at random, the same events and warnings, or the same sentence, as `read_trajectory` with
the events `why` keeps chosen from them; where the damage is inside a line the index only frames
(a kind `why` does not explain), the same as the full reader on the file with that line intact."""

from __future__ import annotations

import json
import re
from pathlib import Path
from unittest.mock import patch

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ledger_tui.engine.errors import TrajectoryError
from ledger_tui.engine.events import GateDecided, Verdict
from ledger_tui.engine.store import index
from ledger_tui.engine.store.index import WhyReading, _indexed, chosen, read_for_why, use_for_why
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.explain import WHY_DISCLOSES, WHY_EXPLAINS, WHY_READS, withholds
from tests.fuzz_readers import mutated

SESSIONS = sorted((Path(__file__).resolve().parents[2] / "sessions").glob("*.jsonl"))
STOPS = (Verdict.REVISE, Verdict.BLOCK)
BLOCKS = (index._BLOCK, 61, 4096)  # (bytes read at a time: as why reads, shorter than a line, a few lines)


def _fast(path: Path, verdicts: tuple[Verdict, ...]) -> tuple[object, ...]:
    try:
        loaded = read_for_why(path, WHY_EXPLAINS, verdicts, more=WHY_DISCLOSES, more_if=withholds)
    except TrajectoryError as exc:
        return ("refused", str(exc))
    return loaded.events, loaded.warnings


def _full(path: Path, verdicts: tuple[Verdict, ...]) -> tuple[object, ...]:
    """The full reader (every line validated), with what `why` keeps chosen from its events."""
    try:
        loaded = read_trajectory(path, keep=WHY_READS)
    except TrajectoryError as exc:
        return ("refused", str(exc))
    return chosen(loaded.events, WHY_EXPLAINS, verdicts, WHY_DISCLOSES, withholds), loaded.warnings


def _lines(path: Path, spaced: bool) -> list[bytes]:
    """A shipped session's lines as ledger-tui writes them, or as Python's `json.dumps` does."""
    lines = path.read_bytes().split(b"\n")[:-1]
    return [json.dumps(json.loads(line), ensure_ascii=False).encode() for line in lines] if spaced else lines


BYTES = [b"{", b"}", b'"', b",", b":", b" ", b"0", b"9", b"-", b"\\", b"\n", b"\xe9", b"\x00", b"x"]


@st.composite
def damaged_files(draw: st.DrawFn) -> tuple[bytes, int | None, bytes]:
    """(a damaged session, the line damaged inside (None if the damage is not inside one line), that
    line as it was)."""
    lines = _lines(draw(st.sampled_from(SESSIONS)), spaced=draw(st.booleans()))
    at = draw(st.integers(0, len(lines) - 1))
    original = lines[at]
    how = draw(st.sampled_from(["byte", "byte", "json", "json", "line"]))
    if how == "byte":  # one byte replaced, put in or taken out, anywhere in the line
        where = draw(st.integers(0, len(original) - 1))
        new = draw(st.sampled_from(BYTES))
        op = draw(st.sampled_from(["replace", "insert", "delete"]))
        end = where + (0 if op == "insert" else 1)
        lines[at] = original[:where] + (b"" if op == "delete" else new) + original[end:]
    elif how == "json":  # a field removed, retyped, renamed... (tests/fuzz_readers.py)
        value = draw(mutated(json.loads(original), most=2))
        compact = draw(st.booleans())
        lines[at] = json.dumps(value, ensure_ascii=False, separators=(",", ":") if compact else None).encode()
    else:
        op = draw(st.sampled_from(["drop", "repeat", "swap", "blank", "garbage", "cut", "bom", "crlf"]))
        if op == "drop" and len(lines) > 1:
            del lines[at]
        elif op == "repeat":
            lines.insert(at, original)
        elif op == "swap" and at + 1 < len(lines):
            lines[at], lines[at + 1] = lines[at + 1], lines[at]
        elif op == "blank":
            lines.insert(at, b"")
        elif op == "garbage":
            lines.insert(at, draw(st.binary(max_size=20)))
        data = b"\n".join(lines) + b"\n"
        if op == "cut":
            data = data[: draw(st.integers(1, len(data) - 1))]
        elif op == "bom":
            data = b"\xef\xbb\xbf" + data
        elif op == "crlf":
            data = data.replace(b"\n", b"\r\n")
        return data, None, b""
    return b"\n".join(lines) + b"\n", at, original


@settings(max_examples=400, derandomize=True, database=None, deadline=None, suppress_health_check=list(HealthCheck))
@given(damaged=damaged_files(), everything=st.booleans(), block=st.sampled_from(BLOCKS))
def test_why_reads_a_damaged_file_as_the_full_reader_does(damaged, everything, block, tmp_path_factory):
    data, at, original = damaged
    verdicts = tuple(Verdict) if everything else STOPS
    path = tmp_path_factory.mktemp("index") / "t.jsonl"
    path.write_bytes(data)
    with patch.object(index, "_BLOCK", block):
        fast = _fast(path, verdicts)
    full = _full(path, verdicts)
    if fast == full:
        return
    # Only damage inside one line the index frames and does not validate may go unseen by it: the
    # full reader names that line, and reads the file with the line intact as the index read it.
    assert at is not None and fast[0] != "refused", (fast, full)
    said = full[1] if full[0] == "refused" else full[1][0]
    named = re.match(r"Line (\d+) of t\.jsonl", said) or re.search(r"t\.jsonl is not UTF-8 text \(line (\d+),", said)
    assert named is not None and int(named[1]) == at + 1, (fast, full)
    lines = data.split(b"\n")
    lines[at] = original
    path.write_bytes(b"\n".join(lines))
    assert fast == _full(path, verdicts)


@pytest.mark.parametrize("block", BLOCKS)
@pytest.mark.parametrize("spaced", [False, True])
@pytest.mark.parametrize("session", SESSIONS, ids=lambda p: p.stem)
def test_every_shipped_session_is_read_from_the_index_as_the_full_reader_reads_it(session, spaced, block, tmp_path, monkeypatch):
    """Read a block of lines at a time (`_blocks`): in one block, and in blocks shorter than a
    line (each line read into a larger buffer) or of a few lines (a line carried to the next)."""
    monkeypatch.setattr(index, "_BLOCK", block)
    path = tmp_path / session.name
    path.write_bytes(b"\n".join(_lines(session, spaced)) + b"\n")
    for verdicts in (STOPS, tuple(Verdict)):
        assert _indexed(path.read_bytes(), WHY_EXPLAINS, frozenset(verdicts), WHY_DISCLOSES, withholds) is not None
        assert _fast(path, verdicts) == _full(path, verdicts)



@pytest.mark.parametrize("ending", [b"", b"\n"])
def test_a_file_of_its_first_line_alone_is_read_from_the_index(ending, tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(_lines(SESSIONS[0], spaced=False)[0] + ending)
    assert _indexed(path.read_bytes(), WHY_EXPLAINS, frozenset(STOPS), WHY_DISCLOSES, withholds) is not None
    assert _fast(path, STOPS) == _full(path, STOPS)

@pytest.mark.parametrize("session", SESSIONS, ids=lambda p: p.stem)
def test_why_step_reads_the_one_decision_at_that_step_as_the_full_reader_chooses_it(session):
    """`why --step N` validates only the decision at step N: of every decision's step, and of a
    step with none, the same events as the full reader's, chosen at that step."""
    every = read_trajectory(session, keep=WHY_READS).events
    steps = [e.seq for e in every if isinstance(e, GateDecided)]
    for step in [*steps, max(e.seq for e in every) + 1]:
        fast = read_for_why(session, WHY_EXPLAINS, tuple(Verdict), more=WHY_DISCLOSES, more_if=withholds, step=step)
        assert fast.events == chosen(every, WHY_EXPLAINS, tuple(Verdict), WHY_DISCLOSES, withholds, step)
        assert [e.seq for e in fast.events if isinstance(e, GateDecided)] == ([step] if step in steps else [])


def test_a_line_why_does_not_read_is_checked_by_its_framing_only(tmp_path):
    lines = _lines(SESSIONS[0], spaced=False)
    at = next(i for i, line in enumerate(lines) if b'"type":"ledger_update"' in line[:40])
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(lines[:at] + [lines[at].replace(b'"path"', b'"path_"', 1)] + lines[at + 1 :]) + b"\n")
    refused = _full(path, STOPS)
    assert refused[0] == "refused" and refused[1].startswith(f"Line {at + 1} of t.jsonl is not a valid event")
    fast = _fast(path, STOPS)
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert fast == _full(path, STOPS)  # a bad field inside: `why` explains the file as if the line were intact
    for unframed in (lines[at][:-1], lines[at] + b" ", b"\xef\xbb\xbf" + lines[at], lines[at].replace(b"ledger_update", b"ledger_updated")):
        data = b"\n".join(lines[:at] + [unframed] + lines[at + 1 :]) + b"\n"
        path.write_bytes(data)
        assert _indexed(data, WHY_EXPLAINS, frozenset(STOPS), WHY_DISCLOSES, withholds) is None
        assert _fast(path, STOPS) == _full(path, STOPS)



def test_a_decision_found_not_valid_while_why_explains_sends_the_file_to_the_full_reader(tmp_path):
    """`why` validates the decisions it explains one at a time as it explains them
    (`use_for_why`): the second, with a field renamed inside, is found after the first was
    explained, and the file then gets the full reader's sentence, with nothing explained."""
    lines = _lines(next(p for p in SESSIONS if p.stem == "telecom-roaming"), spaced=False)
    stops = [i for i, line in enumerate(lines) if b'"type":"gate_decision"' in line[:40] and b'"verdict":"ALLOW"' not in line]
    at = stops[1]
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\n".join(lines[:at] + [lines[at].replace(b'"reason"', b'"reason_"', 1)] + lines[at + 1 :]) + b"\n")
    explained: list[list[int]] = []

    def explain(reading: WhyReading) -> None:
        explained.append([])
        for event in reading.decisions():
            explained[-1].append(event.seq)

    with pytest.raises(TrajectoryError, match=f"^Line {at + 1} of t.jsonl is not a valid event"):
        use_for_why(path, WHY_EXPLAINS, STOPS, WHY_DISCLOSES, None, explain)
    assert explained == [[json.loads(lines[stops[0]])["seq"]]]  # (the full reader refused before any was given)


NESTED = st.recursive(
    st.none() | st.integers() | st.text(alphabet='[]{}"\\ab\n\u00e9', max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(alphabet='[]{}"\\k', max_size=3), inner, max_size=3),
    max_leaves=30,
)


@settings(max_examples=300, derandomize=True, database=None, deadline=None)
@given(value=NESTED, limit=st.integers(1, 6), ascii_only=st.booleans())
def test_the_depth_of_a_line_is_measured_on_its_bytes_as_on_its_text(value, limit, ascii_only):
    from ledger_tui.engine.store.index import _nested_deeper
    from ledger_tui.engine.store.reading import too_deep

    text = json.dumps(value, ensure_ascii=ascii_only)
    assert _nested_deeper(text.encode(), limit) == (too_deep(text, limit) is not None)

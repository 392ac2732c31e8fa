"""Forking a recorded run: the session that takes over is the recording's, rebuilt (a fresh
database of the recorded digest, every recorded call run again and returning its recorded
content); the fork's file is its own session_started naming the parent, then the parent's events
as they were. Driven on with the recording's own inputs it ends as the recording did; answered
otherwise it goes another way; a recording that today's tools answer otherwise is not forked."""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import pytest

from ledger_tui.engine.events import ConfirmationAnswered, GateDecided, SessionEnded, UserMessage, Verdict
from ledger_tui.engine.fork import ForkError, fork, fork_point, redrive
from ledger_tui.engine.model.models import ScriptedModel
from ledger_tui.engine.session import drain
from ledger_tui.engine.store.trajectories import read_trajectory

ROOT = Path(__file__).resolve().parents[2]
SESSIONS = sorted((ROOT / "sessions").glob("*.jsonl"))
ON_A_CARD = ROOT / "sessions" / "airline-cancel-on-a-card.jsonl"


def domain(name: str):
    return importlib.import_module(f"ledger_tui.domains.{name}").build()


def without_steps(e) -> dict:
    data = e.model_dump(mode="json")
    data.pop("seq", None)
    if data["type"] == "helper_call":  # IRMA's helper, replayed: "replay-helper", reporting no tokens
        for name in ("model", "prompt_tokens", "completion_tokens"):
            data.pop(name)
    return data


@pytest.mark.parametrize("path", SESSIONS, ids=lambda p: p.stem)
async def test_a_fork_at_the_last_customer_message_driven_on_as_recorded_ends_as_the_recording(path, tmp_path):
    events = read_trajectory(path).events
    last = max(e.seq for e in events if isinstance(e, UserMessage))
    out = tmp_path / "fork.jsonl"
    forked = await fork(domain(events[0].domain), events, last, model=None, parent=path, out=out, timestamps=False)
    s = forked.session
    assert forked.step == last and forked.kept == fork_point(events, last) == last
    await redrive(s, events[forked.kept:])  # the recorded agent and the recorded customer go on
    end = events[-1]
    assert isinstance(end, SessionEnded)
    await drain(s.end(end.reason, reward=end.reward, termination=end.termination, grade=end.grade))
    assert [without_steps(e) for e in s.events[1:]] == [without_steps(e) for e in events[1:]]
    assert s.events[-1].db_digest == end.db_digest
    written = out.read_text().splitlines()
    parent = path.read_text().splitlines()
    started = json.loads(written[0])
    assert started["forked_from"] == {"file": str(path), "step": last}
    assert {k: v for k, v in started.items() if k not in ("forked_from", "session_id")} == {
        k: v for k, v in json.loads(parent[0]).items() if k != "session_id"
    }
    assert written[1:last] == parent[1:last]  # the parent's events as they were, byte for byte
    assert read_trajectory(out).started.forked_from.step == last


async def test_answered_otherwise_the_fork_goes_another_way(tmp_path):
    """The customer said yes to the cancellation's card; in the fork they say no: nothing runs."""
    events = read_trajectory(ON_A_CARD).events
    yes = next(e for e in events if isinstance(e, UserMessage) and e.text == "Yes, please.")
    forked = await fork(domain("airline"), events, yes.seq + 3, model=ScriptedModel([]), parent=ON_A_CARD, timestamps=False)
    s = forked.session
    assert forked.step == yes.seq and s.state.pending_card is not None  # the card waits again
    after = await drain(s.user_says("No.", respond=False))
    answered = next(e for e in after if isinstance(e, ConfirmationAnswered))
    assert answered.answer == "no"
    assert not [e for e in after if isinstance(e, GateDecided) and e.decision.verdict == Verdict.ALLOW]
    before_db = events[0].db_digest
    assert s.env.digests()[0] == before_db  # the reservation stands


async def test_a_recording_the_tools_now_answer_otherwise_is_not_forked(tmp_path):
    lines = ON_A_CARD.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"type":"tool_result"' in line.replace(" ", "") and "economy" in line)
    row = json.loads(lines[at])
    row["content"] = row["content"].replace("economy", "business")
    lines[at] = json.dumps(row)
    edited = tmp_path / "edited.jsonl"
    edited.write_text("\n".join(lines) + "\n")
    events = read_trajectory(edited).events
    with pytest.raises(ForkError) as refused:
        await fork(domain("airline"), events, 30, model=ScriptedModel([]), parent=edited, out=tmp_path / "f.jsonl")
    sentence = str(refused.value)
    assert sentence.startswith("Cannot fork edited.jsonl at step 30: run again today, the call of recorded step ")
    assert "returns other content than recorded" in sentence and "regress" in sentence
    assert not (tmp_path / "f.jsonl").exists()


async def test_a_recording_of_another_database_is_not_forked(tmp_path):
    events = read_trajectory(ON_A_CARD).events
    started = events[0].model_copy(update={"db_digest": "0" * 64})
    with pytest.raises(ForkError, match=r"it started on a database with digest 000000000000…, and the airline domain's database has .*; pass --db"):
        await fork(domain("airline"), [started, *events[1:]], 30, model=ScriptedModel([]), parent=ON_A_CARD)


def test_the_fork_point_is_the_customer_message_that_opened_the_turn():
    events = read_trajectory(ON_A_CARD).events
    said = [e.seq for e in events if isinstance(e, UserMessage)]
    assert said == [1, 21, 30]
    assert fork_point(events, 0) == 1  # before anyone spoke: their first message
    assert fork_point(events, 20) == 1 and fork_point(events, 21) == 21 and fork_point(events, 29) == 21
    assert fork_point(events, 10_000) == 30


async def test_a_recording_todays_gate_judges_otherwise_is_not_forked_past_that_point():
    """Recorded before the read gate: today a read in it is withheld, so a fork after that read
    would not continue it; before it, it forks."""
    old = ROOT / "tests" / "data" / "before_read_gate" / "airline-acting-for-someone-else.jsonl"
    events = read_trajectory(old).events
    said = [e.seq for e in events if isinstance(e, UserMessage)]
    forked = await fork(domain("airline"), events, said[0], model=ScriptedModel([]), parent=old, timestamps=False)
    assert forked.kept == said[0]
    with pytest.raises(ForkError, match=r"^Cannot fork airline-acting-for-someone-else.jsonl at step \d+: run again today, recorded step \d+ \(\w+\) comes out as gate_decision, not as recorded"):
        await fork(domain("airline"), events, said[-1], model=ScriptedModel([]), parent=old, timestamps=False)

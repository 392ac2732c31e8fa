"""Trajectory files: one event a line, flushed as written (in an event loop, each step's events when
the session next waits); damaged files keep every complete line."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ledger_tui.engine.errors import TrajectoryError
from ledger_tui.engine.events import SCHEMA_VERSION, SessionStarted, UserMessage
from ledger_tui.engine.model.models import ScriptedModel
from ledger_tui.engine.session import Session
from ledger_tui.engine.store.fold import fold
from ledger_tui.engine.store.trajectories import TrajectoryWriter, read_trajectory
from tests.engine.helpers import drain, turn


def started(**kw):
    return SessionStarted(session_id="s", domain="toy", model="m", mode="full", policy_digest="p", db_digest="d", clock="now", **kw)


def test_first_event_carries_the_schema_version(tmp_path, toy_domain):
    import asyncio

    session = Session(toy_domain, ScriptedModel([turn(text="hi")]), "full", out=tmp_path / "a.jsonl")

    async def go():
        await drain(session.start())
        await drain(session.user_says("hello"))
        await drain(session.end())

    asyncio.run(go())
    first = json.loads((tmp_path / "a.jsonl").read_text().splitlines()[0])
    assert first["type"] == "session_started" and first["schema_version"] == SCHEMA_VERSION


def test_lines_are_on_disk_before_the_writer_is_closed(tmp_path):
    writer = TrajectoryWriter(tmp_path / "live.jsonl")
    writer.write(started(seq=0))
    writer.write(UserMessage(seq=1, text="hi"))
    assert len(read_trajectory(tmp_path / "live.jsonl").events) == 2  # still open: flushed per event
    writer.close()


def test_text_holding_line_separators_other_than_newline_reads_back(tmp_path):
    """JSON leaves \\x85, \\x1c and U+2028 raw inside a string; they do not end a line."""
    writer = TrajectoryWriter(tmp_path / "t.jsonl")
    writer.write(started(seq=0))
    text = "a\x85b\u2028c\u2029d\x1ce\x0bf\x0cg\rh"
    writer.write(UserMessage(seq=1, text=text))
    writer.close()
    loaded = read_trajectory(tmp_path / "t.jsonl")
    assert [e.seq for e in loaded.events] == [0, 1] and loaded.events[1].text == text and not loaded.warnings


def test_truncated_last_line_is_skipped_with_a_warning(tmp_path):
    path = tmp_path / "t.jsonl"
    lines = [started(seq=0).model_dump_json(), UserMessage(seq=1, text="hi").model_dump_json()]
    path.write_text("\n".join(lines) + '\n{"type": "user_mess', encoding="utf-8")
    loaded = read_trajectory(path)
    assert [e.seq for e in loaded.events] == [0, 1]
    assert "line 3" in loaded.warnings[0].lower() and "2 complete events" in loaded.warnings[0]


def test_corrupt_middle_line_names_the_line(tmp_path):
    path = tmp_path / "bad.jsonl"
    path.write_text(started(seq=0).model_dump_json() + "\nnot json\n" + UserMessage(seq=2, text="x").model_dump_json() + "\n")
    with pytest.raises(TrajectoryError, match="Line 2 of bad.jsonl"):
        read_trajectory(path)


def test_newer_schema_asks_for_an_upgrade(tmp_path):
    path = tmp_path / "new.jsonl"
    path.write_text(started(seq=0, schema_version=SCHEMA_VERSION + 1).model_dump_json() + "\n")
    with pytest.raises(TrajectoryError, match="upgrade ledger-tui"):
        read_trajectory(path)


def test_missing_and_empty_files_are_one_sentence(tmp_path):
    with pytest.raises(TrajectoryError, match="does not exist"):
        read_trajectory(tmp_path / "nope.jsonl")
    (tmp_path / "empty.jsonl").write_text("")
    with pytest.raises(TrajectoryError, match="holds no events"):
        read_trajectory(tmp_path / "empty.jsonl")


def test_a_killed_process_leaves_every_complete_event(tmp_path):
    """Kill a writer mid-session: the file holds every event written before the kill."""
    path = tmp_path / "killed.jsonl"
    code = f"""
import os, signal
from ledger_tui.engine.store.trajectories import TrajectoryWriter
from ledger_tui.engine.events import UserMessage
w = TrajectoryWriter({str(path)!r})
for i in range(5):
    w.write(UserMessage(seq=i, text="m" + str(i)))
os.kill(os.getpid(), signal.SIGKILL)
"""
    subprocess.run([sys.executable, "-c", code], check=False)
    loaded = read_trajectory(path)
    assert [e.text for e in loaded.events] == [f"m{i}" for i in range(5)]


def test_in_an_event_loop_a_killed_process_leaves_every_event_of_the_steps_before(tmp_path):
    """Each step's events reach the file together when the session next waits: a kill loses only
    the events of the step in progress."""
    path = tmp_path / "killed.jsonl"
    code = f"""
import asyncio, os, signal
from ledger_tui.engine.store.trajectories import TrajectoryWriter
from ledger_tui.engine.events import UserMessage
async def main():
    w = TrajectoryWriter({str(path)!r})
    for i in range(6):
        w.write(UserMessage(seq=i, text="m" + str(i)))
        if i % 2:
            await asyncio.sleep(0)  # the session waits (for the model, the customer)
    w.write(UserMessage(seq=6, text="m6"))
    os.kill(os.getpid(), signal.SIGKILL)
asyncio.run(main())
"""
    subprocess.run([sys.executable, "-c", code], check=False)
    assert [e.text for e in read_trajectory(path).events] == [f"m{i}" for i in range(6)]


async def test_a_full_disk_met_when_a_step_is_flushed_stops_the_next_write_naming_the_file(tmp_path, monkeypatch):
    import asyncio
    import errno

    from ledger_tui.engine.store import trajectories

    class FullDisk:
        def __init__(self, inner):
            self.inner = inner

        def write(self, text):
            return self.inner.write(text)

        def flush(self):
            raise OSError(errno.ENOSPC, "No space left on device")

        def close(self):
            self.inner.close()

    monkeypatch.setattr(trajectories, "WRITE_FAILURES", {})
    path = tmp_path / "full.jsonl"
    writer = TrajectoryWriter(path)
    writer.write(started(seq=0))
    await asyncio.sleep(0)
    writer._file = FullDisk(writer._file)
    writer.write(UserMessage(seq=1, text="met the full disk"))
    await asyncio.sleep(0)
    with pytest.raises(OSError) as stopped:
        writer.write(UserMessage(seq=2, text="not written"))
    assert stopped.value.errno == errno.ENOSPC and stopped.value.filename == str(path)
    assert trajectories.WRITE_FAILURES[str(path)].errno == errno.ENOSPC
    writer.close()  # (already stopped: nothing more to say)
    assert read_trajectory(path).events[0].type == "session_started" and "not written" not in path.read_text()


@pytest.mark.parametrize(
    "bad_line, words",
    [
        ('{"type": "user_message", "text": "x", "extra": ' + "[" * 50_000 + "]" * 50_000 + "}", "nested more than 120 levels deep"),
        ('{"type": "user_message", "text": 5}', "user_message.text should be text (got 5)"),
        ('{"type": "no_such_event"}', "has an unknown type 'no_such_event'"),
    ],
    ids=["deeply nested", "wrong type", "unknown kind"],
)
def test_a_damaged_middle_line_is_described_in_words(tmp_path, bad_line, words):
    path = tmp_path / "bad.jsonl"
    path.write_text(started(seq=0).model_dump_json() + "\n" + bad_line + "\n" + UserMessage(seq=2, text="x").model_dump_json() + "\n")
    with pytest.raises(TrajectoryError) as caught:
        read_trajectory(path)
    text = str(caught.value)
    assert text.startswith("Line 2 of bad.jsonl") and "\n" not in text
    assert "tagged-union" not in text and "errors.pydantic.dev" not in text
    assert words in text


def test_a_folder_or_a_file_that_is_not_utf8_is_one_sentence(tmp_path):
    with pytest.raises(TrajectoryError, match="is a folder; pass one .jsonl trajectory file"):
        read_trajectory(tmp_path)
    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(started(seq=0).model_dump_json().encode() + "\n".encode() + '{"type": "user_message", "text": "caf\xe9"}'.encode("latin-1"))
    with pytest.raises(TrajectoryError, match="is not UTF-8 text"):
        read_trajectory(latin)


def test_the_why_command_on_a_deeply_nested_line_is_one_sentence(tmp_path):
    path = tmp_path / "deep.jsonl"
    path.write_text(
        started(seq=0).model_dump_json() + "\n" + "[" * 100_000 + "]" * 100_000 + "\n" + UserMessage(seq=2, text="x").model_dump_json() + "\n"
    )
    out = subprocess.run([sys.executable, "-m", "ledger_tui", "why", str(path)], capture_output=True, text=True)
    assert out.returncode != 0 and "Traceback" not in out.stderr
    assert [line for line in out.stderr.splitlines() if line.strip()] == [out.stderr.strip()]
    assert "Line 2 of deep.jsonl" in out.stderr


V1 = Path(__file__).resolve().parents[1] / "data" / "v1"
SESSIONS = Path(__file__).resolve().parents[2] / "sessions"


@pytest.mark.parametrize("name", ["airline-cancel-blocked.jsonl", "retail-refund-revise-then-allow.jsonl"])
def test_version_1_trajectories_read_as_written(name):
    """Files written before IRMA's event kinds (schema 2), cards (3) and questions (4) read and fold
    exactly as today's do: the same events, the same gate log, the same ledger. They were recorded
    without cards: today's sessions of the same scripts read consent from text, and say so. The
    policy text has changed since (its digest, and the prompt's token counts, with it)."""
    old = read_trajectory(V1 / name)
    new = read_trajectory(SESSIONS / name)
    assert old.started.schema_version == 1 and new.started.schema_version == SCHEMA_VERSION == 4
    assert old.warnings == []

    def same_prompt(events):
        return [e for e in events[1:] if e.type != "token_usage"]

    assert same_prompt(old.events) == same_prompt(new.events)
    assert [e.type for e in old.events] == [e.type for e in new.events]
    assert old.started.consent is None and new.started.consent == "text"
    today = {"schema_version": 4, "consent": "text", "policy_digest": new.started.policy_digest}
    assert old.started.model_copy(update=today) == new.started
    assert fold(old.events).context().consent == fold(new.events).context().consent == "text"
    before, after = fold(old.events), fold(new.events)
    assert before.gate_log == after.gate_log and before.ledger.render() == after.ledger.render()


def test_a_schema_older_than_the_first_is_one_sentence(tmp_path):
    path = tmp_path / "old.jsonl"
    path.write_text(started(seq=0, schema_version=0).model_dump_json() + "\n")
    with pytest.raises(TrajectoryError, match="which no ledger-tui writes"):
        read_trajectory(path)


def test_a_process_that_keeps_trajectories_in_memory_writes_no_file_and_hands_each_over_once(tmp_path, monkeypatch):
    """A Ray actor's runs: each trajectory travels back with its result instead of a file."""
    from ledger_tui.engine.store import trajectories as store

    monkeypatch.setattr(store, "_IN_MEMORY", None)
    store.keep_in_memory()
    path = tmp_path / "runs" / "a.jsonl"
    writer = TrajectoryWriter(path)
    writer.write(started())
    writer.write(UserMessage(seq=1, text="hello"))
    writer.close()
    assert not path.exists() and not path.parent.exists()
    lines = store.taken(path).decode().splitlines()
    assert [json.loads(line)["type"] for line in lines] == ["session_started", "user_message"]
    assert store.taken(path) is None


V3 = Path(__file__).resolve().parents[1] / "data" / "v3"


def test_version_3_trajectories_read_as_written_and_their_gate_is_explained_as_then():
    """Files written before questions (schema 4): a card session whose customer's reason was read
    from her words, a text session whose being abroad was. They read without a warning, fold to
    the same gate log, and `why` explains them as recorded: no question is shown, nothing asked."""
    from ledger_tui.engine.events import QuestionRequested
    from ledger_tui.explain import question_of

    for name in ("airline-cancel-on-a-card.jsonl", "telecom-roaming.jsonl"):
        old = read_trajectory(V3 / name)
        assert old.started.schema_version == 3 and old.warnings == []
        state = fold(old.events)
        assert state.pending_question is None and state.totals.questions == 0
        assert not any(isinstance(e, QuestionRequested) for e in old.events)
        for decided in state.gate_log:
            assert not any(p.asks_question() for p in decided.decision.predicates)
            assert question_of(old.events, decided.decision.call.id) is None
    card = fold(read_trajectory(V3 / "airline-cancel-on-a-card.jsonl").events)
    assert [d.decision.category() for d in card.gate_log] == ["consent", "allowed"]


def test_each_kind_of_event_is_read_alike_by_the_union_and_by_its_own_model_each_built_when_first_used():
    """The event models' validators are built when first used (`why` builds those of the kinds it
    reads, validating each line with its kind's model): in a fresh process none is built by the
    import, and the union, EVENT_ADAPTER, reads every kind of the shipped sessions' lines (and a
    notice) as that kind's own model does, and writes each back as it was."""
    code = """
import json, sys
from pathlib import Path
from ledger_tui.engine.events import EVENT_ADAPTER, EVENT_MODELS, Notice, dump_event
assert not any(model.__pydantic_complete__ for model in EVENT_MODELS.values())
lines = [line for path in sorted(Path(sys.argv[1]).glob("*.jsonl")) for line in path.read_bytes().splitlines()]
lines.append(dump_event(Notice(seq=3, text="a model error")).encode())
kinds = set()
for line in lines:
    kind = json.loads(line)["type"]
    event = EVENT_ADAPTER.validate_json(line)
    assert type(event) is EVENT_MODELS[kind] and event == EVENT_MODELS[kind].model_validate_json(line), line
    assert dump_event(event).encode() == line, line
    kinds.add(kind)
print(sorted(kinds) == sorted(EVENT_MODELS), len(EVENT_MODELS))
"""
    sessions = Path(__file__).resolve().parents[2] / "sessions"
    done = subprocess.run([sys.executable, "-c", code, str(sessions)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "17"]

"""Bounded engine work and one line limit for writer and reader (issue 27, items 2 and 3).

What the model, the customer or a `--db` file sends is capped where it enters a session
(`engine.limits`), each cut said in a notice and, for a call, in a tool error the model reads; the
tokenizer and the readers are linear, so a session at the caps ends (guarded by a CPU limit in a
subprocess, not timed); and the largest events the engine writes are read back by every reader.
"""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from ledger_tui.domains import load_domain
from ledger_tui.engine import limits
from ledger_tui.engine.events import AssistantMessage, LedgerUpdated, Notice, ToolCall, ToolResult, UserMessage
from ledger_tui.engine.model.models import ModelTurn, ScriptedModel, read_completion
from ledger_tui.engine.store.reading import MAX_LINE_BYTES
from ledger_tui.engine.session import Session, drain
from ledger_tui.engine.store.trajectories import read_trajectory
from ledger_tui.engine.conversation.text import tokens
from tests.cli.test_cli import ROOT, cli

EMAIL = "mateo.ward5763@example.com"  # a retail customer of the shipped database


def _session(tmp_path: Path, turns: list[ModelTurn], **kwargs) -> Session:
    return Session(load_domain("retail"), ScriptedModel(turns), "full", out=tmp_path / "t.jsonl", timestamps=False, **kwargs)


async def _run(session: Session, *said: str) -> list:
    events = await drain(session.start())
    for text in said:
        events += await drain(session.user_says(text))
    return events + await drain(session.end())


def _warnings(events) -> list[str]:
    return [e.text for e in events if isinstance(e, Notice) and e.level == "warning"]


def test_many_numbers_in_one_message_tokenize_each():
    assert tokens("1 " * 20_000) == ("1",) * 20_000  # (past 6,399 values a placeholder used to break)
    assert tokens("a." * 30_000 + " x@y.org") == ("a." * 29_999 + "a", "x@y.org")


async def test_a_message_over_the_cap_is_cut_and_said(tmp_path):
    session = _session(tmp_path, [ModelTurn(text="y" * (limits.MAX_TEXT + 5))])
    events = await _run(session, "x" * (limits.MAX_TEXT + 10))
    said = [e.text for e in events if isinstance(e, UserMessage)]
    replied = [e.text for e in events if isinstance(e, AssistantMessage) and e.author == "model"]
    assert said == ["x" * limits.MAX_TEXT] and replied == ["y" * limits.MAX_TEXT]
    warned = _warnings(events)
    assert any(w.startswith(f"The customer's message was {limits.MAX_TEXT + 10:,} characters long") for w in warned)
    assert any(w.startswith("The model's reply was") for w in warned)


async def test_arguments_over_the_cap_are_a_tool_error_the_model_reads_and_nothing_runs(tmp_path):
    huge = {"order_id": "#W5018104", "item_ids": ["1" * limits.MAX_ARGUMENTS], "payment_method_id": "credit_card_6558064"}
    calls = [ToolCall(id="c1", name="find_user_id_by_email", arguments={"email": EMAIL})]
    calls.append(ToolCall(id="c2", name="return_delivered_order_items", arguments=huge))
    seen: list[list[dict]] = []
    model = ScriptedModel([ModelTurn(tool_calls=tuple(calls)), ModelTurn(text="Sorry.")])
    complete = model.complete

    async def spy(messages, tools):
        seen.append(messages)
        return await complete(messages, tools)

    model.complete = spy  # type: ignore[method-assign]
    session = Session(load_domain("retail"), model, "full", out=tmp_path / "t.jsonl", timestamps=False)
    events = await _run(session, f"My email is {EMAIL}, please return my chair.")
    results = {e.call_id: e for e in events if isinstance(e, ToolResult)}
    assert results["c1"].executed and not results["c1"].error  # the call within the cap runs
    assert not results["c2"].executed and results["c2"].error
    assert f"more than the {limits.MAX_ARGUMENTS:,} characters ledger-tui accepts in one reply" in results["c2"].content
    told = [m["content"] for m in seen[-1] if m["role"] == "tool"]
    assert told[-1] == results["c2"].content  # the model reads why
    assert any("was not run" in w and "return_delivered_order_items" in w for w in _warnings(events))
    proposed = [e for e in events if isinstance(e, AssistantMessage) and e.tool_calls]
    assert proposed[0].tool_calls[1].arguments == {}  # the trajectory does not keep them


async def test_calls_past_the_cap_are_dropped_and_a_huge_id_renamed(tmp_path):
    many = tuple(ToolCall(id=f"c{i}", name="find_user_id_by_email", arguments={"email": EMAIL}) for i in range(limits.MAX_CALLS + 8))
    odd = ToolCall(id="i" * 100_000, name="get_user_details", arguments={"user_id": "mateo_ward_4231"})
    session = _session(tmp_path, [ModelTurn(tool_calls=many), ModelTurn(tool_calls=(odd,)), ModelTurn(text="Done.")])
    events = await _run(session, f"Hi, {EMAIL}")
    proposed = [e for e in events if isinstance(e, AssistantMessage) and e.tool_calls]
    assert len(proposed[0].tool_calls) == limits.MAX_CALLS
    assert len(proposed[1].tool_calls[0].id) < 40
    answered = {e.call_id for e in events if isinstance(e, ToolResult)}
    assert answered == {c.id for p in proposed for c in p.tool_calls}  # every kept call, and only those
    assert any(f"{limits.MAX_CALLS + 8} tool calls; the first {limits.MAX_CALLS} are kept" in w for w in _warnings(events))


def test_a_servers_reply_with_arguments_over_the_cap_is_marked_before_it_is_parsed():
    body = {"choices": [{"message": {"content": "", "tool_calls": [
        {"id": "a", "type": "function", "function": {"name": "get_user_details", "arguments": json.dumps({"user_id": "x" * limits.MAX_ARGUMENTS})}},
    ]}, "finish_reason": "tool_calls"}]}
    turn = read_completion(json.dumps(body).encode(), "http://127.0.0.1:1")
    assert turn.tool_calls[0].arguments == {} and limits.is_too_long(turn.malformed["a"])


async def test_a_tool_result_over_the_cap_is_an_error_and_stays_out_of_the_ledger(tmp_path):
    db = json.loads((ROOT / "domains" / "retail" / "db.json").read_text())
    user = db["users"]["mateo_ward_4231"]
    user["address"]["address2"] = "Suite " + "9" * limits.MAX_RESULT
    path = tmp_path / "db.json"
    path.write_text(json.dumps(db))
    fresh = importlib.import_module("ledger_tui.domains.retail").build()  # (not the cached one other tests share)
    session = Session(fresh, ScriptedModel(), "full", db_path=path, out=tmp_path / "t.jsonl", timestamps=False)
    events = await drain(session.start())
    events += await drain(session.operator_call("get_user_details", {"user_id": "mateo_ward_4231"}))
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.error and "more than the 131,072 characters ledger-tui passes on" in result.content
    assert not any(isinstance(e, LedgerUpdated) for e in events)
    assert "users.mateo_ward_4231" not in session.state.ledger.render()


def _largest_session(tmp_path: Path) -> Path:
    """A session whose every event is as large as the caps let it be: four-byte characters (the
    most UTF-8 bytes per character) and control characters (six bytes each in JSON)."""
    wide, control = "\U0001f600", "\x01"
    text = (wide + control) * (limits.MAX_TEXT // 2)
    each = limits.MAX_ARGUMENTS // limits.MAX_CALLS - 40
    calls = tuple(
        ToolCall(id=f"w{i}", name="modify_pending_order_address", arguments={"order_id": "#W5018104", "address1": wide * each})
        for i in range(limits.MAX_CALLS)
    )
    out = tmp_path / "runs" / "largest.jsonl"
    session = Session(load_domain("retail"), ScriptedModel([ModelTurn(text=text, tool_calls=calls), ModelTurn(text=text)]), "full", out=out, timestamps=False)
    import asyncio

    async def go():
        await drain(session.start())
        await drain(session.user_says(text))
        await drain(session.operator_call("get_order_details", {"order_id": "#W5018104"}))
        await drain(session.end())

    asyncio.run(go())
    return out


def test_the_largest_events_the_engine_writes_are_read_back_by_every_reader(tmp_path):
    path = _largest_session(tmp_path)
    lines = path.read_bytes().splitlines()
    assert max(len(line) for line in lines) > MAX_LINE_BYTES // 64  # (the caps were reached)
    assert all(len(line) <= MAX_LINE_BYTES for line in lines)
    loaded = read_trajectory(path)
    assert loaded.warnings == [] and len(loaded.events) == len(lines)
    for command in (("why", str(path)), ("regress", str(path)), ("audit", str(path.parent)), ("report", str(path.parent))):
        done = cli(*command)
        assert "Traceback" not in done.stderr and "longer than" not in done.stderr + done.stdout, (command, done.stderr)
        assert "skipp" not in done.stderr.lower() and "damaged" not in done.stderr.lower(), (command, done.stderr)


GUARD = """
import resource, sys, tempfile
from pathlib import Path
resource.setrlimit(resource.RLIMIT_CPU, ({cpu}, {cpu}))
sys.path.insert(0, {root!r})
from benchmarks import engine_bounds as eb
from ledger_tui.engine import limits
shapes = list(eb.SHAPES)
pairs = [(p, shapes[(i * {stride} + {offset}) % len(shapes)]) for i, p in enumerate(eb.SCRIPTS)]
with tempfile.TemporaryDirectory() as tmp:
    done = eb.run_sessions(pairs, limits.MAX_TEXT, Path(tmp))
print(done["sessions"], done["cuts"])
"""


@pytest.mark.parametrize("offset", [0])
def test_sessions_at_the_caps_end_within_a_cpu_limit(offset):
    """Every shipped script, its messages and string arguments grown to the caps by inputs made
    to hurt a backtracking pattern (each script one shape, two slices here; the benchmark runs
    them all). A hang is killed by the CPU limit (SIGXCPU), which fails the test: the limit is a
    guard, set far above what a linear engine needs here (a few seconds)."""
    code = GUARD.format(cpu=120, root=str(ROOT), stride=3, offset=offset)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-2000:]
    sessions, cuts = map(int, done.stdout.split())
    assert sessions == len(list((ROOT / "domains").glob("*/scripts/*.json"))) and cuts >= sessions


def test_an_imported_run_over_the_caps_is_imported_in_part_and_said(tmp_path):
    from tests.eval.tau2_fixture import write_results

    source = write_results(tmp_path / "results.json")
    data = json.loads(source.read_text())
    messages = data["simulations"][0]["messages"]
    messages[1]["content"] += " " + "please " * (limits.MAX_TEXT // 7)
    tool = next(m for m in messages if m["role"] == "tool")
    tool["content"] = tool["content"] + " " * limits.MAX_RESULT
    call = next(m for m in messages if m.get("tool_calls"))
    call["tool_calls"][0]["arguments"]["note"] = "n" * limits.MAX_ARGUMENTS
    source.write_text(json.dumps(data))
    done = cli("import-tau2", str(source), "--out", str(tmp_path / "imported"))
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    first = next((tmp_path / "imported").glob("task-cancel_ordered_by_mistake-*.jsonl"))
    loaded = read_trajectory(first)
    notes = [e.text for e in loaded.events if isinstance(e, Notice) and e.text.startswith("Imported in part")]
    assert len(notes) == 3, notes  # the message, the call's arguments, the result
    assert max(len(e.text) for e in loaded.events if isinstance(e, UserMessage)) == limits.MAX_TEXT
    assert cli("why", str(first)).returncode == 0

"""`why` and `audit` as a user reads them: each stop is a violation or needs a read, in files
written today and in files written before the gate recorded the difference; stated evidence comes
with the customer's words and the step of their message."""

from __future__ import annotations

import json
from pathlib import Path

from ledger_tui.engine.events import GateDecided, LedgerUpdated
from ledger_tui.engine.store.trajectories import read_trajectory, write_trajectory
from tests.cli.test_cli import ROOT, cli
from tests.ui.scenarios import TWO_STOPS_MESSAGES, as_written_before_needs_read, record, two_stops_turns


async def two_stops(toy_domain, path: Path, reward: float | None = None) -> Path:
    """The toy session with a violation (step 10) and a stop that only needs a read (step 18)."""
    events = await record(toy_domain, two_stops_turns(), TWO_STOPS_MESSAGES)
    if reward is not None:
        events[-1] = events[-1].model_copy(update={"reward": reward})
    write_trajectory(path, events)
    return path


def blocks(text: str) -> dict[int, str]:
    """`why` output split into one block per decision, keyed by step."""
    return {int(b.split(":", 1)[0].split()[1]): b for b in text.split("\n\n") if b.startswith("step ")}


async def test_why_says_violation_or_needs_a_read_and_marks_the_checks_that_need_a_read(toy_domain, tmp_path):
    today = await two_stops(toy_domain, tmp_path / "today.jsonl")
    before = as_written_before_needs_read(today, tmp_path / "before.jsonl")
    # today the first stop is the free-text reader's finding (no proposal found); a file written
    # before the gate labelled those calls it a violation
    for path, kind, mark in ((today, "inferred from text", " · inferred from text"), (before, "violation", "")):
        out = cli("why", str(path))
        assert out.returncode == 0, out.stderr
        by_step = blocks(out.stdout)
        assert sorted(by_step) == [10, 18]
        violation, read = by_step[10].splitlines(), by_step[18].splitlines()
        assert violation[1].startswith(f"  verdict: REVISE · {kind} — The agent's last message")
        assert f"    [FAIL→REVISE{mark}] explicit_confirmation  (clause confirm)" in violation
        assert "    [FAIL→REVISE · needs a read] record_owned_by_customer  (clause owner)" in violation
        assert read[1] == "  verdict: REVISE · needs a read — loans.L1 has not been read."
        assert '  suggested read: get_loan_details(loan_id="L1")' in read
        assert "    [FAIL→REVISE · needs a read] renewal_limit  (clause renewals)" in read
        assert "    [pass] explicit_confirmation  (clause confirm)" in read
        assert out.stdout.rstrip().endswith(f"2 stopped writes: 1 {kind}, 1 needs a read"), path.name


def test_why_shows_the_customers_words_and_the_step_of_their_message():
    session = ROOT / "sessions/airline-cancel-blocked.jsonl"
    stated = [e for e in read_trajectory(session).events if isinstance(e, LedgerUpdated) and e.origin == "stated"]
    reason = next(e for e in stated if e.path == "said.cancel_reason")
    assert reason.quote, "the shipped session records the customer's words"
    out = cli("why", str(session))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[1].startswith("  verdict: BLOCK · violation — ")
    at = [i for i, line in enumerate(lines) if line.strip().startswith("said.cancel_reason = ")]
    assert at, out.stdout
    for i in at:
        assert lines[i + 1].strip() == f"stated by the customer at step {reason.source_seq}: {json.dumps(reason.quote)}"


async def test_audit_sorts_every_write_into_allowed_violation_and_needs_a_read(toy_domain, tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    await two_stops(toy_domain, folder / "today.jsonl", reward=0.0)
    as_written_before_needs_read(folder / "today.jsonl", folder / "before.jsonl")
    out = cli("audit", str(folder))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].split() == ["task", "runs", "pass", "allow", "viol", "text", "read", "discl", "said"]
    overall = next(line for line in lines if line.startswith("overall"))
    # each file: 1 allowed, 1 needs a read, and the first stop: inferred today, a violation before
    assert overall.split() == ["overall", "2", "0", "2", "1", "1", "2", "0", "0"]  # (no read of another customer's record)
    assert any(line.split() == ["reward", "0", "/", "violation", "1", "runs"] for line in lines)
    assert any(line.split() == ["reward", "0", "/", "inferred", "from", "text", "1", "runs"] for line in lines)
    assert "failed runs in which the gate would have found a violation: 1 of 2" in out.stdout
    assert "failed runs in which its worst finding was inferred from text: 1 of 2" in out.stdout
    assert "failed runs in which it would only have asked for a read: 0 of 2" in out.stdout


async def test_audit_counts_a_run_whose_only_stop_needs_a_read(toy_domain, tmp_path):
    folder = tmp_path / "runs"
    folder.mkdir()
    events = read_trajectory(await two_stops(toy_domain, tmp_path / "all.jsonl", reward=0.0)).events
    violation = next(e.seq for e in events if isinstance(e, GateDecided))  # the first stop; the second only needs a read
    write_trajectory(folder / "read-only.jsonl", [e for e in events if e.seq != violation])
    out = cli("audit", str(folder))
    assert out.returncode == 0, out.stderr
    assert next(line for line in out.stdout.splitlines() if line.startswith("overall")).split() == ["overall", "1", "0", "1", "0", "0", "1", "0", "0"]
    assert "reward 0 / needs a read" in out.stdout
    assert "failed runs in which it would only have asked for a read: 1 of 1" in out.stdout

"""`ledger-tui diff A B`: where two runs part, as an operator reads it in an 80-column terminal.

On shipped sessions, on runs made here with the engine (an `eval` of one task in two modes, and a
shipped script run again with its wording changed or one more call), and on input it must refuse.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from ledger_tui.cli import app

ROOT = Path(__file__).resolve().parents[2]
BLOCKED = ROOT / "sessions" / "airline-cancel-blocked.jsonl"
IRMA = ROOT / "sessions" / "airline-irma-cancel-goes-through.jsonl"
SCRIPT = ROOT / "domains" / "airline" / "scripts" / "cancel_blocked.json"
TASK = "airline_15_refuse_cancel_uninsured_economy"


def diff(*args: Any) -> list[str]:
    result = CliRunner().invoke(app, ["diff", *map(str, args)])
    assert result.exit_code == 0, result.output  # differ or not: 0
    lines = result.stdout.splitlines()
    assert max(len(line) for line in lines if not line.startswith(("A ", "B "))) <= 80, result.stdout
    return lines


def line(lines: list[str], start: str) -> str:
    return next(x for x in lines if x.startswith(start))


def ledger_tui(capsys, monkeypatch, *args: Any) -> tuple[int, str, str]:
    """`ledger-tui ARGS` as the console script runs it (`cli.main`): (status, stdout, stderr)."""
    from ledger_tui import cli

    monkeypatch.setattr(sys, "argv", ["ledger-tui", *map(str, args)])
    try:
        cli.main()
        status = 0
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    out = capsys.readouterr()
    return status, out.out, out.err


def test_a_blocked_cancellation_against_irma_diverges_at_the_cancellation():
    lines = diff(BLOCKED, IRMA)
    assert line(lines, "A ").endswith("sessions/airline-cancel-blocked.jsonl")
    assert lines[1] == "          airline · mode full · model scripted · no reward recorded"
    assert "· mode irma ·" in lines[3]
    assert line(lines, "task") == "task      none named"
    assert line(lines, "turns") == "turns     A 3, B 2; 1 the same before they diverge"
    assert line(lines, "diverges") == "diverges  at turn 2 (A step 22, B step 25): verdicts and ledger"
    assert line(lines, "customer") == "customer  Yes, please cancel it."  # the same words: said once
    assert line(lines, "calls") == "calls     the same 1 on both sides"
    verdicts = line(lines, "verdicts")
    assert verdicts.startswith('verdicts  cancel_reservation(reservation_id="VY0QX8")') and verdicts.endswith("A BLOCK  B (no gate)")
    ledger = line(lines, "ledger")
    assert "reservations.VY0QX8" in ledger and ledger.endswith("A —  B stale")
    assert line(lines, "agent").startswith("agent     A I'm sorry, but I can't do that.")
    assert line(lines, "end") == "end       both: script finished; the final databases differ"
    # then every turn side by side, the divergence marked
    turns = lines[lines.index(next(x for x in lines if x.startswith("turn "))) :]
    assert turns[0].split() == ["turn", "A", "full", "B", "irma"]
    assert turns[1].split() == ["=", "1", "3", "reads", "3", "reads"]
    assert turns[2].startswith("»  2 cancel_reservation BLOCK") and turns[2].endswith("cancel_reservation (no gate)")
    assert turns[3].startswith("≠  3 says only") and turns[3].endswith("—")


def test_a_run_against_itself_does_not_diverge():
    lines = diff("airline-cancel-blocked", BLOCKED)  # a shipped session by name, or by path
    assert line(lines, "turns") == "turns     3 on each side, all the same: the runs do not diverge"
    assert not any(x.startswith(("diverges", "verdicts")) for x in lines)
    assert line(lines, "end") == "end       both: script finished; the same final database"


def test_baseline_against_full_of_one_eval_task(tmp_path: Path):
    out = tmp_path / "ev"
    made = CliRunner().invoke(app, ["eval", "--domain", "airline", "--agent", "gold", "--tasks", TASK, "--mode", "baseline", "--mode", "full", "--out", str(out)])
    assert made.exit_code == 0, made.output
    runs = out / "trajectories" / "airline"
    lines = diff(runs / "baseline" / f"task-{TASK}-trial-0.jsonl", runs / "full" / f"task-{TASK}-trial-0.jsonl")
    # the gold agent's trajectories carry no reward: it is read from the folder's results.jsonl
    assert lines[1] == "          airline · mode baseline · model gold · reward 0 (failed)"
    assert lines[3] == "          airline · mode full · model gold · reward 1 (passed)"
    assert line(lines, "task") == f"task      {TASK}"
    assert line(lines, "diverges").startswith("diverges  at turn 1 (A step 1, B step 1): verdicts and ledger")
    assert line(lines, "verdicts").endswith("A (no gate)  B BLOCK")
    assert line(lines, "ledger").endswith("A added, stale  B added")  # baseline's cancellation ran


def _script(tmp_path: Path, name: str, change) -> Path:
    script = json.loads(SCRIPT.read_text())
    change(script["turns"])
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(script))
    run = CliRunner().invoke(app, ["run", "--script", str(path), "--out", str(tmp_path / f"{name}.jsonl"), "--no-timestamps"])
    assert run.exit_code == 0, run.output
    return tmp_path / f"{name}.jsonl"


def test_other_words_are_shown_and_one_more_call_is_where_they_diverge(tmp_path: Path):
    def reworded(turns: list) -> None:
        turns[4]["agent"]["text"] = "Rosa, VY0QX8 is an uninsured economy one-way from MCO to CLT. Cancel it?"
        turns[0]["customer"] = "Hello! rosa_phillips_9719 here; please cancel VY0QX8 and refund me, my plans changed."

    def reads_again(turns: list) -> None:
        turns.insert(8, {"agent": {"text": "", "calls": [{"name": "get_reservation_details", "arguments": {"reservation_id": "VY0QX8"}}]}})

    worded = _script(tmp_path, "worded", reworded)
    lines = diff(BLOCKED, worded)
    assert line(lines, "turns") == "turns     3 on each side, all the same: the runs do not diverge"
    assert line(lines, "          worded") == "          worded differently: turn 1"
    assert next(x for x in lines if x.startswith("~")).split()[:2] == ["~", "1"]

    again = _script(tmp_path, "again", reads_again)
    lines = diff(BLOCKED, again)
    assert line(lines, "turns") == "turns     3 on each side; 2 the same before they diverge"
    assert line(lines, "diverges").startswith("diverges  at turn 3 (A step 29, B step 29): calls and ledger")
    assert line(lines, "calls A") == "calls A   none"
    assert line(lines, "calls B").startswith('calls B   get_reservation_details(reservation_id="VY0QX8")')
    assert line(lines, "ledger").endswith("A —  B refreshed")
    assert line(lines, "»  3").split()[2:] == ["says", "only", "1", "read"]


def test_bad_input_is_one_sentence_naming_the_fix(capsys, monkeypatch, tmp_path: Path):
    def refused(*args: Any) -> str:
        status, out, err = ledger_tui(capsys, monkeypatch, "diff", *args)
        lines = [x for x in err.splitlines() if x.strip()]
        assert status == 2 and not out, out + err
        assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in err, err
        return lines[0]

    missing = refused(BLOCKED, tmp_path / "nope.jsonl")
    assert "nope.jsonl does not exist; check the path" in missing
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text('{"seq": 0, "type": "user_message"}\n{"seq": 1}\n')
    assert "Line 1 of damaged.jsonl is not a valid event" in refused(damaged, BLOCKED)
    other = refused(BLOCKED, ROOT / "sessions" / "retail-refund-revise-then-allow.jsonl")
    assert other == (
        "error: airline-cancel-blocked.jsonl is a run of the airline domain and retail-refund-revise-then-allow.jsonl "
        "of retail; diff compares two runs of one domain, so pass two airline trajectories."
    )


def test_runs_of_two_tasks_are_compared_with_a_warning(capsys, monkeypatch, tmp_path: Path):
    out = tmp_path / "ev"
    other = "airline_01_cancel_recent_booking"
    assert CliRunner().invoke(app, ["eval", "--domain", "airline", "--agent", "gold", "--tasks", f"{TASK},{other}", "--out", str(out)]).exit_code == 0
    runs = out / "trajectories" / "airline" / "full"
    status, printed, err = ledger_tui(capsys, monkeypatch, "diff", runs / f"task-{TASK}-trial-0.jsonl", runs / f"task-{other}-trial-0.jsonl")
    assert status == 0, err
    assert err.startswith(f"warning: task-{TASK}-trial-0.jsonl is a run of task {TASK} and task-{other}-trial-0.jsonl of task {other}")
    assert f"task      A {TASK}\n          B {other}\n" in printed
    assert "diverges  at turn 1" in printed

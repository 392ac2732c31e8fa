"""The headless CLI as a user meets it: real domains, bad input. The commands run in this process
(tests/in_process.py), answering as a subprocess would; `python -m ledger_tui` itself runs in a real
process here once (and the installed command in tests/smoke)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.in_process import ledger_tui

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = sorted(ROOT.glob("domains/*/scripts/*.json"))


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return ledger_tui(*args, cwd=cwd or ROOT)


def process(*args: str) -> subprocess.CompletedProcess[str]:
    """`python -m ledger_tui ARGS` in a process of its own."""
    return subprocess.run([sys.executable, "-m", "ledger_tui", *args], capture_output=True, text=True, cwd=ROOT, timeout=120)


def one_sentence_error(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 2, out.stdout + out.stderr
    assert "Traceback" not in out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: "), out.stderr
    return lines[0]


def shipped_session(script: Path) -> Path:
    domain = script.parent.parent.name
    return ROOT / "sessions" / f"{domain}-{script.stem.replace('_', '-')}.jsonl"


@pytest.mark.parametrize("script", SCRIPTS, ids=[f"{s.parent.parent.name}/{s.stem}" for s in SCRIPTS])
def test_shipped_sessions_are_reproduced_byte_for_byte(script: Path, tmp_path: Path):
    out = tmp_path / "again.jsonl"
    run = cli("run", "--script", str(script), "--out", str(out), "--no-timestamps")
    assert run.returncode == 0, run.stderr
    assert out.read_bytes() == shipped_session(script).read_bytes(), (
        f"{shipped_session(script).name} is out of date: regenerate it with "
        f"`ledger-tui run --script {script.relative_to(ROOT)} --out {shipped_session(script).relative_to(ROOT)} --no-timestamps`"
    )


def test_every_domain_ships_a_session_and_the_required_examples_exist():
    names = {p.name for p in (ROOT / "sessions").glob("*.jsonl")}
    for domain in ("airline", "retail", "telecom", "telehealth"):
        assert any(n.startswith(domain + "-") for n in names), domain
    blocked = (ROOT / "sessions" / "airline-cancel-blocked.jsonl").read_text()
    assert '"verdict":"BLOCK"' in blocked and "cancel_reservation" in blocked
    refund = [json.loads(line) for line in (ROOT / "sessions" / "retail-refund-revise-then-allow.jsonl").read_text().splitlines()]
    verdicts = [(e["decision"]["call"]["name"], e["decision"]["verdict"]) for e in refund if e["type"] == "gate_decision"]
    assert verdicts == [("return_delivered_order_items", "REVISE"), ("return_delivered_order_items", "ALLOW")]


def test_run_prints_a_summary_and_dumps_the_db(tmp_path: Path):
    out = process(
        "run", "--script", "domains/airline/scripts/cancel_blocked.json", "--out", str(tmp_path / "t.jsonl"),
        "--dump-db", str(tmp_path / "db.json"),
    )
    assert out.returncode == 0, out.stderr
    assert "gate      ALLOW 0   REVISE 0   BLOCK 1" in out.stdout
    digest = next(line.split()[1] for line in out.stdout.splitlines() if line.startswith("db "))
    dumped = json.loads((tmp_path / "db.json").read_text())
    assert set(dumped) == {"flights", "users", "reservations"}
    from ledger_tui.engine.store.serialize import digest as compute

    assert compute(dumped) == digest, "a blocked cancellation leaves the shipped db unchanged"


def test_run_a_task_with_the_gold_agent(tmp_path: Path):
    from ledger_tui.engine.agents.tasks import load_tasks

    task = next(t for t in load_tasks(ROOT / "domains/airline/tasks.json") if not t.is_refusal)
    out = cli("run", "--domain", "airline", "--task", task.id, "--agent", "gold", "--out", str(tmp_path / "g.jsonl"))
    assert out.returncode == 0, out.stdout + out.stderr
    assert "result    PASS" in out.stdout
    assert (tmp_path / "g.jsonl").exists()
    # the calls it made, in order, each with what came of it, in 80 columns
    calls = [line for line in out.stdout.splitlines() if line.startswith("  step ")]
    assert calls and all(len(line) <= 80 for line in calls)
    assert calls[0].split()[2].startswith("get_user_details(") and calls[0].endswith("  read")
    written = [line for line in calls if task.gold_actions[-1].name in line]
    assert written[-1].endswith("  ALLOW") and any(line.endswith("REVISE · card") for line in written)


def test_why_explains_a_block_with_evidence_and_clause():
    out = cli("why", "sessions/airline-cancel-blocked.jsonl")
    assert out.returncode == 0, out.stderr
    assert "verdict: BLOCK" in out.stdout
    assert "[FAIL→BLOCK] cancel_eligible" in out.stdout
    assert "read at step" in out.stdout and "get_reservation_details" in out.stdout
    assert "policy: [cancel.eligibility]" in out.stdout


def test_why_step_option_and_wrong_step():
    events = [json.loads(line) for line in (ROOT / "sessions/retail-refund-revise-then-allow.jsonl").read_text().splitlines()]
    allow = next(e["seq"] for e in events if e["type"] == "gate_decision" and e["decision"]["verdict"] == "ALLOW")
    out = cli("why", "sessions/retail-refund-revise-then-allow.jsonl", "--step", str(allow))
    assert out.returncode == 0 and "verdict: ALLOW" in out.stdout
    assert "gate decisions are at steps" in one_sentence_error(cli("why", "sessions/retail-refund-revise-then-allow.jsonl", "--step", "0"))


def test_domains_lists_all_four_with_their_tools_in_80_columns():
    out = cli("domains")
    assert out.returncode == 0
    lines = out.stdout.splitlines()
    assert max(len(line) for line in lines) <= 80
    blocks: dict[str, str] = {}
    for line in lines:
        if not line.startswith(" "):
            name = line.split()[0]
        blocks[name] = blocks.get(name, "") + line + "\n"
    assert sorted(blocks) == ["airline", "retail", "telecom", "telehealth"]
    assert "writes: book_reservation, cancel_reservation" in blocks["airline"]
    assert "cancel_pending_order" in blocks["retail"] and "predicates: " in blocks["retail"]
    assert "customer-side" in blocks["telecom"] and "customer: " in blocks["telecom"]


def test_version_and_help_read_as_sentences():
    out = cli("--version")
    assert out.returncode == 0 and out.stdout.strip().startswith("ledger-tui 0.")
    summaries: dict[str, str] = {}
    name = ""
    for line in cli("--help").stdout.splitlines():
        cells = line.strip("│ ").split(None, 1)
        if not line.startswith("│") or not cells:
            continue
        if not line.startswith("│ " + " " * 4) and cells[0].isidentifier() or cells[0] == "import-tau2":
            name, cells = cells[0], cells[1:]
        summaries[name] = " ".join([summaries.get(name, ""), *cells]).strip()
    # a summary is one whole sentence, not a docstring cut at its first line break
    assert summaries["tasks"] == "List a domain's task ids with their gold actions (or the write a refusal task must stop)."
    assert summaries["grade"] == "Grade a τ²-bench results file again with this project's environment; exit 1 on any difference."
    assert all(text.endswith(".") for text in summaries.values()), summaries
    # an option's help shows its words whole: `[ray]` in `pip install 'ledger-tui[ray]'` is not
    # taken for Rich markup and dropped
    shown = " ".join(cli("eval", "--help").stdout.replace("│", " ").split())
    assert "pip install 'ledger-tui[ray]')." in shown


def test_malformed_script_is_one_sentence(tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text('{"domain": "airline", "turns": [{"customer": "hi"},')
    assert "not valid JSON" in one_sentence_error(cli("run", "--script", str(bad)))
    bad.write_text('{"domain": "airline", "turns": [{"custom": "hi"}]}')
    assert "exactly one of" in one_sentence_error(cli("run", "--script", str(bad)))
    assert "does not exist" in one_sentence_error(cli("run", "--script", str(tmp_path / "missing.json")))


def test_unknown_domain_and_unknown_task_are_one_sentence(tmp_path: Path):
    script = tmp_path / "s.json"
    script.write_text('{"domain": "railway", "turns": [{"customer": "hi"}]}')
    assert "Unknown domain 'railway'" in one_sentence_error(cli("run", "--script", str(script)))
    assert "no task" in one_sentence_error(cli("run", "--domain", "airline", "--task", "nope", "--agent", "gold"))


def test_unknown_tool_in_a_script_is_blocked_and_recorded(tmp_path: Path):
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"domain": "airline", "turns": [
        {"customer": "Delete my account please."},
        {"agent": {"calls": [{"name": "delete_user", "arguments": {"user_id": "x"}}]}},
    ]}))
    out = cli("run", "--script", str(script), "--out", str(tmp_path / "u.jsonl"))
    assert out.returncode == 0, out.stderr
    assert "BLOCK 1" in out.stdout
    why = cli("why", str(tmp_path / "u.jsonl"))
    assert "known_tool" in why.stdout


def test_a_script_out_of_sync_keeps_what_was_recorded(tmp_path: Path):
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"domain": "airline", "turns": [
        {"customer": "Hi"},
        {"agent": {"calls": [{"name": "get_user_details", "arguments": {"user_id": "nobody"}}]}},
    ]}))
    out = cli("run", "--script", str(script), "--out", str(tmp_path / "o.jsonl"))
    line = one_sentence_error(out)
    assert "no agent turn left" in line and "saved in" in line
    events = [json.loads(x) for x in (tmp_path / "o.jsonl").read_text().splitlines()]
    assert [e["type"] for e in events][:2] == ["session_started", "user_message"]
    assert events[-1]["type"] == "session_ended"


def test_invalid_tool_arguments_become_a_tool_error_the_model_sees(tmp_path: Path):
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"domain": "airline", "turns": [
        {"customer": "Hi"},
        {"agent": {"calls": [{"name": "get_user_details", "arguments": {"user": 5}}]}},
        {"agent": {"text": "Sorry, let me try that again."}},
    ]}))
    out = cli("run", "--script", str(script), "--out", str(tmp_path / "a.jsonl"))
    assert out.returncode == 0, out.stderr
    results = [json.loads(x) for x in (tmp_path / "a.jsonl").read_text().splitlines() if '"tool_result"' in x]
    # the words τ²-bench's tools answer with (Python's own, for a keyword the method does not take)
    assert results[0]["error"]
    assert results[0]["content"] == "Error: AirlineTools.get_user_details() got an unexpected keyword argument 'user'"


def test_truncated_trajectory_keeps_every_complete_line(tmp_path: Path):
    lines = (ROOT / "sessions/airline-cancel-blocked.jsonl").read_text().splitlines()
    damaged = tmp_path / "cut.jsonl"
    damaged.write_text("\n".join(lines[:-1]) + "\n" + lines[-1][: len(lines[-1]) // 2])
    out = cli("why", str(damaged))
    assert out.returncode == 0, out.stderr
    assert "incomplete or corrupt and was skipped" in out.stderr and "Traceback" not in out.stderr
    assert "verdict: BLOCK" in out.stdout


def test_unusable_files_are_one_sentence(tmp_path: Path):
    (tmp_path / "x.jsonl").write_text("hello\nworld\n")
    assert "Line 1 of x.jsonl" in one_sentence_error(cli("why", str(tmp_path / "x.jsonl")))
    assert "does not exist" in one_sentence_error(cli("replay", str(tmp_path / "nope.jsonl")))
    assert "Unknown mode" in one_sentence_error(cli("run", "--script", str(SCRIPTS[0]), "--mode", "turbo"))


def test_missing_api_key_for_eval_names_the_fix(tmp_path: Path):
    import os

    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
    out = ledger_tui("eval", "--domain", "airline", "--tasks", "airline_01_cancel_recent_booking", "--out", str(tmp_path), cwd=ROOT, env=env)
    assert "OPENAI_API_KEY" in one_sentence_error(out)


def test_bad_database_file_is_one_sentence(tmp_path: Path):
    db = tmp_path / "db.json"
    db.write_text('{"flights": {}, "users": [], "reservations": {}}')
    assert "does not match the airline schema" in one_sentence_error(
        cli("run", "--script", "domains/airline/scripts/cancel_blocked.json", "--db", str(db), "--out", str(tmp_path / "x.jsonl"))
    )


def test_a_wrongly_typed_script_turn_names_the_turn_and_field(tmp_path: Path):
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"domain": "airline", "turns": [
        {"customer": "hi"}, {"agent": {"calls": [{"name": "get_user_details", "arguments": "oops"}]}},
    ]}))
    line = one_sentence_error(cli("run", "--script", str(bad)))
    assert "Turn 2" in line and "(agent)" in line and "arguments" in line


def test_a_resumed_eval_says_what_was_already_done(tmp_path: Path):
    args = ("eval", "--domain", "airline", "--agent", "gold", "--tasks", "airline_01_cancel_recent_booking",
            "--trials", "2", "--out", str(tmp_path))
    first = cli(*args)
    assert first.returncode == 0, first.stderr
    assert "2 passed in this run" in first.stdout + first.stderr
    # not a terminal: each finished run is said on its own line, as it finishes
    said = [line for line in first.stdout.splitlines() if re.match(r"eval \d/2 (passed|failed) · ", line)]
    assert [line[:15] for line in said] == ["eval 1/2 passed", "eval 2/2 passed"], first.stdout
    trials = sorted(line.split(" · ")[2] for line in said)
    assert trials == ["trial 0", "trial 1"] and all(line.endswith(" · airline_01_cancel_recent_booking") for line in said)
    again = cli(*args)
    assert again.returncode == 0, again.stderr
    shown = again.stdout + again.stderr
    assert f"resuming {tmp_path}: 2 of 2 runs already done, 0 to run" in shown and "passed in this run" not in shown
    assert len((tmp_path / "results.jsonl").read_text().splitlines()) == 2


def test_tasks_lists_the_ids_eval_accepts():
    out = cli("tasks", "airline")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[-1] == "24 tasks"
    first = lines[0].split()
    assert first[0] == "airline_01_cancel_recent_booking" and first[-1] == "cancel_reservation"
    assert any(line.split()[0] == "airline_15_refuse_cancel_uninsured_economy" and "refuse cancel_reservation (BLOCK)" in line for line in lines)
    assert "Unknown domain" in one_sentence_error(cli("tasks", "nowhere"))


@pytest.mark.parametrize(
    "flags, words",
    [
        (["--extra-body", "{top_k: 20}"], "--extra-body is not valid JSON"),
        (["--extra-body", "[1, 2]"], "--extra-body must be a JSON object"),
        (["--ledger-at", "middle"], "choose one of: customer, end, system"),
        (["--timeout", "0"], "--timeout must be a positive number"),
        (["--context-window", "-5"], "--context-window must be a positive number"),
    ],
)
def test_bad_server_options_are_one_sentence(tmp_path: Path, flags: list[str], words: str):
    out = cli("eval", "--domain", "airline", "--base-url", "http://127.0.0.1:9/v1", "--out", str(tmp_path / "e"), *flags)
    assert words in one_sentence_error(out)
    assert not (tmp_path / "e").exists(), "nothing is written before the options are checked"


def test_irma_scripts_say_in_one_sentence_what_their_helper_turns_lack(tmp_path: Path):
    script = tmp_path / "s.json"
    script.write_text(json.dumps({"domain": "airline", "mode": "irma", "turns": [{"customer": "hi"}, {"agent": {"text": "Hello!"}}]}))
    out = cli("run", "--script", str(script), "--out", str(tmp_path / "t.jsonl"))
    assert 'followed by a "helpers" turn' in one_sentence_error(out)
    assert (tmp_path / "t.jsonl").read_text().count("session_started") == 1, "what ran is kept"
    script.write_text(json.dumps({"domain": "airline", "turns": [{"helpers": {"constraints": "-", "tools": "-"}}]}))
    assert "must come right after a customer turn" in one_sentence_error(cli("run", "--script", str(script)))
    script.write_text(json.dumps({"domain": "airline", "turns": [{"customer": "hi"}, {"helpers": {"constraints": "-", "tools": "-"}}]}))
    assert "run it with --mode irma" in one_sentence_error(cli("run", "--script", str(script), "--out", str(tmp_path / "u.jsonl")))
    # the same script runs in mode irma when asked on the command line
    script.write_text(json.dumps({"domain": "airline", "turns": [
        {"customer": "hi"}, {"helpers": {"constraints": "- greet", "tools": "- none: answer"}}, {"agent": {"text": "Hello!"}},
    ]}))
    ran = cli("run", "--script", str(script), "--mode", "irma", "--out", str(tmp_path / "v.jsonl"))
    assert ran.returncode == 0, ran.stderr
    assert "mode irma" in ran.stdout and "helpers   2 helper calls" in ran.stdout


def test_the_gold_agent_is_refused_in_mode_irma_in_one_sentence(tmp_path: Path):
    runs = ROOT / "sessions" / "runs"
    before = set(runs.iterdir()) if runs.exists() else set()
    first = cli("run", "--domain", "airline", "--task", "airline_01_cancel_recent_booking", "--agent", "gold", "--mode", "irma")
    assert "helper calls need a model" in one_sentence_error(first)
    # refused before a run file is made (an empty one was left in the checkout's runs folder, and
    # listed in the palette's "Open session")
    assert (set(runs.iterdir()) if runs.exists() else set()) == before
    second = cli("eval", "--domain", "airline", "--agent", "gold", "--mode", "full", "--mode", "irma", "--out", str(tmp_path / "ev"))
    assert "helper calls need a model" in one_sentence_error(second)
    assert not (tmp_path / "ev").exists(), "refused before anything is written"


def test_why_on_a_run_without_the_gate_says_so():
    out = cli("why", "sessions/airline-irma-cancel-goes-through.jsonl")
    assert out.returncode == 0 and out.stdout.strip() == "This trajectory ran in mode irma, without the gate: no write was judged."


def test_regress_in_full_mode_says_which_writes_of_an_irma_run_the_gate_would_stop():
    out = cli("regress", "--mode", "full", "sessions/airline-irma-cancel-goes-through.jsonl")
    assert out.returncode == 1, out.stderr
    assert '  decision 1: cancel_reservation(reservation_id="VY0QX8"): (no gate) -> BLOCK' in out.stdout.splitlines()
    # a write the gate allows ran before too: no change, exit 0
    allowed = cli("regress", "--mode", "full", "sessions/retail-irma-refund-to-original-card.jsonl")
    assert allowed.returncode == 0 and "  no verdict changed" in allowed.stdout.splitlines(), allowed.stdout
    same = cli("regress", "sessions/airline-irma-cancel-goes-through.jsonl")
    assert same.returncode == 0 and "0 gate decisions recorded, 0 under today's policy" in same.stdout


def test_ctrl_c_in_any_command_says_what_is_kept_and_exits_130(monkeypatch):
    """Typer would print "Aborted!" and exit 1; a long regress (or report, import…) interrupted says
    what an interrupted eval says in short."""
    from typer.testing import CliRunner

    import ledger_tui.eval.regress as regress
    from ledger_tui.cli import app

    async def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(regress, "regress", interrupted)
    result = CliRunner().invoke(app, ["regress", "sessions/airline-cancel-blocked.jsonl"])
    assert result.exit_code == 130
    assert "interrupted; everything recorded so far is saved." in result.output
    assert "Aborted" not in result.output

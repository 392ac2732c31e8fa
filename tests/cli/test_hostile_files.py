"""Every reader survives every input (issue 13): the crashes found by hand, by a colleague and by
the fuzzer (tests/engine/test_fuzz_readers.py), each through the command a user would run.

A damaged file is one sentence on stderr naming the file, the line or field and what is wrong in
words (no validator dump), exit status 2, and nothing written; the size and nesting limits are
enforced with a sentence. The commands run in this process (`cli.main`), which is what the
`ledger-tui` script calls.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from tests.eval.tau2_samples import as_folder, sample, write
from tests.hostile import files_under

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "domains" / "airline" / "scripts" / "cancel_blocked.json"
TELECOM_SCRIPT = sorted((ROOT / "domains" / "telecom" / "scripts").glob("*.json"))[0]
INTERNALS = ("validation error for", "errors.pydantic.dev", "tagged-union", "Traceback", "[type=")
DEEP = "[" * 100_000 + "]" * 100_000


def ledger_tui(capsys, monkeypatch, cwd: Path, *args: Any) -> tuple[int, str, str]:
    """Run `ledger-tui ARGS` in `cwd` as the console script does; (status, stdout, stderr)."""
    from ledger_tui import cli

    monkeypatch.chdir(cwd)
    monkeypatch.setattr(sys, "argv", ["ledger-tui", *map(str, args)])
    try:
        cli.main()
        status = 0
    except SystemExit as exc:
        status = exc.code if isinstance(exc.code, int) else 1
    out = capsys.readouterr()
    return status, out.out, out.err


def refused(capsys, monkeypatch, cwd: Path, *args: Any) -> str:
    """The one sentence a command refuses its input with; checks that nothing was written in `cwd`."""
    before = files_under(cwd)
    status, out, err = ledger_tui(capsys, monkeypatch, cwd, *args)
    lines = [line for line in err.splitlines() if line.strip()]
    assert status == 2, out + err
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    assert not any(w in err for w in INTERNALS), err
    assert files_under(cwd) == before, f"written: {files_under(cwd) - before}"
    return lines[0]


# ----------------------------------------------------------------------------- τ²-bench results files


def _first(sim: dict[str, Any], pred: Callable[[dict[str, Any]], bool]) -> dict[str, Any]:
    return next(m for m in sim["messages"] if pred(m))


def _call(sim):
    return _first(sim, lambda m: bool(m.get("tool_calls")))["tool_calls"][0]


# The 15 malformed shapes import-tau2 met with a traceback, and what the sentence must name
SHAPES: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "info a string": (lambda d: d.__setitem__("info", "x"), "info should be an object (got 'x')"),
    "agent_info a string": (lambda d: d["info"].__setitem__("agent_info", "gpt"), "info.agent_info should be an object"),
    "environment_info a list": (lambda d: d["info"].__setitem__("environment_info", ["retail"]), "info.environment_info should be an object"),
    "simulations an object": (lambda d: d.__setitem__("simulations", {"0": {}}), "simulations should be a list (got an object)"),
    "a simulation a string": (lambda d: d["simulations"].__setitem__(1, "sim"), "simulations[1] should be an object"),
    "messages a string": (lambda d: d["simulations"][0].__setitem__("messages", "hello"), "simulations[0].messages should be a list"),
    "a message a number": (lambda d: d["simulations"][0]["messages"].__setitem__(2, 7), "simulations[0].messages[2] should be an object"),
    "tool_calls a number": (lambda d: _first(d["simulations"][0], lambda m: bool(m.get("tool_calls"))).__setitem__("tool_calls", 7), "tool_calls should be a list (got 7)"),
    "a tool call a string": (lambda d: _first(d["simulations"][0], lambda m: bool(m.get("tool_calls")))["tool_calls"].__setitem__(0, "call"), "tool_calls[0] should be an object"),
    "a null tool name": (lambda d: _call(d["simulations"][0]).__setitem__("name", None), "tool_calls[0].name should be text (got null)"),
    "tool content a number": (lambda d: _first(d["simulations"][0], lambda m: m["role"] == "tool").__setitem__("content", 5), "content should be text (got 5)"),
    "reward a string": (lambda d: d["simulations"][0]["reward_info"].__setitem__("reward", "high"), "simulations[0].reward_info.reward should be a number (got 'high')"),
    "reward_info a list": (lambda d: d["simulations"][0].__setitem__("reward_info", [1.0]), "simulations[0].reward_info should be an object (got a list)"),
    "start time a number": (lambda d: d["simulations"][0].__setitem__("start_time", 1722528000), "simulations[0].start_time should be text (got 1722528000)"),
    "termination a number": (lambda d: d["simulations"][0].__setitem__("termination_reason", 3), "simulations[0].termination_reason should be text (got 3)"),
}


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("command", ["import-tau2", "grade"])
def test_a_malformed_results_file_is_one_sentence_naming_the_field(shape, command, tmp_path, capsys, monkeypatch):
    data = sample("retail")
    damage, named = SHAPES[shape]
    damage(data)
    write(data, tmp_path / "results.json")
    args = ["import-tau2", "results.json", "--out", "imported"] if command == "import-tau2" else ["grade", "results.json"]
    sentence = refused(capsys, monkeypatch, tmp_path, *args)
    assert sentence.startswith("error: results.json is damaged: ") and named in sentence, sentence


@pytest.mark.parametrize(
    "entry, words",
    [
        ({"id": "../outside"}, "names simulation '../outside', which is not a file name in"),
        ("../../etc/passwd", "names simulation '../../etc/passwd'"),
        ({"id": "/etc/passwd"}, "names simulation '/etc/passwd'"),
        ({"id": "escape"}, "names simulation 'escape', which is not a file name in"),  # a symlink out of simulations/
        ({"task_id": "0"}, "simulation_index[1] of results.json has no simulation id (got null)"),
        ({"id": ["a"]}, "has no simulation id (got a list)"),
        ({"id": "gone"}, "1 of the 3 simulations indexed in results.json have no file"),
    ],
    ids=["parent", "bare parent", "absolute", "symlink out", "no id", "id a list", "missing file"],
)
def test_simulation_index_ids_never_lead_out_of_the_simulations_folder(entry, words, tmp_path, capsys, monkeypatch):
    folder = as_folder(sample("retail"), tmp_path / "run")
    secret = tmp_path / "outside.json"
    secret.write_text(json.dumps(sample("retail")["simulations"][0]))
    (folder / "simulations" / "escape.json").symlink_to(secret)
    meta = json.loads((folder / "results.json").read_text())
    meta["simulation_index"][1] = entry
    (folder / "results.json").write_text(json.dumps(meta))
    for args in (["import-tau2", "run", "--out", "imported"], ["grade", "run"]):
        sentence = refused(capsys, monkeypatch, tmp_path, *args)
        assert words in sentence, sentence


def test_json_held_as_text_nested_past_the_limit_is_kept_as_text(tmp_path, capsys, monkeypatch):
    """A recorded tool result or argument string holding JSON 100,000 levels deep (RecursionError
    in import-tau2 and grade): imported as the text it is, graded as text."""
    data = sample("retail")
    sim = data["simulations"][0]
    _first(sim, lambda m: m["role"] == "tool")["content"] = DEEP
    _call(sim)["arguments"] = DEEP
    write(data, tmp_path / "results.json")
    status, _, err = ledger_tui(capsys, monkeypatch, tmp_path, "import-tau2", "results.json", "--out", "imported")
    assert status == 0, err
    from ledger_tui.engine.store.trajectories import read_trajectory

    results = [e for p in sorted((tmp_path / "imported").glob("*.jsonl")) for e in read_trajectory(p).events if e.type == "tool_result"]
    from ledger_tui.engine.limits import MAX_RESULT

    assert DEEP[:MAX_RESULT] in {e.content for e in results}  # as text, cut at the cap on a tool result
    status, out, err = ledger_tui(capsys, monkeypatch, tmp_path, "grade", "results.json")
    assert status in (0, 1) and "overall:" in out and "Traceback" not in err


def test_a_results_file_nested_past_the_limit_is_one_sentence(tmp_path, capsys, monkeypatch):
    (tmp_path / "results.json").write_text('{"info": {}, "simulations": ' + DEEP + "}")
    for args in (["import-tau2", "results.json", "--out", "imported"], ["grade", "results.json"]):
        sentence = refused(capsys, monkeypatch, tmp_path, *args)
        assert "results.json is nested more than 100 levels deep (line 1)" in sentence


# ----------------------------------------------------------------------------- results.jsonl


def _eval_folder(folder: Path) -> list[dict[str, Any]]:
    """An eval --out folder with three runs (one failed, its trajectory in the folder)."""
    base = {
        "domain": "airline", "task_id": "airline_01_cancel_recent_booking", "trial": 0, "mode": "full", "agent": "m",
        "reward": 1.0, "termination": "user_stop", "trajectory": "trajectories/ok.jsonl", "grade": {"reward": 1.0},
    }
    lines = [base, {**base, "trial": 1}, {**base, "trial": 2, "reward": 0.0, "trajectory": "trajectories/blocked.jsonl"}]
    (folder / "trajectories").mkdir(parents=True)
    (folder / "trajectories" / "blocked.jsonl").write_bytes((ROOT / "sessions" / "airline-cancel-blocked.jsonl").read_bytes())
    (folder / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return lines


def _rewrite(folder: Path, lines: list[dict[str, Any]], at: int, **changes: Any) -> None:
    lines = copy.deepcopy(lines)
    lines[at].update(changes)
    (folder / "results.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))


@pytest.mark.parametrize(
    "changes, words",
    [
        ({"reward": None}, "reward should be a number (got null)"),
        ({"reward": "high"}, "reward should be a number (got 'high')"),
        ({"reward": 7}, "reward should be a number from 0 to 1 (got 7.0)"),
        ({"grade": [1, 2]}, "grade should be an object (got a list)"),
        ({"trial": "first"}, "trial should be a whole number (got 'first')"),
    ],
    ids=["reward null", "reward a string", "reward out of range", "grade a list", "trial a string"],
)
def test_a_damaged_results_line_before_the_last_is_one_sentence_for_report_browse_and_eval(changes, words, tmp_path, capsys, monkeypatch):
    lines = _eval_folder(tmp_path / "runs")
    _rewrite(tmp_path / "runs", lines, 1, **changes)
    before = (tmp_path / "runs" / "results.jsonl").read_bytes()
    for args in (["report", "runs"], ["browse", "runs"],
                 ["eval", "--domain", "airline", "--agent", "gold", "--tasks", "airline_01_cancel_recent_booking", "--trials", "4", "--out", "runs"]):
        sentence = refused(capsys, monkeypatch, tmp_path, *args)
        assert f"Line 2 of {Path('runs') / 'results.jsonl'} is damaged: {words}; repair or remove that line" in sentence, sentence
    assert (tmp_path / "runs" / "results.jsonl").read_bytes() == before


def test_a_damaged_last_results_line_is_skipped_with_a_warning_and_redone(tmp_path, capsys, monkeypatch):
    """The line eval was writing when it stopped: report and browse show the other runs and say
    which line they skipped; eval redoes that run."""
    lines = _eval_folder(tmp_path / "runs")
    _rewrite(tmp_path / "runs", lines, 2, reward=None, grade=[1])
    status, out, err = ledger_tui(capsys, monkeypatch, tmp_path, "report", "runs")
    assert status == 0, err
    assert "warning: Line 3 of runs/results.jsonl is incomplete or damaged (reward should be a number (got null)" in err
    from ledger_tui.ui.run_index import load_runs

    index = load_runs(tmp_path / "runs")
    assert [r.trial for r in index.rows] == [0, 1] and "Line 3 of" in index.warnings[0]
    # the folder's rows were written before cards (no "consent"): their runs read consent from text,
    # and a resume in the default card mode would mix two kinds of run in one pass^k
    status, out, err = ledger_tui(
        capsys, monkeypatch, tmp_path, "eval", "--domain", "airline", "--agent", "gold", "--tasks", "airline_01_cancel_recent_booking", "--trials", "3", "--out", "runs",
    )
    assert status == 2 and "runs holds runs made with --consent text; pass --consent text to resume it" in err
    status, out, err = ledger_tui(
        capsys, monkeypatch, tmp_path, "eval", "--domain", "airline", "--agent", "gold", "--tasks", "airline_01_cancel_recent_booking", "--trials", "3", "--out", "runs",
        "--consent", "text",
    )
    assert status == 0, err
    from ledger_tui.eval.results import load_results

    assert sorted(r.trial for r in load_results(tmp_path / "runs")) == [0, 1, 2]
    assert "resuming runs: 2 of 3 runs already done, 1 to run" in err


def test_a_results_line_naming_a_trajectory_too_long_for_the_file_system_is_read(tmp_path, capsys, monkeypatch):
    lines = _eval_folder(tmp_path / "runs")
    _rewrite(tmp_path / "runs", lines, 2, trajectory="t" * 300 + ".jsonl")  # OSError: File name too long
    status, out, err = ledger_tui(capsys, monkeypatch, tmp_path, "report", "runs")
    assert status == 0 and "is not in runs" in err, err


# ----------------------------------------------------------------------------- a folder for a file, Latin-1, nesting, sizes


def test_a_folder_where_a_file_is_expected_is_one_sentence(tmp_path, capsys, monkeypatch):
    (tmp_path / "dir").mkdir()
    cases = [
        (["run", "--script", "dir"], "dir is a folder, not a file"),
        (["run", "--script", SCRIPT, "--db", "dir", "--out", "x.jsonl"], "dir is a folder, not a file"),
        (["report", str(tmp_path / "dir"), "--tasks", "dir"], "dir is a folder, not a file"),
        (["why", "dir"], "dir is a folder; pass one .jsonl trajectory file in it"),
    ]
    (tmp_path / "dir" / "t.jsonl").write_bytes((ROOT / "sessions" / "airline-cancel-blocked.jsonl").read_bytes())
    for args, words in cases:
        assert words in refused(capsys, monkeypatch, tmp_path, *args)
    (tmp_path / "file").write_text("x")
    assert "file is a file; pass a folder to --out" in refused(
        capsys, monkeypatch, tmp_path, "eval", "--domain", "airline", "--agent", "gold", "--out", "file"
    )


@pytest.mark.parametrize("kind", ["script", "--db airline", "--db telecom", "task file"])
def test_latin1_files_are_one_sentence_naming_the_line(kind, tmp_path, capsys, monkeypatch):
    latin = tmp_path / "latin.json"
    if kind == "script":
        text = SCRIPT.read_text().replace("Hi", "H\u00e9 there")
        args: list[Any] = ["run", "--script", latin]
    elif kind == "task file":
        text = json.dumps(json.loads((ROOT / "domains/airline/tasks.json").read_text())[:2], indent=1).replace("cancel", "caf\u00e9", 1)
        _eval_folder(tmp_path / "runs")
        args = ["report", "runs", "--tasks", latin]
    else:
        domain = kind.split()[1]
        text = json.dumps(json.loads((ROOT / f"domains/{domain}/db.json").read_text()), indent=1, ensure_ascii=False)
        text = text.replace('"', '"\u00e9', 1)
        script = SCRIPT if domain == "airline" else TELECOM_SCRIPT
        args = ["run", "--script", script, "--db", latin]
    latin.write_bytes(text.encode("latin-1", "replace"))
    line = text[: text.index("\u00e9")].count("\n") + 1
    sentence = refused(capsys, monkeypatch, tmp_path, *args)
    assert f"latin.json is not UTF-8 text (line {line}, byte" in sentence, sentence
    assert not (tmp_path / "sessions").exists(), "a refused --db or script leaves no session file behind"


@pytest.mark.parametrize("kind", ["script", "--db airline", "--db telecom", "task file", "results.jsonl"])
def test_json_nested_past_the_limit_is_one_sentence(kind, tmp_path, capsys, monkeypatch):
    deep = tmp_path / "deep.json"
    if kind == "script":
        deep.write_text('{"domain": "airline",\n"turns": ' + DEEP + "}")
        args: list[Any] = ["run", "--script", deep]
        words = "Script deep.json is nested more than 100 levels deep (line 2)"
    elif kind == "task file":
        deep.write_text('[{"id": "1",\n"initial_state": ' + DEEP + "}]")
        _eval_folder(tmp_path / "runs")
        args, words = ["report", "runs", "--tasks", deep], "deep.json is nested more than 100 levels deep (line 2)"
    elif kind == "results.jsonl":
        lines = _eval_folder(tmp_path / "runs")
        _rewrite(tmp_path / "runs", lines, 0, grade={"deep": json.loads("[" * 150 + "]" * 150)})
        args, words = ["report", "runs"], "Line 1 of runs/results.jsonl is damaged: it is nested more than 100 levels deep"
    else:
        deep.write_text('{"flights":\n' + DEEP + "}")
        args = ["run", "--script", SCRIPT if "airline" in kind else TELECOM_SCRIPT, "--db", deep]
        words = "deep.json is nested more than 100 levels deep (line 2)"
    sentence = refused(capsys, monkeypatch, tmp_path, *args)
    assert words in sentence, sentence


def test_size_limits_are_enforced_with_a_sentence(tmp_path, capsys, monkeypatch):
    """A file over 1 GB is refused before it is read (a sparse file: no disk used), a JSON Lines
    line over 16 MB is named."""
    from ledger_tui.engine.store.reading import MAX_FILE_BYTES, MAX_LINE_BYTES

    huge = tmp_path / "huge.json"
    with huge.open("wb") as fh:
        fh.truncate(MAX_FILE_BYTES + 1)
    for args in (["run", "--script", "huge.json"], ["import-tau2", "huge.json", "--out", "imported"], ["why", "huge.json"]):
        assert "huge.json is larger than 1 GB, the most ledger-tui reads" in refused(capsys, monkeypatch, tmp_path, *args)
    started = (ROOT / "sessions" / "airline-cancel-blocked.jsonl").read_text().splitlines()
    long_line = json.dumps({"type": "user_message", "seq": 1, "text": "x" * (MAX_LINE_BYTES + 1)})
    (tmp_path / "long.jsonl").write_text("\n".join([started[0], long_line, *started[1:]]) + "\n")
    assert "Line 2 of long.jsonl is not a valid event; the file is damaged: remove or repair that line (the line is longer than 16 MB)" in refused(
        capsys, monkeypatch, tmp_path, "why", "long.jsonl"
    )

"""Outside text in every command's output is shown, never obeyed (issue 13).

Each command runs, as a user runs it, on a hostile trajectory, a hostile τ²-bench results file,
hostile τ²-bench task ids or a hostile script: no control character, DEL or bidi override reaches
stdout or stderr (ESC above all), the markup and escapes are printed as text, no traceback, and
nothing is written beyond the command's own output.
"""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest

from tests.hostile import (
    HOSTILE,
    HOSTILE_ID,
    HOSTILE_ID_SHOWN,
    VISIBLE,
    files_under,
    obeyed,
    write_hostile_results,
    write_hostile_tau2_data,
    write_hostile_trajectory,
)
from tests.in_process import ledger_tui

@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> Path:
    """A working directory holding the hostile inputs: trajectory.jsonl, results.json, retail/ (τ²-bench data)."""
    root = tmp_path_factory.mktemp("hostile")
    asyncio.run(write_hostile_trajectory(root / "trajectory.jsonl"))
    write_hostile_results(root / "results.json")
    write_hostile_tau2_data(root / "retail")
    return root


def run(cwd: Path, *args: str, ok: tuple[int, ...] = (0,), writes: tuple[str, ...] = ()) -> str:
    """Run one command in `cwd`: checks its exit status, that its output is harmless, and that
    every file it created lies under `writes` (paths relative to `cwd`); returns stdout + stderr."""
    before = files_under(cwd)
    out = ledger_tui(*args, cwd=cwd)
    both = out.stdout + out.stderr
    assert out.returncode in ok, both
    assert "Traceback" not in out.stderr, out.stderr
    assert "\x1b" not in both and not obeyed(both), f"a terminal would obey {obeyed(both)} in:\n{both}"
    created = files_under(cwd) - before
    stray = {p for p in created if not any(p == w or p.startswith(w + "/") for w in writes)}
    assert not stray, f"written beyond the command's own output: {stray}"
    assert bool(created) == bool(writes), f"expected output under {writes}, created {created}"
    return both


def shows_literally(output: str, *also: str) -> None:
    for literal in (*VISIBLE, *also):
        assert literal in output, f"{literal!r} is not shown in:\n{output}"


ID_HEAD = HOSTILE_ID_SHOWN[:31]  # what a narrow column keeps of the id: markup, bidi override, ESC


def test_why_and_regress_print_a_hostile_trajectory_as_text(hostile):
    shows_literally(run(hostile, "why", "trajectory.jsonl"), "[link=file:///etc/passwd]link[/link]")
    shows_literally(run(hostile, "why", "trajectory.jsonl", "--all"))
    run(hostile, "regress", "trajectory.jsonl", ok=(0, 1))


def test_import_audit_report_and_grade_print_a_hostile_results_file_as_text(hostile):
    imported = run(hostile, "import-tau2", "results.json", "--out", "imp", writes=("imp",))
    assert "imported 3 simulations into imp" in imported
    written = sorted(p.name for p in (hostile / "imp").iterdir())
    assert len(written) == 5 and all(name.isascii() and "[" not in name and "/" not in name for name in written), written
    shows_literally(run(hostile, "audit", "imp"), ID_HEAD)
    shows_literally(run(hostile, "report", "imp", writes=("imp/report.json",)), ID_HEAD)
    report = json.loads((hostile / "imp/report.json").read_text(encoding="utf-8"))
    assert {r["task_id"] for r in report["failed_runs"]} == {f"{HOSTILE_ID}1", f"{HOSTILE_ID}2"}, "the JSON keeps the original bytes"
    shows_literally(run(hostile, "grade", "results.json", ok=(0, 1)), ID_HEAD)


def test_tasks_eval_and_report_print_hostile_task_ids_as_text(hostile):
    shows_literally(run(hostile, "tasks", "retail", "--tau2-data", "retail"), "[link=file:///etc/passwd]l[/link]")
    run(hostile, "eval", "--domain", "retail", "--agent", "gold", "--tau2-data", "retail", "--out", "ev", writes=("ev",))
    shows_literally(run(hostile, "report", "ev", writes=("ev/report.json",)), ID_HEAD)


def test_run_prints_a_hostile_script_and_its_errors_as_text(tmp_path):
    script = {
        "domain": "airline",
        "turns": [
            {"customer": f"Hi, I'm mia_li_3668. {HOSTILE}"},
            {"agent": {"text": "", "calls": [{"name": "get_reservation_details", "arguments": {"reservation_id": HOSTILE}}]}},
            {"agent": {"text": f"Not found. {HOSTILE}"}},
        ],
    }
    name = "\x1b]0;x\x07[@click=app.quit]q.json"  # a file name is outside text too
    (tmp_path / name).write_text(json.dumps(script), encoding="utf-8")
    output = run(tmp_path, "run", "--script", name, "--out", "s.jsonl", writes=("s.jsonl",))
    assert "session   s.jsonl" in output and "calls     1 read, 0 writes" in output
    default = run(tmp_path, "run", "--script", name, writes=())  # not a checkout: the user's data folder
    assert f"session   {os.environ['XDG_DATA_HOME']}/ledger-tui/runs/airline-" in default
    (tmp_path / "task.json").write_text(json.dumps({**script, "task": HOSTILE_ID}), encoding="utf-8")
    error = run(tmp_path, "run", "--script", "task.json", "--out", "t.jsonl", ok=(2,))
    assert error.startswith(f"error: Script task.json names task '{ID_HEAD}")
    shows_literally(run(tmp_path, "replay", f"{HOSTILE_ID}.jsonl", ok=(2,)))
    shows_literally(run(tmp_path, "browse", HOSTILE_ID, ok=(2,)))

"""One task id convention in all four domains, `<domain>_<nn>_<slug>`, and the ids tasks had
before still work: in --tasks, run --task, a resumed results.jsonl and report."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from ledger_tui.domains import available, load_domain
from ledger_tui.cli import app
from ledger_tui.engine.agents.tasks import load_tasks


@pytest.mark.parametrize("name", available())
def test_every_domain_names_its_tasks_the_same_way(name):
    tasks = load_tasks(load_domain(name).tasks_path)
    for n, t in enumerate(tasks, 1):
        assert re.fullmatch(rf"{name}_{n:02d}_[a-z0-9_]+", t.id), t.id


def invoke(*args: str) -> str:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


def test_a_former_id_selects_the_task_and_a_resume_recorded_under_it_is_not_redone(tmp_path: Path):
    out = tmp_path / "ev"
    invoke("eval", "--domain", "retail", "--agent", "gold", "--tasks", "cancel_no_longer_needed_gift_card", "--out", str(out))
    lines = (out / "results.jsonl").read_text().splitlines()
    assert [json.loads(line)["task_id"] for line in lines] == ["retail_01_cancel_no_longer_needed_gift_card"]
    # a results.jsonl written before the ids changed
    old = [json.dumps({**json.loads(line), "task_id": "cancel_no_longer_needed_gift_card"}) for line in lines]
    (out / "results.jsonl").write_text("\n".join(old) + "\n")
    again = invoke("eval", "--domain", "retail", "--agent", "gold", "--tasks", "retail_01_cancel_no_longer_needed_gift_card", "--out", str(out))
    assert "1 of 1 runs already done, 0 to run" in again
    assert len((out / "results.jsonl").read_text().splitlines()) == 1
    report = invoke("report", str(out), "--force")
    assert "unknown task" not in report


def test_run_task_takes_a_former_id_and_names_the_file_with_the_domain_once(tmp_path: Path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # not a checkout: runs go to the data folder
    printed = invoke("run", "--domain", "telehealth", "--task", "telehealth_001", "--agent", "gold")
    assert "telehealth telehealth_01_book_cardiology_visit_open_slot" in printed
    [written] = list((tmp_path / "data" / "ledger-tui" / "runs").glob("*.jsonl"))
    assert written.name.startswith("telehealth-01_book_cardiology_visit_open_slot-gold")

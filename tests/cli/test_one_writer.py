"""One writer per output folder (issue 27, item 1): a second `eval` or `import-tau2` into a folder
another ledger-tui process is writing stops in one sentence naming it and writes nothing; a lock
left by a process that died is taken over; `report` reads a folder being written but leaves its
report.json alone; an import cut short is completed by importing the same file again."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from ledger_tui.eval import tau2
from ledger_tui.eval.folder_lock import LOCK_NAME, FolderBusyError, FolderLock, writer_of
from tests.cli.test_cli import ROOT, cli, one_sentence_error

SAMPLE = ROOT / "tests" / "data" / "tau2_runs_sample" / "gpt-4.1_airline_sample.json"
HOLD = (
    "import sys, time; from ledger_tui.eval.folder_lock import FolderLock\n"
    "with FolderLock(sys.argv[1], 'eval'):\n"
    "    print('held', flush=True); time.sleep(60)\n"
)


def holder(folder: Path) -> subprocess.Popen[str]:
    """Another process writing `folder`, as an `eval` would, until it is killed."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def test_a_second_eval_into_a_folder_being_written_stops_and_a_dead_holders_lock_is_taken_over(tmp_path):
    out = tmp_path / "runs"
    proc = holder(out)
    try:
        line = one_sentence_error(cli("eval", "--domain", "telehealth", "--agent", "gold", "--out", str(out)))
        assert f"is being written by `eval` (pid {proc.pid}, started " in line and "another --out" in line
        assert sorted(p.name for p in out.iterdir()) == [LOCK_NAME]  # the holder's: nothing else was written
        assert writer_of(out) is not None
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    # the holder died without letting go: its lock file is still there, and is taken over
    assert (out / LOCK_NAME).read_text().strip() and writer_of(out) is None
    done = cli("eval", "--domain", "telehealth", "--agent", "gold", "--out", str(out))
    assert done.returncode == 0, done.stderr
    assert not (out / LOCK_NAME).exists()  # an eval that finished lets go
    rows = (out / "results.jsonl").read_text().splitlines()
    again = cli("eval", "--domain", "telehealth", "--agent", "gold", "--out", str(out))  # a resume: nothing to redo
    assert again.returncode == 0 and (out / "results.jsonl").read_text().splitlines() == rows


def test_report_reads_a_folder_being_written_but_leaves_its_report_json(tmp_path):
    out = tmp_path / "runs"
    assert cli("eval", "--domain", "telehealth", "--agent", "gold", "--out", str(out)).returncode == 0
    proc = holder(out)
    try:
        shown = cli("report", str(out))
        assert shown.returncode == 0, shown.stderr
        assert f"is being written by `eval` (pid {proc.pid}" in shown.stderr and "report.json is not rewritten" in shown.stderr
        assert "runs" in shown.stdout and not (out / "report.json").exists()
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    assert cli("report", str(out)).returncode == 0 and (out / "report.json").exists()


def test_import_tau2_keeps_to_one_writer_too(tmp_path):
    out = tmp_path / "imported"
    with FolderLock(out, "eval"):
        line = one_sentence_error(cli("import-tau2", str(SAMPLE), "--out", str(out)))
        assert f"(pid {os.getpid()}" in line
        with pytest.raises(FolderBusyError):
            tau2.import_tau2(SAMPLE, out)
        assert sorted(p.name for p in out.iterdir()) == [LOCK_NAME]
    assert not out.exists()  # the lock made the folder, and nothing was written in it


def test_an_import_cut_short_is_completed_by_importing_the_same_file_again(tmp_path, monkeypatch):
    sample = SAMPLE.with_name("gpt-4.1_telecom_sample.json")  # five runs
    out = tmp_path / "imported"
    real = tau2.import_simulation
    calls = []

    def fails_on_the_third(*args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(tau2, "import_simulation", fails_on_the_third)
    with pytest.raises(OSError):
        tau2.import_tau2(sample, out)
    manifest = json.loads((out / tau2.MANIFEST).read_text())
    assert manifest["complete"] is False and len(list(out.rglob("*.jsonl"))) == 2
    monkeypatch.setattr(tau2, "import_simulation", real)
    imported = tau2.import_tau2(sample, out)  # no --force: the folder holds this file's own partial import
    manifest = json.loads((out / tau2.MANIFEST).read_text())
    assert manifest["complete"] is True and len(imported.paths) == len(manifest["files"]) > 2
    assert sorted(p.name for p in out.rglob("*.jsonl")) == sorted(manifest["files"])


RACE = (
    "import os, sys; from ledger_tui.eval.folder_lock import FolderLock, FolderBusyError\n"
    "held = 0\n"
    "for _ in range(300):\n"
    "    try:\n"
    "        with FolderLock(sys.argv[1], 'eval'):\n"
    "            with open(sys.argv[2], 'a') as log: log.write(f'in {os.getpid()}\\n')\n"
    "            with open(sys.argv[2], 'a') as log: log.write(f'out {os.getpid()}\\n')\n"
    "            held += 1\n"
    "    except FolderBusyError:\n"
    "        pass\n"
    "print(held)\n"
)


def test_writers_that_come_and_go_never_hold_one_folder_at_once(tmp_path):
    """Three processes take and let go of one folder's lock 300 times each, the file removed at
    every release: the log of who was inside never shows two at once."""
    log = tmp_path / "log"
    procs = [
        subprocess.Popen([sys.executable, "-c", RACE, str(tmp_path / "out"), str(log)], stdout=subprocess.PIPE, text=True, cwd=ROOT)
        for _ in range(3)
    ]
    held = [int(p.communicate(timeout=120)[0]) for p in procs]
    assert sum(held) > 0
    lines = log.read_text().splitlines()
    assert len(lines) == 2 * sum(held)
    for enter, leave in zip(lines[::2], lines[1::2]):
        assert enter.startswith("in ") and leave == "out " + enter[3:]

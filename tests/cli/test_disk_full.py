"""A full disk (issue 27, item 5): `run`, `eval` and `import-tau2` stop in one sentence naming the
file that could not be written and what was kept, exit 2, never a traceback; what was written
reads back, and the command run again completes the work. ENOSPC is injected in-process: the
trajectory files accept a budget of bytes, then fail as a full disk does."""

from __future__ import annotations

import errno
import json
import sys

import pytest

from ledger_tui import cli
from ledger_tui.engine.store import trajectories as store
from ledger_tui.engine.store.trajectories import read_trajectory
from tests.cli.test_cli import ROOT

SAMPLE = ROOT / "tests" / "data" / "tau2_runs_sample" / "gpt-4.1_telecom_sample.json"


class FullDisk:
    """A text file that takes `room` characters, writes what fits of the next line, then fails."""

    def __init__(self, inner, room: list[int]) -> None:
        self.inner, self.room = inner, room

    def write(self, text: str) -> int:
        if len(text) > self.room[0]:
            self.inner.write(text[: self.room[0]])
            self.room[0] = 0
            raise OSError(errno.ENOSPC, "No space left on device")
        self.room[0] -= len(text)
        return self.inner.write(text)

    def flush(self) -> None:
        self.inner.flush()

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def disk(monkeypatch):
    """Every trajectory written from now on shares `room[0]` characters of space."""
    room = [10**9]
    monkeypatch.setattr(store, "WRITE_FAILURES", {})
    real = store.TrajectoryWriter.__init__

    def init(self, path):
        real(self, path)
        self._file = FullDisk(self._file, room)

    monkeypatch.setattr(store.TrajectoryWriter, "__init__", init)
    return room


def main(monkeypatch, capsys, *args: str) -> tuple[int, str]:
    monkeypatch.setattr(sys, "argv", ["ledger-tui", *args])
    with pytest.raises(SystemExit) as stopped:
        cli.main()
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: Cannot write "), err
    return int(stopped.value.code), lines[0]


def test_run_on_a_full_disk_is_one_sentence_and_the_trajectory_reads_to_its_last_whole_line(tmp_path, disk, monkeypatch, capsys):
    out = tmp_path / "s.jsonl"
    disk[0] = 6000
    code, line = main(monkeypatch, capsys, "run", "--script", "airline/cancel_blocked", "--out", str(out), "--no-timestamps")
    assert code == 2 and str(out) in line and "No space left on device" in line and "kept up to its last whole line" in line
    kept = read_trajectory(out)
    assert kept.events and kept.events[0].type == "session_started" and len(kept.warnings) == 1
    assert len(out.read_text().encode()) <= 6100


def test_eval_on_a_full_disk_keeps_the_finished_runs_and_the_same_command_resumes(tmp_path, disk, monkeypatch, capsys):
    out = tmp_path / "eval"
    args = ("eval", "--domain", "telehealth", "--agent", "gold", "--out", str(out), "--workers", "1")
    disk[0] = 60_000  # a few runs' trajectories
    code, line = main(monkeypatch, capsys, *args)
    assert code == 2 and "results.jsonl keeps every run finished before it" in line and str(out) in line
    finished = [json.loads(r) for r in (out / "results.jsonl").read_text().splitlines()]
    assert finished and all(read_trajectory(r["trajectory"]).events[-1].type == "session_ended" for r in finished)
    disk[0] = 10**9  # space again
    monkeypatch.setattr(sys, "argv", ["ledger-tui", *args])
    with pytest.raises(SystemExit) as again:
        cli.main()
    assert again.value.code in (0, None)
    rows = [json.loads(r) for r in (out / "results.jsonl").read_text().splitlines()]
    assert [r["task_id"] for r in rows[: len(finished)]] == [r["task_id"] for r in finished]
    assert len({(r["task_id"], r["trial"], r["mode"]) for r in rows}) == len(rows) > len(finished)


def test_import_on_a_full_disk_is_one_sentence_and_importing_again_completes_it(tmp_path, disk, monkeypatch, capsys):
    out = tmp_path / "imported"
    disk[0] = 40_000
    code, line = main(monkeypatch, capsys, "import-tau2", str(SAMPLE), "--out", str(out))
    assert code == 2 and "importing the same file again completes the folder" in line
    disk[0] = 10**9
    monkeypatch.setattr(sys, "argv", ["ledger-tui", "import-tau2", str(SAMPLE), "--out", str(out)])
    with pytest.raises(SystemExit) as again:
        cli.main()
    assert again.value.code in (0, None)
    manifest = json.loads((out / "import-tau2.json").read_text())
    assert manifest["complete"] is True and len(manifest["files"]) == 5
    assert all(read_trajectory(out / name).warnings == [] for name in manifest["files"])


async def test_play_on_a_full_disk_says_the_recording_stopped_and_goes_on(tmp_path, disk, toy_domain):
    """The workbench: the error says the recording stops (kept up to its last whole line) and the
    session goes on unrecorded; the command then ends with the one sentence (store.WRITE_FAILURES)."""
    from ledger_tui.ui.app import make_app
    from tests.ui.test_play import say

    out = tmp_path / "p.jsonl"
    disk[0] = 1500
    app = make_app(domain=toy_domain, model=None, out=out)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = app.screen
        await screen.wait_idle()
        await say(pilot, "hello, I'm ada@example.org")
        for _ in range(3):
            await say(pilot, "/call find_member_by_email email=ada@example.org")
        assert any("the recording stops here, kept up to its last whole line" in n.message for n in app._notifications), [n.message for n in app._notifications]
        assert "users.current" in screen.ledger.paths  # the session went on
    assert str(out) in store.WRITE_FAILURES and store.WRITE_FAILURES[str(out)].errno == errno.ENOSPC
    assert read_trajectory(out).events[0].type == "session_started"

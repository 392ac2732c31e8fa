"""One validator for trajectories (issue 27, item 4, in part): a session numbers its events as it
writes them, so a line duplicated, dropped or moved is refused once, in `read_trajectory`, for
every reader alike: commands on one file stop with one sentence (replay no longer crashes on a
duplicated gate decision), commands on a folder skip the file and name it."""

from __future__ import annotations

import re

import pytest

from ledger_tui.engine.errors import TrajectoryError
from ledger_tui.engine.store.trajectories import read_trajectory
from tests.cli.test_cli import ROOT, cli, one_sentence_error

SHIPPED = ROOT / "sessions" / "airline-cancel-blocked.jsonl"


def variants() -> dict[str, list[str]]:
    lines = SHIPPED.read_text().splitlines()
    gate = next(i for i, line in enumerate(lines) if '"gate_decision"' in line)
    duplicated = lines[: gate + 1] + [lines[gate]] + lines[gate + 1 :]
    swapped = lines[:5] + [lines[6], lines[5]] + lines[7:]
    moved = lines[:3] + lines[8:12] + lines[3:8] + lines[12:]
    return {"duplicated gate decision": duplicated, "two lines swapped": swapped, "lines moved": moved}


@pytest.mark.parametrize("name", list(variants()))
def test_an_edited_trajectory_is_refused_in_one_sentence_naming_the_line(tmp_path, name):
    path = tmp_path / "edited.jsonl"
    path.write_text("\n".join(variants()[name]) + "\n")
    with pytest.raises(TrajectoryError, match=r"^Line \d+ of edited\.jsonl is event \d+, after event \d+ \(.*\); restore the file"):
        read_trajectory(path)


def test_the_file_as_written_one_cut_at_its_last_line_and_one_trimmed_of_events_read_as_before(tmp_path):
    assert read_trajectory(SHIPPED).warnings == []
    trimmed = tmp_path / "trimmed.jsonl"
    lines = SHIPPED.read_text().splitlines()
    trimmed.write_text("\n".join(lines[:9] + lines[10:]) + "\n")  # a gap keeps the order
    assert len(read_trajectory(trimmed).events) == len(lines) - 1
    cut = tmp_path / "cut.jsonl"
    cut.write_text(SHIPPED.read_text()[:-40])  # a run cut short while writing its last line
    loaded = read_trajectory(cut)
    assert len(loaded.warnings) == 1 and len(loaded.events) == len(SHIPPED.read_text().splitlines()) - 1


def test_every_command_on_the_file_says_the_same_and_a_folder_skips_it(tmp_path):
    edited = tmp_path / "runs" / "edited.jsonl"
    edited.parent.mkdir()
    edited.write_text("\n".join(variants()["duplicated gate decision"]) + "\n")
    (tmp_path / "runs" / "good.jsonl").write_text(SHIPPED.read_text())
    said = {one_sentence_error(cli(command, str(edited))) for command in ("why", "replay", "regress")}
    assert len(said) == 1 and "(a copy of an earlier line)" in said.pop()
    audit = cli("audit", str(tmp_path / "runs"))
    assert audit.returncode == 0 and "Traceback" not in audit.stderr
    assert "warning: Line" in audit.stderr and "edited.jsonl" in audit.stderr
    assert re.search(r"^overall\s+1\s", audit.stdout, re.M), audit.stdout  # the good run is still counted


def _renumbered(lines: list[str]) -> str:
    import json

    rows = [json.loads(line) for line in lines]
    return "\n".join(json.dumps({**row, "seq": i}) for i, row in enumerate(rows)) + "\n"


def test_a_decision_copied_or_moved_and_renumbered_is_refused_by_every_command(tmp_path):
    """Numbers rewritten to look in order (a tool that renumbers lines) still do not make a call
    decided twice, or decided before it is proposed, a trajectory."""
    lines = SHIPPED.read_text().splitlines()
    gate = next(i for i, line in enumerate(lines) if '"gate_decision"' in line)
    copied = tmp_path / "copied.jsonl"
    copied.write_text(_renumbered(lines[: gate + 1] + [lines[gate]] + lines[gate + 1 :]))
    moved = tmp_path / "moved.jsonl"
    moved.write_text(_renumbered(lines[: gate - 1] + [lines[gate], lines[gate - 1]] + lines[gate + 1 :]))
    for path, what in ((copied, r"a second time \(first on line \d+\)"), (moved, r"before it is proposed")):
        said = {one_sentence_error(cli(command, str(path))) for command in ("why", "replay", "regress")}
        assert len(said) == 1 and re.search(rf"Line \d+ of {path.name} decides call \S+ {what}", said.pop())

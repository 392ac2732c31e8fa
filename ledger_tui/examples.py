"""The shipped examples, found by name wherever ledger-tui is installed, and where new runs go.

The sessions under `sessions/` and the scripts under `domains/<name>/scripts/` install inside the
package (`ledger_tui.sessions`, `ledger_tui.domains`), so `replay airline-cancel-blocked` and `run
--script airline/cancel_blocked` work from any folder; a path that exists is always taken first.

New runs go to `sessions/runs/` of a ledger-tui checkout when the working directory is one (or is
inside one): a folder whose `pyproject.toml` names the project `ledger-tui` and which holds
`sessions/`. Anywhere else they go to the user's data folder (`platformdirs`), never into whatever
folder the user happens to be in.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Callable

PROJECT = "ledger-tui"


def sessions_folder() -> Path:
    """The shipped trajectories' folder (the checkout's `sessions/` in an editable install)."""
    return Path(str(resources.files("ledger_tui.sessions")))


def domains_folder() -> Path:
    return Path(str(resources.files("ledger_tui.domains")))


@dataclass(frozen=True)
class Example:
    name: str  # what the commands take: `airline-cancel-blocked`, `airline/cancel_blocked`
    path: Path
    title: str  # the script's title (a session's is its script's)


def _script_title(path: Path) -> str:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    title = data.get("title") if isinstance(data, dict) else None
    return title if isinstance(title, str) else ""


def scripts() -> list[Example]:
    """Every shipped script, named `DOMAIN/STEM`."""
    found = []
    for path in sorted(domains_folder().glob("*/scripts/*.json")):
        found.append(Example(f"{path.parent.parent.name}/{path.stem}", path, _script_title(path)))
    return found


def sessions() -> list[Example]:
    """Every shipped trajectory, named by its file's stem; each was recorded from the script
    `DOMAIN/STEM` whose name it spells with dashes, and carries that script's title."""
    titles = {f"{s.name.split('/')[0]}-{s.path.stem.replace('_', '-')}": s.title for s in scripts()}
    return [Example(p.stem, p, titles.get(p.stem, "")) for p in sorted(sessions_folder().glob("*.jsonl"))]


def _resolve(given: Path, shipped: Callable[[], list[Example]], suffix: str) -> Path:
    if given.exists():  # (the shipped ones are not looked for: their titles read every script)
        return given
    text = given.as_posix().removesuffix(suffix)
    by_name = {e.name: e.path for e in shipped()}
    # the name itself, or a path of the checkout's layout (`sessions/NAME.jsonl`,
    # `domains/DOMAIN/scripts/STEM.json`) typed outside a checkout
    candidates = [text, text.removeprefix("sessions/"), text.removeprefix("domains/").replace("/scripts/", "/")]
    for candidate in candidates:
        if candidate in by_name:
            return by_name[candidate]
    return given  # its reader says it does not exist


def resolve_session(given: Path) -> Path:
    """A trajectory path as given when it exists, else the shipped session of that name."""
    return _resolve(Path(given), sessions, ".jsonl")


def resolve_script(given: Path) -> Path:
    """A script path as given when it exists, else the shipped script of that name."""
    return _resolve(Path(given), scripts, ".json")


def checkout_root(start: Path | None = None) -> Path | None:
    """The ledger-tui checkout the working directory is in, if any: the nearest folder, this one
    or above, whose `pyproject.toml` names the project `ledger-tui` and which holds `sessions/`."""
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        project = folder / "pyproject.toml"
        if not project.is_file() or not (folder / "sessions").is_dir():
            continue
        try:
            import tomllib  # (only here: 1 ms of every command's start)

            name = tomllib.loads(project.read_text(encoding="utf-8")).get("project", {}).get("name")
        except (OSError, ValueError):
            continue
        if name == PROJECT:
            return folder
    return None


def runs_home() -> Path:
    """Where runs go without `--out`: `sessions/runs/` of the checkout the user works in, else
    `runs/` in the user's data folder (on Linux `$XDG_DATA_HOME/ledger-tui`, by default
    `~/.local/share/ledger-tui`)."""
    root = checkout_root()
    if root is not None:
        return root / "sessions" / "runs"
    import platformdirs

    return platformdirs.user_data_path(PROJECT) / "runs"

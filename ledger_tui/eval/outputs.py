"""Where outputs go: inside the folder the user named, under names that cannot collide, and never
over a file that is already there unless the user said `--force`.

File names built from content (task ids, trial numbers, simulation ids from a results file or a
task file) are reduced to one safe path component. A value that had to be changed keeps a short
hash of the original after a `.`, a character no unchanged name contains, so `t/1` and `t_1`, or
`x.1` and `x_1`, get two files. Every path is checked on its resolved form before anything is
written, so neither `..` nor a symlink can lead out of the folder.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import secrets
from pathlib import Path

from ledger_tui.engine.errors import LedgerTuiError

NAME_LIMIT = 64  # characters of the value kept in a name (file names stop at 255 bytes)


class OutputError(LedgerTuiError):
    """An output that would land outside its folder or over an existing file."""


def _kept(ch: str) -> bool:
    return (ch.isascii() and ch.isalnum()) or ch in "-_"


def file_part(value: object, limit: int = NAME_LIMIT) -> str:
    """`value` as one path component: ASCII letters, digits, `-` and `_` are kept, anything else
    becomes `_`. A value that was changed or cut gets `.` and 12 hex digits of its SHA-256, so two
    different values never share a name (`t/1` → `t_1.<hash>`, `t_1` → `t_1`)."""
    text = value if isinstance(value, str) else str(value)
    if text and len(text) <= limit and all(_kept(ch) for ch in text):
        return text
    safe = "".join(ch if _kept(ch) else "_" for ch in text[:limit]) or "_"
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"{safe}.{digest}"


def inside(folder: Path, *parts: str) -> Path:
    """`folder/parts…`, refused (one sentence) unless its resolved path lies inside the resolved
    folder: no `..`, absolute part or symlink leads out."""
    folder = Path(folder)
    path = folder.joinpath(*parts)
    if not path.resolve().is_relative_to(folder.resolve()):
        raise OutputError(
            f"{path} would be written outside {folder} (its real path is {path.resolve()}); "
            "nothing was written there: remove the link or pick another folder."
        )
    return path


def check_new(path: Path | None, force: bool, flag: str) -> None:
    """Refuse, before any work is done, to write `path` over an existing file without `--force`."""
    if path is None:
        return
    path = Path(path)
    if path.is_dir():
        raise OutputError(f"{path} is a folder; pass a file name to {flag}.")
    if path.exists() and not force:
        raise OutputError(f"{path} already exists; pass --force to overwrite it, or choose another {flag}.")


def claim(path: Path) -> bool:
    """Create `path` empty if nobody has (exclusive creation): True when it is ours now."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with path.open("x", encoding="utf-8"):
            return True
    except FileExistsError:
        return False


def fresh_name(folder: Path, stem: str, suffix: str = ".jsonl") -> Path:
    """A new file in `folder` named `<stem>-<date>-<time>-<4 random hex>`, created empty so two runs
    started in the same second (or the same process) never share it."""
    stamp = _dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    for _ in range(100):
        path = Path(folder) / f"{file_part(stem)}-{stamp}-{secrets.token_hex(2)}{suffix}"
        if claim(path):
            return path
    raise OutputError(f"Could not create a new file in {folder}; pass --out FILE.")

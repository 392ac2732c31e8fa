"""One writer per output folder.

`eval` and `import-tau2` write a folder over minutes: results.jsonl row by row, trajectories run
by run, a manifest at the end. Two of them in one folder at once would both run every run and
both append, and `report` would then count each run twice. So a writer holds an exclusive
`flock` on `FOLDER/.ledger-tui.lock` for as long as it writes; the file says who holds it (pid,
command, start time) so a second writer can stop with one sentence naming them.

The lock is the kernel's, not the file's: it goes when its process does, however it ends (a
crash, kill -9), so a lock file left by a dead process is simply taken over, and a resume after a
crash works. A writer that finishes removes the file (and the folder, if it made it and nothing
else was written there). A reader (`report`) does not take it; it asks whether someone holds it, and if so
reads what is there but does not rewrite the folder's report.json.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
from pathlib import Path
from types import TracebackType
from typing import Any

from ledger_tui.engine.errors import LedgerTuiError

LOCK_NAME = ".ledger-tui.lock"

try:
    import fcntl
except ImportError:  # not POSIX: no lock (the folder is the user's to keep to one writer)
    fcntl = None  # type: ignore[assignment]


class FolderError(LedgerTuiError):
    """The output folder cannot be made or locked."""


class FolderBusyError(FolderError):
    """Another ledger-tui process is writing the folder."""


def _holder(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def holder_words(holder: dict[str, Any]) -> str:
    """'`eval` (pid 4242, started 2026-12-02T04:20:00+00:00)', or 'another ledger-tui process'."""
    pid, command, since = holder.get("pid"), holder.get("command"), holder.get("started")
    if not pid:
        return "another ledger-tui process"
    what = f"`{command}`" if isinstance(command, str) and command else "ledger-tui"
    return f"{what} (pid {pid}" + (f", started {since}" if since else "") + ")"


def _try_lock(fd: int) -> bool:
    assert fcntl is not None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


class FolderLock:
    """`with FolderLock(folder, "eval"):` — the folder's one writer, or FolderBusyError."""

    def __init__(self, folder: Path, command: str) -> None:
        self.folder = Path(folder)
        self.path = self.folder / LOCK_NAME
        self.command = command
        self._fd: int | None = None
        self._made = False

    def __enter__(self) -> "FolderLock":
        if fcntl is None:
            return self
        if self.folder.is_file():  # (not "exists and is no folder": another writer may remove it between the two)
            raise FolderError(f"{self.folder} is a file; pass a folder to --out.")
        self._made = not self.folder.exists()
        for attempt in range(100):
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
                fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
            except (FileNotFoundError, FileExistsError):
                # a writer that made the folder removed it as it finished: before our open, or
                # between mkdir seeing it and checking it is a folder (mkdir then says it exists)
                if self.folder.is_file():
                    raise FolderError(f"{self.folder} is a file; pass a folder to --out.") from None
                if attempt < 99:
                    continue
                raise FolderError(f"{self.folder} keeps disappearing; pass another --out.") from None
            except OSError as exc:
                raise FolderError(
                    f"Cannot create {self.path} to keep other writers out ({exc.strerror}); check the folder and its "
                    "permissions, or pass another --out."
                ) from None
            if not _try_lock(fd):
                os.close(fd)
                raise FolderBusyError(
                    f"{self.folder} is being written by {holder_words(_holder(self.path))}; wait for it to finish, "
                    "or pass another --out."
                )
            try:  # the holder before may have removed the file between our open and our lock
                if os.fstat(fd).st_ino == os.stat(self.path).st_ino:
                    break
            except FileNotFoundError:
                pass
            os.close(fd)
        else:
            raise FolderError(f"{self.path} keeps being replaced by other writers; pass another --out.")
        me = {
            "pid": os.getpid(),
            "command": self.command,
            "started": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        }
        os.ftruncate(fd, 0)
        os.write(fd, (json.dumps(me) + "\n").encode())
        self._fd = fd
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        """Let go: the lock file is removed while still held (a writer that opened it meanwhile
        sees it gone and opens it anew), and a folder this lock made that stayed empty goes too."""
        if self._fd is None:
            return
        try:
            self.path.unlink()
        except OSError:
            pass
        os.close(self._fd)  # closing releases the lock
        self._fd = None
        if self._made:
            try:
                self.folder.rmdir()  # only if nothing else was written
            except OSError:
                pass


def writer_of(folder: Path) -> str | None:
    """Who is writing `folder` now (`holder_words`), or None when nobody is."""
    path = Path(folder) / LOCK_NAME
    if fcntl is None or not path.exists():
        return None
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return holder_words(_holder(path))
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)

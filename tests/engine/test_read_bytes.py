"""`read_bytes` reads through a file descriptor (`os.open`/`os.read`) and looks at a file again
through its stat and Python's file object (`_unopened`) only when it will not open: both give the
same bytes and the same sentences for every kind of file a reader meets."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.store.reading import _size, _unopened, read_bytes

FIX = "pass another file"


def outcome(read, *args) -> tuple[str, object]:
    try:
        return "bytes", read(*args)
    except LedgerTuiError as exc:
        return "error", str(exc)


def both(path: Path | str, limit: int = 1 << 30, missing: str | None = None) -> tuple[tuple[str, object], tuple[str, object]]:
    fast = outcome(lambda: read_bytes(path, LedgerTuiError, FIX, missing=missing, limit=limit))
    slow = outcome(lambda: _unopened(Path(path), LedgerTuiError, FIX, missing, limit))
    return fast, slow


@pytest.mark.parametrize("content", [b"", b"one line\n", b"\xef\xbb\xbf{}\n", bytes(range(256)) * 300, b"x" * (1 << 20)])
def test_a_file_reads_as_its_bytes(tmp_path, content):
    path = tmp_path / "f.jsonl"
    path.write_bytes(content)
    fast, slow = both(path)
    assert fast == slow == ("bytes", content)
    assert both(str(path)) == (fast, slow)


def test_what_cannot_be_read_is_the_same_sentence(tmp_path):
    (tmp_path / "folder").mkdir()
    (tmp_path / "big.json").write_bytes(b"x" * 101)
    (tmp_path / "exact.json").write_bytes(b"x" * 100)
    cases = {
        "a folder": (str(tmp_path / "folder") + "/", 1 << 30, None),
        "missing": (tmp_path / "gone.json", 1 << 30, None),
        "missing, with its own sentence": (tmp_path / "gone.json", 1 << 30, "No such run; pass another."),
        "over the limit": (tmp_path / "big.json", 100, None),
        "at the limit": (tmp_path / "exact.json", 100, None),
        "a relative path": (os.path.relpath(tmp_path / "folder"), 1 << 30, None),
    }
    for name, (path, limit, missing) in cases.items():
        fast, slow = both(path, limit, missing)
        assert fast == slow, name
    assert both(tmp_path / "folder")[0] == ("error", f"{tmp_path / 'folder'} is a folder, not a file; {FIX}.")
    assert both(tmp_path / "big.json", 100)[0][0] == "error" and both(tmp_path / "exact.json", 100)[0] == ("bytes", b"x" * 100)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="named pipes are POSIX")
@pytest.mark.parametrize("size, limit", [(10, 1 << 30), (5000, 1000)])
def test_a_pipe_is_read_on_up_to_the_limit(tmp_path, size, limit):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    written = bytes(range(256)) * (size // 256 + 1)

    def write() -> None:
        with open(fifo, "wb") as out:
            try:
                out.write(written[:size])
            except BrokenPipeError:  # the reader stopped at the limit
                pass

    writer = threading.Thread(target=write)
    writer.start()
    got = outcome(lambda: read_bytes(fifo, LedgerTuiError, FIX, limit=limit))
    writer.join(timeout=10)
    if size <= limit:
        assert got == ("bytes", written[:size])
    else:
        assert got == ("error", f"{fifo} is larger than {_size(limit)}, the most ledger-tui reads; {FIX}.")

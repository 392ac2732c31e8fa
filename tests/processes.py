"""The processes an eval started, read from /proc: its workers are forked by multiprocessing's fork
server (a child of the eval, from whichever thread started it), or spawned by the eval itself
where there is no fork server."""

from __future__ import annotations

import os
from pathlib import Path


def children(pid: int) -> list[int]:
    """The processes `pid` started, from any of its threads."""
    found = []
    try:
        threads = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return []
    for tid in threads:
        try:
            found += [int(p) for p in Path(f"/proc/{pid}/task/{tid}/children").read_text().split()]
        except OSError:
            pass
    return found


def running(pid: int) -> bool:
    try:
        return "zombie" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def eval_workers(pid: int) -> list[int]:
    """The worker processes of the evals `pid` runs (running or not yet waited for)."""
    workers = []
    for child in children(pid):
        try:
            cmdline = Path(f"/proc/{child}/cmdline").read_bytes()
        except OSError:
            continue
        if b"spawn_main" in cmdline:
            workers.append(child)
        elif b"multiprocessing.forkserver" in cmdline:
            workers += children(child)
    return workers

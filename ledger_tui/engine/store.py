"""Trajectories as JSON Lines: one event per line, flushed as written.

A crash loses at most the line being written. Reading is forgiving in the one way that matters:
a truncated or corrupt *last* line is reported and skipped, every complete line before it is kept.
A bad line in the middle is an error that names the line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterable

from pydantic import ValidationError

from ledger_tui.engine.errors import TrajectoryError
from ledger_tui.engine.events import SCHEMA_VERSION, Event, SessionStarted, dump_event, parse_event


class TrajectoryWriter:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = self.path.open("w", encoding="utf-8")

    def write(self, event: Event) -> None:
        if self._file is None:
            return
        self._file.write(dump_event(event) + "\n")
        self._file.flush()

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


@dataclass
class LoadedTrajectory:
    path: Path
    events: list[Event]
    warnings: list[str] = field(default_factory=list)

    @property
    def started(self) -> SessionStarted | None:
        first = self.events[0] if self.events else None
        return first if isinstance(first, SessionStarted) else None


# Limits a trajectory must keep (a 100k-event session is about 60 MB, its longest line a few KB)
MAX_TRAJECTORY_BYTES = 1 << 30
MAX_LINE_BYTES = 16 << 20


def read_trajectory(path: Path | str) -> LoadedTrajectory:
    path = Path(path)
    try:
        if path.is_dir():
            raise TrajectoryError(f"{path} is a folder; pass one .jsonl trajectory file in it (or use `ledger-tui browse {path}`).")
        if path.exists() and path.stat().st_size > MAX_TRAJECTORY_BYTES:
            raise TrajectoryError(f"{path} is larger than {MAX_TRAJECTORY_BYTES >> 20} MB, the most ledger-tui reads; split it or pass another file.")
        lines = path.read_text(encoding="utf-8").split("\n")  # not splitlines(): \x85 and U+2028 may sit inside a JSON string
    except FileNotFoundError:
        raise TrajectoryError(f"Trajectory file {path} does not exist; check the path (sessions live in sessions/).") from None
    except PermissionError:
        raise TrajectoryError(f"{path} cannot be read (permission denied); check its permissions.") from None
    except UnicodeDecodeError as exc:
        raise TrajectoryError(
            f"{path} is not UTF-8 text (byte {exc.start}); pass a .jsonl trajectory written by ledger-tui."
        ) from None
    events: list[Event] = []
    warnings: list[str] = []
    numbered = [(i + 1, line) for i, line in enumerate(lines) if line.strip()]
    for pos, (lineno, line) in enumerate(numbered):
        try:
            if len(line) > MAX_LINE_BYTES:
                raise ValueError(f"the line is longer than {MAX_LINE_BYTES >> 20} MB")
            event = parse_event(line)
        except (ValidationError, ValueError, RecursionError) as exc:
            if pos == len(numbered) - 1:
                warnings.append(
                    f"Line {lineno} of {path.name} is incomplete or corrupt and was skipped; "
                    f"the {len(events)} complete events before it are shown."
                )
                break
            kind = _kind(line)
            raise TrajectoryError(
                f"Line {lineno} of {path.name} is not a valid event{kind}; the file is damaged: "
                f"remove or repair that line ({_first_error(exc)})."
            ) from None
        events.append(event)
    if not events:
        raise TrajectoryError(f"{path} holds no events; pass a .jsonl trajectory written by ledger-tui.")
    first = events[0]
    if not isinstance(first, SessionStarted):
        warnings.append(f"{path.name} does not start with a session_started event; domain and model are unknown.")
    elif first.schema_version > SCHEMA_VERSION:
        raise TrajectoryError(
            f"{path.name} uses trajectory schema {first.schema_version}, newer than this ledger-tui "
            f"({SCHEMA_VERSION}); upgrade ledger-tui."
        )
    return LoadedTrajectory(path, events, warnings)


def write_trajectory(path: Path, events: Iterable[Event]) -> None:
    writer = TrajectoryWriter(path)
    try:
        for event in events:
            writer.write(event)
    finally:
        writer.close()


def _kind(line: str) -> str:
    try:
        data = json.loads(line) if len(line) <= MAX_LINE_BYTES else None
    except (ValueError, RecursionError):
        return " (not JSON)"
    if isinstance(data, dict) and "type" in data:
        return f" (type {data['type']!r})"
    return ""


def _first_error(exc: Exception) -> str:
    """What is wrong with a line, in words (not a validator's dump)."""
    if isinstance(exc, RecursionError):
        return "it is nested too deeply"
    if isinstance(exc, ValidationError):
        errors = exc.errors()
        if not errors:
            return "it does not match any event"
        first = errors[0]
        if first.get("type") == "json_invalid":
            return "it is not valid JSON: " + str(first.get("msg", "")).removeprefix("Invalid JSON: ")[:120]
        where = ".".join(str(x) for x in first.get("loc", ()))
        what = str(first.get("msg", "")).rstrip(".")
        more = f" (and {len(errors) - 1} more problem{'s' if len(errors) > 2 else ''})" if len(errors) > 1 else ""
        return f"{where}: {what}{more}" if where else f"{what}{more}"
    return str(exc).splitlines()[0][:160]

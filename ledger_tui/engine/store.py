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


def read_trajectory(path: Path | str) -> LoadedTrajectory:
    path = Path(path)
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        raise TrajectoryError(f"Trajectory file {path} does not exist; check the path (sessions live in sessions/).") from None
    except UnicodeDecodeError:
        raise TrajectoryError(f"{path} is not a text file; pass a .jsonl trajectory written by ledger-tui.") from None
    events: list[Event] = []
    warnings: list[str] = []
    numbered = [(i + 1, line) for i, line in enumerate(lines) if line.strip()]
    for pos, (lineno, line) in enumerate(numbered):
        try:
            event = parse_event(line)
        except (ValidationError, ValueError) as exc:
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
        data = json.loads(line)
    except ValueError:
        return " (not JSON)"
    if isinstance(data, dict) and "type" in data:
        return f" (type {data['type']!r})"
    return ""


def _first_error(exc: Exception) -> str:
    return str(exc).splitlines()[0][:160]

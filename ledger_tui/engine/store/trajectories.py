"""Trajectories as JSON Lines: one event per line, flushed at the end of each step of the loop.

A session emits its events in bursts (a model turn, the gate's decisions, the calls and their
results) between waits for the model, the customer or the operator; each burst goes to the file in
one write when the session next waits (or at once, outside an event loop), not one write an
event. A crash loses at most the events of the step in progress; a session that ended has every
event in its file. Reading is forgiving in the one way that matters:
a truncated or corrupt *last* line is reported and skipped, every complete line before it is kept.
A bad line in the middle is an error that names the line.
"""

from __future__ import annotations

import asyncio
import gc
import io
import json
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Iterable, Iterator

from pydantic import ValidationError

from ledger_tui.engine.errors import TrajectoryError
from ledger_tui.engine.events import SCHEMA_VERSION, Event, GateDecided, SessionStarted, ToolCallProposed, dump_event, parse_event
from ledger_tui.engine.outside import shown
from ledger_tui.engine.store.reading import EVENT_DEPTH, json_lines, line_problem, read_text, words

# The oldest schema read. Older versions read as they are: version 2 only added event kinds
# (events.py), so every version-1 line is a version-2 event.
OLDEST_SCHEMA = 1


# Where trajectories are kept instead of written, by path, when a process asked for it
# (`keep_in_memory`): a Ray actor, whose every trajectory is sent to the writer with its result and
# would be deleted right after. Creating and deleting a file per run there slowed the writer's own
# file creation on the same disk several times over (ext4 on this machine: 0.2 -> 1 ms a file).
_IN_MEMORY: dict[str, io.StringIO] | None = None


def keep_in_memory() -> None:
    """From now on, this process's trajectories are kept in memory (see `taken`)."""
    global _IN_MEMORY
    if _IN_MEMORY is None:
        _IN_MEMORY = {}


def taken(path: Path | str) -> bytes | None:
    """The text of a trajectory kept in memory, which is forgotten; None if there is none."""
    kept = _IN_MEMORY.pop(str(path), None) if _IN_MEMORY is not None else None
    return None if kept is None else kept.getvalue().encode("utf-8")


# The files whose writing stopped on an OS error in this process (a full disk), by path: a
# command that carries on (play) still ends with the one sentence and the exit status.
WRITE_FAILURES: dict[str, OSError] = {}


class TrajectoryWriter:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._file: IO[str] | None
        self._flush: asyncio.Handle | None = None  # the flush at the end of this step of the loop
        self._failed: OSError | None = None  # what that flush met (a full disk), said by the next write
        if _IN_MEMORY is not None:
            self._file = _IN_MEMORY[str(self.path)] = io.StringIO()
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file = self.path.open("w", encoding="utf-8")

    def write(self, event: Event) -> None:
        if self._file is None:
            return
        line = dump_event(event)
        problem = line_problem(line, EVENT_DEPTH)  # the readers' own test: never write what they refuse
        if problem is not None:
            self.close()
            raise TrajectoryError(
                f"Event {event.seq} ({event.type}) was not written to {self.path}: {problem}, which no reader of "
                f"trajectories takes; the events before it are kept there, and nothing after it is recorded."
            )
        if self._failed is not None:
            self.broken(self._failed)
        try:
            self._file.write(line + "\n")
            if self._flush is None:
                try:
                    self._flush = asyncio.get_running_loop().call_soon(self._flushed)
                except RuntimeError:  # no event loop: nothing waits, so it goes now
                    self._file.flush()
        except OSError as exc:  # a full disk: what was written stays, up to its last whole line
            self.broken(exc)

    def _flushed(self) -> None:
        self._flush = None
        try:
            if self._file is not None:
                self._file.flush()
        except OSError as exc:
            self._failed = exc

    def broken(self, exc: OSError) -> None:
        """Stop writing (the events after this one are not recorded, and a session's end does not
        fail a second time) and raise the error with this file's path, for one sentence naming it."""
        file, self._file = self._file, None
        try:
            if file is not None:
                file.close()
        except OSError:
            pass
        failed = WRITE_FAILURES[str(self.path)] = OSError(exc.errno, exc.strerror, str(self.path))
        raise failed from None

    def close(self) -> None:
        if self._flush is not None:
            self._flush.cancel()
            self._flush = None
        if self._file is not None:
            if self._failed is not None:
                self.broken(self._failed)
            if _IN_MEMORY is None:  # (a text kept in memory stays readable until taken)
                try:
                    self._file.close()  # (its last step's events are flushed first)
                except OSError as exc:
                    self._file = None
                    self.broken(exc)
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
    """Every event of a trajectory file; one sentence (TrajectoryError) if the file is unusable or
    a line before the last is damaged. The limits are `engine.reading`'s: 1 GB a file (a 100k-event
    session is about 60 MB), 16 MB a line (the longest are a few KB), 120 levels of nesting."""
    path = Path(path)
    if path.is_dir():
        raise TrajectoryError(f"{path} is a folder; pass one .jsonl trajectory file in it (or use `ledger-tui browse {path}`).")
    text = read_text(
        path, TrajectoryError, "pass a .jsonl trajectory written by ledger-tui",
        missing=f"Trajectory file {path} does not exist; check the path, or name a shipped session (`ledger-tui examples` lists them).",
    )
    events: list[Event] = []
    warnings: list[str] = []
    numbered = list(json_lines(text))
    del text  # the lines hold it: at 100,000 events, 70 MB less at the peak
    with _collector_paused():
        _parse(path, numbered, events, warnings)
    if not events:
        raise TrajectoryError(f"{path} holds no events; pass a .jsonl trajectory written by ledger-tui.")
    _in_order(path, numbered, events)
    first = events[0]
    if not isinstance(first, SessionStarted):
        warnings.append(f"{path.name} does not start with a session_started event; domain and model are unknown.")
    elif first.schema_version > SCHEMA_VERSION:
        raise TrajectoryError(
            f"{path.name} uses trajectory schema {first.schema_version}, newer than this ledger-tui "
            f"({SCHEMA_VERSION}); upgrade ledger-tui."
        )
    elif first.schema_version < OLDEST_SCHEMA:
        raise TrajectoryError(
            f"{path.name} says trajectory schema {first.schema_version}, which no ledger-tui writes (the first was "
            f"{OLDEST_SCHEMA}); pass a .jsonl trajectory written by ledger-tui."
        )
    return LoadedTrajectory(path, events, warnings)


def _in_order(path: Path, numbered: list[tuple[int, str]], events: list[Event]) -> None:
    """A session numbers its events 0, 1, 2, … as it writes them (`seq`): a line that repeats an
    earlier one's number or comes before it (duplicated or moved, by hand or by a tool that
    rewrote the file) is refused here, once, for every reader (replay, why, regress, report,
    audit, browse) alike. A gap is allowed (a file trimmed of events keeps its order), and so are
    events without a number (-1: a file another tool wrote). A gate decision comes after the
    call it decides is proposed, and once: a call decided again is gated under a fresh id."""
    last = -1
    proposed: set[str] = set()
    decided: dict[str, int] = {}
    for i, event in enumerate(events):
        if event.seq >= 0:
            if event.seq <= last:
                what = "a copy of an earlier line" if event.seq == last or any(e.seq == event.seq for e in events[:i]) else "a line moved"
                raise TrajectoryError(
                    f"Line {numbered[i][0]} of {path.name} is event {event.seq}, after event {last} ({what}); "
                    "restore the file as ledger-tui wrote it."
                )
            last = event.seq
        if isinstance(event, ToolCallProposed):
            proposed.add(event.call.id)
        elif isinstance(event, GateDecided):
            call_id = event.decision.call.id
            where = f"Line {numbered[i][0]} of {path.name} decides call {shown(call_id)[:40]}"
            if call_id in decided:
                raise TrajectoryError(f"{where} a second time (first on line {decided[call_id]}); restore the file as ledger-tui wrote it.")
            if call_id not in proposed:
                raise TrajectoryError(f"{where} before it is proposed (a line moved); restore the file as ledger-tui wrote it.")
            decided[call_id] = numbered[i][0]


@contextmanager
def _collector_paused() -> Iterator[None]:
    """Parsing makes hundreds of thousands of objects and no reference cycles: the cyclic garbage
    collector would scan the growing list of events again and again (a 100,000-event file read in
    4-5 s with it running, 1 s without). Afterwards every object is moved to the oldest
    generation (`freeze` then `unfreeze`, two list splices): left in the youngest, the events
    would each be scanned twice more by the next young collections (2-4 s when replay opens a
    100,000-event file)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.unfreeze()
        if enabled:
            gc.enable()


def _parse(path: Path, numbered: list[tuple[int, str]], events: list[Event], warnings: list[str]) -> None:
    """Parse the lines into `events`, each line's text dropped from `numbered` once parsed (only
    its number is read after), so the text and the events are not both held whole at the end."""
    for pos, (lineno, line) in enumerate(numbered):
        try:
            problem = line_problem(line, EVENT_DEPTH)
            if problem is not None:
                raise ValueError(problem)
            event = parse_event(line)
        except (ValidationError, ValueError, RecursionError) as exc:
            if pos == len(numbered) - 1:
                warnings.append(
                    f"Line {lineno} of {path.name} is incomplete or corrupt and was skipped; "
                    f"the {len(events)} complete events before it are shown."
                )
                break
            detail = _first_error(exc)
            kind = "" if detail.startswith("has an unknown type") else _kind(line)
            raise TrajectoryError(
                f"Line {lineno} of {path.name} is not a valid event{kind}; the file is damaged: "
                f"remove or repair that line ({detail})."
            ) from None
        events.append(event)
        numbered[pos] = (lineno, "")


def write_trajectory(path: Path, events: Iterable[Event]) -> None:
    writer = TrajectoryWriter(path)
    try:
        for event in events:
            writer.write(event)
    finally:
        writer.close()


def _kind(line: str) -> str:
    if line_problem(line, EVENT_DEPTH) is not None:
        return ""
    try:
        data = json.loads(line)
    except (ValueError, RecursionError):
        return " (not JSON)"
    if isinstance(data, dict) and isinstance(data.get("type"), str):
        return f" (type {data['type'][:40]!r})"
    return ""


def _first_error(exc: Exception) -> str:
    """What is wrong with a line, in words (not a validator's dump)."""
    if isinstance(exc, RecursionError):
        return f"it is nested more than {EVENT_DEPTH} levels deep"
    if isinstance(exc, ValidationError):
        return words(exc)
    return str(exc).splitlines()[0][:160]

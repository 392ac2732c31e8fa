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

import codecs
import functools
import gc
import io
import json
import typing
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from operator import lt
from pathlib import Path
from typing import IO, TYPE_CHECKING, Callable, Iterable, Iterator

from pydantic import BaseModel, ValidationError

from ledger_tui.engine.errors import TrajectoryError
from ledger_tui.engine.events import EVENT_ADAPTER, SCHEMA_VERSION, Event, GateDecided, SessionStarted, ToolCallProposed, dump_event, parse_event
from ledger_tui.engine.outside import shown
from ledger_tui.engine.store.reading import EVENT_DEPTH, MAX_LINE_BYTES, decoded, json_lines, line_problem, read_bytes, words

if TYPE_CHECKING:
    import asyncio  # (imported where a line is written: `why` imports this module, and never writes)

    from ledger_tui.engine.store.lazy import LazyEvents

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


def _kept(path: Path | str, forget: bool) -> bytes | None:
    """The bytes of a trajectory kept in memory (forgotten, `forget`); None if there are none."""
    if _IN_MEMORY is None:
        return None
    kept = _IN_MEMORY.pop(str(path), None) if forget else _IN_MEMORY.get(str(path))
    return None if kept is None else kept.getvalue().encode("utf-8")


def taken(path: Path | str) -> bytes | None:
    """The text of a trajectory kept in memory, which is forgotten; None if there is none."""
    return _kept(path, forget=True)


def written(path: Path | str) -> bytes | None:
    """The bytes of a closed trajectory as written: kept in memory (which keeps them), else its
    file's; None if there are none."""
    kept = _kept(path, forget=False)
    if kept is not None:
        return kept
    try:
        return Path(path).read_bytes()
    except OSError:
        return None


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
                import asyncio

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
    events: list[Event] | LazyEvents
    warnings: list[str] = field(default_factory=list)

    @property
    def started(self) -> SessionStarted | None:
        first = self.events[0] if self.events else None
        return first if isinstance(first, SessionStarted) else None


def read_trajectory(path: Path | str, keep: tuple[type[Event], ...] | None = None, *, lazy: bool = False) -> LoadedTrajectory:
    """Every event of a trajectory file; one sentence (TrajectoryError) if the file is unusable or
    a line before the last is damaged. The limits are `engine.reading`'s: 1 GB a file (a 100k-event
    session is about 60 MB), 16 MB a line (the longest are a few KB), 120 levels of nesting.

    `keep`: the kinds of event a reader needs (`why`: the decisions, cards and questions); only
    those and the first event are returned, each other event dropped once validated, so a long
    file is never held whole. Every line is checked as without it.

    `lazy` (replay): the events are a `LazyEvents` that keeps the file's bytes and validates an
    event again when it is asked for, already folded into its `timeline`; every line is checked,
    and refused in the same words, as without it."""
    path = Path(path)
    if path.is_dir():
        raise TrajectoryError(f"{path} is a folder; pass one .jsonl trajectory file in it (or use `ledger-tui browse {path}`).")
    missing = f"Trajectory file {path} does not exist; check the path, or name a shipped session (`ledger-tui examples` lists them)."
    read, warnings = _events(path, [read_bytes(path, TrajectoryError, FIX, missing=missing)], _Read(keep, lazy))
    events = read.events
    if not events:
        raise TrajectoryError(f"{path} holds no events; pass a .jsonl trajectory written by ledger-tui.")
    _in_order(path, read)
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


FIX = "pass a .jsonl trajectory written by ledger-tui"


class _Read:
    """The events read so far: those kept (the first, then those of the kinds `keep` names, or
    all), and of every event its line number and what `_in_order` checks of it."""

    def __init__(self, keep: tuple[type[Event], ...] | None, lazy: bool = False) -> None:
        self.keep = keep
        self.lazy = lazy
        self.events: list[Event] | LazyEvents = []  # (a `LazyEvents` of the file's bytes once read, when `lazy`)
        self.line_numbers: list[int] = []
        self.seqs: list[int] = []
        # of each proposed or decided call, by the event's position: (the call it proposes, the call it decides)
        self.calls: dict[int, tuple[str | None, str | None]] = {}

    def __len__(self) -> int:
        return len(self.seqs)

    def add(self, event: Event, line_number: int, span: tuple[int, int] | None = None) -> None:
        """Record the next event; `span`: where its line is in the file's bytes (the fast path)."""
        kind = type(event)  # (a validated event is of one of the union's classes, never a subclass)
        if kind is ToolCallProposed:
            self.calls[len(self.seqs)] = (event.call.id, None)  # type: ignore[union-attr]
        elif kind is GateDecided:
            self.calls[len(self.seqs)] = (None, event.decision.call.id)  # type: ignore[union-attr]
        self.seqs.append(event.seq)
        self.line_numbers.append(line_number)
        if self.lazy:
            self.events.add(event, span)  # type: ignore[union-attr]
        elif self.keep is None or not self.events or isinstance(event, self.keep):
            _share_fields_sets(event)
            self.events.append(event)


# Pydantic gives every model it validates its own set of the fields the line named
# (`__pydantic_fields_set__`): at 100,000 events, 223,000 sets and 130 MB, a quarter of a replay's
# peak, holding 16 different contents. A kept event's sets are replaced by one shared set of each
# content, by class. Sharing is safe because every event model is frozen (pydantic adds to the set
# only on assignment) and pydantic's copies (`model_copy`) copy the set before changing it.
_FIELDS_SETS: dict[tuple[type, frozenset[str]], set[str]] = {}
# Of each model class, the fields that may hold models (the ones `_share_fields_sets` goes into).
_MODEL_FIELDS: dict[type, tuple[str, ...]] = {}


def _share_fields_sets(model: BaseModel) -> None:
    cls = type(model)
    nested = _MODEL_FIELDS.get(cls)
    if nested is None:
        nested = _MODEL_FIELDS[cls] = tuple(name for name, f in cls.model_fields.items() if _holds_models(f.annotation))
    own = model.__pydantic_fields_set__
    shared = _FIELDS_SETS.setdefault((cls, frozenset(own)), own)
    if shared is not own:
        object.__setattr__(model, "__pydantic_fields_set__", shared)
    values = model.__dict__
    for name in nested:
        value = values[name]
        if isinstance(value, BaseModel):
            _share_fields_sets(value)
        elif isinstance(value, (list, tuple)):
            for item in value:
                if isinstance(item, BaseModel):
                    _share_fields_sets(item)


def _holds_models(annotation: object) -> bool:
    """Whether a field's type is, or is built of, a model class (`GateDecision`, `list[ToolCall] | None`)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return any(_holds_models(arg) for arg in typing.get_args(annotation))
# every byte but the opening brackets and the line break: deleted, they leave each line's nesting bound
_NOT_OPENING = bytes(b for b in range(256) if b not in b"[{\n")
BOM = codecs.BOM_UTF8


def _events(path: Path, held: list[bytes], read: _Read) -> tuple[_Read, list[str]]:
    """The events of a file's bytes, the one item of
    `held` (taken from it, so that they are freed as they are parsed), or the one sentence that
    says which line is damaged and how: (`read`, warnings).

    The fast path (`_valid_lines`) takes the lines as long as each is a valid event, as in a file
    ledger-tui wrote; from the first line it does not take (a damaged line, a truncated last line,
    a blank line that only Unicode calls blank), the rest of the file is read as text, line by
    line, as every file was before (`_line_by_line`), which says what is wrong in its words."""
    data = held.pop()
    if read.lazy:
        return _lazy_events(path, data, read)
    lines = _lines_to_parse(data)
    if lines is None:
        return _line_by_line(path, data, read)
    del data  # the lines hold it, each dropped once parsed: at 100,000 events, 70 MB less at the peak
    with _collector_paused():
        taken, offset = _valid_lines(lines, read)
    if taken == len(lines):
        return read, []
    rest = b"\n".join(lines[taken:])
    del lines
    return _line_by_line(path, rest, read, first_line=taken + 1, first_byte=offset)


def _lazy_events(path: Path, data: bytes, read: _Read) -> tuple[_Read, list[str]]:
    """`_events` for a lazy read: the lines are validated from `data`, which `read.events` keeps
    (a `LazyEvents`), as `_valid_lines` does; from the first line not taken that way, the rest is
    read as text (`_line_by_line`), its events held."""
    from ledger_tui.engine.store.lazy import LazyEvents  # (the fold: only a replay reads lazily)

    read.events = LazyEvents(data)
    if not _parsable(data):
        return _line_by_line(path, data, read)
    with _collector_paused():
        taken, offset = _valid_spans(data, read)
    if offset > len(data):
        return read, []
    return _line_by_line(path, data[offset:], read, first_line=taken + 1, first_byte=offset)


def _parsable(data: bytes) -> bool:
    """Whether no line of a file is longer than `MAX_LINE_BYTES` or may be nested deeper than
    `EVENT_DEPTH` (it has more opening brackets): what `_line_by_line` checks each line for before
    it is parsed, checked on the whole file at once for the fast path."""
    if _has_line_longer(data, MAX_LINE_BYTES):
        return False
    openers = data.translate(None, _NOT_OPENING)
    return not (len(openers) - openers.count(b"\n") > EVENT_DEPTH and max(map(len, openers.split(b"\n"))) > EVENT_DEPTH)


def _lines_to_parse(data: bytes) -> list[bytes] | None:
    """The lines of a file (split at newlines only), or None if it is not `_parsable`."""
    return data.split(b"\n") if _parsable(data) else None


def _valid_spans(data: bytes, read: _Read) -> tuple[int, int]:
    """`_valid_lines` over a file's bytes kept whole: each line is validated from a copy of its
    bytes, and `read` records where it is. Returns how many lines were taken and how many bytes
    they held with their line breaks (more than `data` when every line was)."""
    validate = EVENT_ADAPTER.validator.validate_json  # (the adapter's method only passes its defaults on)
    find, end_of_file = data.find, len(data)
    start = offset = 0
    index = 0
    while offset <= end_of_file:
        end = find(b"\n", offset)
        if end < 0:
            end = end_of_file
        start = len(BOM) if index == 0 and data.startswith(BOM) else offset
        line = data[start:end]
        if line.strip():
            try:
                event = validate(line)
            except ValueError:  # (a ValidationError is one)
                return index, offset
            read.add(event, index + 1, (start, end))
        offset = end + 1
        index += 1
    return index, offset


def _valid_lines(lines: list[bytes], read: _Read) -> tuple[int, int]:
    """Validate `lines` into `read` until one is not a valid event or blank; each line is dropped
    once taken. Returns how many lines were taken and
    how many bytes they held (with their line breaks).

    The fast path: each line is validated from its bytes, as `_line_by_line` validates its text,
    but the file is never decoded (the parser checks that a string's bytes are UTF-8, and any
    other byte outside ASCII is not JSON) and the checks every line passes before it is parsed ran
    on the whole file at once (`_lines_to_parse`). At 100,000 events this saves the decoding
    and the per-line checks, a third of the reading, and the text. tests/engine/test_trajectory_reader.py
    checks that a file reads the same both ways."""
    validate = EVENT_ADAPTER.validate_json
    offset = 0
    for index, line in enumerate(lines):
        bare = line[len(BOM) :] if index == 0 and line.startswith(BOM) else line
        if bare.strip():
            try:
                event = validate(bare)
            except ValueError:  # (a ValidationError is one)
                return index, offset
            read.add(event, index + 1)
        offset += len(line) + 1
        lines[index] = b""
        if index % TRIM_EVERY == TRIM_EVERY - 1:  # (a short file never asks for it)
            _trim()()
    return len(lines), offset


# How many lines are validated between two returns of their freed bytes to the system (`_trim`).
TRIM_EVERY = 8192


@functools.cache
def _trim() -> Callable[[], object]:
    """What returns the memory of the lines freed so far to the system: glibc's `malloc_trim`, or
    nothing where the C library has none. A line's bytes come from the C heap and the events from
    Python's own arenas, which never reuse it: without it, every line freed would still count in
    the process's peak (at 100,000 events, 47 MB of a replay's read, for no measurable CPU)."""
    try:
        import ctypes

        release = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError, ImportError):
        return lambda: None
    return lambda: release(0)


def _has_line_longer(data: bytes, limit: int) -> bool:
    """Whether a line of `data` is longer than `limit` bytes, looked for a window of `limit` bytes
    at a time (five looks for a 69 MB file of short lines)."""
    start = 0
    while len(data) - start > limit:
        last = data.rfind(b"\n", start, start + limit + 1)
        if last < 0:
            return True
        start = last + 1
    return False


def _line_by_line(
    path: Path, data: bytes, read: _Read, first_line: int = 1, first_byte: int = 0
) -> tuple[_Read, list[str]]:
    """`data` (the file from its line `first_line`, byte `first_byte` on) as text, each line
    validated on its own into `read`, or the one sentence that says which line is damaged and
    how: (`read`, warnings)."""
    text = decoded(path, data, TrajectoryError, FIX, first_line=first_line, first_byte=first_byte)
    del data
    numbered = [(first_line - 1 + number, line) for number, line in json_lines(text)]
    del text  # the lines hold it
    warnings: list[str] = []
    with _collector_paused():
        _parse(path, numbered, read, warnings)
    return read, warnings


_NO_CALL: tuple[None, None] = (None, None)


def _in_order(path: Path, read: _Read) -> None:
    """A session numbers its events 0, 1, 2, … as it writes them (`seq`): a line that repeats an
    earlier one's number or comes before it (duplicated or moved, by hand or by a tool that
    rewrote the file) is refused here, once, for every reader (replay, why, regress, report,
    audit, browse) alike. A gap is allowed (a file trimmed of events keeps its order), and so are
    events without a number (-1: a file another tool wrote). A gate decision comes after the
    call it decides is proposed, and once: a call decided again is gated under a fresh id."""
    last = -1
    proposed: set[str] = set()
    decided: dict[str, int] = {}
    seqs, calls, line_numbers = read.seqs, read.calls, read.line_numbers
    numbered = [seq for seq in seqs if seq >= 0]
    # numbers in order (every file ledger-tui wrote): only the lines of calls are gone through
    numbers_in_order = all(map(lt, numbered, islice(numbered, 1, None)))
    for i in calls if numbers_in_order else range(len(seqs)):
        seq = seqs[i]
        if seq >= 0:
            if seq <= last:
                what = "a copy of an earlier line" if seq == last or seq in seqs[:i] else "a line moved"
                raise TrajectoryError(
                    f"Line {line_numbers[i]} of {path.name} is event {seq}, after event {last} ({what}); "
                    "restore the file as ledger-tui wrote it."
                )
            last = seq
        proposes, call_id = calls.get(i, _NO_CALL)
        if proposes is not None:
            proposed.add(proposes)
        elif call_id is not None:
            if call_id in decided or call_id not in proposed:
                where = f"Line {line_numbers[i]} of {path.name} decides call {shown(call_id)[:40]}"
                if call_id in decided:
                    raise TrajectoryError(f"{where} a second time (first on line {decided[call_id]}); restore the file as ledger-tui wrote it.")
                raise TrajectoryError(f"{where} before it is proposed (a line moved); restore the file as ledger-tui wrote it.")
            decided[call_id] = line_numbers[i]


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


def _parse(path: Path, numbered: list[tuple[int, str]], read: _Read, warnings: list[str]) -> None:
    """Parse the lines into `read`, each line's text dropped from `numbered` once parsed (only
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
                    f"the {len(read)} complete events before it are shown."
                )
                break
            detail = _first_error(exc)
            kind = "" if detail.startswith("has an unknown type") else _kind(line)
            raise TrajectoryError(
                f"Line {lineno} of {path.name} is not a valid event{kind}; the file is damaged: "
                f"remove or repair that line ({detail})."
            ) from None
        read.add(event, lineno)
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

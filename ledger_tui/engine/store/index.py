"""Reading only some events of a trajectory, from an index of its lines made from its bytes (`why`).

`why` explains the gate's stops: of a 100,000-event file it needs the decisions it prints and the
cards and questions they waited on, a few percent of the lines, and the full reader
(`read_trajectory`) validates every line into its event first (1.6 s of a 1.7 s run). Every line
ledger-tui writes begins `{"seq":N,"type":"KIND",` and ends with `}` (pydantic's
`model_dump_json`; Python's `json.dumps` writes the same with a space after each `:` and `,`). One
regular expression over the whole file finds each line's number, kind and, of a proposed call, its
id. Validated into events are the first line, the lines of the kinds asked for, and of the gate's
decisions those of the verdicts asked for (as `why` explains them, one at a time: `use_for_why`);
the other decisions are parsed only for their call and verdict. Every other line is checked by its
framing alone: it begins and ends as above, with a kind ledger-tui writes; the numbers increase;
every decided call was proposed on an earlier line and is decided once.

Any line the index does not take (another beginning or ending, an unknown kind, a byte-order mark, a
blank line, numbers out of order, a line read that is not a valid event, a last line that is not
one: the last line is always validated, as the full reader warns of a truncated one)
sends the whole file to `read_trajectory`, which says what is wrong in its own sentence: a damaged
file is refused or warned about exactly as by every other reader. What is not checked is the inside
of the lines not read (that each is valid JSON, UTF-8, and a valid event of its kind); `replay`,
`diff` and the others read every line. tests/engine/test_trajectory_index.py fuzzes both paths.
"""

from __future__ import annotations

import functools
import re
import typing
from itertools import compress
from operator import itemgetter, lt, not_
from pathlib import Path
from typing import Callable, Iterable, Iterator, TypeVar

from pydantic import BaseModel

from ledger_tui.engine.events import (
    EVENT_ADAPTER,
    SCHEMA_VERSION,
    Event,
    GateDecided,
    SessionStarted,
    ToolCallProposed,
    Verdict,
)
from ledger_tui.engine.store.reading import EVENT_DEPTH, MAX_FILE_BYTES, MAX_LINE_BYTES
from ledger_tui.engine.store.trajectories import (
    OLDEST_SCHEMA,
    LoadedTrajectory,
    _collector_paused,
    _has_line_longer,
    read_trajectory,
)


def read_for_why(
    path: Path | str,
    keep: tuple[type[Event], ...],
    verdicts: Iterable[Verdict] = tuple(Verdict),
    more: tuple[type[Event], ...] = (),
    more_if: Callable[[list[Event]], bool] = lambda events: False,
    step: int | None = None,
) -> LoadedTrajectory:
    """The first event of a trajectory and those of the kinds `keep` names, of its gate decisions
    only those of `verdicts` (and at `step`, if given: `why --step`), and, if `more_if` holds of
    those events, also the events of the kinds `more` (all in the file's order); or
    `read_trajectory`'s sentence. The lines not read are checked by their framing only (see the
    module's docstring); a file the index does not take is read whole by `read_trajectory`, and its
    events chosen as above."""
    path = Path(path)
    return use_for_why(path, keep, verdicts, more, step, lambda reading: LoadedTrajectory(path, reading.chosen(more_if), reading.warnings))


T = TypeVar("T")


def use_for_why(
    path: Path | str,
    keep: tuple[type[Event], ...],
    verdicts: Iterable[Verdict],
    more: tuple[type[Event], ...],
    step: int | None,
    use: Callable[[WhyReading], T],
) -> T:
    """What `use` makes of a trajectory as `read_for_why` reads it, given as a `WhyReading`: from the
    index, whose gate decisions are validated one at a time as `use` asks for them (`why` explains
    each and drops it: the 1,942 stops of a 100,000-event file held at once took about 60 MB,
    and making their pages a sixth of its time); if a line it reads then is not a valid event, `use` is given
    the full reader's reading instead (so `use` must say nothing before it returns). Or
    `read_trajectory`'s sentence."""
    path = Path(path)
    wanted = frozenset(verdicts)
    done = _use_indexed(path, keep, wanted, more, step, use)
    if done is not _NOT_INDEXED:
        return typing.cast(T, done)
    loaded = read_trajectory(path, keep=keep + more)
    return use(_WholeReading(loaded, keep, wanted, more, step))


def _use_indexed(
    path: Path, keep: tuple[type[Event], ...], verdicts: frozenset[Verdict], more: tuple[type[Event], ...], step: int | None, use: Callable[[WhyReading], T]
) -> T | object:
    """`use` of the index's reading of the file, or _NOT_INDEXED where the index does not take it
    (its bytes, held meanwhile, are let go before the full reader reads it)."""
    try:
        data = path.read_bytes() if path.is_file() else None
    except OSError:
        return _NOT_INDEXED
    reading = None if data is None else _indexed_reading(data, keep, verdicts, more, step)
    if reading is None:
        return _NOT_INDEXED
    try:
        with _collector_paused():  # (the events validated: no cycles to look for)
            return use(reading)
    except _NotIndexed:
        return _NOT_INDEXED


_NOT_INDEXED = object()


class _NotIndexed(Exception):
    """A line the index reads lazily is not a valid event: the file goes to the full reader."""


class WhyReading:
    """What `why` reads of a trajectory (`use_for_why`): its first event (`started`, if a
    session_started), the events of the kinds kept other than the gate's decisions (`events`, in
    the file's order), the decisions of the verdicts asked for (`decisions`, one at a time, in the
    file's order), the events of the kinds `more` (`more`), and the full reader's warnings."""

    started: SessionStarted | None
    events: list[Event]
    warnings: list[str]

    def decisions(self) -> Iterator[GateDecided]:
        raise NotImplementedError

    def more(self) -> list[Event]:
        raise NotImplementedError

    def chosen(self, more_if: Callable[[list[Event]], bool]) -> list[Event]:
        """Every event as `read_for_why` returns them (the decisions all held)."""
        raise NotImplementedError


class _WholeReading(WhyReading):
    """A file read whole (`read_trajectory`), its events chosen."""

    def __init__(self, loaded: LoadedTrajectory, keep: tuple[type[Event], ...], verdicts: frozenset[Verdict], more: tuple[type[Event], ...], step: int | None):
        self._loaded, self._keep, self._verdicts, self._more, self._step = loaded, keep, verdicts, more, step
        self.started, self.warnings = loaded.started, loaded.warnings
        self._chosen = chosen(list(loaded.events), keep, verdicts, step=step)
        self.events = [e for e in self._chosen if not isinstance(e, GateDecided)]

    def decisions(self) -> Iterator[GateDecided]:
        return (
            e for e in self._chosen
            if isinstance(e, GateDecided) and e.decision.verdict in self._verdicts and self._step in (None, e.seq)
        )

    def more(self) -> list[Event]:
        return [e for e in self._loaded.events if isinstance(e, self._more)]

    def chosen(self, more_if: Callable[[list[Event]], bool]) -> list[Event]:
        return chosen(list(self._loaded.events), self._keep, self._verdicts, self._more, more_if, self._step)


class _IndexReading(WhyReading):
    """A file read from the index (`_indexed_reading`): the decisions explained are validated as
    they are asked for, the lines of the kinds `more` when first asked for; a line that is not a
    valid event raises _NotIndexed."""

    def __init__(self, data: bytes, placed: list[tuple[int, Event]], spans: list[tuple[int, int, bytes]], extra: list[int], verdicts: frozenset[Verdict]):
        self._data, self._placed, self._spans, self._extra, self._verdicts = data, placed, spans, extra, verdicts
        first = placed[0][1]
        self.started = first if isinstance(first, SessionStarted) else None
        self.events = [e for _, e in placed]
        self.warnings = []
        self._more: list[Event] | None = None

    def decisions(self) -> Iterator[GateDecided]:
        return (event for _, event in self._placed_decisions())

    def _placed_decisions(self) -> Iterator[tuple[int, GateDecided]]:
        data = self._data
        for start, end, call in self._spans:
            try:
                event = _validated(data[start:end])
            except (ValueError, RecursionError):  # (a ValidationError is a ValueError)
                raise _NotIndexed from None
            if not isinstance(event, GateDecided) or event.decision.call.id.encode("utf-8", "surrogatepass") != call:
                raise _NotIndexed  # (a line with a key twice: the full reader says what it reads)
            if event.decision.verdict in self._verdicts:  # (the index's guess, corrected)
                yield start, event

    def more(self) -> list[Event]:
        if self._more is None:
            data = self._data
            try:
                self._more = [_validated(data[start : _end(data, start)]) for start in self._extra]
            except (ValueError, RecursionError):
                raise _NotIndexed from None
        return self._more

    def chosen(self, more_if: Callable[[list[Event]], bool]) -> list[Event]:
        placed = sorted([*self._placed, *self._placed_decisions()], key=itemgetter(0))
        base = [event for _, event in placed]
        if not self._extra or not more_if(base):
            return base
        placed.extend(zip(self._extra, self.more()))
        placed.sort(key=itemgetter(0))
        return [event for _, event in placed]


def chosen(
    events: list[Event],
    keep: tuple[type[Event], ...],
    verdicts: Iterable[Verdict],
    more: tuple[type[Event], ...] = (),
    more_if: Callable[[list[Event]], bool] = lambda events: False,
    step: int | None = None,
) -> list[Event]:
    """Of every event of a file read whole (`events`), what `read_for_why` returns: the first event,
    those of the kinds `keep` names (of the gate's decisions, those of `verdicts`, at `step` if
    given), then, if `more_if` holds of those, the events of the kinds `more` among them."""
    wanted = frozenset(verdicts)

    def kept(event: Event) -> bool:
        if not isinstance(event, GateDecided):
            return isinstance(event, keep)
        return isinstance(event, keep) and event.decision.verdict in wanted and step in (None, event.seq)

    base = [e for i, e in enumerate(events) if i == 0 or kept(e)]
    if not more or not more_if(base):
        return base
    return [e for i, e in enumerate(events) if i == 0 or kept(e) or isinstance(e, more)]


def _indexed(
    data: bytes,
    keep: tuple[type[Event], ...],
    verdicts: frozenset[Verdict],
    more: tuple[type[Event], ...],
    more_if: Callable[[list[Event]], bool],
    step: int | None = None,
) -> list[Event] | None:
    """`read_for_why`'s events of a trajectory's bytes; None if a line is not as ledger-tui writes
    it, out of order, or a line read is not a valid event (the full reader then says which)."""
    reading = _indexed_reading(data, keep, verdicts, more, step)
    try:
        return None if reading is None else reading.chosen(more_if)
    except _NotIndexed:
        return None


def _indexed_reading(
    data: bytes,
    keep: tuple[type[Event], ...],
    verdicts: frozenset[Verdict],
    more: tuple[type[Event], ...],
    step: int | None = None,
) -> _IndexReading | None:
    """A trajectory's bytes as `read_for_why` reads them, its decisions not yet validated; None if
    a line is not as ledger-tui writes it, out of order, or a line read is not a valid event (the
    full reader then says which)."""
    if len(data) > MAX_FILE_BYTES or not data.endswith((b"}", b"}\n")) or _has_line_longer(data, MAX_LINE_BYTES):
        return None
    first_end = data.find(b"\n")
    first_end = len(data) if first_end < 0 else first_end
    head = _FIRST.match(data, 0, first_end)
    if head is None or data[first_end - 1] != ord("}"):
        return None
    kept_kinds, more_kinds, _ = kinds = _kinds_of(keep, more)
    with _collector_paused():  # (100,000 tuples, then the events: no cycles to look for)
        # of each line after the first: (its number, the id of the call it decides, its kind if it
        # is read, the id of the call it proposes, its kind if it is not read: one of the kinds
        # `more` names is read only if asked for, from where `extra` says); `findall`
        # makes these tuples without a match object for each line (a third less time)
        found = _index(kinds).findall(data, first_end - 1)
        starts = _line_starts(data, first_end)
        if len(found) != len(starts):
            return None  # a line that does not begin, or a line before it that does not end, as written
        # (each match holds one line break, so with as many matches as line breaks the n-th is the
        # n-th line's beginning)
        seqs = [int(head[1]), *map(int, map(itemgetter(0), found))]
        if not all(map(lt, seqs, seqs[1:])):
            return None
        last = starts[-1] if starts else 0
        not_read = list(map(itemgetter(4), found))
        read = list(map(not_, not_read))  # (the lines not read, dropped)
        lines = [(start, *line) for start, line in zip(compress(starts, read), compress(found, read))]
        extra = list(compress(starts, map(more_kinds.__contains__, not_read))) if more_kinds else []
        del seqs, found, starts, not_read, read
        try:
            placed = _read(data, first_end, lines, last, kept_kinds, verdicts, step)
        except (ValueError, RecursionError):  # (a ValidationError is a ValueError)
            return None
    return None if placed is None else _IndexReading(data, *placed, extra, verdicts)


def _read(
    data: bytes,
    first_end: int,
    lines: list[tuple[int, bytes, bytes, bytes, bytes, bytes]],
    last: int,
    kept_kinds: frozenset[bytes],
    verdicts: frozenset[Verdict],
    step: int | None,
) -> tuple[list[tuple[int, Event]], list[tuple[int, int, bytes]]] | None:
    """Of the lines `_indexed_reading` found to read (`last`: where the file's last line starts;
    `step`: the only decision explained, if given): the events other than the decisions explained,
    validated, each with where its line starts, and the decisions explained, where each starts and
    ends and the id of its call (validated as they are asked for); None where the full reader would
    refuse or warn (ValueError from a line that is not a valid event)."""
    first = _validated(data[:first_end])
    if not isinstance(first, SessionStarted) or not OLDEST_SCHEMA <= first.schema_version <= SCHEMA_VERSION:
        return None
    events: list[tuple[int, Event]] = [(0, first)]  # (where its line starts, the event)
    spans: list[tuple[int, int, bytes]] = []  # the decisions explained: (start, end, call)
    latest = 0  # where the last line read starts
    proposed: dict[bytes, int] = {}  # the calls proposed, and where
    decided: set[bytes] = set()
    decides = b"gate_decision" in kept_kinds
    at = None if step is None else str(step).encode()  # (as the index reads a line's number)
    for start, seq, decides_call, kind, proposes, _never in lines:
        if proposes:  # a proposal not kept: its id (without escapes: `_index`)
            proposed.setdefault(proposes[:-1], start)
            continue
        end = _end(data, start)
        if decides_call or kind == b"gate_decision":  # checked in order, read if of a verdict asked for
            explained = decides and at in (None, seq)
            call, verdict = _decision(data, start, end, decides_call, verdicts if explained else frozenset())
            if call in decided or proposed.get(call, start) >= start:
                return None  # decided twice, or before it is proposed
            decided.add(call)
            if verdict in verdicts and explained:  # (a guess, checked when it is validated)
                spans.append((start, end, call))
                latest = start
            continue
        event = _validated(data[start:end])
        if isinstance(event, ToolCallProposed):
            proposed.setdefault(event.call.id.encode("utf-8", "surrogatepass"), start)
        events.append((start, event))
        latest = start
    if last != latest:
        _validated(data[last : _end(data, last)])  # a last line cut short after a `}`: the full reader warns of it
    return events, spans


def _line_starts(data: bytes, first_end: int) -> list[int]:
    """Where each line after the first begins (the first ends at `first_end`); a line break that
    ends the file begins no line."""
    find, starts = data.find, []
    add = starts.append
    at, ends = first_end, len(data) - 1
    while 0 <= at < ends:
        add(at + 1)
        at = find(b"\n", at + 1)
    return starts


def _end(data: bytes, start: int) -> int:
    """Where the line that begins at `start` ends (its line break, or the end of the file)."""
    end = data.find(b"\n", start)
    return len(data) if end < 0 else end


def _decision(data: bytes, start: int, end: int, call_id: bytes, read: frozenset[Verdict]) -> tuple[bytes, Verdict]:
    """A gate decision's call (its id's bytes) and verdict, from the line `data[start:end]` (looked
    at in place: most decisions are not explained), from `call_id` (the index's, with its
    closing quote; empty where the index did not find it) and the line's key `"verdict"`; a
    verdict in `read` is only a guess (the line is then validated whole, which corrects it), any
    other is taken from the only key `"verdict"` of the line, else parsed by pydantic's JSON
    parser (`_Decided`). A key, or a whole string, `"verdict"` appears nowhere else in a decision
    ledger-tui writes (a quote inside a string is escaped), so the only one is the decision's."""
    if call_id:
        found = _VERDICT.search(data, start, end)
        if found is not None:
            verdict = Verdict(found[1].decode())
            if verdict in read or data.count(b'"verdict"', start, end) == 1:
                return call_id[:-1], verdict
    light = _Decided.model_validate_json(data[start:end]).decision
    return light.call.id.encode("utf-8", "surrogatepass"), light.verdict


_VERDICT = re.compile(rb'"verdict": ?"(ALLOW|REVISE|BLOCK)"')


def _validated(line: bytes) -> Event:
    """A line's event (ValueError if it is not one, or is nested deeper than a trajectory's lines
    may be: the full reader's limit, which the JSON parser alone would not enforce)."""
    if _nested_deeper(line, EVENT_DEPTH):
        raise ValueError("nested too deep")
    return EVENT_ADAPTER.validate_json(line)


def _nested_deeper(line: bytes, limit: int) -> bool:
    """Whether a line of JSON is nested more than `limit` levels deep (`reading.too_deep` on its
    bytes, for the lines of more than `limit` brackets: a gate decision's 7 KB have hundreds). Its
    escaped backslashes and quotes taken out, then all but brackets and quotes, then its strings,
    the innermost pairs of brackets are removed `limit` times; a line not balanced is not JSON, and
    the parser says so."""
    if line.count(b"{") + line.count(b"[") <= limit:
        return False
    skeleton = _STRINGS.sub(b"", line.replace(b"\\\\", b"").replace(b'\\"', b"").translate(None, _NOT_STRUCTURE))
    for _ in range(limit):
        skeleton, removed = _INNERMOST.subn(b"", skeleton)
        if not skeleton or not removed:
            return False
    return True


_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"')
_STRINGS = re.compile(rb'"[^"]*"')
_INNERMOST = re.compile(rb"\[\]|\{\}")


class _Call(BaseModel):
    id: str


class _Decision(BaseModel):
    call: _Call
    verdict: Verdict


class _Decided(BaseModel):
    """Of a gate decision not explained, what the order checks read (its call's id) and its verdict:
    parsed by pydantic's JSON parser (a whole decision: 7 KB, of which this is 30 bytes) without
    building the rest."""

    decision: _Decision


# A line's beginning: its number (never negative: a line without one goes to the full reader) and
# its kind, with or without a space after each `:` and `,`.
_PREFIX = rb'\{"seq": ?(0|[1-9][0-9]*), ?"type": ?"'
_FIRST = re.compile(_PREFIX)


@functools.cache
def _kinds_of(keep: tuple[type[Event], ...], more: tuple[type[Event], ...]) -> tuple[frozenset[bytes], frozenset[bytes], frozenset[bytes]]:
    """(the kinds `keep` names, those `more` names, every other kind ledger-tui writes), as they
    are written; gate decisions are always read (their calls, for the order checks)."""
    kept = frozenset(cls.model_fields["type"].default.encode() for cls in keep)
    extra = frozenset(cls.model_fields["type"].default.encode() for cls in more) - kept
    every = {cls.model_fields["type"].default.encode() for cls in typing.get_args(typing.get_args(Event)[0])}
    return kept, extra, frozenset(every - kept - extra - {b"tool_call", b"gate_decision"})


@functools.cache
def _index(kinds: tuple[frozenset[bytes], frozenset[bytes], frozenset[bytes]]) -> re.Pattern[bytes]:
    """The lines after the first, each found from the `}` that ends the line before and the line
    break: `finditer` gives of each its number, then the id of the call it decides (without
    escapes, with its closing quote), or its kind if it is read (a decision with an id the index
    does not take among them), or the id of the call it proposes, or its kind if it is not read
    (the kinds `extra` among them: read only if asked for)."""
    kept, extra, other = kinds
    read = b"|".join(re.escape(kind) for kind in sorted(kept | {b"gate_decision"}))
    never = b"|".join(re.escape(kind) for kind in sorted(other | extra))
    call = rb'"call": ?\{ ?"id": ?"([^"\\\n]*")'  # (an id without escapes, and its closing quote)
    proposal = rb'tool_call", ?' + call if b"tool_call" not in kept | extra else rb"(?!)()"
    return re.compile(
        rb"\}\n" + _PREFIX + rb'(?:gate_decision", ?"decision": ?\{ ?' + call
        + rb"|(" + read + rb')"|' + proposal + rb"|(" + never + rb')")'
    )

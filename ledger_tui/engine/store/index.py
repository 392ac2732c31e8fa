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
import io
import re
import typing
from abc import ABC, abstractmethod
from itertools import compress
from operator import itemgetter, lt, not_
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator, TypeVar

from pydantic import BaseModel, ConfigDict

from ledger_tui.engine.events import (
    EVENT_MODELS,
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
    _NOT_OPENING,
    _collector_paused,
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
    each and drops it: the 1,942 stops of a 100,000-event file held at once took about 60 MB, and
    making their pages a sixth of its time); if a line it reads then is not a valid event, `use`
    is given the full reader's reading instead (so `use` must say nothing before it returns). Or
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
    """`use` of the index's reading of the file, or _NOT_INDEXED where the index does not take it."""
    try:
        file = path.open("rb", buffering=0) if path.is_file() else None
    except OSError:
        return _NOT_INDEXED
    if file is None:
        return _NOT_INDEXED
    with file:
        try:
            reading = _indexed_reading(file, keep, verdicts, more, step)
        except OSError:
            return _NOT_INDEXED
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


class WhyReading(ABC):
    """What `why` reads of a trajectory (`use_for_why`): its first event (`started`, if a
    session_started), the events of the kinds kept other than the gate's decisions (`events`, in
    the file's order), the decisions of the verdicts asked for (`decisions`, one at a time, in the
    file's order), the events of the kinds `more` (`more`), and the full reader's warnings."""

    started: SessionStarted | None
    events: list[Event]
    warnings: list[str]

    @abstractmethod
    def decisions(self) -> Iterator[GateDecided]:
        """The decisions of the verdicts asked for, one at a time, in the file's order."""

    @abstractmethod
    def more(self) -> list[Event]:
        """The events of the kinds `more`, in the file's order."""

    @abstractmethod
    def chosen(self, more_if: Callable[[list[Event]], bool]) -> list[Event]:
        """Every event as `read_for_why` returns them (the decisions all held)."""


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
    they are asked for (from their lines' bytes, kept), the lines of the kinds `more` when first
    asked for (read again from the file); a line that is not a valid event raises _NotIndexed."""

    def __init__(
        self,
        file: BinaryIO,
        placed: list[tuple[int, Event]],
        spans: list[tuple[int, bytes, bytes]],
        extra: list[tuple[int, bytes]],
        verdicts: frozenset[Verdict],
    ):
        self._file, self._placed, self._spans, self._extra, self._verdicts = file, placed, spans, extra, verdicts
        first = placed[0][1]
        self.started = first if isinstance(first, SessionStarted) else None
        self.events = [e for _, e in placed]
        self.warnings = []
        self._more: list[Event] | None = None

    def decisions(self) -> Iterator[GateDecided]:
        return (event for _, event in self._placed_decisions())

    def _placed_decisions(self) -> Iterator[tuple[int, GateDecided]]:
        spans, self._spans = self._spans, []  # (each line's bytes let go once validated)
        spans.reverse()
        while spans:
            start, line, call = spans.pop()
            try:
                event = _validated(line, b"gate_decision")
            except (ValueError, RecursionError):  # (a ValidationError is a ValueError)
                raise _NotIndexed from None
            del line
            if not isinstance(event, GateDecided) or event.decision.call.id.encode("utf-8", "surrogatepass") != call:
                raise _NotIndexed  # (a line with a key twice: the full reader says what it reads)
            if event.decision.verdict in self._verdicts:  # (the index's guess, corrected)
                yield start, event

    def more(self) -> list[Event]:
        if self._more is None:
            self._file.seek(0)
            data = self._file.read()  # (changed since it was indexed, a line read is not valid)
            try:
                self._more = [_validated(data[start : _end(data, start)], kind) for start, kind in self._extra]
            except (ValueError, RecursionError):
                raise _NotIndexed from None
        return self._more

    def chosen(self, more_if: Callable[[list[Event]], bool]) -> list[Event]:
        placed = sorted([*self._placed, *self._placed_decisions()], key=itemgetter(0))
        base = [event for _, event in placed]
        if not self._extra or not more_if(base):
            return base
        placed.extend(zip(map(itemgetter(0), self._extra), self.more()))
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
    reading = _indexed_reading(io.BytesIO(data), keep, verdicts, more, step)
    try:
        return None if reading is None else reading.chosen(more_if)
    except _NotIndexed:
        return None


def _indexed_reading(
    file: BinaryIO,
    keep: tuple[type[Event], ...],
    verdicts: frozenset[Verdict],
    more: tuple[type[Event], ...],
    step: int | None = None,
) -> _IndexReading | None:
    """A trajectory (`file`, read from its start) as `read_for_why` reads it, its decisions not
    yet validated; None if a line is not as ledger-tui writes it, out of order, or a line read is
    not a valid event (the full reader then says which). Read a block of whole lines at a time
    (`_blocks`): one buffer, its pages made once, where the file's 69 MB read at once took 17,000
    new pages (40 ms), and the index of each block made while it is in the processor's cache."""
    kept_kinds, more_kinds, _ = kinds = _kinds_of(keep, more)
    head, index = _index(kinds)
    scan = _Scan(kept_kinds, more_kinds, verdicts, step)
    with _collector_paused():  # (the tuples of each block, then the events: no cycles to look for)
        try:
            return _scanned(file, head, index, scan, verdicts)
        except (ValueError, RecursionError):  # (a ValidationError is a ValueError)
            return None


def _scanned(
    file: BinaryIO,
    head: re.Pattern[bytes],
    index: Callable[[bytearray, int, int], list[tuple[bytes, ...]]],
    scan: _Scan,
    verdicts: frozenset[Verdict],
) -> _IndexReading | None:
    """`_indexed_reading` of `file`, a block at a time into `scan` (ValueError from a line that is
    not a valid event)."""
    for buf, base, end, final in _blocks(file):
        closes = end if final else end - 1  # where the block's last line ends
        if closes < 1 or buf[closes - 1] != 0x7D:  # `}`
            return None
        if scan.first is None:  # the file's first line
            first_end = buf.find(b"\n", 0, closes)
            first_end = closes if first_end < 0 else first_end
            started = _FIRST.match(buf, 0, first_end)
            if started is None or buf[first_end - 1] != 0x7D:
                return None
            scan.first = _validated(buf[:first_end], b"session_started")
            if not isinstance(scan.first, SessionStarted) or not OLDEST_SCHEMA <= scan.first.schema_version <= SCHEMA_VERSION:
                return None
            scan.seq, scan.last = int(started[1]), (0, b"", b"session_started")  # (read: `latest`)
            found, starts = index(buf, first_end - 1, closes), _line_starts(buf, first_end, closes)
        else:
            line = head.match(buf, 0, closes)
            if line is None:
                return None
            found, starts = [line.groups(), *index(buf, 0, closes)], [0, *_line_starts(buf, 0, closes)]
        # (each match holds one line break, so with as many matches as line breaks the n-th is
        # the n-th line's beginning)
        if len(found) != len(starts) or not scan.block(buf, base, closes, found, starts):
            return None
    if scan.first is None:
        return None
    scan.ends()
    return _IndexReading(file, scan.events, scan.spans, scan.extra, verdicts)


class _Scan:
    """What `_indexed_reading` carries from block to block: the events read, the decisions to
    explain (where each starts, its line's bytes and its call's id), where the lines of the kinds
    `more` start, the calls proposed and decided, the last number and the last line."""

    def __init__(self, kept_kinds: frozenset[bytes], more_kinds: frozenset[bytes], verdicts: frozenset[Verdict], step: int | None):
        self.kept_kinds, self.more_kinds, self.verdicts = kept_kinds, more_kinds, verdicts
        self.decides = b"gate_decision" in kept_kinds
        self.at = None if step is None else str(step).encode()  # (as the index reads a line's number)
        self.first: Event | None = None
        self.events: list[tuple[int, Event]] = []  # (where its line starts, the event)
        self.spans: list[tuple[int, bytes, bytes]] = []
        self.extra: list[tuple[int, bytes]] = []  # (where, its kind)
        self.proposed: dict[bytes, int] = {}  # the calls proposed, and where
        self.decided: set[bytes] = set()
        self.seq = -1  # the last line's number
        self.latest = 0  # where the last line read starts
        self.last: tuple[int, bytes, bytes] = (0, b"", b"")  # where the last line starts, its bytes and kind

    def block(self, buf: bytearray, base: int, closes: int, found: list[tuple[bytes, ...]], starts: list[int]) -> bool:
        """Take the lines of a block (`found` of each, where each starts; the last ends at
        `closes`); False if they are out of order or one is not as written."""
        seqs = [self.seq, *map(int, map(itemgetter(0), found))]
        if not all(map(lt, seqs, seqs[1:])):
            return False
        self.seq = seqs[-1]
        not_read = list(map(itemgetter(4), found))
        read = list(map(not_, not_read))  # (the lines not read, dropped)
        if self.more_kinds:
            extra = list(map(self.more_kinds.__contains__, not_read))
            self.extra.extend(zip(map(base.__add__, compress(starts, extra)), compress(not_read, extra)))
        nexts = starts[1:]  # (where the line after each begins: a line ends at its line break)
        nexts.append(closes + 1)
        proposed, decided, verdicts, at = self.proposed, self.decided, self.verdicts, self.at
        for start, after, (seq, decides_call, kind, proposes, _never) in zip(compress(starts, read), compress(nexts, read), compress(found, read)):
            where = base + start
            if proposes:  # a proposal not kept: its id (without escapes: `_index`)
                proposed.setdefault(proposes[:-1], where)
                continue
            end = after - 1
            if decides_call or kind == b"gate_decision":  # checked in order, read if of a verdict asked for
                explained = self.decides and at in (None, seq)
                call, verdict = _decision(buf, start, end, decides_call, verdicts if explained else frozenset())
                if call in decided or proposed.get(call, where) >= where:
                    return False  # decided twice, or before it is proposed
                decided.add(call)
                if verdict in verdicts and explained:  # (a guess, checked when it is validated)
                    self.spans.append((where, bytes(buf[start:end]), call))
                    self.latest = where
                continue
            event = _validated(buf[start:end], kind)
            if isinstance(event, ToolCallProposed):
                proposed.setdefault(event.call.id.encode("utf-8", "surrogatepass"), where)
            self.events.append((where, event))
            self.latest = where
        if starts:
            seq, decides_call, kind, proposes, never = found[-1]
            kind = kind or never or (b"gate_decision" if decides_call else b"tool_call")
            self.last = (base + starts[-1], bytes(buf[starts[-1] : closes]), kind)
        return True

    def ends(self) -> None:
        """The file read to its end: its first event put first, and its last line validated if it
        was not read (ValueError if it is not an event: the full reader warns of a last line cut
        short after a `}`)."""
        self.events.insert(0, (0, typing.cast(Event, self.first)))
        where, line, kind = self.last
        if where != self.latest:
            _validated(line, kind)


_BLOCK = 1 << 20  # (a test reads with smaller blocks)


def _blocks(file: BinaryIO) -> Iterator[tuple[bytearray, int, int, bool]]:
    """The file's bytes a block of whole lines at a time: (a buffer, where in the file it starts,
    where its last line break ends, whether it is the file's end: its last line then has no line
    break). One buffer of `_BLOCK` bytes, made larger for a longer line; a line longer than
    MAX_LINE_BYTES, or a file longer than MAX_FILE_BYTES, raises ValueError."""
    buf, filled, base = bytearray(_BLOCK), 0, 0
    while True:
        with memoryview(buf) as view:
            got = file.readinto(view[filled:])
        if not got:  # the end: the last line without a line break, if any
            if filled > MAX_LINE_BYTES:
                raise ValueError("a line too long")
            if filled:
                yield buf, base, filled, True
            return
        filled += got
        if base + filled > MAX_FILE_BYTES:
            raise ValueError("a file too long")
        cut = buf.rfind(b"\n", 0, filled) + 1
        if not cut:  # one line so far: read on, into a larger buffer
            if filled > MAX_LINE_BYTES:
                raise ValueError("a line too long")
            if filled == len(buf):
                buf = buf + bytes(min(len(buf), MAX_LINE_BYTES + 1 - len(buf)))
            continue
        yield buf, base, cut, False
        buf[: filled - cut] = buf[cut:filled]
        base, filled = base + cut, filled - cut


def _line_starts(data: bytearray, first_end: int, closes: int) -> list[int]:
    """Where each line after the one that ends at `first_end` begins, up to `closes`."""
    find, starts = data.find, []
    add = starts.append
    at = find(b"\n", first_end, closes)
    while at >= 0:
        add(at + 1)
        at = find(b"\n", at + 1, closes)
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


def _validated(line: bytes, kind: bytes) -> Event:
    """A line's event, validated by the model of the kind the index read in it (ValueError if it is
    not one, or is nested deeper than a trajectory's lines may be: the full reader's limit, which
    the JSON parser alone would not enforce). Only the models of the kinds read are built."""
    if _nested_deeper(line, EVENT_DEPTH):
        raise ValueError("nested too deep")
    return typing.cast(Event, _MODELS[kind].model_validate_json(line))


_MODELS = {kind.encode(): model for kind, model in EVENT_MODELS.items()}


def _nested_deeper(line: bytes, limit: int) -> bool:
    """Whether a line of JSON is nested more than `limit` levels deep (`reading.too_deep` on its
    bytes, for the lines of more than `limit` brackets: a gate decision's 7 KB have hundreds). Its
    escaped backslashes and quotes taken out, then all but brackets and quotes, then its strings,
    the innermost pairs of brackets are removed `limit` times; a line not balanced is not JSON, and
    the parser says so."""
    if len(line.translate(None, _NOT_OPENING)) <= limit:  # (its `{` and `[` kept: one pass, not two counts)
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
    model_config = ConfigDict(defer_build=True)  # (built if a decision's call id has escapes)

    id: str


class _Decision(BaseModel):
    model_config = ConfigDict(defer_build=True)

    call: _Call
    verdict: Verdict


class _Decided(BaseModel):
    """Of a gate decision not explained, what the order checks read (its call's id) and its verdict:
    parsed by pydantic's JSON parser (a whole decision: 7 KB, of which this is 30 bytes) without
    building the rest."""

    model_config = ConfigDict(defer_build=True)

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
    every = set(_MODELS)
    return kept, extra, frozenset(every - kept - extra - {b"tool_call", b"gate_decision"})


@functools.cache
def _index(
    kinds: tuple[frozenset[bytes], frozenset[bytes], frozenset[bytes]],
) -> tuple[re.Pattern[bytes], Callable[[bytearray, int, int], list[tuple[bytes, ...]]]]:
    """A line's beginning, and `findall` of the lines after the first of a block, each found from
    the `}` that ends the line before and the line break: of each its number, then the id of the
    call it decides (without escapes, with its closing quote), or its kind if it is read (a
    decision with an id the index does not take among them), or the id of the call it proposes, or
    its kind if it is not read (the kinds `extra` among them: read only if asked for)."""
    kept, extra, other = kinds
    read = b"|".join(re.escape(kind) for kind in sorted(kept | {b"gate_decision"}))
    never = b"|".join(re.escape(kind) for kind in sorted(other | extra))
    call = rb'"call": ?\{ ?"id": ?"([^"\\\n]*")'  # (an id without escapes, and its closing quote)
    proposal = rb'tool_call", ?' + call if b"tool_call" not in kept | extra else rb"(?!)()"
    line = _PREFIX + rb'(?:gate_decision", ?"decision": ?\{ ?' + call + rb"|(" + read + rb')"|' + proposal + rb"|(" + never + rb')")'
    return re.compile(line), re.compile(rb"\}\n" + line).findall

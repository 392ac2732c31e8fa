"""A trajectory's events kept as the lines they were read from, each validated again when asked for.

At 100,000 events a trajectory held as models is nearly four times its file (a replay's peak was
366 MB for a 69 MB file), though a replay shows a window of them at a time. `read_trajectory(path,
lazy=True)` checks every line as before and folds each event as it is validated (`Timeline.absorb`);
what it keeps is the file's bytes, where each event's line is, and what the panes need of every event
(its kind, its `seq`, a decision's verdict and category, who proposed each call). An event asked
for is validated from its line again and kept in a small cache (a replay step reads a few hundred
nearby events). The replay's states hold the events of their conversation and gate log as
positions in this sequence (`LazyChain`), so no state keeps an event alive.
"""

from __future__ import annotations

from array import array
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, overload

from ledger_tui.engine.events import EVENT_ADAPTER, Event, GateDecided, ToolCallProposed, Verdict
from ledger_tui.engine.store.fold import Chain, SessionState, Timeline

# Events kept validated: a step shows at most a few hundred (the conversation's and the gate log's
# windows, the fold from the last checkpoint), and stepping back reads the same ones again.
CACHED = 2048


class LazyEvents(Sequence[Event]):
    """The events of one file, in order: those of the lines the reader validated from bytes (by
    where each line is in `data`), then any it read as text after a line it could not take that way
    (held as they are: a damaged last line, a file with a blank line only Unicode calls blank)."""

    def __init__(self, data: bytes, every: int = 64) -> None:
        self._data = data
        self._starts = array("q")
        self._ends = array("q")
        self._held: list[Event] = []  # the events read as text, after those read from bytes
        self._cache: OrderedDict[int, Event] = OrderedDict()
        self._last: tuple[Event | None, int] = (None, -1)  # the event returned last, and its position
        self.kinds: list[type[Event]] = []
        self.seqs: array[int] | list[int] = array("q")
        # of each gate decision, by position: its verdict and category (what the gate log counts
        # and filters by, and the replay bar marks)
        self.verdicts: dict[int, tuple[Verdict, str]] = {}
        self.proposers: dict[str, str] = {}  # call id -> who proposed it (a refusal names them)
        first = SessionState(conversation=LazyChain.empty(self), gate_log=LazyChain.empty(self))
        self.timeline = Timeline.growing(self, first, every)

    # ------------------------------------------------------------------ filled by the reader
    def add(self, event: Event, span: tuple[int, int] | None) -> None:
        """Record the next event (from bytes `data[start:end]`, or held when `span` is None) and
        fold it into `timeline`."""
        kinds = self.kinds
        index = len(kinds)
        if span is None:
            if len(self._held) != index - len(self._starts):
                raise ValueError("events read from bytes come before those held")
            self._held.append(event)
        else:
            if self._held:
                raise ValueError("an event read from bytes after one held")
            self._starts.append(span[0])
            self._ends.append(span[1])
        kind = type(event)  # (a validated event is of one of the union's classes, never a subclass)
        kinds.append(kind)
        try:
            self.seqs.append(event.seq)
        except OverflowError:  # a seq past 64 bits (valid JSON, a valid event): kept as Python ints
            self.seqs = [*self.seqs, event.seq]
        if kind is GateDecided:
            decision = event.decision  # type: ignore[union-attr]
            self.verdicts[index] = (decision.verdict, decision.category())
        elif kind is ToolCallProposed:
            call = event.call  # type: ignore[union-attr]
            self.proposers[call.id] = call.requestor
        self._last = (event, index)  # (not cached: a replay opens at the end, and reads those again)
        self.timeline.absorb(event)

    # ------------------------------------------------------------------ a sequence
    def __len__(self) -> int:
        return len(self.kinds)

    @overload
    def __getitem__(self, index: int) -> Event: ...
    @overload
    def __getitem__(self, index: slice) -> list[Event]: ...
    def __getitem__(self, index: int | slice) -> Event | list[Event]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        n = len(self.kinds)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("event index out of range")
        cached = self._cache.get(index)
        if cached is not None:
            self._cache.move_to_end(index)
            self._last = (cached, index)
            return cached
        bytes_read = len(self._starts)
        if index >= bytes_read:
            event = self._held[index - bytes_read]
        else:
            event = EVENT_ADAPTER.validate_json(self._data[self._starts[index] : self._ends[index]])
        self._remember(index, event)
        return event

    def __iter__(self) -> Iterator[Event]:
        """Every event in order, each validated from its line and not cached (a scan, such as a
        search's, would only push the events a step reads out of the cache)."""
        data, starts, ends, cache = self._data, self._starts, self._ends, self._cache
        validate = EVENT_ADAPTER.validate_json
        for i in range(len(starts)):
            cached = cache.get(i)
            yield cached if cached is not None else validate(data[starts[i] : ends[i]])
        yield from self._held

    def _remember(self, index: int, event: Event) -> None:
        cache = self._cache
        cache[index] = event
        self._last = (event, index)
        if len(cache) > CACHED:
            cache.popitem(last=False)

    def index_of(self, event: Event) -> int:
        """The position of an event this sequence returned last, or still caches: what a
        `LazyChain` keeps of the event a fold appends (the fold asks for each event just before)."""
        last = self._last
        if last[0] is event:
            return last[1]
        for index, cached in self._cache.items():
            if cached is event:
                return index
        raise LookupError("an event not read from this trajectory (or no longer cached)")


class LazyChain(Chain[Any]):
    """A `Chain` of events that keeps each as its position in a `LazyEvents` and reads it from
    there when asked for: a state's conversation or gate log that keeps no event alive."""

    __slots__ = ("_source",)

    _source: LazyEvents

    @classmethod
    def empty(cls, source: LazyEvents) -> LazyChain:
        chain = cls._view([], 0)
        chain._source = source
        return chain

    def _lazy_view(self, items: list[int], n: int) -> LazyChain:
        chain = object.__new__(LazyChain)
        chain._items, chain._n, chain._source = items, n, self._source
        return chain

    def appended(self, item: Any) -> LazyChain:
        last = self._source._last  # (a fold appends the event its sequence returned last)
        index = last[1] if last[0] is item else self._source.index_of(item)
        items, n = self._items, self._n
        if n == 0:
            return self._lazy_view([index], 1)
        if len(items) == n:
            items.append(index)
            return self._lazy_view(items, n + 1)
        if items[n] == index:  # the same append was made from this prefix before
            return self._lazy_view(items, n + 1)
        branch = items[:n]
        branch.append(index)
        return self._lazy_view(branch, n + 1)

    def position(self, index: int) -> int:
        """Where the chain's item `index` is in the trajectory (no validation)."""
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError("Chain index out of range")
        return self._items[index]  # type: ignore[no-any-return]

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[Any, ...]: ...
    def __getitem__(self, index: int | slice) -> Any:
        source = self._source
        if isinstance(index, slice):
            start, stop, step = index.indices(self._n)
            items = self._items
            return tuple(source[items[i]] for i in range(start, stop, step))
        return source[self.position(index)]

    def __iter__(self) -> Iterator[Any]:
        source, items = self._source, self._items
        for i in range(self._n):
            yield source[items[i]]

    def __reversed__(self) -> Iterator[Any]:
        source, items = self._source, self._items
        for i in range(self._n - 1, -1, -1):
            yield source[items[i]]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, LazyChain) and other._items is self._items:
            return other._n == self._n
        if isinstance(other, (Chain, tuple)):
            return len(other) == self._n and all(a == b for a, b in zip(self, other))
        return NotImplemented

    def __hash__(self) -> int:
        return hash(tuple(self))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Chain, (list(self),))


def verdicts(events: Sequence[Event], steps: Iterable[int]) -> dict[int, tuple[Verdict, str]]:
    """Of the gate decisions at `steps`, each one's verdict and category: kept by a `LazyEvents`,
    worked out from the events of any other sequence."""
    if isinstance(events, LazyEvents):
        return {i: events.verdicts[i] for i in steps}
    out: dict[int, tuple[Verdict, str]] = {}
    for i in steps:
        decision = events[i].decision  # type: ignore[union-attr]
        out[i] = (decision.verdict, decision.category())
    return out


def kinds(events: Sequence[Event]) -> Sequence[type[Event]]:
    """The kind of every event: kept by a `LazyEvents`, else read from the events."""
    if isinstance(events, LazyEvents):
        return events.kinds
    return [type(e) for e in events]


def of_kinds(events: Sequence[Event], *wanted: type[Event]) -> list[Event]:
    """The events of the kinds `wanted`, in order (a `LazyEvents` validates only those)."""
    return [events[i] for i, kind in enumerate(kinds(events)) if issubclass(kind, wanted)]


def step_of(events: Sequence[Event], seq: int, *, at_least: bool = False) -> int | None:
    """The position of the event numbered `seq` (`at_least`: of the first numbered `seq` or
    later), or None."""
    seqs: Iterable[int] = events.seqs if isinstance(events, LazyEvents) else (e.seq for e in events)
    return next((i for i, s in enumerate(seqs) if (s >= seq if at_least else s == seq)), None)


def proposers(events: Sequence[Event]) -> dict[str, str]:
    """Who proposed each call, by call id: kept by a `LazyEvents`, else read from the events."""
    if isinstance(events, LazyEvents):
        return events.proposers
    return {e.call.id: e.call.requestor for e in events if isinstance(e, ToolCallProposed)}


def briefs(decisions: Sequence[GateDecided]) -> Callable[[int], tuple[Verdict, str]] | None:
    """Of a lazy state's gate log, what was kept of each decision (its verdict and category), by
    position, without reading it; None for any other sequence."""
    if not isinstance(decisions, LazyChain):
        return None
    kept, position = decisions._source.verdicts, decisions.position
    return lambda i: kept[position(i)]

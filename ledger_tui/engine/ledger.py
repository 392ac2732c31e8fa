"""The ledger: a typed store of what the agent has *observed*, separate from the transcript.

`absorb` is the only way observed values enter: it runs on successful read results only. Writes
never update the ledger; they mark the paths they touch as stale (`mark_stale`), so the agent must
read again ("observe, don't assume"). What the customer *said* lives under `said.*` with origin
"stated" and is rendered in its own block: the gate never takes it for observed evidence.

Every operation is a pure function returning a new `Ledger` plus the `LedgerUpdated` events that
describe the change, so replay is a fold and the UI can highlight exactly what moved.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from math import isqrt
from typing import Any, Iterable, Iterator, Literal, Mapping

from ledger_tui.engine.events import LedgerUpdated
from ledger_tui.engine.store.serialize import compact

STATED_PREFIX = "said."
HEADER = "[Current Task State]"
STATED_HEADER = "[Stated by the customer (unverified)]"

Origin = Literal["observed", "stated"]


@dataclass(frozen=True, slots=True, eq=False)
class Entry:
    path: str
    value: Any
    origin: Origin
    source_seq: int | None
    source_call: str
    stale: bool = False
    stale_because: str = ""
    quote: str | None = None  # a stated fact: the customer's words it came from
    # read, but withheld from the model by the read gate (another customer's record, or a
    # customer's before anyone was identified): the gate reads it, the prompt's block leaves it out
    withheld: bool = False
    _text: str | None = field(default=None, repr=False)  # `text`, once asked

    @property
    def text(self) -> str:
        """`value` as compact JSON without its null fields, as the render shows it (the stored
        value and everything the gate reads keep them). Computed when first asked, then kept: a
        replay folds every update of a long trajectory (23,000 at 100,000 events) and shows the
        few dozen entries of one step."""
        text = self._text
        if text is None:
            text = compact(_without_nulls(self.value))
            object.__setattr__(self, "_text", text)
        return text

    def _fields(self) -> tuple[Any, ...]:
        return (
            self.path, self.value, self.origin, self.source_seq, self.source_call, self.stale, self.stale_because,
            self.text, self.quote, self.withheld,
        )

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._fields())

    def staled(self, because: str) -> Entry:
        """This entry marked stale (`dataclasses.replace`, without its look at every field: a
        replay folds thousands)."""
        return Entry(
            self.path, self.value, self.origin, self.source_seq, self.source_call,
            stale=True, stale_because=because, quote=self.quote, withheld=self.withheld, _text=self._text,
        )

    @property
    def shown(self) -> bool:
        """Rendered in the block's observed part."""
        return self.origin == "observed" and not self.withheld


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _entry(
    path: str, value: Any, origin: Origin, seq: int | None, call: str, quote: str | None = None, withheld: bool = False
) -> Entry:
    # The render leaves null fields out (they carry no fact and cost tokens): `Entry.text`.
    return Entry(path, value, origin, seq, call, quote=quote, withheld=withheld)


class _Base:
    """The shared, never-mutated part of a ledger: its entries in insertion order, and (computed
    when first asked) their positions and the sorted views that prefix queries and render use."""

    __slots__ = ("entries", "_pos", "_sorted", "_views", "_where")

    def __init__(self, entries: dict[str, Entry]) -> None:
        self.entries = entries
        self._pos: dict[str, int] | None = None
        self._sorted: list[str] | None = None
        self._where: dict[tuple[str, str], dict[Any, list[str]]] = {}
        # observed paths and their lines, stated paths and their lines; each sorted by path
        self._views: tuple[list[str], list[str], list[str], list[str]] | None = None

    def pos(self) -> dict[str, int]:
        if self._pos is None:
            self._pos = {p: i for i, p in enumerate(self.entries)}
        return self._pos

    def sorted(self) -> list[str]:
        if self._sorted is None:
            self._sorted = sorted(self.entries)
        return self._sorted

    def where(self, prefix: str, key: str) -> dict[Any, list[str]]:
        """Observed records under `prefix`, sorted, grouped by their `key` field."""
        index = self._where.get((prefix, key))
        if index is None:
            index = self._where[(prefix, key)] = {}
            for path in _under(self.sorted(), prefix):
                field = _field(self.entries[path], key)
                if field is not _NO_FIELD:
                    index.setdefault(field, []).append(path)
        return index

    def views(self) -> tuple[list[str], list[str], list[str], list[str]]:
        if self._views is None:
            obs = [p for p in self.sorted() if self.entries[p].shown]
            st = [p for p in self.sorted() if self.entries[p].origin != "observed"]
            self._views = (obs, [_line(self.entries[p]) for p in obs], st, [_line(self.entries[p]) for p in st])
        return self._views

    def merged(self, over: dict[str, Entry], news: dict[str, int]) -> "_Base":
        """A new base holding `over` too, its views derived from this one's when it has them."""
        entries = dict(self.entries)
        entries.update(over)
        base = _Base(entries)
        if self._pos is not None:
            pos = dict(self._pos)
            pos.update(news)
            base._pos = pos
        if self._sorted is not None:
            base._sorted = _splice(self._sorted, None, set(), sorted(news))[0]
        if self._views is not None:
            base._views = _overlay_views(self, over)
        return base


_NO_FIELD = object()


def _field(entry: Entry, key: str) -> Any:
    """`entry`'s record's `key` field (None when the record lacks it), or _NO_FIELD when the entry
    is not an observed record or the field cannot be a dict key."""
    if entry.origin != "observed" or not isinstance(entry.value, dict):
        return _NO_FIELD
    value = entry.value.get(key)
    try:
        hash(value)
    except TypeError:
        return _NO_FIELD
    return value


def _matches(field: Any, value: Any) -> bool:
    return field is not _NO_FIELD and field == value


def _under(paths: list[str], prefix: str) -> list[str]:
    return paths[bisect_left(paths, prefix) : bisect_left(paths, prefix + "\U0010ffff")]


def _line(e: Entry) -> str:
    return f"{e.path} = {e.text}  # STALE: read it again" if e.stale else f"{e.path} = {e.text}"


def _splice(
    paths: list[str], lines: list[str] | None, remove: set[str], add: list[str], add_lines: list[str] | None = None
) -> tuple[list[str], list[str] | None]:
    """`paths` (sorted, with `lines` alongside) without `remove` and with `add` (sorted, not in
    `paths` unless also removed) in place: pointer copies, no sort."""
    cuts = [(bisect_left(paths, p), 1, p, i) for i, p in enumerate(add)]
    cuts += [(bisect_left(paths, p), 2, p, -1) for p in remove]
    cuts.sort()
    out_p: list[str] = []
    out_l: list[str] | None = None if lines is None else []
    at = 0
    for index, kind, path, i in cuts:
        if index > at:
            out_p += paths[at:index]
            if out_l is not None:
                out_l += lines[at:index]  # type: ignore[index]
            at = index
        if kind == 1:
            out_p.append(path)
            if out_l is not None:
                out_l.append(add_lines[i])  # type: ignore[index]
        else:
            at = index + 1
    out_p += paths[at:]
    if out_l is not None:
        out_l += lines[at:]  # type: ignore[index]
    return out_p, out_l


def _overlay_views(base: _Base, over: dict[str, Entry]) -> tuple[list[str], list[str], list[str], list[str]]:
    """The base's sorted views with the overlay's entries in place (linear in the ledger's size,
    in pointer copies: no sort, no line formatted again)."""
    obs, obs_lines, st, st_lines = base.views()
    if not over:
        return obs, obs_lines, st, st_lines
    gone = {"observed": set(), "stated": set()}  # type: dict[str, set[str]]
    for p in over:
        old = base.entries.get(p)
        if old is not None and not old.withheld:  # (a withheld entry is in neither view)
            gone["observed" if old.origin == "observed" else "stated"].add(p)
    added = sorted(over)
    new_obs = [p for p in added if over[p].shown]
    new_st = [p for p in added if over[p].origin != "observed"]
    o, ol = _splice(obs, obs_lines, gone["observed"], new_obs, [_line(over[p]) for p in new_obs])
    s, sl = _splice(st, st_lines, gone["stated"], new_st, [_line(over[p]) for p in new_st])
    return o, ol, s, sl  # type: ignore[return-value]


def _overlay_limit(size: int) -> int:
    """How many entries a ledger keeps apart from its base before it folds them in: an update
    copies the overlay, a fold copies the base, so the sum stays near the square root."""
    return 32 + 2 * isqrt(size)


class Ledger(Mapping[str, Entry]):
    """An immutable mapping path -> Entry. Build new ledgers with `absorb`, `state`, `mark_stale`.

    Iteration is in insertion order (a path keeps the place it was first added). Deriving a ledger
    costs what changed, not the ledger's size: a new ledger shares its parent's base and keeps its
    changes in a small overlay, folded into a new base once it grows past the square root of the
    size. The sorted views (prefix queries, the rendered block) are derived from the base's by
    splicing, never sorted again."""

    __slots__ = ("_base", "_over", "_news", "_render")

    def __init__(self, entries: Mapping[str, Entry] | None = None) -> None:
        self._base = _Base(dict(entries or {}))
        self._over: dict[str, Entry] = {}
        self._news: dict[str, int] = {}  # overlay paths the base lacks -> their position
        self._render: str | None = None

    @classmethod
    def _of(cls, base: _Base, over: dict[str, Entry], news: dict[str, int]) -> "Ledger":
        ledger = cls.__new__(cls)
        ledger._base, ledger._over, ledger._news, ledger._render = base, over, news, None
        return ledger

    def __getitem__(self, path: str) -> Entry:
        entry = self._over.get(path)
        return self._base.entries[path] if entry is None else entry

    def get(self, path: str, default: Any = None) -> Any:  # type: ignore[override]
        entry = self._over.get(path)
        if entry is None:
            return self._base.entries.get(path, default)
        return entry

    def __contains__(self, path: object) -> bool:
        return path in self._over or path in self._base.entries

    def __iter__(self) -> Iterator[str]:
        yield from self._base.entries
        yield from self._news

    def __len__(self) -> int:
        return len(self._base.entries) + len(self._news)

    def fresh(self, path: str) -> Entry | None:
        """The entry at `path` if it is present and not stale."""
        entry = self.get(path)
        return None if entry is None or entry.stale else entry

    def value(self, path: str, default: Any = None) -> Any:
        entry = self.get(path)
        return default if entry is None else entry.value

    def observed(self) -> list[Entry]:
        return [e for e in self.values() if e.origin == "observed"]

    def stated(self) -> list[Entry]:
        return [e for e in self.values() if e.origin == "stated"]

    def position(self, path: str) -> int:
        """Where `path` was first added (iteration order)."""
        if path in self._news:
            return self._news[path]
        return self._base.pos()[path]

    def under(self, prefix: str) -> list[str]:
        """Every path starting with `prefix`, sorted; costs the paths found, not the ledger."""
        found = _under(self._base.sorted(), prefix)
        if self._news:
            found += [p for p in self._news if p.startswith(prefix)]
            found.sort()
        return found

    def where(self, prefix: str, key: str, value: Any) -> list[str]:
        """Observed records under `prefix` whose `key` field equals `value` (a record without the
        field has None there), sorted: the customer's own orders, the flights that were cancelled.
        Costs the records found plus the ledger's recent changes, not the ledger."""
        over = self._over
        found = [p for p in self._base.where(prefix, key).get(value, ()) if p not in over]
        extra = [p for p, e in over.items() if p.startswith(prefix) and _matches(_field(e, key), value)]
        if extra:
            found = sorted(found + extra)
        return found

    def with_entries(self, changes: Mapping[str, Entry]) -> "Ledger":
        base = self._base
        over = dict(self._over)
        over.update(changes)
        news = self._news
        for path in changes:
            if path not in base.entries and path not in news:
                if news is self._news:
                    news = dict(news)
                news[path] = len(base.entries) + len(news)
        if len(over) > _overlay_limit(len(base.entries)):
            return Ledger._of(base.merged(over, news), {}, {})
        return Ledger._of(base, over, news)

    def render(self) -> str:
        if self._render is None:
            self._render = _render_views(self, *_overlay_views(self._base, self._over))
        return self._render

    def to_json(self) -> dict[str, Any]:
        """The ledger as plain JSON (for export): path -> value, with stale/stated marks."""
        return {
            p: {"value": e.value, "origin": e.origin, "stale": e.stale, "source_seq": e.source_seq, **({"withheld": True} if e.withheld else {})}
            for p, e in sorted(self.items())
        }


EMPTY = Ledger()


def absorb(
    ledger: Ledger,
    pairs: Iterable[tuple[str, Any]],
    *,
    source_call: str,
    source_seq: int | None,
    withheld: bool = False,
) -> tuple[Ledger, list[LedgerUpdated]]:
    """Record the (path, value) pairs of one successful read. Re-reading clears staleness, and a
    read shown to the model clears `withheld` (the read gate's: see disclosure.py)."""
    return _put(ledger, pairs, "observed", source_call, source_seq, withheld=withheld)


def answered(ledger: Ledger, path: str, value: Any, *, source: str, seq: int | None, quote: str) -> list[LedgerUpdated]:
    """What the customer answered the system (a card, a question: `source`) as an observed fact
    at `path`, with their words."""
    _, updates = absorb(ledger, [(path, value)], source_call=source, source_seq=seq)
    return [u.model_copy(update={"quote": quote}) for u in updates]


def state(
    ledger: Ledger,
    facts: Iterable[tuple[str, Any]],
    *,
    source_call: str,
    source_seq: int | None,
    quotes: Mapping[str, str] | None = None,
) -> tuple[Ledger, list[LedgerUpdated]]:
    """Record what the customer said, under `said.<key>`, with origin "stated" and the words it
    came from (`quotes`, by path)."""
    pairs = [(k if k.startswith(STATED_PREFIX) else STATED_PREFIX + k, v) for k, v in facts]
    return _put(ledger, pairs, "stated", source_call, source_seq, quotes or {})


def _put(
    ledger: Ledger,
    pairs: Iterable[tuple[str, Any]],
    origin: Origin,
    call: str,
    seq: int | None,
    quotes: Mapping[str, str] | None = None,
    withheld: bool = False,
) -> tuple[Ledger, list[LedgerUpdated]]:
    changes: dict[str, Entry] = {}
    updates: list[LedgerUpdated] = []
    for path, value in pairs:
        quote = (quotes or {}).get(path)
        new = _entry(path, value, origin, seq, call, quote, withheld)
        old = changes.get(path) or ledger.get(path)
        if old is None:
            change = "added"
        elif old.text != new.text:
            change = "changed"
        elif old.stale or old.source_seq != seq or old.quote != quote or old.withheld != withheld:
            change = "refreshed"
        else:
            continue
        changes[path] = new
        updates.append(
            LedgerUpdated(
                path=path,
                change=change,
                before=None if old is None else old.value,
                after=value,
                origin=origin,
                source_call=call,
                source_seq=seq,
                quote=quote,
                withheld=True if withheld else None,
            )
        )
    if not changes:
        return ledger, []
    return ledger.with_entries(changes), updates


def mark_stale(
    ledger: Ledger,
    touched: Iterable[str],
    *,
    because: str,
    source_seq: int | None,
    keep: tuple[str, ...] = (),
) -> tuple[Ledger, list[LedgerUpdated]]:
    """Mark every present observed path matched by `touched` as stale (a write or customer action).

    Paths starting with one of `keep` are never marked (session facts such as who is identified)."""
    found: set[str] = set()
    for pattern in touched:
        if pattern.endswith(".*"):
            found.update(ledger.under(pattern[:-1]))
        elif pattern in ledger:
            found.add(pattern)
    changes: dict[str, Entry] = {}
    updates: list[LedgerUpdated] = []
    for path in sorted(found, key=ledger.position):  # the ledger's order, as a scan would find them
        entry = ledger[path]
        if entry.origin != "observed" or entry.stale or (keep and path.startswith(keep)):
            continue
        changes[path] = entry.staled(because)
        updates.append(
            LedgerUpdated(
                path=path,
                change="stale",
                before=entry.value,
                after=entry.value,
                source_call=because,
                source_seq=source_seq,
            )
        )
    if not changes:
        return ledger, []
    return ledger.with_entries(changes), updates


def apply_update(ledger: Ledger, update: LedgerUpdated) -> Ledger:
    """Replay one recorded update: the fold used by replay, `why` and the UI."""
    if update.change == "stale":
        entry = ledger.get(update.path)
        if entry is None:
            return ledger
        return ledger.with_entries(
            {update.path: entry.staled(update.source_call)}
        )
    entry = _entry(
        update.path, update.after, update.origin, update.source_seq, update.source_call, update.quote, bool(update.withheld)
    )
    return ledger.with_entries({update.path: entry})


def render(ledger: Ledger) -> str:
    """The deterministic prompt block: same ledger, same bytes (sorted paths, no timestamps).

    Computed from scratch; `Ledger.render()` gives the same bytes from the shared sorted views."""
    entries = sorted(ledger.values(), key=_key)
    observed = [e for e in entries if e.shown]
    stated = [e for e in entries if e.origin == "stated"]
    lines = [HEADER]
    if not observed:
        lines.append("(empty)")
    current = ledger.get("users.current")
    if current is not None:  # users.current says it already
        observed = [e for e in observed if e.path != f"identified.{current.value}"]
    lines.extend(_line(e) for e in observed)
    if stated:
        lines.append(STATED_HEADER)
        lines.extend(_line(e) for e in stated)
    return "\n".join(lines)


def _render_views(ledger: Ledger, obs: list[str], obs_lines: list[str], st: list[str], st_lines: list[str]) -> str:
    head = [HEADER] if obs else [HEADER, "(empty)"]
    current = ledger.get("users.current")
    if current is not None:  # users.current says it already
        skip = f"identified.{current.value}"
        i = bisect_left(obs, skip)
        if i < len(obs) and obs[i] == skip:
            obs_lines = obs_lines[:i] + obs_lines[i + 1 :]
    tail = [STATED_HEADER, *st_lines] if st_lines else []
    return "\n".join(head + obs_lines + tail)


def _key(entry: Entry) -> str:
    return entry.path

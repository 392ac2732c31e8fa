"""The ledger: a typed store of what the agent has *observed*, separate from the transcript.

`absorb` is the only way observed values enter: it runs on successful read results only. Writes
never update the ledger; they mark the paths they touch as stale (`mark_stale`), so the agent must
read again ("observe, don't assume"). What the customer *said* lives under `said.*` with origin
"stated" and is rendered in its own block: the gate never takes it for observed evidence.

Every operation is a pure function returning a new `Ledger` plus the `LedgerUpdated` events that
describe the change, so replay is a fold and the UI can highlight exactly what moved.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Iterable, Literal, Mapping

from ledger_tui.engine.events import LedgerUpdated
from ledger_tui.engine.serialize import compact

STATED_PREFIX = "said."
HEADER = "[Current Task State]"
STATED_HEADER = "[Stated by the customer (unverified)]"

Origin = Literal["observed", "stated"]


@dataclass(frozen=True, slots=True)
class Entry:
    path: str
    value: Any
    origin: Origin
    source_seq: int | None
    source_call: str
    stale: bool = False
    stale_because: str = ""
    text: str = ""  # compact JSON of `value`, computed once so render stays cheap
    quote: str | None = None  # a stated fact: the customer's words it came from


def _without_nulls(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _without_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_without_nulls(v) for v in value]
    return value


def _entry(path: str, value: Any, origin: Origin, seq: int | None, call: str, quote: str | None = None) -> Entry:
    # The render leaves null fields out (they carry no fact and cost tokens); the stored value and
    # everything the gate reads keep them.
    return Entry(path, value, origin, seq, call, text=compact(_without_nulls(value)), quote=quote)


class Ledger(Mapping[str, Entry]):
    """An immutable mapping path -> Entry. Build new ledgers with `absorb`, `state`, `mark_stale`."""

    __slots__ = ("_entries", "_render")

    def __init__(self, entries: Mapping[str, Entry] | None = None) -> None:
        self._entries: dict[str, Entry] = dict(entries or {})
        self._render: str | None = None

    def __getitem__(self, path: str) -> Entry:
        return self._entries[path]

    def __iter__(self):
        return iter(self._entries)

    def __len__(self) -> int:
        return len(self._entries)

    def fresh(self, path: str) -> Entry | None:
        """The entry at `path` if it is present and not stale."""
        entry = self._entries.get(path)
        return None if entry is None or entry.stale else entry

    def value(self, path: str, default: Any = None) -> Any:
        entry = self._entries.get(path)
        return default if entry is None else entry.value

    def observed(self) -> list[Entry]:
        return [e for e in self._entries.values() if e.origin == "observed"]

    def stated(self) -> list[Entry]:
        return [e for e in self._entries.values() if e.origin == "stated"]

    def with_entries(self, changes: Mapping[str, Entry]) -> "Ledger":
        merged = dict(self._entries)
        merged.update(changes)
        return Ledger(merged)

    def render(self) -> str:
        if self._render is None:
            self._render = render(self)
        return self._render

    def to_json(self) -> dict[str, Any]:
        """The ledger as plain JSON (for export): path -> value, with stale/stated marks."""
        return {
            p: {"value": e.value, "origin": e.origin, "stale": e.stale, "source_seq": e.source_seq}
            for p, e in sorted(self._entries.items())
        }


EMPTY = Ledger()


def absorb(
    ledger: Ledger,
    pairs: Iterable[tuple[str, Any]],
    *,
    source_call: str,
    source_seq: int | None,
) -> tuple[Ledger, list[LedgerUpdated]]:
    """Record the (path, value) pairs of one successful read. Re-reading clears staleness."""
    return _put(ledger, pairs, "observed", source_call, source_seq)


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
) -> tuple[Ledger, list[LedgerUpdated]]:
    changes: dict[str, Entry] = {}
    updates: list[LedgerUpdated] = []
    for path, value in pairs:
        quote = (quotes or {}).get(path)
        new = _entry(path, value, origin, seq, call, quote)
        old = changes.get(path) or ledger.get(path)
        if old is None:
            change = "added"
        elif old.text != new.text:
            change = "changed"
        elif old.stale or old.source_seq != seq or old.quote != quote:
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
            )
        )
    if not changes:
        return ledger, []
    return ledger.with_entries(changes), updates


def matches(template_path: str, path: str) -> bool:
    """`a.b` matches exactly; `a.*` matches every path under `a.`."""
    if template_path.endswith(".*"):
        return path.startswith(template_path[:-1])
    return path == template_path


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
    patterns = list(touched)
    changes: dict[str, Entry] = {}
    updates: list[LedgerUpdated] = []
    for path, entry in ledger.items():
        if entry.origin != "observed" or entry.stale or (keep and path.startswith(keep)):
            continue
        if any(matches(p, path) for p in patterns):
            changes[path] = replace(entry, stale=True, stale_because=because)
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
            {update.path: replace(entry, stale=True, stale_because=update.source_call)}
        )
    entry = _entry(update.path, update.after, update.origin, update.source_seq, update.source_call, update.quote)
    return ledger.with_entries({update.path: entry})


def render(ledger: Ledger) -> str:
    """The deterministic prompt block: same ledger, same bytes (sorted paths, no timestamps)."""
    lines = [HEADER]
    observed = sorted((e for e in ledger._entries.values() if e.origin == "observed"), key=_key)
    stated = sorted((e for e in ledger._entries.values() if e.origin == "stated"), key=_key)
    if not observed:
        lines.append("(empty)")
    current = ledger._entries.get("users.current")
    if current is not None:  # users.current says it already
        observed = [e for e in observed if e.path != f"identified.{current.value}"]
    for e in observed:
        mark = "  # STALE: read it again" if e.stale else ""
        lines.append(f"{e.path} = {e.text}{mark}")
    if stated:
        lines.append(STATED_HEADER)
        lines.extend(f"{e.path} = {e.text}" for e in stated)
    return "\n".join(lines)


def _key(entry: Entry) -> str:
    return entry.path

"""Search over a trajectory: which steps mention a text, in which pane, and what they say there.

Finding "insurance" or a reservation id in a 300-step replay should not mean stepping through it.
This reads events only, never widgets (and imports no Textual), so replay and play find the same
things and what a search finds is tested without a screen. Each event is one step and belongs to
one pane: what the customer and the agent said, the calls (name and arguments), their results,
cards and questions in the conversation; each ledger update's path and value in the ledger, as of
the step that recorded it; each decision's call, verdict, failed checks and reason in the gate log.
Matching is a case-insensitive substring.
"""

from __future__ import annotations

import json
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from functools import cached_property
from itertools import islice
from typing import Literal, Sequence

from ledger_tui.engine.events import (
    AssistantMessage,
    ConfirmationAnswered,
    ConfirmationRequested,
    Event,
    GateDecided,
    HelperCall,
    LedgerUpdated,
    Notice,
    QuestionAnswered,
    QuestionRequested,
    Refusal,
    ToolCallProposed,
    ToolResult,
    UserMessage,
)
from ledger_tui.engine.store.serialize import compact

Pane = Literal["conversation", "ledger", "gate"]
PANE_NAMES: dict[str, str] = {"conversation": "Chat", "ledger": "Ledger", "gate": "Gate"}  # as the footer names them
SNIPPET = 80  # characters of context a hit shows, at most
BEFORE = 24  # of them, before the match

WHO = {"assistant": "agent", "operator": "operator", "user": "customer"}


@dataclass(frozen=True)
class Entry:
    """What one event offers a search: its pane, a short name for where it is, and its text."""

    step: int  # the event's index in the list searched (the replay cursor counts these)
    seq: int
    pane: Pane
    where: str  # "customer", "agent", "call get_reservation_details", "reservations.VY0QX8", "cancel_reservation"
    text: str
    path: str = ""  # a ledger update's path


@dataclass(frozen=True)
class Hit:
    """One step that matches: where, how many times, and the text around the first match."""

    step: int
    seq: int
    pane: Pane
    where: str
    snippet: str
    count: int
    path: str = ""


def entry(step: int, event: Event) -> Entry | None:
    """The searchable text of one event, or None for events no pane shows (tokens, session lines)."""
    seq = event.seq
    if isinstance(event, UserMessage):
        return Entry(step, seq, "conversation", "customer", event.text)
    if isinstance(event, AssistantMessage):
        if not event.text.strip():  # its calls are searched as the calls they propose
            return None
        return Entry(step, seq, "conversation", "agent (operator)" if event.author == "operator" else "agent", event.text)
    if isinstance(event, ToolCallProposed):
        call = event.call
        return Entry(step, seq, "conversation", f"{WHO.get(call.requestor, call.requestor)} call", call.signature())
    if isinstance(event, ToolResult):
        head = "feedback" if not event.executed else ("error" if event.error else "result")
        return Entry(step, seq, "conversation", f"{head} of {event.name}", event.content)
    if isinstance(event, Refusal):
        return Entry(step, seq, "conversation", "refusal", event.text)
    if isinstance(event, ConfirmationRequested):
        lines = [line.action for line in event.lines] + [d for line in event.lines for d in line.details]
        return Entry(step, seq, "conversation", f"card {event.card}", "\n".join([event.text, *lines]))
    if isinstance(event, ConfirmationAnswered):
        return Entry(step, seq, "conversation", f"card answered {event.answer}", "\n".join(t for t in (event.quote, event.reason) if t))
    if isinstance(event, QuestionRequested):
        choices = [c.label for c in event.choices]
        return Entry(step, seq, "conversation", f"question about {event.record}", "\n".join([event.text, *choices]))
    if isinstance(event, QuestionAnswered):
        return Entry(step, seq, "conversation", "question answered", "\n".join(t for t in (event.quote, event.reason) if t))
    if isinstance(event, Notice):
        return Entry(step, seq, "conversation", event.level, event.text)
    if isinstance(event, HelperCall):
        return Entry(step, seq, "conversation", f"IRMA {event.helper} helper", event.output)
    if isinstance(event, LedgerUpdated):
        value = "STALE" if event.change == "stale" else compact(event.after)
        return Entry(step, seq, "ledger", event.path, f"{event.path} {value}", path=event.path)
    if isinstance(event, GateDecided):
        return Entry(step, seq, "gate", event.decision.call.name, decision_text(event))
    return None


def decision_text(decided: GateDecided) -> str:
    """A decision as one text: the call, the verdict, the failed checks and the reasons (what the
    gate log's row and the line under it say; also what `c` copies there)."""
    d = decided.decision
    failed = d.failed()
    lines = [f"{d.call.signature()} → {d.shown_verdict()}"]
    if failed:
        lines.append(f"failed: {', '.join(p.name for p in failed)}")
    if d.reason:
        lines.append(f"reason: {d.reason}")
    lines += [f"{p.name}: {p.reason}" for p in failed if p.reason and p.reason != d.reason]
    return "\n".join(lines)


def snippet(text: str, start: int, length: int) -> str:
    """The text around `text[start:start + length]` on one line, "…" where it is cut."""
    width = max(SNIPPET, length + BEFORE)
    right = min(len(text), max(start, BEFORE) - BEFORE + width)
    left = max(0, right - width)  # near the end: the room before the match is used
    cut = " ".join(text[left:right].split())
    return ("…" if left else "") + cut + ("…" if right < len(text) else "")


class SearchIndex:
    """Every event's searchable text, worked out once; `catch_up` adds the events that came since
    (play's list grows while the search is open)."""

    def __init__(self, events: Sequence[Event] = ()) -> None:
        self._entries: list[tuple[Entry, str]] = []
        self._seen = 0
        self.catch_up(events)

    def catch_up(self, events: Sequence[Event]) -> None:
        if len(events) <= self._seen:
            return
        for step, event in enumerate(islice(events, self._seen, None), self._seen):  # (a lazy read's: one scan)
            found = entry(step, event)
            if found is not None:
                self._entries.append((found, found.text.lower()))
        self._seen = max(self._seen, len(events))

    def find(self, query: str) -> Found:
        """The steps whose text holds `query` (case-insensitive; surrounding blanks ignored)."""
        wanted = query.strip().lower()
        if not wanted:
            return Found(query.strip(), ())
        hits = []
        for found, folded in self._entries:
            at = folded.find(wanted)
            if at < 0:
                continue
            # lowercasing keeps the length for all but a few letters (İ): then the snippet starts at 0
            start = at if len(folded) == len(found.text) else 0
            hits.append(Hit(found.step, found.seq, found.pane, found.where, snippet(found.text, start, len(wanted)), folded.count(wanted), found.path))
        return Found(query.strip(), tuple(hits))


def search(events: Sequence[Event], query: str) -> Found:
    """One search over `events` (an index built for it and dropped)."""
    return SearchIndex(events).find(query)


@dataclass(frozen=True)
class Found:
    """The hits of one query, one per step, in step order."""

    query: str
    hits: tuple[Hit, ...]

    @cached_property
    def steps(self) -> list[int]:
        return [h.step for h in self.hits]

    @property
    def matches(self) -> int:
        """Occurrences in all (a step can say it more than once)."""
        return sum(h.count for h in self.hits)

    def by_pane(self) -> dict[str, int]:
        """Occurrences per pane, in the panes' order, panes without any left out."""
        counts = {pane: 0 for pane in PANE_NAMES}
        for h in self.hits:
            counts[h.pane] += h.count
        return {pane: n for pane, n in counts.items() if n}

    def at(self, step: int) -> int | None:
        """The position of the hit at `step` among the hits, if that step is one."""
        i = bisect_left(self.steps, step)
        return i if i < len(self.hits) and self.hits[i].step == step else None

    def next_after(self, step: int, forward: bool = True) -> tuple[Hit, bool] | None:
        """The first hit after `step` (forward) or the last before it, and whether that wrapped
        around the end; None when nothing matches."""
        if not self.hits:
            return None
        steps = self.steps
        if forward:
            i = bisect_right(steps, step)
            return (self.hits[i], False) if i < len(steps) else (self.hits[0], True)
        i = bisect_left(steps, step)
        return (self.hits[i - 1], False) if i else (self.hits[-1], True)

    def summary(self, current: Hit | None = None, wrapped: bool = False) -> str:
        """One line for the search bar: which hit of how many, in how many steps and panes, and
        what the current one says; or that nothing matches."""
        if not self.query:
            return "type to search the conversation, the ledger and the gate log"
        quoted = json.dumps(self.query, ensure_ascii=False)
        if not self.hits:
            return f"no match for {quoted}"
        k = len(self.hits)
        panes = ", ".join(f"{PANE_NAMES[p]} {n}" for p, n in self.by_pane().items())
        counts = f"{self.matches} match{'es' if self.matches != 1 else ''}: {panes}"
        position = self.at(current.step) if current is not None else None
        if current is None or position is None:
            return f"{quoted}: {k} step{'s' if k != 1 else ''} · {counts} · Enter: next"
        again = " (wrapped)" if wrapped else ""
        # what a narrow bar cuts comes last: the counts, then the text around the match
        return f"hit {position + 1} of {k} step{'s' if k != 1 else ''}{again} · step {current.step} {PANE_NAMES[current.pane]} {current.where} · {counts} · {current.snippet}"

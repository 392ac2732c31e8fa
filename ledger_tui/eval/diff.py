"""Compare two runs of one task: where did they part?

It is the first question an evaluation raises (baseline against full, trial 0 against trial 3).
A run is cut into *turns*: each customer message opens one, and everything up to the next belongs
to it (turn 0 holds what came before the first, a greeting or the operator's calls). Two turns are
the same when they make the same calls (who asked, tool, arguments), the gate gives the same
verdicts and the ledger changes the same way (path, kind of change, value). Wording is shown,
never counted: two models, or two trials of one, say the same thing differently; so are the facts
the ledger reads from the customer's words (`said.*`), which follow the wording. The runs diverge
at the first turn that is not the same, and are lined up turn by turn from there.

Both files are read as every command reads them (`store.read_trajectory`); nothing is re-run.
`ledger-tui diff` prints `diff_lines`; the TUI's diff screen draws the same `RunDiff`.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.events import (
    Event,
    GateDecided,
    GateDecision,
    LedgerUpdated,
    SessionEnded,
    ToolCall,
    ToolCallProposed,
    ToolResult,
    UserMessage,
    agent_text,
)
from ledger_tui.engine.store.trajectories import LoadedTrajectory, read_trajectory
from ledger_tui.eval.regress import _verdict as unjudged_word


class DiffError(LedgerTuiError):
    """Two runs `diff` cannot compare."""


@dataclass(frozen=True)
class CallMade:
    """One call of a turn and what came of it: `read`, `ran`, `error`, `not run`, the gate's
    verdict as a narrow row tags it (`REVISE · card`), or `(no gate)` for a write of an ungated mode."""

    call: ToolCall
    kind: str
    outcome: str
    verdict: str | None = None  # the gate's verdict as shown (ALLOW, REVISE, BLOCK, WITHHELD); None: not judged

    def key(self) -> tuple[str, str, str]:
        return (self.call.requestor, self.call.name, _canonical(self.call.arguments))

    def signature(self) -> str:
        who = {"user": "customer: ", "operator": "operator: "}.get(self.call.requestor, "")
        return who + self.call.signature()


@dataclass(frozen=True)
class LedgerChange:
    path: str
    change: str  # added, changed, refreshed, stale
    value: str  # the value after, as canonical JSON
    stated: bool = False  # a fact read from the customer's words (`said.*`): wording, not counted

    def key(self) -> tuple[str, str, str]:
        return (self.path, self.change, self.value)


@dataclass(frozen=True)
class Turn:
    """One customer message and what followed it, up to the next."""

    number: int  # 0: before the first customer message
    first: int  # index of its first event (the customer message), for `replay --step`
    last: int  # index of its last event
    customer: str = ""
    agent: tuple[str, ...] = ()  # what the agent side said: messages, refusals, cards, questions
    calls: tuple[CallMade, ...] = ()
    ledger: tuple[LedgerChange, ...] = ()

    def verdicts(self) -> tuple[tuple[tuple[str, str, str], str], ...]:
        return tuple((c.key(), c.verdict) for c in self.calls if c.verdict is not None)

    def differences(self, other: Turn | None) -> list[str]:
        """What makes this turn and `other` not the same: `calls`, `verdicts`, `ledger`."""
        if other is None:
            return ["calls", "verdicts", "ledger"]
        found = []
        if [c.key() for c in self.calls] != [c.key() for c in other.calls]:
            found.append("calls")
        if self.verdicts() != other.verdicts():
            found.append("verdicts")
        if [c.key() for c in self.observed()] != [c.key() for c in other.observed()]:
            found.append("ledger")
        return found

    def observed(self) -> tuple[LedgerChange, ...]:
        """The ledger changes that count: every one but the facts read from the customer's words."""
        return tuple(c for c in self.ledger if not c.stated)

    def worded_differently(self, other: Turn) -> bool:
        """Said otherwise: the customer's or the agent's words, or what was read from the customer's."""
        stated = [c.key() for c in self.ledger if c.stated] != [c.key() for c in other.ledger if c.stated]
        return self.customer != other.customer or self.agent != other.agent or stated

    @property
    def empty(self) -> bool:
        return not (self.customer or self.agent or self.calls or self.ledger)


@dataclass(frozen=True)
class Run:
    """One side of a comparison: the file and what its first and last events say of it."""

    path: Path
    events: list[Event]
    turns: list[Turn]
    domain: str | None
    task_id: str | None
    mode: str
    model: str
    reward: float | None
    ended: str | None  # session_ended's reason; None when the file has no end
    db_digest: str | None


@dataclass(frozen=True)
class TurnPair:
    """Turn `number` of both runs (None on a side that has no such turn)."""

    number: int
    a: Turn | None
    b: Turn | None
    differs: tuple[str, ...]  # calls, verdicts, ledger; empty: the same
    worded: bool  # the same, but worded differently

    @property
    def same(self) -> bool:
        return not self.differs


@dataclass(frozen=True)
class RunDiff:
    a: Run
    b: Run
    pairs: list[TurnPair]  # turn 0 only when either run has something before its first customer message
    warnings: list[str] = field(default_factory=list)

    @property
    def divergence(self) -> TurnPair | None:
        """The first pair that is not the same; None when the runs never diverge."""
        return next((p for p in self.pairs if not p.same), None)

    @property
    def same_before(self) -> int:
        """Turns the same before the divergence (all of them when there is none)."""
        d = self.divergence
        return sum(1 for p in self.pairs if d is None or p.number < d.number)


def _canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)


def turns(events: Sequence[Event], mode: str = "") -> list[Turn]:
    """The turns of a run, turn 0 first (possibly empty)."""
    decided: dict[str, GateDecision] = {}
    results: dict[str, ToolResult] = {}
    for e in events:
        if isinstance(e, GateDecided):
            decided.setdefault(e.decision.call.id, e.decision)
        elif isinstance(e, ToolResult):
            results.setdefault(e.call_id, e)
    out: list[Turn] = []
    number, first, customer = 0, 0, ""
    agent: list[str] = []
    calls: list[CallMade] = []
    ledger: list[LedgerChange] = []

    def close(last: int) -> None:
        out.append(Turn(number, first, last, customer, tuple(agent), tuple(calls), tuple(ledger)))

    for i, e in enumerate(events):
        if isinstance(e, UserMessage):
            close(i - 1)
            number, first, customer = number + 1, i, e.text
            agent, calls, ledger = [], [], []
        elif isinstance(e, ToolCallProposed):
            calls.append(_made(e, decided.get(e.call.id), results.get(e.call.id), mode))
        elif isinstance(e, LedgerUpdated):
            ledger.append(LedgerChange(e.path, e.change, _canonical(e.after), stated=e.origin == "stated"))
        else:
            said = agent_text(e)
            if said:
                agent.append(said)
    close(len(events) - 1)
    return out


def _made(proposed: ToolCallProposed, decision: GateDecision | None, result: ToolResult | None, mode: str) -> CallMade:
    from ledger_tui.explain import verdict_tag

    if decision is not None:
        return CallMade(proposed.call, proposed.kind, verdict_tag(decision), decision.shown_verdict())
    if proposed.kind == "write" and proposed.call.requestor != "user":
        outcome = unjudged_word(None, mode)
        if result is not None and result.error:
            outcome += " error"
    elif result is None:
        outcome = "no result"
    elif result.error:
        outcome = "error"
    elif not result.executed:
        outcome = "not run"
    else:
        outcome = "read" if proposed.kind == "read" else "ran"
    return CallMade(proposed.call, proposed.kind, outcome)


def _run(loaded: LoadedTrajectory) -> Run:
    events = loaded.events
    started = loaded.started
    ended = next((e for e in reversed(events) if isinstance(e, SessionEnded)), None)
    mode = started.mode if started else ""
    reward = ended.reward if ended is not None else None
    if reward is None:
        reward = reward_in_folder(loaded.path)
    return Run(
        loaded.path, events, turns(events, mode),
        domain=started.domain if started else None, task_id=started.task_id if started else None,
        mode=mode or "unknown", model=started.model if started else "unknown", reward=reward,
        ended=ended.reason if ended is not None else None, db_digest=ended.db_digest if ended is not None else None,
    )


def reward_in_folder(path: Path) -> float | None:
    """The reward `eval` recorded for the trajectory at `path` in the results.jsonl of its output
    folder (`OUT/trajectories/<domain>/<mode>/<file>`); None when there is none, or it cannot be read."""
    from ledger_tui.eval.report import TrajectoryFinder
    from ledger_tui.eval.results import RESULTS, read_results_file

    parents = Path(path).resolve().parents
    if len(parents) < 4 or parents[2].name != "trajectories":
        return None
    folder = parents[3]
    if not (folder / RESULTS).is_file():
        return None
    try:
        results, _ = read_results_file(folder)
        wanted = Path(path).resolve()
        finder = TrajectoryFinder(folder)
        for r in results:
            found, exists = finder.find(str(r.trajectory), r.domain, r.mode, r.task_id, r.trial)
            if exists and found.resolve() == wanted:
                return r.reward
    except (LedgerTuiError, OSError):
        return None
    return None


def compare(a: LoadedTrajectory, b: LoadedTrajectory) -> RunDiff:
    """Line up two runs turn by turn. Runs of different domains are refused (`DiffError`); runs of
    different tasks are compared, with a warning."""
    ra, rb = _run(a), _run(b)
    if ra.domain and rb.domain and ra.domain != rb.domain:
        raise DiffError(
            f"{a.path.name} is a run of the {ra.domain} domain and {b.path.name} of {rb.domain}; "
            f"diff compares two runs of one domain, so pass two {ra.domain} trajectories."
        )
    warnings = [*a.warnings, *b.warnings]
    if ra.task_id and rb.task_id and ra.task_id != rb.task_id:
        warnings.append(
            f"{a.path.name} is a run of task {ra.task_id} and {b.path.name} of task {rb.task_id}; "
            "they are compared turn by turn all the same."
        )
    pairs = []
    for n in range(max(len(ra.turns), len(rb.turns))):
        ta = ra.turns[n] if n < len(ra.turns) else None
        tb = rb.turns[n] if n < len(rb.turns) else None
        if n == 0 and (ta is None or ta.empty) and (tb is None or tb.empty):
            continue  # nothing before the first customer message on either side
        first, other = (ta, tb) if ta is not None else (tb, ta)
        assert first is not None
        differs = tuple(first.differences(other))
        worded = not differs and other is not None and first.worded_differently(other)
        pairs.append(TurnPair(n, ta, tb, differs, worded))
    return RunDiff(ra, rb, pairs, warnings)


def diff_files(a: Path, b: Path) -> RunDiff:
    """Read both trajectories (one sentence if either is unusable) and compare them."""
    return compare(read_trajectory(a), read_trajectory(b))


# ----------------------------------------------------------------------------- words


def reward_word(reward: float | None) -> str:
    if reward is None:
        return "no reward recorded"
    return f"reward {reward:g} ({'passed' if reward >= 1.0 - 1e-6 else 'failed'})"


def run_line(run: Run) -> str:
    """`airline · mode full · model gold · reward 1 (passed)`."""
    return f"{run.domain or 'domain unknown'} · mode {run.mode} · model {run.model} · {reward_word(run.reward)}"


def turn_summary(turn: Turn | None) -> str:
    """A turn in a few words: `3 reads, cancel_reservation BLOCK`; `says only`; `—` (no such turn)."""
    if turn is None:
        return "—"
    reads = sum(1 for c in turn.calls if c.outcome == "read")
    parts = [f"{reads} read{'s' if reads != 1 else ''}"] if reads else []
    for c in turn.calls:
        if c.outcome != "read":
            who = "customer " if c.call.requestor == "user" else ""
            parts.append(f"{who}{c.call.name} {c.outcome}")
    if parts:
        return ", ".join(parts)
    return "says only" if turn.agent else ("no answer" if turn.customer else "nothing")


def _one_line(text: str) -> str:
    return _BREAKS.sub(" ", text).strip()


_BREAKS = re.compile(r"\s*[\r\n\t]+\s*")


def cut(text: str, room: int) -> str:
    """`text` on one line in `room` columns, ending in "…" only when cut."""
    text = _one_line(text)
    return text if len(text) <= room else text[: max(room - 1, 0)] + "…"


def ledger_differences(a: Turn | None, b: Turn | None) -> list[tuple[str, str, str]]:
    """(path, A's changes, B's changes) for every path the two turns change differently, in the
    order they first change it: `reservations.VY0QX8`, `—`, `stale`. Facts read from the
    customer's words are left out (they are wording)."""
    def by_path(turn: Turn | None) -> dict[str, list[LedgerChange]]:
        found: dict[str, list[LedgerChange]] = {}
        for c in turn.observed() if turn is not None else ():
            found.setdefault(c.path, []).append(c)
        return found

    pa, pb = by_path(a), by_path(b)
    rows = []
    for path in dict.fromkeys([*pa, *pb]):
        ca, cb = pa.get(path, []), pb.get(path, [])
        if [c.key() for c in ca] == [c.key() for c in cb]:
            continue
        wa = ", ".join(c.change for c in ca) or "—"
        wb = ", ".join(c.change for c in cb) or "—"
        if wa == wb:
            wa, wb = f"{wa} (a value)", f"{wb} (another)"
        rows.append((path, wa, wb))
    return rows


LABEL = 10  # the label column: "diverges  "
LEGEND = "= the same   ~ the same, worded differently   ≠ differs   » where they diverge"


def diff_lines(d: RunDiff, width: int = 80, most: int = 8) -> list[str]:
    """The summary `ledger-tui diff` prints, `width` columns but for file paths (printed whole):
    both runs, the turns the same, the divergence and what differs there, then every turn side by
    side. At most `most` calls a side and ledger paths are listed at the divergence."""
    room = width - LABEL
    lines = [f"{'A':<{LABEL}}{d.a.path}", f"{'':<{LABEL}}{cut(run_line(d.a), room)}",
             f"{'B':<{LABEL}}{d.b.path}", f"{'':<{LABEL}}{cut(run_line(d.b), room)}"]
    lines += _task_lines(d)
    na = sum(1 for p in d.pairs if p.a is not None)
    nb = sum(1 for p in d.pairs if p.b is not None)
    div = d.divergence
    counts = f"{na} on each side" if na == nb else f"A {na}, B {nb}"
    if div is None:
        lines.append(f"{'turns':<{LABEL}}{counts}, all the same: the runs do not diverge")
        worded = [str(p.number) for p in d.pairs if p.worded]
        if worded:
            lines.append(f"{'':<{LABEL}}{cut('worded differently: turn' + ('s ' if len(worded) > 1 else ' ') + ', '.join(worded), room)}")
    else:
        same = d.same_before
        lines.append(f"{'turns':<{LABEL}}{counts}; {same} the same before they diverge")
        lines += _divergence_lines(d, div, width, most)
    lines.append(f"{'end':<{LABEL}}{cut(_end_words(d), room)}")
    lines.append("")
    lines += pair_lines(d, width)
    return lines


def _task_lines(d: RunDiff) -> list[str]:
    """The task, whole (an id is searched for, as a path is): once when both runs share it."""
    if d.a.task_id == d.b.task_id:
        return [f"{'task':<{LABEL}}{d.a.task_id or 'none named'}"]
    return [f"{'task':<{LABEL}}A {d.a.task_id or 'none named'}", f"{'':<{LABEL}}B {d.b.task_id or 'none named'}"]


def _end_words(d: RunDiff) -> str:
    a, b = d.a.ended or "no end recorded", d.b.ended or "no end recorded"
    ends = f"both: {a}" if a == b else f"A {a}, B {b}"
    if d.a.db_digest is None or d.b.db_digest is None:
        return ends
    same = d.a.db_digest == d.b.db_digest
    return f"{ends}; {'the same final database' if same else 'the final databases differ'}"


def _divergence_lines(d: RunDiff, div: TurnPair, width: int, most: int) -> list[str]:
    pad = " " * LABEL
    room = width - LABEL
    at = ", ".join(f"{side} step {t.first}" for side, t in (("A", div.a), ("B", div.b)) if t is not None)
    only = "" if div.a is not None and div.b is not None else f"; only {'A' if div.a is not None else 'B'} has it"
    lines = [f"{'diverges':<{LABEL}}{cut(f'at turn {div.number} ({at}): {_and(div.differs)}{only}', room)}"]
    ta, tb = div.a, div.b
    if ta is not None and tb is not None and ta.customer == tb.customer:
        if ta.customer:
            lines.append(f"{'customer':<{LABEL}}{cut(ta.customer, room)}")
    else:
        lines += _sided("customer", [(s, t.customer or "(before the first message)") for s, t in (("A", ta), ("B", tb)) if t is not None], width)
    if "calls" not in div.differs and ta is not None and tb is not None:
        lines.append(f"{'calls':<{LABEL}}the same {len(ta.calls)} on both sides")
        label = "verdicts" if "verdicts" in div.differs else "outcomes"
        unlike = [(ca, cb) for ca, cb in zip(ta.calls, tb.calls) if ca.outcome != cb.outcome]
        for i, (ca, cb) in enumerate(unlike[:most]):
            tail = f"  A {ca.outcome}  B {cb.outcome}"
            lines.append(f"{(label if i == 0 else ''):<{LABEL}}{cut(ca.signature(), room - len(tail)):<{room - len(tail)}}{tail}")
        if len(unlike) > most:
            lines.append(f"{pad}… and {len(unlike) - most} more")
    else:
        for side, turn in (("A", ta), ("B", tb)):
            head = f"calls {side}"
            calls = turn.calls if turn is not None else ()
            if turn is None:
                lines.append(f"{head:<{LABEL}}(no such turn)")
                continue
            if not calls:
                lines.append(f"{head:<{LABEL}}none")
            for i, c in enumerate(calls[:most]):
                tail = f"  {c.outcome}"
                lines.append(f"{head if i == 0 else '':<{LABEL}}{cut(c.signature(), room - len(tail)):<{room - len(tail)}}{tail}")
            if len(calls) > most:
                lines.append(f"{pad}… and {len(calls) - most} more")
    changed = ledger_differences(ta, tb)
    for i, (path, wa, wb) in enumerate(changed[:most]):
        tail = f"  A {wa}  B {wb}"
        lines.append(f"{'ledger' if i == 0 else '':<{LABEL}}{cut(path, room - len(tail)):<{room - len(tail)}}{cut(tail, room)}")
    if len(changed) > most:
        lines.append(f"{pad}… and {len(changed) - most} more paths")
    said_a = ta.agent[0] if ta is not None and ta.agent else ""
    said_b = tb.agent[0] if tb is not None and tb.agent else ""
    if (said_a or said_b) and said_a != said_b:
        lines += _sided("agent", [("A", said_a or "(says nothing)"), ("B", said_b or "(says nothing)")], width)
    elif said_a:
        lines.append(f"{'agent':<{LABEL}}{cut(said_a, room)}")
    return lines


def _sided(label: str, items: list[tuple[str, str]], width: int) -> list[str]:
    return [f"{label if i == 0 else '':<{LABEL}}{side} {cut(text, width - LABEL - 2)}" for i, (side, text) in enumerate(items)]


def _and(words: Sequence[str]) -> str:
    words = list(words)
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def mark(pair: TurnPair, divergence: TurnPair | None) -> str:
    if pair is divergence:
        return "»"
    return "≠" if not pair.same else "~" if pair.worded else "="


def pair_lines(d: RunDiff, width: int = 80) -> list[str]:
    """Every turn side by side: a mark, the turn's number, each side in a few words."""
    column = (width - 6) // 2
    div = d.divergence
    lines = [f"turn {cut('A ' + d.a.mode, column):<{column}} {cut('B ' + d.b.mode, column)}"]
    for p in d.pairs:
        lines.append(f"{mark(p, div)}{p.number:>3} {cut(turn_summary(p.a), column):<{column}} {cut(turn_summary(p.b), column)}".rstrip())
    lines.append(cut(LEGEND, width))
    return lines

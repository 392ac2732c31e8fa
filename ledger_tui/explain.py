"""Plain-text explanations of gate decisions, from the recorded evidence alone.

Used by `ledger-tui why`; the TUI's Why screen shows the same facts in widgets. Nothing is
re-run: a decision is explained by what the gate recorded when it decided.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

from ledger_tui.engine.domain import clause_text
from ledger_tui.engine.events import Event, GateDecided, Verdict


def plural(n: int, word: str, many: str | None = None) -> str:
    """`1 write`, `2 writes`."""
    return f"{n} {word if n == 1 else (many or word + 's')}"


def short(value: Any, limit: int = 160) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def explain_decision(event: GateDecided, policy: str | None = None, only_failed: bool = False) -> list[str]:
    d = event.decision
    lines = [
        f"step {event.seq}: {d.call.signature()}  [{d.call.requestor}]",
        f"  verdict: {d.verdict.value} — {d.reason}",
    ]
    if d.hint:
        lines.append(f"  hint: {d.hint}")
    for s in d.suggested_calls:
        lines.append(f"  suggested read: {s.signature()}")
    lines.append("  predicates:")
    for p in d.predicates:
        if only_failed and p.passed:
            continue
        mark = "pass" if p.passed else f"FAIL→{p.verdict_on_fail.value}"
        lines.append(f"    [{mark}] {p.name}  (clause {p.clause})")
        if not p.passed and p.reason:
            lines.append(f"        reason: {p.reason}")
        for r in p.reads:
            if r.origin == "context":
                lines.append(f"        context {r.path[len('context.'):]} = {short(r.value, 100)}")
                continue
            if not r.present:
                lines.append(f"        read {r.path}: not in the ledger")
                continue
            where = f"read at step {r.source_seq}" if r.source_seq is not None else "read"
            if r.source_call and r.origin == "observed":
                where += f" by {r.source_call}"
            if r.origin == "stated":
                where = f"stated by the customer at step {r.source_seq}"
            stale = " (STALE)" if r.stale else ""
            lines.append(f"        {r.path}{stale} = {short(r.value)}")
            lines.append(f"            {where}")
        if policy and not p.passed:
            text = clause_text(policy, p.clause)
            if text:
                lines.append(f"        policy: {text}")
    return lines


def decisions(events: Iterable[Event], verdicts: Iterable[Verdict] = (Verdict.REVISE, Verdict.BLOCK)) -> list[GateDecided]:
    wanted = set(verdicts)
    return [e for e in events if isinstance(e, GateDecided) and e.decision.verdict in wanted]

"""Per-mode summaries of an evaluation, and a pass^k-vs-k plot drawn with plain characters."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from ledger_tui.eval.passk import pass_k_curve
from ledger_tui.eval.ordering import mode_key
from ledger_tui.eval.tables import WIDTH, Column, cell, new_table, number
from ledger_tui.eval.tables import lines as rendered
from ledger_tui.eval.results import TrialResult


@dataclass
class ModeSummary:
    mode: str
    tasks: int
    trials: int  # trials per task (the most any task had counted)
    infrastructure_errors: int
    pass_k: dict[int, float]
    average_reward: float
    per_run: dict[str, float] = field(default_factory=dict)
    paper: list[dict] = field(default_factory=list)  # this mode's rows of the paper's table (paper.py)
    token_overhead: dict | None = None  # against baseline, over the runs finished in both
    runs: int = 0  # runs counted in pass^k (all but infrastructure errors)
    consent: str | None = None  # how consent was observed in the mode's runs (gated modes)
    out_of_scope: int = 0  # runs the customer simulator ended as out of scope


def summarize(results: Iterable[TrialResult]) -> list[ModeSummary]:
    by_mode: dict[str, list[TrialResult]] = defaultdict(list)
    for r in results:
        by_mode[r.mode].append(r)
    out = []
    for mode in sorted(by_mode, key=mode_key):
        runs = by_mode[mode]
        counted = [r for r in runs if not r.infrastructure_error]
        outcomes: dict[str, list[bool]] = defaultdict(list)
        for r in counted:
            outcomes[r.task_id].append(r.passed)
        n = max(1, len(counted))
        per_run = {
            key: sum(getattr(r, key) for r in counted) / n
            for key in (
                "prompt_tokens",
                "ledger_tokens",
                "transcript_tokens",
                "policy_tokens",
                "completion_tokens",
                "model_calls",
                "allow",
                "revise",
                "block",
                "revise_exhausted",
                "helper_calls",
                "helper_prompt_tokens",
                "helper_completion_tokens",
                "held",
                "cards",
                "questions",
            )
        }
        consents = sorted({r.consent for r in counted if r.consent})
        out.append(
            ModeSummary(
                mode=mode,
                tasks=len(outcomes),
                trials=max((len(v) for v in outcomes.values()), default=0),
                runs=len(counted),
                infrastructure_errors=len(runs) - len(counted),
                pass_k=pass_k_curve(outcomes),
                average_reward=sum(r.reward for r in counted) / n,
                per_run=per_run,
                consent="/".join(consents) or None,
                out_of_scope=sum(r.out_of_scope for r in counted),
            )
        )
    return out


def shown_ks(ks: list[int], room: int) -> list[int]:
    """The k to show in `room` columns: all if they fit, else 1, the powers of two and the last."""
    room = max(room, 1)  # (the last k at least)
    if len(ks) <= room:
        return ks
    keep = [k for k in ks if k == ks[-1] or k & (k - 1) == 0]
    while len(keep) > room:
        keep.pop(-2)
    return keep


def k_ranges(ks: list[int]) -> str:
    """Sorted numbers as text, each run of four or more as its ends: 3, 5, 6, 7, 9–15."""
    out: list[str] = []
    start = 0
    for i in range(1, len(ks) + 1):
        if i == len(ks) or ks[i] != ks[i - 1] + 1:
            run = ks[start:i]
            out += [f"{run[0]}–{run[-1]}"] if len(run) >= 4 else [str(k) for k in run]
            start = i
    return ", ".join(out)


def table(summaries: list[ModeSummary], wide: bool = False) -> list[str]:
    if not summaries:
        return ["no results"]
    ks = sorted({k for s in summaries for k in s.pass_k})
    fixed = 9 + 6 + 6 + 6 + 8  # mode, tasks, runs, infra, reward
    shown = ks if wide else shown_ks(ks, (WIDTH - fixed) // 9)
    # columns a space apart, each a space wider than its label (pass^100 and up: as wide)
    passes = new_table(
        Column("mode", no_wrap=True), number("tasks", 5), number("runs", 5), number("infra", 5),
        *(number(f"pass^{k}", 7) for k in shown), number("reward", 7), padding=(0, 0),
    )
    for s in summaries:
        passes.add_row(
            cell(s.mode), str(s.tasks), str(s.runs), str(s.infrastructure_errors),
            *(f"{s.pass_k.get(k, float('nan')):.3f}" for k in shown), f"{s.average_reward:.3f}",
        )
    lines = rendered(passes, wide)
    if shown != ks:
        lines.append(f"(pass^k for k = {k_ranges([k for k in ks if k not in shown])}: --wide, or summary.json)")
    lines.append("")
    costs = new_table(
        Column("per run", no_wrap=True),
        *(number(head, 6) for head in ("prompt", "ledger", "trans", "policy", "compl")), number("calls", 5),
        *(number(head, 6) for head in ("ALLOW", "REVISE", "BLOCK")), number("loops", 5), padding=(0, 0),
    )
    for s in summaries:
        p = s.per_run
        costs.add_row(
            cell(s.mode),
            *(f"{p[key]:.0f}" for key in ("prompt_tokens", "ledger_tokens", "transcript_tokens", "policy_tokens", "completion_tokens")),
            f"{p['model_calls']:.1f}",
            *(f"{p[key]:.2f}" for key in ("allow", "revise", "block", "revise_exhausted")),
        )
    lines += rendered(costs, wide)
    lines.append("tokens per run: prompt (of it: ledger, transcript, policy) and completion;")
    lines.append("loops: runs that used up their revisions")
    for s in summaries:  # consent: how it was observed, the cards shown, the simulator's out-of-scope endings
        p = s.per_run
        if s.consent or s.out_of_scope:
            cards = f", {p['cards']:.2f} cards and {p['held']:.2f} held writes a run" if s.consent == "card" else ""
            lines.append(f"{s.mode}: consent {s.consent or 'not judged'}{cards}, {s.out_of_scope} out of scope")
    for s in summaries:  # IRMA's helper calls: not in the agent's columns above
        p = s.per_run
        if p.get("helper_calls"):
            lines.append(
                f"{s.mode}: also {p['helper_calls']:.1f} helper calls per run, "
                f"{p['helper_prompt_tokens']:,.0f} prompt + {p['helper_completion_tokens']:,.0f} completion tokens"
            )
    return lines


MARKS = {"baseline": "b", "irma": "i", "ledger": "l", "gate": "g", "full": "F"}


def plot(summaries: list[ModeSummary], height: int = 10, wide: bool = False) -> list[str]:
    """pass^k (y, 0..1) against k (x), one letter per mode; overlapping points show '*'. Unless
    `wide`, the k shown are those that fit 80 columns, picked by the table's rule (`shown_ks`)."""
    ks = sorted({k for s in summaries for k in s.pass_k})
    if not ks:
        return []
    if not wide:
        ks = shown_ks(ks, (WIDTH - 8) // 5)
    grid = [[" "] * len(ks) for _ in range(height + 1)]
    together: dict[tuple[int, int], list[str]] = {}
    for s in summaries:
        mark = MARKS.get(s.mode, s.mode[:1])
        for x, k in enumerate(ks):
            if k not in s.pass_k:
                continue
            y = round(s.pass_k[k] * height)
            together.setdefault((x, y), []).append(mark)
            cell = grid[height - y][x]
            grid[height - y][x] = mark if cell == " " else "*"
    lines = ["pass^k"]
    for row, cells in enumerate(grid):
        level = (height - row) / height
        label = f"{level:4.1f} |" if row % 2 == 0 else "     |"
        lines.append(label + "".join(f"  {c}  " for c in cells))
    lines.append("     +" + "-----" * len(ks))
    # each label in its point's five columns (from k = 1,000, right-aligned in them)
    lines.append("      " + "".join(f"  {k:<3}" if k < 1000 else f"{k:>5}" for k in ks) + "  k")
    lines.append("      " + "  ".join(f"{m}={s.mode}" for s in summaries for m in [MARKS.get(s.mode, s.mode[:1])]))
    shared = sorted({"".join(marks) for marks in together.values() if len(marks) > 1})
    if shared:
        lines.append("      * = modes on the same point: " + ", ".join("+".join(m) for m in shared))
    return lines

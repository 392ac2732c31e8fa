"""Per-mode summaries of an evaluation, and a pass^k-vs-k plot drawn with plain characters."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from ledger_tui.eval.passk import pass_k_curve
from ledger_tui.eval.runner import TrialResult


@dataclass
class ModeSummary:
    mode: str
    tasks: int
    trials: int
    infrastructure_errors: int
    pass_k: dict[int, float]
    average_reward: float
    per_run: dict[str, float] = field(default_factory=dict)


def summarize(results: Iterable[TrialResult]) -> list[ModeSummary]:
    by_mode: dict[str, list[TrialResult]] = defaultdict(list)
    for r in results:
        by_mode[r.mode].append(r)
    out = []
    for mode in sorted(by_mode, key=lambda m: ("baseline", "ledger", "gate", "full").index(m) if m in ("baseline", "ledger", "gate", "full") else 9):
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
            )
        }
        out.append(
            ModeSummary(
                mode=mode,
                tasks=len(outcomes),
                trials=len(counted),
                infrastructure_errors=len(runs) - len(counted),
                pass_k=pass_k_curve(outcomes),
                average_reward=sum(r.reward for r in counted) / n,
                per_run=per_run,
            )
        )
    return out


def table(summaries: list[ModeSummary]) -> list[str]:
    if not summaries:
        return ["no results"]
    ks = sorted({k for s in summaries for k in s.pass_k})
    head = f"{'mode':<9}{'tasks':>6}{'runs':>6}{'infra':>6}" + "".join(f"{'pass^' + str(k):>9}" for k in ks) + f"{'reward':>8}"
    lines = [head, "-" * len(head)]
    for s in summaries:
        lines.append(
            f"{s.mode:<9}{s.tasks:>6}{s.trials:>6}{s.infrastructure_errors:>6}"
            + "".join(f"{s.pass_k.get(k, float('nan')):>9.3f}" for k in ks)
            + f"{s.average_reward:>8.3f}"
        )
    lines.append("")
    head2 = f"{'per run':<9}{'prompt':>8}{'ledger':>8}{'transcr':>8}{'policy':>8}{'complet':>8}{'calls':>7}{'ALLOW':>7}{'REVISE':>7}{'BLOCK':>7}{'loops':>6}"
    lines += [head2, "-" * len(head2)]
    for s in summaries:
        p = s.per_run
        lines.append(
            f"{s.mode:<9}{p['prompt_tokens']:>8.0f}{p['ledger_tokens']:>8.0f}{p['transcript_tokens']:>8.0f}"
            f"{p['policy_tokens']:>8.0f}{p['completion_tokens']:>8.0f}{p['model_calls']:>7.1f}{p['allow']:>7.2f}"
            f"{p['revise']:>7.2f}{p['block']:>7.2f}{p['revise_exhausted']:>6.2f}"
        )
    return lines


MARKS = {"baseline": "b", "ledger": "l", "gate": "g", "full": "F"}


def plot(summaries: list[ModeSummary], height: int = 10) -> list[str]:
    """pass^k (y, 0..1) against k (x), one letter per mode; overlapping points show '*'."""
    ks = sorted({k for s in summaries for k in s.pass_k})
    if not ks:
        return []
    grid = [[" "] * len(ks) for _ in range(height + 1)]
    for s in summaries:
        mark = MARKS.get(s.mode, s.mode[:1])
        for x, k in enumerate(ks):
            if k not in s.pass_k:
                continue
            y = round(s.pass_k[k] * height)
            cell = grid[height - y][x]
            grid[height - y][x] = mark if cell == " " else "*"
    lines = ["pass^k"]
    for row, cells in enumerate(grid):
        level = (height - row) / height
        label = f"{level:4.1f} |" if row % 2 == 0 else "     |"
        lines.append(label + "".join(f"  {c}  " for c in cells))
    lines.append("     +" + "-----" * len(ks))
    lines.append("      " + "".join(f"  {k:<3}" for k in ks) + "  k")
    lines.append("      " + "  ".join(f"{m}={s.mode}" for s in summaries for m in [MARKS.get(s.mode, s.mode[:1])]))
    return lines

"""pass^k: the chance that k trials of a task all succeed, estimated without bias from n >= k trials.

For one task with c successes in n trials, pass^k = C(c, k) / C(n, k); the benchmark figure is the
mean over tasks. With n = k it is simply "all k succeeded".
"""

from __future__ import annotations

from math import comb
from typing import Iterable, Mapping


def pass_hat_k(n: int, c: int, k: int) -> float:
    if not 0 <= c <= n:
        raise ValueError(f"successes {c} must be between 0 and trials {n}")
    if k < 1 or k > n:
        raise ValueError(f"k={k} needs 1 <= k <= n={n}")
    return comb(c, k) / comb(n, k)


def pass_k_curve(outcomes: Mapping[str, Iterable[bool]], max_k: int | None = None) -> dict[int, float]:
    """Mean pass^k over tasks for k = 1..max_k (default: the fewest trials any task has)."""
    counts = {task: (len(list_ := list(v)), sum(list_)) for task, v in outcomes.items()}
    counts = {t: nc for t, nc in counts.items() if nc[0] > 0}
    if not counts:
        return {}
    limit = min(n for n, _ in counts.values())
    if max_k is not None:
        limit = min(limit, max_k)
    return {
        k: sum(pass_hat_k(n, c, k) for n, c in counts.values()) / len(counts) for k in range(1, limit + 1)
    }

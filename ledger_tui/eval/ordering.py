"""How evaluation tables order what they list: modes the paper's way (baselines first) and task
ids by their numbers (`task_2` before `task_10`). Shared by the report, the paper's table, the
summary and the run list."""

from __future__ import annotations

import re

MODE_ORDER = ("baseline", "irma", "ledger", "gate", "full")  # the paper's baselines first


def mode_key(mode: str) -> tuple[int, str]:
    return (MODE_ORDER.index(mode) if mode in MODE_ORDER else len(MODE_ORDER), mode)


def natural_key(text: str) -> tuple:
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p) for p in re.split(r"(\d+)", text))

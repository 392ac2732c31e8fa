"""The session modes (the ablations; `engine.session` says what each does), apart from the session:
a replay names its recording's mode without importing what runs one."""

from __future__ import annotations

from typing import Literal

Mode = Literal["baseline", "ledger", "gate", "full", "irma"]
MODES: tuple[str, ...] = ("baseline", "ledger", "gate", "full", "irma")
GATED_MODES: tuple[str, ...] = ("gate", "full")  # the others run every write unchecked
CONSENT_MODES: tuple[str, ...] = ("card", "text")


def ungated(mode: str) -> bool:
    """A mode of this project's whose writes no gate judges (a recording may name others, e.g. imported)."""
    return mode in MODES and mode not in GATED_MODES

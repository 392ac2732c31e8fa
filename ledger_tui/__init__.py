"""ledger-tui: a workbench for policy-adherent tool-calling agents (ledger + policy gate).

The library's public surface is `ledger_tui.api` (see the README's "The gate as a library"),
importable from here: `from ledger_tui import PolicyGate`. It loads on first use, so the CLI's
start does not pay for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["PolicyGate", "Decision", "Check", "Evidence", "Observation", "Reply", "LedgerTuiError", "__version__"]

if TYPE_CHECKING:
    from ledger_tui.api import Check, Decision, Evidence, LedgerTuiError, Observation, PolicyGate, Reply


def __getattr__(name: str) -> Any:
    if name in __all__ and name != "__version__":
        from ledger_tui import api

        return getattr(api, name)
    raise AttributeError(f"module 'ledger_tui' has no attribute {name!r}")

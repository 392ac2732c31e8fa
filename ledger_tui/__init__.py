"""ledger-tui: a workbench for policy-adherent tool-calling agents (ledger + policy gate)."""

__version__ = "0.1.0"

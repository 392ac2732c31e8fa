"""The gate where agents are already built: an OpenAI Agents SDK tool guardrail (`agents_sdk`), an
MCP proxy (`mcp_proxy`, `ledger-tui mcp-proxy`) and an Inspect AI approver (`inspect_approver`).

Each one is a thin translation of `ledger_tui.api.PolicyGate` into its framework's words, and each
needs its optional extra (`pip install 'ledger-tui[agents]'`, `[mcp]`, `[inspect]`); importing one
without it raises `MissingExtra`, one sentence naming the install.
"""

from ledger_tui.adapters._core import MissingExtra, load_policy, policy

__all__ = ["MissingExtra", "load_policy", "policy"]

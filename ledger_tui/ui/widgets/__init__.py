"""The workbench's widgets, one small class a file, each with intent methods."""

from ledger_tui.ui.widgets.busy import BusyIndicator
from ledger_tui.ui.widgets.conversation import ConversationView
from ledger_tui.ui.widgets.gate_log import GateLog
from ledger_tui.ui.widgets.ledger_tree import LedgerTree
from ledger_tui.ui.widgets.replay_bar import ReplayBar
from ledger_tui.ui.widgets.status_bar import StatusBar

__all__ = ["BusyIndicator", "ConversationView", "GateLog", "LedgerTree", "ReplayBar", "StatusBar"]

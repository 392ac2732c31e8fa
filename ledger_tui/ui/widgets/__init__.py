"""The workbench's widgets, one small class a file, each with intent methods."""

from ledger_tui.ui.widgets.browse_bar import BrowseBar
from ledger_tui.ui.widgets.busy import BusyIndicator
from ledger_tui.ui.widgets.conversation import ConversationView
from ledger_tui.ui.widgets.gate_log import GateLog
from ledger_tui.ui.widgets.gate_reason import GateReason
from ledger_tui.ui.widgets.ledger_tree import LedgerTree
from ledger_tui.ui.widgets.replay_bar import ReplayBar
from ledger_tui.ui.widgets.run_detail import RunDetail
from ledger_tui.ui.widgets.run_table import RunTable
from ledger_tui.ui.widgets.search_bar import SearchBar
from ledger_tui.ui.widgets.status_bar import StatusBar

__all__ = [
    "BrowseBar",
    "BusyIndicator",
    "ConversationView",
    "GateLog",
    "GateReason",
    "LedgerTree",
    "ReplayBar",
    "RunDetail",
    "RunTable",
    "SearchBar",
    "StatusBar",
]

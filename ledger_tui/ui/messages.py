"""Messages the UI passes around, each named as a past-tense fact.

The bridge worker posts `EventRecorded` for every engine event; widgets change only in the
handlers of these messages, never from inside the worker.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from ledger_tui.engine.events import Event, GateDecided
from ledger_tui.ui.run_index import RunRow
from ledger_tui.ui.search import Hit


@dataclass
class EventRecorded(Message):
    """The engine emitted (and recorded to the trajectory file) one event."""

    event: Event


@dataclass
class CardAnswered(Message):
    """The operator answered the open confirmation card for the customer (`y` / `n` on it)."""

    answer: str


@dataclass
class ModelBusy(Message):
    """The engine started (`busy`) or finished working on one console command."""

    busy: bool
    what: str = ""


@dataclass
class StepChosen(Message):
    """The operator chose a replay step directly (a click on the slider)."""

    index: int

    def can_replace(self, message: Message) -> bool:  # type: ignore[override]
        """Only the latest position matters when dragging or clicking fast."""
        return isinstance(message, StepChosen)


@dataclass
class DecisionChosen(Message):
    """The operator picked a gate decision (Enter on a gate log row) to see why."""

    decided: GateDecided


@dataclass
class RunChosen(Message):
    """The operator picked a run in the browse list (Enter) to replay it."""

    row: RunRow


@dataclass
class DecisionHighlighted(Message):
    """The gate log's cursor is on this decision now (None: the log shows no row)."""

    decided: GateDecided | None


@dataclass
class HitsFound(Message):
    """The search bar's query matched these steps (none: nothing matches, or the search closed)."""

    steps: list[int]

    def can_replace(self, message: Message) -> bool:  # type: ignore[override]
        """Only the latest query's hits matter while typing."""
        return isinstance(message, HitsFound)


@dataclass
class HitChosen(Message):
    """The operator moved to a search hit (Enter / Shift+Enter in the search bar)."""

    hit: Hit


@dataclass
class SearchClosed(Message):
    """The search bar closed (Escape): its marks and highlight go."""

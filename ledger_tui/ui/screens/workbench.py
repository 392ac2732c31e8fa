"""The workbench layout shared by play and replay: status line, conversation, ledger, gate log.

Subclasses add what differs (the console and the bridge for play, the cursor for replay); both
show state the same way, from events and the fold. Orchestration stays small: the panes' intent
methods do the work.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widgets import Static

from ledger_tui.engine.events import (
    ConfirmationAnswered,
    ConfirmationRequested,
    Event,
    GateDecided,
    QuestionAnswered,
    QuestionRequested,
    Verdict,
)
from ledger_tui.engine.store.fold import SessionState, fold
from ledger_tui.engine.store.lazy import of_kinds, step_of
from ledger_tui.engine.outside import shown
from ledger_tui.explain import waits_lines
from ledger_tui.ui.messages import DecisionChosen, DecisionHighlighted, HitChosen, HitsFound, SearchClosed
from ledger_tui.ui.screens.help import HelpScreen, screen_keys
from ledger_tui.ui.screens.why import WhyScreen
from ledger_tui.ui.search import Hit
from ledger_tui.ui.widgets import BusyIndicator, ConversationView, GateLog, GateReason, LedgerTree, ReplayBar, SearchBar, StatusBar
from ledger_tui.ui.widgets.footer import Footer

EXPORTS = Path("exports")  # relative: under the directory the workbench was started from
NARROW = 100  # below this many columns the panes are tabs, one on the whole screen
TABS = ("conversation", "ledger", "gate-log")
PANE_LABELS = {"conversation": "Chat", "ledger": "Ledger", "gate-log": "Gate"}  # as the footer names them

if TYPE_CHECKING:  # (a replay loads its domain when first needed)
    from ledger_tui.engine.domain import Domain


class WorkbenchScreen(Screen[None]):
    """Three panes over one event list; `events` and `domain` are supplied by the subclass."""

    # A pane reads the same on every key and in the tab strip: Chat, Ledger, Gate (PANE_LABELS).
    # The focus keys stay in Help and leave the footer to the F-keys, which focus the pane too.
    BINDINGS = [
        Binding("f1", "help", "Help", id="workbench.help"),
        Binding("ctrl+g", "focus_pane('gate-log')", "Gate", tooltip="focus the gate log (its tab below 100 columns)", id="workbench.focus_gate_log", show=False),
        Binding("ctrl+l", "focus_pane('ledger')", "Ledger", tooltip="focus the ledger (its tab below 100 columns)", id="workbench.focus_ledger", show=False),
        Binding("ctrl+o", "focus_pane('conversation')", "Chat", tooltip="focus the conversation (its tab below 100 columns)", id="workbench.focus_conversation", show=False),
        # one pane on the whole screen: a tab below NARROW columns, else maximized (again: back)
        Binding("f2", "show_pane('conversation')", "Chat", tooltip="the conversation on the whole screen (a tab below 100 columns; wider, again: all panes)", id="workbench.show_conversation"),
        Binding("f3", "show_pane('ledger')", "Ledger", tooltip="the ledger on the whole screen (a tab below 100 columns; wider, again: all panes)", id="workbench.show_ledger"),
        Binding("f4", "show_pane('gate-log')", "Gate", tooltip="the gate log on the whole screen (a tab below 100 columns; wider, again: all panes)", id="workbench.show_gate_log"),
    ]

    events: list[Event]  # set by the subclass in __init__: the events the panes fold over
    domain: Domain | None = None
    domain_problem: str = ""
    source_path: Path | None = None
    console = False

    def compose_bottom(self) -> ComposeResult:
        """The line above the footer (console or replay bar)."""
        return iter(())

    def compose(self) -> ComposeResult:
        with Horizontal(id="top"):
            yield StatusBar(id="status")
            yield Static(id="run-outcome")  # shown by a replay opened from the run list
            yield BusyIndicator(id="busy")
        yield Static(id="tabs")
        with Horizontal(id="panes"):
            yield ConversationView(id="conversation")
            with Vertical(id="side"):
                yield LedgerTree(id="ledger")
                with Vertical(id="gate-pane"):
                    yield GateLog(id="gate-log")
                    yield GateReason(id="gate-reason")
        yield SearchBar(id="search")  # under the panes, shown by `/` (replay) or Ctrl+F (play)
        yield from self.compose_bottom()
        yield Footer(compact=True)

    # ------------------------------------------------------------------ panes
    @property
    def conversation(self) -> ConversationView:
        return self.query_one(ConversationView)

    @property
    def ledger(self) -> LedgerTree:
        return self.query_one(LedgerTree)

    @property
    def gate_log(self) -> GateLog:
        return self.query_one(GateLog)

    @property
    def status(self) -> StatusBar:
        return self.query_one(StatusBar)

    @property
    def cursor_index(self) -> int:
        """The step the panes show (the last event in play)."""
        return len(self.events) - 1

    def state_at(self, index: int) -> SessionState:
        return fold(self.events, upto=index)

    # ------------------------------------------------------------------ layout
    @property
    def narrow(self) -> bool:
        return self.has_class("-narrow")

    @property
    def tab(self) -> str:
        """The pane on screen below NARROW columns."""
        return next((t for t in TABS if self.has_class(f"-show-{t}")), "conversation")

    def on_resize(self, event: events.Resize) -> None:
        narrow = event.size.width < NARROW
        if narrow != self.narrow:
            self.set_class(narrow, "-narrow")
            if narrow and self.maximized is not None:
                self.minimize()
            self._show_tab(self.tab)

    def _show_tab(self, pane_id: str) -> None:
        for t in TABS:
            self.set_class(t == pane_id, f"-show-{t}")
        strip = Text()
        for key, t in (("F2", "conversation"), ("F3", "ledger"), ("F4", "gate-log")):
            strip.append(f" {key} {PANE_LABELS[t]} ", style="reverse bold" if t == pane_id else "dim")
            strip.append(" ")
        self.query_one("#tabs", Static).update(strip)
        if pane_id == "conversation":  # shown again: at its latest lines, as before it was hidden
            self.call_after_refresh(self.conversation.scroll_end, animate=False)

    def action_show_pane(self, pane_id: str) -> None:
        """Below NARROW columns, the pane's tab; wider, the pane maximized (again: all three)."""
        pane = self.query_one(f"#{pane_id}")
        if self.narrow:
            self._show_tab(pane_id)
        elif self.maximized is pane:
            self.minimize()
        else:
            self.maximize(pane, container=False)
        pane.focus()

    # ------------------------------------------------------------------ actions
    def action_focus_pane(self, pane_id: str) -> None:
        if self.narrow:
            self._show_tab(pane_id)
        self.query_one(f"#{pane_id}").focus()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(screen_keys(self), console=self.console))

    def on_decision_highlighted(self, message: DecisionHighlighted) -> None:
        self.query_one(GateReason).show(message.decided)

    def on_decision_chosen(self, message: DecisionChosen) -> None:
        self.explain(message.decided)

    # ------------------------------------------------------------------ search
    @property
    def search_bar(self) -> SearchBar:
        return self.query_one(SearchBar)

    @property
    def searching(self) -> str:
        """"typing" while the search's query has the focus, "open" while it shows, else ""."""
        try:  # (asked of every binding the footer shows: query_one keeps what it found, a query walks every widget)
            bar = self.query_one(SearchBar)
        except NoMatches:
            return ""
        return "" if not bar.is_open else "typing" if bar.typing else "open"

    def action_search(self) -> None:
        """Open the search bar over the whole run (`/` in replay, Ctrl+F in play)."""
        self.search_bar.open(self.events, self.search_origin)

    def search_origin(self) -> int | None:
        """The step Enter searches on from (replay: the cursor); None: from the hit last chosen."""
        return None

    def on_hit_chosen(self, message: HitChosen) -> None:
        self.show_hit(message.hit)

    def show_hit(self, hit: Hit) -> None:
        """Bring a search's hit into view in its pane (its tab below NARROW columns): the
        conversation highlights it, the ledger's cursor goes to its path, the gate log's to its
        decision."""
        pane = {"conversation": "conversation", "ledger": "ledger", "gate": "gate-log"}[hit.pane]
        if self.narrow:
            self._show_tab(pane)
        if hit.pane == "conversation":
            shown_now = self.conversation.reveal(hit.seq)
        elif hit.pane == "ledger":
            shown_now = self.ledger.reveal(hit.path)
        else:
            shown_now = self.gate_log.reveal(hit.seq)
        if not shown_now:
            why = "the gate log's filter hides it or it is earlier than the rows listed" if hit.pane == "gate" else "it is earlier than the pane keeps"
            self.notify(shown(f"Step {hit.step} matches, but {why}.", markup=True), severity="warning")

    def on_hits_found(self, message: HitsFound) -> None:
        for bar in self.query(ReplayBar):
            bar.mark_hits(message.steps)

    def on_search_closed(self, message: SearchClosed) -> None:
        self.conversation.unhighlight()

    def explain(self, decided: GateDecided) -> WhyScreen:
        """Open the Why screen on `decided`, with the state the gate saw (folded up to the step before)."""
        index = step_of(self.events, decided.seq)
        index = len(self.events) if index is None else index
        before = self.state_at(index - 1)
        policy = None
        if self.domain is not None:
            try:
                policy = self.domain.policy
            except OSError:
                policy = None
        jump = self.go_to_step if hasattr(self, "jump_to") else None
        asked = of_kinds(self.events, ConfirmationRequested, ConfirmationAnswered, QuestionRequested, QuestionAnswered)
        waits = waits_lines(asked, decided.decision.call.id, indent="")
        screen = WhyScreen(decided, before, self.domain, policy, self.domain_problem, jump=jump, waits=waits)
        self.app.push_screen(screen)
        return screen

    def go_to_step(self, seq: int) -> None:
        """Move the replay cursor to the event recorded at `seq` (from the Why screen's evidence)."""
        index = step_of(self.events, seq)
        if index is None:
            self.notify(f"Step {seq} is not in this trajectory.", severity="warning")
            return
        self.jump_to(index)  # type: ignore[attr-defined]

    # ------------------------------------------------------------------ palette intents
    def filter_gate_log(self, verdict: Verdict | None) -> None:
        self.gate_log.filter(verdict)
        self.notify(f"Gate log: {'only ' + verdict.value if verdict else 'all decisions'}.")

    def export_ledger(self) -> Path | None:
        """Write the ledger as of the cursor to exports/ in the working directory (never next to
        the session file, which may sit inside the repository) under a new name (`-2`, `-3`, … when
        the name is taken: an earlier export is never overwritten); returns the path written, or
        None (with an error notification) when it cannot be written."""
        from ledger_tui.eval.outputs import claim

        index = self.cursor_index
        state = self.state_at(index)
        stem = self.source_path.stem if self.source_path else "ledger"
        name = f"{stem}.ledger-step{max(index, 0)}"
        target = EXPORTS / f"{name}.json"
        try:
            n = 1
            while not claim(target):
                n += 1
                target = EXPORTS / f"{name}-{n}.json"
            target.write_text(json.dumps(state.ledger.to_json(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        except OSError as exc:
            self.notify(shown(f"Could not write {target} ({exc.strerror}); start the workbench from a folder you can write to.", markup=True), severity="error")
            return None
        self.notify(shown(f"Ledger at step {index} written to {target}.", markup=True))
        return target

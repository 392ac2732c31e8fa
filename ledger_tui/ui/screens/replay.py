"""Replay: a saved trajectory, stepped through with a cursor.

Every pane shows the state *as of the cursor*, taken from the engine's `Timeline` (the same fold
the live session used), so replay can never disagree with what happened. Moving the cursor only
updates what differs: the conversation rewinds or appends, the ledger tree relabels in place.
"""

from __future__ import annotations

import gc
import heapq
from bisect import bisect_left, bisect_right
from pathlib import Path
from typing import TYPE_CHECKING, Sequence

from textual import work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.reactive import var
from textual.timer import Timer
from textual.widgets import Static

from ledger_tui.engine.events import Event, GateDecided, LedgerUpdated, ToolResult, UserMessage
from ledger_tui.engine.store.fold import SessionState, Timeline
from ledger_tui.engine.store.lazy import LazyEvents, kinds, proposers, step_of, verdicts
from ledger_tui.engine.outside import shown
from ledger_tui.engine.modes import ungated
from ledger_tui.ui.messages import StepChosen
from ledger_tui.ui.run_index import SHORT_CLASS, RunRow
from ledger_tui.ui.search import Hit
from ledger_tui.ui.screens.workbench import WorkbenchScreen
from ledger_tui.ui.widgets import GateReason, LedgerTree, ReplayBar
from ledger_tui.ui.widgets.conversation import HIGH as WINDOW

if TYPE_CHECKING:  # (the domain is loaded when first needed: `ReplayScreen.domain`)
    from ledger_tui.engine.domain import Domain

SPEEDS = (0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 32.0)
# While a replay is open the collector's youngest generation holds this many new objects before it
# is scanned (Python's default: 700). Drawing one step makes thousands of short-lived objects, many
# in reference cycles (a Textual strip keeps caches that point back at it); scanned every 700, a
# jump ran ~27 young collections, each catching some of them alive and promoting them, so a full
# collection (30-70 ms at 100k events) came every four to six jumps. Scanned every 5,000, most are
# garbage by the first scan: over 200 jumps at 100k events, pauses of the collector over 15 ms came
# at ~1 jump in 6 as before but were middle collections of ~20 ms, with one full one. Larger (10,000
# and up) makes the middle collections long (50-90 ms, every ~11 jumps): what a young scan leaves
# alive is mostly the screen's caches of drawn lines.
YOUNG_GENERATION = 5_000


NOT_NAMED = object()  # (ReplayScreen's `domain_named` when not given: `domain` is the domain)


def _seq(event: Event) -> int:
    return event.seq


class ReplayScreen(WorkbenchScreen):
    """Cursor over a `Timeline`; `cursor` is the index of the last event applied."""

    BINDINGS = [
        Binding("escape", "close", "Back", id="replay.close", priority=True, tooltip="to the run list or the screen it was opened from"),
        Binding("right,l", "step(1)", "Step", id="replay.forward", priority=True, tooltip="one event forward (← back)"),
        Binding("left,h", "step(-1)", "Step back", id="replay.back", priority=True, show=False, tooltip="one event back (→ forward)"),
        Binding("n", "next_decision", "Next", id="replay.next_decision", tooltip="the next gate decision (p: previous)"),
        Binding("p", "previous_decision", "Prev", id="replay.previous_decision", show=False, tooltip="the previous gate decision (n: next)"),
        Binding("slash,ctrl+f", "search", "Search", id="replay.search", show=False, tooltip="chat, ledger, gate log (Enter: next hit)"),
        # one key, two labels: the footer says what space will do now (both share the id, so a
        # keymap moves them together)
        Binding("space", "play", "Play", id="replay.play"),
        Binding("space", "pause", "Pause", id="replay.play"),
        Binding("plus,equals_sign", "faster", "Faster", id="replay.faster", show=False),
        Binding("minus", "slower", "Slower", id="replay.slower", show=False),
        Binding("f", "fork", "Fork", id="replay.fork", show=False, tooltip="a live session from the cursor's turn: you answer as the customer"),
        Binding("home", "jump_to(0)", "First", id="replay.first", show=False, priority=True),
        Binding("end", "last", "Last", id="replay.last", show=False, priority=True),
    ]

    # the panes follow the cursor through `watch_cursor`; the screen itself draws nothing from it,
    # so moving it must not repaint the whole screen (a reactive would, at every step)
    cursor: var[int] = var(-1, init=False)

    def __init__(
        self,
        events: Sequence[Event],
        *,
        path: Path | None = None,
        step: int | None = None,
        domain: Domain | None = None,
        domain_problem: str = "",
        warnings: Sequence[str] = (),
        domain_named: str | None | object = NOT_NAMED,
    ) -> None:
        """`domain_named`: instead of `domain`, the trajectory's domain by name (its first event's,
        None when it names none), loaded when first needed (a fork, an explanation): importing and
        building a domain (~30 ms) need not come before the first paint."""
        super().__init__()
        # a file read lazily comes folded already (read_trajectory(lazy=True))
        self.timeline = events.timeline if isinstance(events, LazyEvents) else Timeline(events)
        self.events = self.timeline.events
        self._kinds = kinds(self.events)
        self.source_path = path
        self._domain = domain
        self.domain_problem = domain_problem
        self._domain_named: tuple[str | None] | None = None if domain_named is NOT_NAMED else (domain_named,)  # type: ignore[assignment]
        self.warnings = list(warnings)
        last = len(self.timeline) - 1
        self._start = last if step is None else max(0, min(step, last))
        self._past_end = f"Step {step} is past the end; showing the last step ({last})." if step is not None and step > last >= 0 else ""
        self._timer: Timer | None = None
        self._thresholds = gc.get_threshold()
        self._speed_index = SPEEDS.index(4.0)
        # what the panes need of every event (100,000 in a long file), kept by a lazy read
        self.decision_steps = [i for i, kind in enumerate(self._kinds) if kind is GateDecided]
        self._requestors = proposers(self.events)  # the calls proposed, and who proposed each
        self.run_row: RunRow | None = None  # the run list's row, when opened from it

    @property  # type: ignore[override]
    def domain(self) -> Domain | None:
        if self._domain_named is not None:
            from ledger_tui.domains import domain_for

            (name,), self._domain_named = self._domain_named, None
            self._domain, self.domain_problem = domain_for(name)
        return self._domain

    def compose_bottom(self) -> ComposeResult:
        yield ReplayBar(id="replay-bar")

    def show_run(self, row: RunRow) -> None:
        """Say on the top line what the run list knows of this run: its reward and, failed, its
        failure class (in the list's words), or that it passed."""
        self.run_row = row
        if self.is_mounted:
            self._show_run()

    def _show_run(self) -> None:
        row = self.run_row
        if row is None:
            return
        verdict = "passed" if row.passed else SHORT_CLASS.get(row.primary, row.primary) if row.primary else "failed"
        outcome = self.query_one("#run-outcome", Static)
        outcome.update(shown(f"reward {row.reward:.1f} · {verdict}", markup=True))
        outcome.set_classes(["-shown", "-passed" if row.passed else "-failed"])

    def _show_fork(self, parent: str, step: int) -> None:
        """A fork says on the top line whose run it continues, and from which step its own
        events begin (the earlier ones are the parent's, as they were)."""
        outcome = self.query_one("#run-outcome", Static)
        outcome.update(shown(f"fork of {Path(parent).name or 'a recording'} · own from step {step}", markup=True))
        outcome.set_classes(["-shown"])

    def on_mount(self) -> None:
        self.status.label = "replay"
        self._show_run()
        bar = self.query_one(ReplayBar)
        bar.total = len(self.timeline)
        bar.speed = SPEEDS[self._speed_index]
        bar.marks = {i: verdict.value for i, (verdict, _) in verdicts(self.events, self.decision_steps).items()}
        for warning in self.warnings:
            self.notify(shown(warning, markup=True), title="Trajectory damaged", severity="warning", timeout=10)
        if self._past_end:
            self.notify(self._past_end, severity="warning")
        self.conversation.requestors = self._requestors
        started = self.timeline.final.started
        if started is not None and ungated(started.mode):
            self.gate_log.without_gate(started.mode)
        if started is not None and started.forked_from is not None:
            bar.branch = step_of(self.events, started.forked_from.step, at_least=True)
            if self.run_row is None:
                self._show_fork(started.forked_from.file, started.forked_from.step)
        self.cursor = self._start
        self.gate_log.focus()
        # The trajectory, its timeline and the widgets live as long as the screen: out of the
        # collector's way, a full collection no longer rescans them (~0.1 s on 2,000 events, a
        # visible stutter every few steps).
        gc.freeze()
        self._thresholds = gc.get_threshold()
        young, *older = self._thresholds
        gc.set_threshold(max(young, YOUNG_GENERATION), *older)

    def on_unmount(self) -> None:
        gc.set_threshold(*self._thresholds)
        gc.unfreeze()

    @property
    def cursor_index(self) -> int:
        return self.cursor

    def state_at(self, index: int) -> SessionState:
        return self.timeline.at(index)

    # ------------------------------------------------------------------ the cursor
    def validate_cursor(self, value: int) -> int:
        return max(0, min(value, len(self.timeline) - 1))

    def watch_cursor(self, index: int) -> None:
        self.show_step(index)

    def show_step(self, index: int) -> SessionState:
        """Bring every pane to the state after event `index`."""
        state = self.timeline.at(index)
        # the conversation pane shows a window of the latest events: only their tail is merged
        tail = list(heapq.merge(state.conversation[-WINDOW:], state.gate_log[-WINDOW:], key=_seq))[-WINDOW:]
        with self.app.batch_update():  # one frame for every pane
            self.conversation.sync(tail, total=len(state.conversation) + len(state.gate_log))
            marks, current = self._marks(state, index)
            self.ledger.sync(state.ledger, marks, current)
            self.gate_log.sync(state.gate_log)
            # in this frame, not when the gate log's highlight message comes round
            self.query_one(GateReason).show(self.gate_log.selected())
            self.status.show(state, index, len(self.timeline) - 1)
            self.query_one(ReplayBar).index = index
        return state

    def _marks(self, state: SessionState, index: int) -> tuple[dict[str, str], set[str]]:
        """Ledger changes since the customer last spoke (as of the cursor), to highlight, and the
        paths the latest tool result changed (the rest are earlier in the turn), as play marks them."""
        events, kinds = self.timeline.events, self._kinds
        start = index
        while start >= 0 and not issubclass(kinds[start], UserMessage):
            start -= 1
        marks: dict[str, str] = {}
        current: set[str] = set()
        for event in events[start + 1 : index + 1]:
            if isinstance(event, ToolResult):
                current = set()
            elif isinstance(event, LedgerUpdated):
                marks[event.path] = "added" if marks.get(event.path) == "added" else event.change
                current.add(event.path)
        return marks, current

    # ------------------------------------------------------------------ actions
    def action_step(self, delta: int) -> None:
        self.cursor += delta

    def action_jump_to(self, index: int) -> None:
        if self._pane_takes_home_end(end=False):
            return
        self.cursor = index

    def _pane_takes_home_end(self, end: bool) -> bool:
        """Home/End in a focused ledger tree move the tree's cursor, not the replay's (the gate log
        lists decisions up to the cursor, so there they stay the first and last step)."""
        focused = self.focused
        if isinstance(focused, LedgerTree):
            focused.cursor_line = focused.last_line if end else 0
            focused.scroll_to_line(focused.cursor_line)
            return True
        return False

    def jump_to(self, index: int) -> None:
        """Palette intent: move the cursor to step `index` (clamped)."""
        self.cursor = index

    def action_last(self) -> None:
        if self._pane_takes_home_end(end=True):
            return
        self.cursor = len(self.timeline) - 1

    def _decision_steps(self) -> list[int] | None:
        """The steps of the decisions the gate log shows (its verdict filter applies); None, with
        a notice saying why, when there is none."""
        wanted = self.gate_log.verdict_filter
        if wanted is None:
            steps = self.decision_steps
        else:
            steps = [i for i, (verdict, _) in verdicts(self.events, self.decision_steps).items() if verdict == wanted]
        if not steps:
            if not self.decision_steps:
                self.notify("This trajectory has no gate decision.")
            else:
                self.notify(
                    f"No {wanted.value} decision in this trajectory; the gate log shows only {wanted.value} "  # type: ignore[union-attr]
                    "(Ctrl+P, \"Filter gate log: show all\", lists every decision)."
                )
            return None
        return steps

    def action_next_decision(self) -> None:
        """The next gate decision; past the last one (a replay opens at the end), the first."""
        steps = self._decision_steps()
        if steps is None:
            return
        later = bisect_right(steps, self.cursor)
        if later < len(steps):
            self.cursor = steps[later]
        else:
            self.cursor = steps[0]
            self.notify("Wrapped around to the first gate decision.")

    def action_previous_decision(self) -> None:
        """The previous gate decision; before the first one, the last."""
        steps = self._decision_steps()
        if steps is None:
            return
        earlier = bisect_left(steps, self.cursor)
        if earlier:
            self.cursor = steps[earlier - 1]
        else:
            self.cursor = steps[-1]
            self.notify("Wrapped around to the last gate decision.")

    @property
    def playing(self) -> bool:
        return self._timer is not None

    def action_toggle_play(self) -> None:
        if self.playing:
            self.action_pause()
        else:
            self.action_play()

    def action_play(self) -> None:
        if self.playing:
            return
        if self.cursor >= len(self.timeline) - 1:
            self.cursor = 0
        self._timer = self.set_interval(1 / SPEEDS[self._speed_index], self._tick)
        self.query_one(ReplayBar).playing = True
        self.refresh_bindings()

    def action_pause(self) -> None:
        self._stop_playing()

    def _tick(self) -> None:
        if self.cursor >= len(self.timeline) - 1:
            self._stop_playing()
            return
        self.cursor += 1

    def _stop_playing(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        self.query_one(ReplayBar).playing = False
        self.refresh_bindings()

    def _set_speed(self, delta: int) -> None:
        self._speed_index = max(0, min(len(SPEEDS) - 1, self._speed_index + delta))
        speed = SPEEDS[self._speed_index]
        self.query_one(ReplayBar).speed = speed
        if self._timer is not None:
            self._timer.stop()
            self._timer = self.set_interval(1 / speed, self._tick)

    def action_faster(self) -> None:
        self._set_speed(1)

    def action_slower(self) -> None:
        self._set_speed(-1)

    @property
    def closable(self) -> bool:
        """Opened on top of another screen (the run list, or from the palette): Escape goes back.
        (Not merely under a screen of its own, such as Help: then it is still the first.)"""
        return self in self.app.screen_stack[2:]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("step", "jump_to", "last") and self.searching == "typing":
            return None  # the search's query takes the letters, arrows, Home and End
        if action == "close":
            return self.closable or bool(self.searching)
        if action == "play":
            return not self.playing
        if action == "pause":
            return self.playing
        return True

    def action_close(self) -> None:
        """Escape closes a replay opened from the run list or the palette; the first screen stays.
        An open search is closed first."""
        if self.searching:
            self.search_bar.close()
        elif self.closable:
            self._stop_playing()
            self.app.pop_screen()

    def on_step_chosen(self, message: StepChosen) -> None:
        self.cursor = message.index

    def search_origin(self) -> int | None:
        return self.cursor

    def show_hit(self, hit: Hit) -> None:
        """The cursor goes to the hit's step, then its pane shows it."""
        self.cursor = hit.step
        super().show_hit(hit)

    # ------------------------------------------------------------------ fork
    def action_fork(self) -> None:
        self.fork_here()

    @work(exclusive=True, group="fork")
    async def fork_here(self) -> None:
        """Palette intent and `f`: a live session that continues this run from the turn the
        cursor is in (fork.py), recorded to a new file in the runs folder; the operator answers
        as the customer and acts as the agent. One sentence, and no fork, when it cannot be."""
        from ledger_tui.engine.errors import LedgerTuiError
        from ledger_tui.engine.fork import fork
        from ledger_tui.engine.model.models import NoModel
        from ledger_tui.eval.outputs import fresh_name
        from ledger_tui.examples import runs_home
        from ledger_tui.ui.screens.play import PlayScreen

        if self.domain is None:
            self.notify(shown(f"Cannot fork: {self.domain_problem or 'the domain is not loaded'}.", markup=True), severity="error")
            return
        self._stop_playing()
        step = self.timeline.events[self.cursor].seq
        out = None
        try:
            out = fresh_name(runs_home(), f"{self.domain.name}-fork")
            forked = await fork(self.domain, list(self.timeline.events), step, model=NoModel(), parent=self.source_path, out=out)
        except (LedgerTuiError, OSError) as exc:
            if out is not None and out.exists() and out.stat().st_size == 0:
                out.unlink()
            self.notify(shown(exc, markup=True), severity="error", timeout=10)
            return
        self.app.push_screen(PlayScreen(forked.session, has_model=False))
        self.notify(shown(f"Forked at step {forked.step}: recording to {out}. No model: /say and /call act as the agent.", markup=True), timeout=8)

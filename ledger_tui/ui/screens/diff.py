"""Diff: two runs side by side, turn by turn, opened at the turn where they diverge.

The comparison is `eval.diff`'s (the one `ledger-tui diff` prints); this screen only draws it and
keeps a cursor on one turn. Opening a side's replay pushes the ordinary replay screen at the end
of the cursor's turn, so Escape comes back here with the cursor where it was.

`open_diff(app, a, b)` is the entry point for other screens (browse, picking two runs of one task):
a file that cannot be read, or two runs that cannot be compared, is a notification and nothing opens.
"""

from __future__ import annotations

from pathlib import Path

from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.content import Content
from textual.screen import Screen
from textual.widgets import Footer, Static

from ledger_tui.engine.errors import LedgerTuiError
from ledger_tui.engine.outside import shown
from ledger_tui.eval.diff import LEGEND, Run, RunDiff, diff_files, reward_word
from ledger_tui.ui.screens.help import HelpScreen, screen_keys
from ledger_tui.ui.widgets.turn_row import TurnChosen, TurnRow

NOTE = f"Marks: {LEGEND}. Wording is shown, never counted: turns differ by their calls, verdicts and ledger changes."


def _head(side: str, run: Run) -> Content:
    """`A full · reward 1 (passed) · gold` over the file's name (the whole path is in the CLI's summary)."""
    return Content.assemble(
        (f"{side} ", "bold"), (shown(run.mode), "bold"), shown(f" · {reward_word(run.reward)} · {run.model}"),
        "\n", (shown(run.path.name), "$text-muted"),
    )


class DiffScreen(Screen[None]):
    """Both runs' turns in two columns; `cursor` is the index of the turn pair it is on."""

    CSS_PATH = "diff.tcss"
    BINDINGS = [
        Binding("down,j", "move(1)", "Next turn", id="diff.next_turn", tooltip="the turn below (↑ the one above)"),
        Binding("up,k", "move(-1)", "Previous turn", id="diff.previous_turn", show=False),
        Binding("n", "next_difference(1)", "Next diff", id="diff.next_difference", tooltip="the next turn that differs (p: the one before)"),
        Binding("p", "next_difference(-1)", "Prev diff", id="diff.previous_difference", show=False),
        Binding("d", "divergence", "Divergence", id="diff.divergence", tooltip="back to the turn where the runs diverge"),
        Binding("home", "jump(0)", "First", id="diff.first", show=False),
        Binding("end", "jump(-1)", "Last", id="diff.last", show=False),
        Binding("a", "replay('a')", "Replay A", id="diff.replay_a", tooltip="run A in replay at the end of this turn (Esc comes back)"),
        Binding("b", "replay('b')", "Replay B", id="diff.replay_b", tooltip="run B in replay at the end of this turn (Esc comes back)"),
        Binding("escape", "close", "Back", id="diff.close"),
        Binding("f1", "help", "Help", id="diff.help"),
    ]

    def __init__(self, found: RunDiff) -> None:
        super().__init__()
        self.found = found
        divergence = found.divergence
        self.cursor = found.pairs.index(divergence) if divergence is not None else 0

    @classmethod
    def of_files(cls, a: Path, b: Path) -> DiffScreen:
        """The screen for two trajectory files; `LedgerTuiError` (one sentence) if either cannot be
        read or the two cannot be compared."""
        return cls(diff_files(Path(a), Path(b)))

    def compose(self) -> ComposeResult:
        yield Static(self._status(), id="diff-status")
        with Horizontal(id="diff-heads"):
            yield Static("", classes="gutter")
            yield Static(_head("A", self.found.a), classes="cell")
            yield Static(_head("B", self.found.b), classes="cell")
        with VerticalScroll(id="diff-turns", can_focus=False):
            divergence = self.found.divergence
            for pair in self.found.pairs:
                yield TurnRow(pair, divergence)
            if not self.found.pairs:
                yield Static("Neither run has a turn.", classes="empty")
        yield Footer(compact=True)

    def on_mount(self) -> None:
        for warning in self.found.warnings:
            self.notify(shown(warning, markup=True), title="diff", severity="warning", timeout=10)
        self.call_after_refresh(self._show_cursor, True)

    # ------------------------------------------------------------------ intent methods
    @property
    def rows(self) -> list[TurnRow]:
        return list(self.query(TurnRow))

    @property
    def pair(self):
        """The turn pair under the cursor (None when neither run has a turn)."""
        return self.found.pairs[self.cursor] if self.found.pairs else None

    def go_to(self, index: int) -> None:
        """Put the cursor on pair `index` (clamped) and scroll it into view."""
        if not self.found.pairs:
            return
        self.cursor = max(0, min(index, len(self.found.pairs) - 1))
        self._show_cursor()

    def _show_cursor(self, top: bool = False) -> None:
        for i, row in enumerate(self.rows):
            row.point(i == self.cursor)
            if i == self.cursor:
                row.scroll_visible(animate=False, top=top)
        self.query_one("#diff-status", Static).update(self._status())

    def _status(self) -> Content:
        d = self.found
        div = d.divergence
        if div is None:
            head = Content.styled("the runs do not diverge", "bold $success")
            worded = sum(1 for p in d.pairs if p.worded)
            rest = f" · {d.same_before} turn{'s' if d.same_before != 1 else ''} the same" + (f", {worded} worded differently" if worded else "")
        else:
            head = Content.styled(f"diverge at turn {div.number}", "bold $warning")
            rest = f": {', '.join(div.differs)} · {d.same_before} the same before"
        pair = self.pair
        at = f" · on turn {pair.number} ({self.cursor + 1}/{len(d.pairs)})" if pair is not None else ""
        return Content.assemble(("diff · ", "bold"), head, rest, at)

    # ------------------------------------------------------------------ keys
    def action_move(self, by: int) -> None:
        self.go_to(self.cursor + by)

    def action_jump(self, index: int) -> None:
        self.go_to(index if index >= 0 else len(self.found.pairs) - 1)

    def action_divergence(self) -> None:
        div = self.found.divergence
        if div is None:
            self.notify("The runs do not diverge: every turn is the same.")
            return
        self.go_to(self.found.pairs.index(div))

    def action_next_difference(self, by: int) -> None:
        pairs = self.found.pairs
        i = self.cursor + by
        while 0 <= i < len(pairs):
            if not pairs[i].same:
                self.go_to(i)
                return
            i += by
        self.notify("No turn that differs " + ("after" if by > 0 else "before") + " this one.")

    def action_replay(self, side: str) -> None:
        """Replay run `side` ("a" or "b") on top of this screen, at the end of the cursor's turn."""
        from ledger_tui.domains import domain_for
        from ledger_tui.ui.screens.replay import ReplayScreen

        run = self.found.a if side == "a" else self.found.b
        pair = self.pair
        turn = None if pair is None else pair.a if side == "a" else pair.b
        if turn is None:
            self.notify(f"Run {side.upper()} has no turn {pair.number if pair else 0}; it ends before it.", severity="warning")
            return
        domain, problem = domain_for(run.domain)
        self.app.push_screen(ReplayScreen(run.events, path=run.path, step=turn.last, domain=domain, domain_problem=problem))

    @property
    def closable(self) -> bool:
        """Opened on top of another screen (browse): Escape goes back. Opened on its own
        (`diff --tui`), it is the first screen, and Ctrl+Q quits."""
        return self in self.app.screen_stack[2:]

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "close":
            return self.closable
        return True

    def action_close(self) -> None:
        if self.closable:
            self.app.pop_screen()

    def action_help(self) -> None:
        self.app.push_screen(HelpScreen(screen_keys(self), console=False, note=NOTE))

    # ------------------------------------------------------------------ messages
    def on_turn_chosen(self, message: TurnChosen) -> None:
        numbers = [p.number for p in self.found.pairs]
        if message.number in numbers:
            self.go_to(numbers.index(message.number))


def open_diff(app: App, a: Path, b: Path) -> DiffScreen | None:
    """Compare the runs at `a` and `b` on top of `app`'s current screen (Escape returns); a file
    that cannot be read or two runs that cannot be compared is a notification, and None."""
    try:
        screen = DiffScreen.of_files(a, b)
    except LedgerTuiError as exc:
        app.notify(shown(exc, markup=True), severity="error", timeout=10)
        return None
    app.push_screen(screen)
    return screen
